//! Inputs no sane controller sends still produce a plan, never a panic:
//! extreme numbers, unknown names, empty and cyclic structures.

use super::{Fx, NOW, account, job, run_on, tres};
use crate::model::{Qos, User};
use crate::priority::{UsageRecord, decayed_usage};
use crate::submit::submit;
use crate::{Hold, Job, SchedNode, SubmitCounts, SubmitPolicy};

fn extremes() -> Vec<Job> {
    vec![
        Job { num_nodes: u32::MAX, ..job(1, "alice") },
        Job {
            ntasks: u32::MAX,
            cpus_per_task: u32::MAX,
            mem_mb: u64::MAX,
            gpus: u64::MAX,
            ..job(2, "alice")
        },
        Job { time_limit: Some(u64::MAX), submit_ms: i64::MIN, priority: Some(u64::MAX), ..job(3, "alice") },
        Job { begin_ms: Some(i64::MAX), ..job(4, "alice") },
        Job {
            nodelist: vec!["nowhere".into(), "n1".into(), "n1".into()],
            exclude: vec!["n9".into()],
            ..job(5, "alice")
        },
        Job {
            num_nodes: 0,
            ntasks: 0,
            cpus_per_task: 0,
            qos: Some("".into()),
            account: Some("".into()),
            ..job(6, "")
        },
        Job { hold: Hold::Admin, partition: String::new(), ..job(7, "alice") },
        Job { licenses: vec![("x".into(), u32::MAX)], ..job(8, "alice") },
        Job { exclusive: true, time_limit: Some(0), ..job(9, "alice") },
        run_on(Job { time_limit: Some(u64::MAX), ..job(50, "alice") }, &["n1", "ghost"], i64::MIN),
        run_on(Job { exclusive: true, ..job(51, "alice") }, &[], i64::MAX),
    ]
}

#[test]
fn extreme_jobs_and_clusters_still_get_a_plan() {
    let odd_node =
        SchedNode { free_cpus: 99, free_gpus: 7, weight: u32::MAX, ..SchedNode::idle("n2", 0, 0, 0) };
    let fx = Fx::new(2, 8, 1000, 0)
        .with(|f| {
            f.snap.nodes[1] = odd_node;
            f.snap.nodes.push(SchedNode::idle("n1", 8, 1000, 0)); // a duplicate name
            let dup = f.snap.partitions[0].clone();
            f.snap.partitions.push(dup);
            f.snap.partitions[0].max_time = Some(0);
            f.snap.partitions[1].default_time = Some(u64::MAX);
        })
        // A cycle in the account tree, and limits at both ends of their range.
        .account(account("a", "b"))
        .account(account("b", "a"))
        .qos(Qos {
            grp_tres: tres("node=1,cpu=1"),
            max_jobs_per_user: Some(u64::MAX),
            grp_wall: Some(0),
            ..Qos::default()
        })
        .user(User { name: "".into(), ..User::default() });
    let fx = extremes().into_iter().fold(fx, Fx::job);
    for backfill in [true, false] {
        for depth in [0, 1, usize::MAX] {
            let plan = fx
                .clone_with(|f| {
                    f.snap.config.backfill_enabled = backfill;
                    f.snap.config.queue_depth = depth;
                })
                .plan();
            let decided = plan.starts.len() + plan.pending.len();
            assert_eq!(decided, 9, "every pending job is decided");
            for p in &plan.pending {
                assert!(!p.reason.to_string().is_empty());
            }
        }
    }
}

#[test]
fn extreme_submits_and_usage_are_answered() {
    let fx = Fx::new(1, 8, 1000, 0).qos(Qos {
        max_wall: Some(0),
        max_tres_per_job: tres("cpu=1"),
        ..Qos::default()
    });
    for j in extremes() {
        let _ = submit(
            &j,
            None,
            &fx.catalog,
            &SubmitPolicy { accounting_enabled: true, ..Default::default() },
            &SubmitCounts::from_jobs(&extremes()),
        );
    }
    let rec = UsageRecord {
        user: "u".into(),
        account: "a".into(),
        qos: None,
        cpus: u64::MAX,
        start_ms: i64::MIN,
        end_ms: Some(i64::MAX),
    };
    for halflife in [-1.0, 0.0, 1e-300, f64::INFINITY, f64::NAN] {
        let _ = decayed_usage([&rec], &fx.catalog, NOW, halflife);
    }
}

impl Fx {
    fn clone_with(&self, f: impl FnOnce(&mut Fx)) -> Fx {
        let mut fx = Fx { snap: self.snap.clone(), catalog: self.catalog.clone() };
        f(&mut fx);
        fx
    }
}
