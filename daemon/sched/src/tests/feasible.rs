//! Requests no node set of the partition could ever satisfy are refused at
//! submit with Slurm's sentence and the facts; what could run, even only
//! once nodes free up or return, is accepted.

use super::job;
use crate::Job;
use crate::feasible::{Capacity, Dim, Refusal, Unavailable, check};

/// `batch`: n1, n2 with 8 CPUs, 16 GB, no GPU; g1 with 16 CPUs, 64 GB, 4 GPUs.
fn nodes() -> Vec<Capacity<'static>> {
    let n = |name, cpus, mem_mb, gpus| Capacity { name, cpus, mem_mb, gpus, features: &[], facts: None };
    vec![n("n1", 8, 16_384, 0), n("n2", 8, 16_384, 0), n("g1", 16, 65_536, 4)]
}

fn verdict(j: &Job) -> Result<(), Refusal> {
    check(j, "batch", nodes())
}

fn unavailable(j: &Job) -> Unavailable {
    match verdict(j) {
        Err(Refusal::Unavailable(u)) => u,
        other => panic!("expected an unavailable configuration, got {other:?}"),
    }
}

#[test]
fn what_some_node_set_could_run_is_accepted() {
    let cases = [
        Job { num_nodes: 3, ..job(1, "alice") },
        Job { ntasks: 16, ..job(2, "alice") },
        Job { num_nodes: 2, ntasks: 4, cpus_per_task: 4, mem_mb: 16_384, ..job(3, "alice") },
        Job { gpus: 4, mem_mb: 65_536, ..job(4, "alice") },
        Job { exclusive: true, nodelist: vec!["g1".into()], ..job(5, "alice") },
        // Outside the partition: pends on ReqNodeNotAvail, as before.
        Job { nodelist: vec!["o1".into()], ..job(6, "alice") },
        Job { time_limit: Some(4_294_967_293), ..job(7, "alice") },
    ];
    for j in cases {
        assert_eq!(verdict(&j), Ok(()), "job {}", j.id);
    }
}

#[test]
fn more_nodes_than_the_partition_has() {
    let u = unavailable(&Job { num_nodes: 4, ..job(1, "alice") });
    assert_eq!(u, Unavailable::Nodes { partition: "batch".into(), asked: 4, has: 3 });
    let j = Job { num_nodes: 3, exclude: vec!["n2".into()], ..job(2, "alice") };
    assert_eq!(unavailable(&j), Unavailable::Nodes { partition: "batch".into(), asked: 3, has: 2 });
    let e = Refusal::Unavailable(u).to_string();
    assert_eq!(
        e,
        "Requested node configuration is not available: the job asks for 4 nodes (-N) and partition 'batch' has 3"
    );
}

#[test]
fn more_per_node_than_the_largest_node() {
    let part = || "batch".to_string();
    let cases = [
        (Job { cpus_per_task: 17, ..job(1, "alice") }, Dim::Cpus, 17, 16),
        (Job { ntasks: 34, num_nodes: 2, ..job(2, "alice") }, Dim::Cpus, 17, 16),
        (Job { mem_mb: 65_537, ..job(3, "alice") }, Dim::Memory, 65_537, 65_536),
        (Job { gpus: 5, ..job(4, "alice") }, Dim::Gpus, 5, 4),
    ];
    for (j, dim, asked, largest) in cases {
        assert_eq!(
            unavailable(&j),
            Unavailable::PerNode { partition: part(), dim, asked, largest },
            "{}",
            j.id
        );
    }
    let e = verdict(&Job { mem_mb: 65_537, ..job(3, "alice") }).unwrap_err().to_string();
    assert!(e.ends_with(
        "65537 MB of memory per node (--mem) and the largest node of partition 'batch' has 65536"
    ));
}

#[test]
fn too_few_nodes_give_everything_at_once() {
    // Each dimension alone fits somewhere, but only g1 has GPUs and 12 CPUs.
    let j = Job { num_nodes: 2, ntasks: 24, gpus: 1, ..job(1, "alice") };
    assert_eq!(unavailable(&j), Unavailable::Fit { partition: "batch".into(), asked: 2, fit: 1 });
    let j = Job { cpus_per_task: 12, nodelist: vec!["n1".into()], ..job(2, "alice") };
    assert_eq!(unavailable(&j), Unavailable::Named { node: "n1".into() });
}

#[test]
fn counts_that_overflow_and_limits_past_the_largest_are_refused() {
    let j = Job { ntasks: 2_147_483_649, cpus_per_task: 2, ..job(1, "alice") };
    let e = verdict(&j).unwrap_err();
    assert_eq!(e, Refusal::Cpus { tasks: 2_147_483_649, per_task: 2 });
    assert_eq!(
        e.to_string(),
        "ntasks: 2147483649 tasks × 2 CPUs per task is 4294967298 CPUs, more than a job may ask for (4294967295)"
    );
    let e = verdict(&Job { time_limit: Some(u64::MAX), ..job(2, "alice") }).unwrap_err().to_string();
    assert!(e.starts_with("time_limit: 18446744073709551615 minutes is more than the largest"), "{e}");
    // Too many CPUs without overflowing is a configuration no node has.
    let j = Job { ntasks: 2_147_483_647, cpus_per_task: 2, ..job(3, "alice") };
    assert!(matches!(verdict(&j), Err(Refusal::Unavailable(Unavailable::PerNode { dim: Dim::Cpus, .. }))));
}

#[test]
fn a_partition_without_nodes_refuses_everything() {
    let e = check(&job(1, "alice"), "empty", []).unwrap_err();
    assert_eq!(e, Refusal::Unavailable(Unavailable::Nodes { partition: "empty".into(), asked: 1, has: 0 }));
}

#[test]
fn tmp_and_layout_asks_no_node_meets_are_refused_naming_the_option() {
    use crate::model::{HostFacts, NodeNeeds, TMP_DISK_MB};
    let big =
        HostFacts { values: [(TMP_DISK_MB.to_string(), "2048".to_string())].into(), modaliases: vec![] };
    let small =
        HostFacts { values: [(TMP_DISK_MB.to_string(), "512".to_string())].into(), modaliases: vec![] };
    let n = |name, facts| Capacity { name, cpus: 8, mem_mb: 1024, gpus: 0, features: &[], facts };
    let nodes = || vec![n("n1", Some(&big)), n("n2", Some(&small)), n("n3", None)];
    let needs = NodeNeeds { tmp_mb: 1024, ..NodeNeeds::default() };
    assert_eq!(check(&Job { needs, ..job(1, "alice") }, "batch", nodes()), Ok(()));
    let two = Job { needs, num_nodes: 2, ..job(2, "alice") };
    let Err(Refusal::Unavailable(u)) = check(&two, "batch", nodes()) else { panic!("refused") };
    assert_eq!(
        u.to_string(),
        "the job asks for 2 nodes with --tmp=1024 MB and partition 'batch' has 1 such \
         (the most a node there reports is 2048)"
    );
    let layout = Job { needs: NodeNeeds { sockets: 2, ..NodeNeeds::default() }, ..job(3, "alice") };
    let Err(Refusal::Unavailable(u)) = check(&layout, "batch", nodes()) else { panic!("refused") };
    assert!(u.to_string().contains("with --sockets-per-node=2 and partition 'batch' has 0 such"), "{u}");
    let layout = |s: &str, c: &str| HostFacts {
        values: [
            (crate::model::SOCKETS.to_string(), s.to_string()),
            (crate::model::CORES_PER_SOCKET.into(), c.into()),
        ]
        .into(),
        modaliases: vec![],
    };
    let (two_by_four, one_by_two) = (layout("2", "4"), layout("1", "2"));
    let nodes = || vec![n("n1", Some(&two_by_four)), n("n2", Some(&one_by_two))];
    let cores = Job { needs: NodeNeeds { cores: 8, ..NodeNeeds::default() }, ..job(4, "alice") };
    assert_eq!(check(&cores, "batch", nodes()), Ok(()), "n1 has 2 x 4 cores");
    let Err(Refusal::Unavailable(u)) = check(&Job { num_nodes: 2, ..cores }, "batch", nodes()) else {
        panic!()
    };
    assert!(
        u.to_string().contains("with 8 cores (--ntasks-per-core) and partition 'batch' has 1 such"),
        "{u}"
    );
}

#[test]
fn overcommit_asks_one_task_s_cpus_a_node() {
    let many = Job { ntasks: 32, cpus_per_task: 2, ..job(1, "alice") };
    assert!(matches!(unavailable(&many), Unavailable::PerNode { dim: Dim::Cpus, asked: 64, .. }));
    let over = Job { overcommit: true, ..many };
    assert_eq!(verdict(&over), Ok(()));
    assert_eq!((over.shape().cpus, over.tres()[0]), (2, 2), "one task's CPUs, counted as allocated");
}
