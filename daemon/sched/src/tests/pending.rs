//! Every pending reason, with the sentence its facts render, and the cases
//! where a limit must *not* hold a job (0 TRES, grpwall before a figure, ...).

use super::{Fx, MIN, NOW, account, assoc, job, outcome, qos, run_on, tres, user};
use crate::model::{Assoc, Qos};
use crate::{Hold, Job};
use std::collections::HashMap;

/// alice's job under QOS `normal` and account `phys`.
fn mine(id: u64) -> Job {
    Job { qos: Some("normal".into()), account: Some("phys".into()), ..job(id, "alice") }
}

fn cpus(j: Job, n: u32) -> Job {
    Job { ntasks: n, ..j }
}

/// alice's running job on `nodes`, started now.
fn running(id: u64, nodes: &[&str]) -> Job {
    run_on(mine(id), nodes, NOW)
}

type Setup = Box<dyn Fn(Fx) -> Fx>;

fn with_qos(q: Qos) -> Setup {
    Box::new(move |fx| fx.qos(q.clone()))
}

fn with_assoc(a: Assoc) -> Setup {
    Box::new(move |fx| fx.user(user("alice", "phys", vec![a.clone()])))
}

#[test]
fn pending_reasons_carry_their_facts() {
    let normal = || qos("normal");
    let excl = |id, node: &str| running(id, &[node]).with_exclusive();
    let cases: Vec<(&str, Setup, Job, &str)> = vec![
        (
            "user hold",
            Box::new(|fx| fx),
            Job { hold: Hold::User, ..mine(1) },
            "JobHeldUser: held by its user; release with scontrol release",
        ),
        (
            "admin hold",
            Box::new(|fx| fx),
            Job { hold: Hold::Admin, ..mine(1) },
            "JobHeldAdmin: held by an administrator; an operator must release it",
        ),
        (
            "begin time",
            Box::new(|fx| fx),
            Job { begin_ms: Some(NOW + 10 * MIN), ..mine(1) },
            "BeginTime: the job may start in 00:10:00",
        ),
        (
            "partition down",
            Box::new(|fx| fx.with(|f| f.snap.partitions[0].state = "DOWN".into())),
            mine(1),
            "PartitionDown: partition batch is DOWN",
        ),
        (
            "partition inactive",
            Box::new(|fx| fx.with(|f| f.snap.partitions[0].state = "inactive".into())),
            mine(1),
            "PartitionInactive: partition batch is INACTIVE",
        ),
        (
            "unknown partition",
            Box::new(|fx| fx),
            Job { partition: "nope".into(), ..mine(1) },
            "PartitionConfig: partition 'nope' does not exist",
        ),
        (
            "over MaxTime",
            Box::new(|fx| fx.with(|f| f.snap.partitions[0].max_time = Some(60))),
            Job { time_limit: Some(120), ..mine(1) },
            "PartitionTimeLimit: the job's time limit 02:00:00 exceeds partition batch's MaxTime 01:00:00",
        ),
        (
            "unbounded under MaxTime",
            Box::new(|fx| fx.with(|f| f.snap.partitions[0].max_time = Some(60))),
            mine(1),
            "PartitionTimeLimit: the job's time limit UNLIMITED exceeds partition batch's MaxTime 01:00:00",
        ),
        (
            "more nodes than the partition",
            Box::new(|fx| fx),
            Job { num_nodes: 5, ..mine(1) },
            "PartitionNodeLimit: the job asks for 5 nodes; partition batch has 4",
        ),
        (
            "required node drained",
            Box::new(|fx| fx.with(|f| f.snap.nodes[2].schedulable = false)),
            Job { nodelist: vec!["n3".into()], ..mine(1) },
            "ReqNodeNotAvail: required node(s) n3 are down, drained or not in partition batch",
        ),
        (
            "maxjobsperuser",
            with_qos(Qos { max_jobs_per_user: Some(1), ..normal() }).then(running(50, &["n1"])),
            mine(1),
            "QOSMaxJobsPerUserLimit: user alice under QOS normal is at 1/1 running jobs (maxjobsperuser); the job needs 1 more",
        ),
        (
            "maxjobsperuser=0 blocks",
            with_qos(Qos { max_jobs_per_user: Some(0), ..normal() }),
            mine(1),
            "QOSMaxJobsPerUserLimit: user alice under QOS normal is at 0/0 running jobs (maxjobsperuser); the job needs 1 more",
        ),
        (
            "assoc maxjobs",
            with_assoc(Assoc { max_jobs: Some(1), ..assoc("phys") }).then(running(50, &["n1"])),
            mine(1),
            "AssocMaxJobsLimit: user alice in account phys is at 1/1 running jobs (maxjobs); the job needs 1 more",
        ),
        (
            "account maxrunningjobs",
            Box::new(|fx| {
                fx.account(crate::model::Account { max_jobs: Some(1), ..account("phys", "root") })
                    .running(run_on(Job { account: Some("phys".into()), ..job(50, "dave") }, &["n1"], NOW))
            }),
            mine(1),
            "AssocGrpJobsLimit: account phys is at 1/1 running jobs (maxrunningjobs); the job needs 1 more",
        ),
        (
            "account grptres covers its subtree",
            Box::new(|fx| {
                fx.account(crate::model::Account { grp_tres: tres("cpu=8"), ..account("phys", "root") })
                    .account(account("ml", "phys"))
                    .running(run_on(
                        cpus(Job { account: Some("ml".into()), ..job(50, "dave") }, 6),
                        &["n1"],
                        NOW,
                    ))
            }),
            cpus(mine(1), 4),
            "AssocGrpCpuLimit: account phys is at 6/8 CPUs (grptres); the job needs 4 more",
        ),
        (
            "QOS grptres cpu",
            with_qos(Qos { grp_tres: tres("cpu=8"), ..normal() }).then(cpus(running(50, &["n1"]), 6)),
            cpus(mine(1), 4),
            "QOSGrpCpuLimit: QOS normal is at 6/8 CPUs (grptres); the job needs 4 more",
        ),
        (
            "QOS grptres mem",
            with_qos(Qos { grp_tres: tres("mem=10000"), ..normal() })
                .then(Job { mem_mb: 8000, ..running(50, &["n1"]) }),
            Job { mem_mb: 4000, ..mine(1) },
            "QOSGrpMemLimit: QOS normal is at 8000/10000 MB of memory (grptres); the job needs 4000 more",
        ),
        (
            "QOS grptres gpu",
            with_qos(Qos { grp_tres: tres("gres/gpu=2"), ..normal() })
                .then(Job { gpus: 2, ..running(50, &["n1"]) }),
            Job { gpus: 1, ..mine(1) },
            "QOSGrpGRES: QOS normal is at 2/2 GPUs (grptres); the job needs 1 more",
        ),
        (
            "maxtresperuser cpu",
            with_qos(Qos { max_tres_per_user: tres("cpu=4"), ..normal() })
                .then(cpus(running(50, &["n1"]), 4)),
            mine(1),
            "QOSMaxCpuPerUserLimit: user alice under QOS normal is at 4/4 CPUs (maxtresperuser); the job needs 1 more",
        ),
        (
            "maxtresperuser node= sums requested nodes",
            with_qos(Qos { max_tres_per_user: tres("node=2"), ..normal() })
                .then(running(50, &["n1"]))
                .then(running(51, &["n1"])),
            mine(1),
            "QOSMaxNodePerUserLimit: user alice under QOS normal is at 2/2 nodes (maxtresperuser); the job needs 1 more",
        ),
        (
            "assoc grptres cpu",
            with_assoc(Assoc { grp_tres: tres("cpu=4"), ..assoc("phys") })
                .then(cpus(running(50, &["n1"]), 4)),
            mine(1),
            "AssocGrpCpuLimit: user alice in account phys is at 4/4 CPUs (grptres); the job needs 1 more",
        ),
        (
            "QOS grptres node with exclusive jobs",
            with_qos(Qos { grp_tres: tres("node=2"), ..normal() }).then(excl(50, "n1")).then(excl(51, "n2")),
            Job { exclusive: true, ..mine(1) },
            "QOSGrpNodeLimit: QOS normal is at 2/2 nodes (grptres); the job needs 1 more",
        ),
        (
            "assoc grptres node",
            with_assoc(Assoc { grp_tres: tres("node=1"), ..assoc("phys") }).then(excl(50, "n1")),
            Job { exclusive: true, ..mine(1) },
            "AssocGrpNodeLimit: user alice in account phys is at 1/1 nodes (grptres); the job needs 1 more",
        ),
        (
            "grpwall used up",
            with_qos(Qos { grp_wall: Some(600), ..normal() }).with_wall(&[("normal", 600)]),
            mine(1),
            "QOSGrpWallLimit: QOS normal has used 10:00:00 of its grpwall budget of 10:00:00",
        ),
        (
            "grpwall=0 once a figure is read",
            with_qos(Qos { grp_wall: Some(0), ..normal() }).with_wall(&[]),
            mine(1),
            "QOSGrpWallLimit: QOS normal has used 00:00:00 of its grpwall budget of 00:00:00",
        ),
        (
            "cache not loaded",
            Box::new(|fx| fx.with(|f| f.catalog.loaded = false)),
            mine(1),
            "AccountingUnavailable: the accounting cache has not loaded, so the limits of QOS normal and account phys cannot be checked; the job starts once it loads",
        ),
        (
            "QOS deleted while queued",
            Box::new(|fx| fx),
            Job { qos: Some("gone".into()), ..mine(1) },
            "InvalidQOS: QOS 'gone' does not exist",
        ),
        (
            "account deleted while queued",
            Box::new(|fx| fx),
            Job { account: Some("gone".into()), ..mine(1) },
            "InvalidAccount: account 'gone' does not exist",
        ),
        (
            "licenses",
            Box::new(|fx| {
                fx.with(|f| {
                    f.snap.licenses.insert("matlab".into(), 1);
                })
            }),
            Job { licenses: vec![("matlab".into(), 2)], ..mine(1) },
            "Licenses: license matlab has 1 free; the job asks for 2",
        ),
        (
            "QOS maxwall pends",
            with_qos(Qos { max_wall: Some(60), ..normal() }),
            Job { time_limit: Some(120), ..mine(1) },
            "QOSMaxWallDurationPerJobLimit: the job's time limit 02:00:00 exceeds QOS normal's maxwall of 01:00:00",
        ),
        (
            "QOS maxtresperjob pends",
            with_qos(Qos { max_tres_per_job: tres("cpu=4"), ..normal() }),
            cpus(mine(1), 8),
            "QOSMaxCpuPerJobLimit: the job asks for 8 CPUs; QOS normal allows 4 per job (maxtresperjob)",
        ),
        (
            "assoc maxtresperjob pends",
            with_assoc(Assoc { max_tres_per_job: tres("node=1"), ..assoc("phys") }),
            Job { num_nodes: 2, ..mine(1) },
            "AssocMaxNodePerJobLimit: the job asks for 2 nodes; user alice in account phys allows 1 per job (maxtresperjob)",
        ),
        (
            "no room, nothing ever ends",
            Box::new(|fx| {
                ["n1", "n2", "n3", "n4"]
                    .iter()
                    .enumerate()
                    .fold(fx, |fx, (i, n)| fx.running(running(50 + i as u64, &[n]).with_exclusive()))
            }),
            mine(1),
            "Resources: partition batch has no room now for 1 node × 1 CPUs",
        ),
        (
            "no room until a job ends",
            Box::new(|fx| {
                ["n1", "n2", "n3", "n4"].iter().enumerate().fold(fx, |fx, (i, n)| {
                    fx.running(Job {
                        time_limit: Some(30 + i as u64),
                        ..running(50 + i as u64, &[n]).with_exclusive()
                    })
                })
            }),
            mine(1),
            "Resources: partition batch has no room now for 1 node × 1 CPUs; expected to start in 00:30:00",
        ),
    ];
    for (name, setup, j, want) in cases {
        let plan = setup(Fx::new(4, 8, 16000, 2)).job(j).plan();
        assert_eq!(outcome(&plan, 1), Err(want.to_string()), "{name}");
    }
}

#[test]
fn limits_that_must_not_hold_a_job() {
    let normal = || qos("normal");
    let cases: Vec<(&str, Setup, Job)> = vec![
        ("grpwall before any figure is read", with_qos(Qos { grp_wall: Some(0), ..normal() }), mine(1)),
        (
            "grpwall under budget",
            with_qos(Qos { grp_wall: Some(600), ..normal() }).with_wall(&[("normal", 599)]),
            mine(1),
        ),
        (
            "a TRES cap of 0 is ignored",
            with_qos(Qos {
                grp_tres: tres("cpu=0"),
                max_tres_per_user: tres("node=0"),
                max_tres_per_job: tres("cpu=0"),
                ..normal()
            }),
            cpus(mine(1), 8),
        ),
        (
            "cache not loaded, job names nothing",
            Box::new(|fx| fx.with(|f| f.catalog.loaded = false)),
            job(1, "alice"),
        ),
        (
            "accounting off: nothing to read",
            Box::new(|fx| {
                fx.with(|f| {
                    f.catalog = Default::default();
                    f.snap.config.accounting_enabled = false;
                })
            }),
            mine(1),
        ),
        (
            "running counts only running jobs",
            with_qos(Qos { max_jobs_per_user: Some(1), ..normal() })
                .then(Job { hold: Hold::User, ..mine(50) }),
            mine(1),
        ),
        (
            "grptres node packs onto the group's node",
            with_qos(Qos { grp_tres: tres("node=1"), ..normal() }).then(running(50, &["n2"])),
            mine(1),
        ),
    ];
    for (name, setup, j) in cases {
        let plan = setup(Fx::new(4, 8, 16000, 2)).job(j).plan();
        assert!(outcome(&plan, 1).is_ok(), "{name}: {:?}", outcome(&plan, 1));
    }
}

#[test]
fn the_hold_clears_once_the_cache_loads() {
    let fx = Fx::new(1, 8, 1000, 0).job(mine(1)).with(|f| f.catalog.loaded = false);
    assert!(outcome(&fx.plan(), 1).unwrap_err().starts_with("AccountingUnavailable"));
    let fx = fx.with(|f| f.catalog.loaded = true);
    assert_eq!(outcome(&fx.plan(), 1), Ok(vec!["n1".to_string()]));
}

trait SetupExt {
    fn then(self, j: Job) -> Setup;
    fn with_wall(self, used: &[(&str, u64)]) -> Setup;
}

impl SetupExt for Setup {
    fn then(self, j: Job) -> Setup {
        Box::new(move |fx| {
            let fx = self(fx);
            if j.is_running() { fx.running(j.clone()) } else { fx.job(j.clone()) }
        })
    }

    fn with_wall(self, used: &[(&str, u64)]) -> Setup {
        let map: HashMap<String, u64> = used.iter().map(|(q, m)| (q.to_string(), *m)).collect();
        Box::new(move |fx| self(fx).with(|f| f.snap.grp_wall_used = Some(map.clone())))
    }
}

trait JobExt {
    fn with_exclusive(self) -> Job;
}

impl JobExt for Job {
    fn with_exclusive(self) -> Job {
        Job { exclusive: true, ..self }
    }
}
