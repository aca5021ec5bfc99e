//! Placement: CPUs, memory, GPUs, exclusivity, nodelist/exclude, weights;
//! starts updating what later jobs see; grptres node= packing onto the
//! group's occupied nodes.

use super::{Fx, NOW, job, outcome, qos, run_on, tres};
use crate::Job;
use crate::model::Qos;

fn mine(id: u64) -> Job {
    Job { qos: Some("normal".into()), account: Some("phys".into()), ..job(id, "alice") }
}

/// (name, cluster, job 1, where it starts or its reason)
type Case = (&'static str, Fx, Job, Result<Vec<String>, String>);

fn names(v: &[&str]) -> Result<Vec<String>, String> {
    Ok(v.iter().map(|s| s.to_string()).collect())
}

/// n1..n4 with 8 CPUs, 16000 MB, 2 GPUs; n1 and n2 weigh 10, n3 and n4 weigh 1.
fn cluster() -> Fx {
    Fx::new(4, 8, 16000, 2).with(|f| {
        f.snap.nodes[0].weight = 10;
        f.snap.nodes[1].weight = 10;
    })
}

#[test]
fn places_by_resources_and_weight() {
    let cases: Vec<Case> = vec![
        ("lowest weight first", cluster(), mine(1), names(&["n3"])),
        (
            "multi-node takes the next lightest",
            cluster(),
            Job { num_nodes: 3, ..mine(1) },
            names(&["n3", "n4", "n1"]),
        ),
        (
            "CPUs per node from tasks",
            cluster().with(|f| f.snap.nodes[2].free_cpus = 3),
            Job { ntasks: 4, ..mine(1) },
            names(&["n4"]),
        ),
        (
            "memory per node",
            cluster().with(|f| f.snap.nodes[2].free_mem_mb = 100),
            Job { mem_mb: 200, ..mine(1) },
            names(&["n4"]),
        ),
        (
            "GPUs per node",
            cluster().with(|f| f.snap.nodes[2].free_gpus = 1),
            Job { gpus: 2, ..mine(1) },
            names(&["n4"]),
        ),
        (
            "exclusive needs an empty node",
            cluster().running(run_on(mine(50), &["n3"], NOW)),
            Job { exclusive: true, ..mine(1) },
            names(&["n4"]),
        ),
        (
            "nothing shares an exclusive node",
            cluster()
                .running(Job { exclusive: true, ..run_on(mine(50), &["n3"], NOW) })
                .with(|f| f.snap.nodes[2].free_cpus = 7),
            mine(1),
            names(&["n4"]),
        ),
        (
            "drained nodes are skipped",
            cluster().with(|f| f.snap.nodes[2].schedulable = false),
            mine(1),
            names(&["n4"]),
        ),
        ("exclude", cluster(), Job { exclude: vec!["n3".into(), "n4".into()], ..mine(1) }, names(&["n1"])),
        (
            "nodelist is required, the rest by weight",
            cluster(),
            Job { num_nodes: 2, nodelist: vec!["n2".into()], ..mine(1) },
            names(&["n2", "n3"]),
        ),
        (
            "nodes of another partition are not used",
            cluster().with(|f| f.snap.partitions[0].nodes.truncate(2)),
            mine(1),
            names(&["n1"]),
        ),
        (
            "node lists its own partitions",
            cluster().with(|f| {
                f.snap.partitions[0].nodes.clear();
                f.snap.nodes[1].partitions = vec!["batch".into()];
            }),
            mine(1),
            names(&["n2"]),
        ),
    ];
    for (name, fx, j, want) in cases {
        assert_eq!(outcome(&fx.job(j).plan(), 1), want, "{name}");
    }
}

#[test]
fn starts_in_a_pass_update_what_later_jobs_see() {
    // Two 6-CPU jobs cannot share an 8-CPU node; the third finds no room.
    let fx = Fx::new(2, 8, 16000, 0);
    let plan = (1..=3).fold(fx, |fx, id| fx.job(Job { ntasks: 6, ..mine(id) })).plan();
    assert_eq!(outcome(&plan, 1), names(&["n1"]));
    assert_eq!(outcome(&plan, 2), names(&["n2"]));
    assert!(outcome(&plan, 3).unwrap_err().starts_with("Resources: "));
    // Usage counters too: the second job sees the first as running.
    let fx = Fx::new(2, 8, 16000, 0).qos(Qos { max_jobs_per_user: Some(1), ..qos("normal") });
    let plan = fx.job(mine(1)).job(mine(2)).plan();
    assert!(outcome(&plan, 1).is_ok());
    assert!(
        outcome(&plan, 2)
            .unwrap_err()
            .starts_with("QOSMaxJobsPerUserLimit: user alice under QOS normal is at 1/1")
    );
    // Licenses are consumed.
    let fx = Fx::new(2, 8, 16000, 0).with(|f| {
        f.snap.licenses.insert("matlab".into(), 1);
    });
    let lic = |id| Job { licenses: vec![("matlab".into(), 1)], ..mine(id) };
    let plan = fx.job(lic(1)).job(lic(2)).plan();
    assert!(outcome(&plan, 1).is_ok());
    assert_eq!(outcome(&plan, 2), Err("Licenses: license matlab has 0 free; the job asks for 1".into()));
}

/// QOS `normal` capped at `node=N`, on the weighted cluster (n3, n4 preferred by weight).
fn capped(nodes: u64) -> Fx {
    cluster().qos(Qos { grp_tres: tres(&format!("node={nodes}")), ..qos("normal") })
}

#[test]
fn grptres_node_counts_distinct_nodes_and_packs() {
    let on = |id, nodes: &[&str]| run_on(mine(id), nodes, NOW);
    let cases: Vec<Case> = vec![
        // At 2/2 on n1 and n2: a small job packs onto them, not onto the lighter n3.
        (
            "packs onto occupied nodes at the cap",
            capped(2).running(on(50, &["n1"])).running(on(51, &["n2"])),
            mine(1),
            names(&["n1"]),
        ),
        // Two jobs sharing n1 count once: 1/2, so a 2-node job takes n1 plus one new node.
        (
            "shared nodes count once",
            capped(2).running(on(50, &["n1"])).running(on(51, &["n1"])),
            Job { num_nodes: 2, ..mine(1) },
            names(&["n1", "n3"]),
        ),
        (
            "packing first, even with room for new nodes",
            capped(3).running(on(50, &["n1"])).running(on(51, &["n2"])),
            Job { num_nodes: 2, ..mine(1) },
            names(&["n1", "n2"]),
        ),
        (
            "one new node allowed",
            capped(2).running(on(50, &["n1"])),
            Job { num_nodes: 2, ..mine(1) },
            names(&["n1", "n3"]),
        ),
        ("under the cap, placement is free", capped(3).running(on(50, &["n1"])), mine(1), names(&["n3"])),
        (
            "occupied nodes full: the cap holds",
            capped(2)
                .running(Job { ntasks: 8, ..on(50, &["n1"]) })
                .running(Job { ntasks: 8, ..on(51, &["n2"]) }),
            mine(1),
            Err("QOSGrpNodeLimit: QOS normal is at 2/2 nodes (grptres); the job needs 1 more".into()),
        ),
        (
            "a 3-node job needs 3 new nodes",
            capped(2).running(Job { ntasks: 8, ..on(50, &["n1"]) }),
            Job { num_nodes: 3, ..mine(1) },
            Err("QOSGrpNodeLimit: QOS normal is at 1/2 nodes (grptres); the job needs 3 more".into()),
        ),
        (
            "excluded occupied nodes are not packed onto",
            capped(1).running(on(50, &["n1"])),
            Job { exclude: vec!["n1".into()], ..mine(1) },
            Err("QOSGrpNodeLimit: QOS normal is at 1/1 nodes (grptres); the job needs 1 more".into()),
        ),
    ];
    for (name, fx, j, want) in cases {
        assert_eq!(outcome(&fx.job(j).plan(), 1), want, "{name}");
    }
}

#[test]
fn packing_holds_across_starts_in_one_pass() {
    // Cap 1: the first job takes a node, every later one packs onto it until it is full.
    let plan = (1..=9).fold(capped(1), |fx, id| fx.job(mine(id))).plan();
    for id in 1..=8 {
        assert_eq!(outcome(&plan, id), names(&["n3"]), "job {id}");
    }
    assert_eq!(
        outcome(&plan, 9),
        Err("QOSGrpNodeLimit: QOS normal is at 1/1 nodes (grptres); the job needs 1 more".into())
    );
}
