//! `--dependency` evaluated on plain states (every kind, `,` and `?`,
//! never-satisfied, purged targets), and in a pass: a blocked job pends
//! with its facts, two singletons of one name never start together, and
//! `-C` keeps a job off nodes without its features; an array starts many tasks in a pass, up to `%N`.

use super::{Fx, MIN, NOW, job};
use crate::depend::{DepGate, Target, gate};
use crate::reason::ReasonCode as C;
use spur_vocab::JobState as S;
use spur_vocab::constraint::Constraint;
use spur_vocab::depend::Dependency;
use std::collections::HashMap;

fn t(state: S, exit_code: i32, start_ms: i64) -> Target {
    Target { state, exit_code, start_ms }
}

/// The gate of `dep` over `jobs`, with no singleton running; its code and sentence.
fn verdict(dep: &str, jobs: &[(u64, Target)]) -> String {
    let map: HashMap<u64, Target> = jobs.iter().copied().collect();
    let d = Dependency::parse(dep).unwrap();
    match gate(&d, NOW, |id| map.get(&id).copied(), || ("alice/x".into(), false)) {
        DepGate::Clear => "clear".into(),
        DepGate::Blocked(r) => format!("{}: {}", r.code.as_str(), r.sentence()),
        DepGate::Singleton(k) => format!("singleton {k}"),
    }
}

#[test]
fn every_kind_holds_waits_or_never_holds() {
    let ok = t(S::Completed, 0, NOW - 10 * MIN);
    let failed = t(S::Failed, 3, NOW - 10 * MIN);
    let cancelled_pending = t(S::Cancelled, 0, 0);
    let running = t(S::Running, 0, NOW - 5 * MIN);
    let pending = t(S::Pending, 0, 0);
    let cases = [
        ("afterok:1", ok, "clear"),
        ("afterok:1", failed, "DependencyNeverSatisfied: afterok:1: job is FAILED"),
        ("afterok:1", running, "Dependency: afterok:1: job is RUNNING"),
        ("aftercorr:1", ok, "clear"),
        ("afternotok:1", failed, "clear"),
        ("afternotok:1", cancelled_pending, "clear"),
        ("afternotok:1", ok, "DependencyNeverSatisfied: afternotok:1: job is COMPLETED"),
        ("afternotok:1", pending, "Dependency: afternotok:1: job is PENDING"),
        ("afterany:1", failed, "clear"),
        ("afterany:1", running, "Dependency: afterany:1: job is RUNNING"),
        ("after:1", running, "clear"),
        ("after:1", pending, "Dependency: after:1: job is PENDING"),
        ("after:1", cancelled_pending, "clear"),
        ("after:1+10", running, "Dependency: after:1+10: job is RUNNING"),
        ("after:1+5", running, "clear"),
    ];
    for (dep, target, want) in cases {
        assert_eq!(verdict(dep, &[(1, target)]), want, "{dep} on {:?}", target.state);
    }
    // A target no longer known ended long ago: fulfilled, as in Slurm.
    assert_eq!(verdict("afterok:9", &[]), "clear");
}

#[test]
fn all_and_any_combine_as_slurm_does() {
    let ok = t(S::Completed, 0, NOW - MIN);
    let failed = t(S::Failed, 1, NOW - MIN);
    let running = t(S::Running, 0, NOW - MIN);
    let jobs = [(1, ok), (2, failed), (3, running)];
    assert_eq!(verdict("afterok:1,afterok:3", &jobs), "Dependency: afterok:3: job is RUNNING");
    // Under `,` one that never holds decides even while another still waits.
    assert_eq!(verdict("afterok:3,afterok:2", &jobs), "DependencyNeverSatisfied: afterok:2: job is FAILED");
    assert_eq!(verdict("afterok:2?afterok:1", &jobs), "clear");
    assert_eq!(verdict("afterok:2?afterok:3", &jobs), "Dependency: afterok:3: job is RUNNING");
    assert_eq!(
        verdict("afterok:2?afternotok:1", &jobs),
        "DependencyNeverSatisfied: afterok:2: job is FAILED"
    );
    assert_eq!(verdict("afterok:1,singleton", &jobs), "singleton alice/x");
    assert_eq!(verdict("afterok:3,singleton", &jobs), "Dependency: afterok:3: job is RUNNING");
    let d = Dependency::parse("singleton").unwrap();
    let busy = gate(&d, NOW, |_| None, || ("alice/x".into(), true));
    let DepGate::Blocked(r) = busy else { panic!("{busy:?}") };
    assert_eq!(r.sentence(), "singleton: another job of the same user and name is RUNNING");
    assert_eq!(gate(&Dependency::default(), NOW, |_| None, || unreachable!()), DepGate::Clear);
}

#[test]
fn a_pass_holds_blocked_jobs_and_starts_one_singleton_of_a_name() {
    let blocked = Dependency::parse("afterok:7").unwrap();
    let gate7 = gate(&blocked, NOW, |_| Some(t(S::Running, 0, NOW)), || unreachable!());
    let single = || DepGate::Singleton("alice/x".into());
    let fx = Fx::new(4, 4, 0, 0)
        .job(crate::Job { dep: gate7, ..job(1, "alice") })
        .job(crate::Job { dep: single(), ..job(2, "alice") })
        .job(crate::Job { dep: single(), ..job(3, "alice") })
        .job(crate::Job { dep: DepGate::Singleton("bob/x".into()), ..job(4, "bob") });
    let plan = fx.plan();
    let started: Vec<u64> = plan.starts.iter().map(|s| s.job).collect();
    assert_eq!(started, [2, 4]);
    let reason = |id| plan.pending.iter().find(|p| p.job == id).map(|p| (p.reason.code, p.reason.sentence()));
    assert_eq!(reason(1), Some((C::Dependency, "afterok:7: job is RUNNING".into())));
    assert_eq!(reason(3).map(|r| r.0), Some(C::Dependency));
}

#[test]
fn constraints_keep_jobs_on_nodes_with_their_features() {
    let fx = Fx::new(3, 4, 0, 0).with(|f| {
        f.snap.nodes[1].features = vec!["gpu".into(), "a100".into()];
        f.snap.nodes[2].features = vec!["gpu".into()];
    });
    let c = |s: &str| Constraint::parse(s).unwrap();
    let fx = fx
        .job(crate::Job { constraint: c("gpu&a100"), ..job(1, "alice") })
        .job(crate::Job { constraint: c("v100|gpu"), ntasks: 4, ..job(2, "alice") })
        .job(crate::Job { constraint: c("gpu"), ntasks: 4, ..job(3, "alice") });
    let plan = fx.plan();
    let on = |id| plan.starts.iter().find(|s| s.job == id).map(|s| s.nodes.clone());
    assert_eq!(on(1), Some(vec!["n2".to_string()]));
    assert_eq!(on(2), Some(vec!["n3".to_string()]));
    // n2 has 3 CPUs left, n3 none: job 3 waits, never on n1.
    assert_eq!(on(3), None);
}

#[test]
fn tmp_and_layout_needs_keep_jobs_on_nodes_whose_facts_meet_them() {
    use crate::model::{HostFacts, NodeNeeds, THREADS_PER_CORE, TMP_DISK_MB};
    let facts = |tmp: &str, tpc: &str| {
        let values = [(TMP_DISK_MB, tmp), (THREADS_PER_CORE, tpc)];
        Some(std::sync::Arc::new(HostFacts {
            values: values.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            modaliases: vec![],
        }))
    };
    // n1 reports nothing; n2 a small disk and 2 threads a core; n3 a large disk and 1.
    let fx = Fx::new(3, 4, 0, 0).with(|f| {
        f.snap.nodes[1].facts = facts("100", "2");
        f.snap.nodes[2].facts = facts("5000", "1");
    });
    let needs = |tmp_mb, threads_per_core| NodeNeeds { tmp_mb, threads_per_core, ..NodeNeeds::default() };
    let fx = fx
        .job(crate::Job { needs: needs(1000, 0), ..job(1, "alice") })
        .job(crate::Job { needs: needs(0, 2), ..job(2, "alice") })
        .job(crate::Job { needs: needs(10_000, 0), ..job(3, "alice") });
    let plan = fx.plan();
    let on = |id| plan.starts.iter().find(|s| s.job == id).map(|s| s.nodes.clone());
    assert_eq!(on(1), Some(vec!["n3".to_string()]));
    assert_eq!(on(2), Some(vec!["n2".to_string()]));
    assert_eq!(on(3), None, "no node has the disk");
    assert!(needs(0, 0).fits(None) && !needs(1, 0).fits(None), "a node without the fact has none");
}

#[test]
fn an_array_starts_its_tasks_in_one_pass_up_to_its_limit() {
    use crate::job::ArrayAsk;
    let array = |pending, throttle, running| Some(ArrayAsk { pending, throttle, running });
    // 4 nodes of 4 CPUs: 16 one-CPU tasks fit; the %5 limit lets 5 start, 2 already run.
    let fx = Fx::new(4, 4, 0, 0)
        .job(crate::Job { array: array(100, 5, 2), ..job(1, "alice") })
        .job(crate::Job { array: array(3, 0, 0), ..job(2, "alice") })
        .job(crate::Job { array: array(50, 0, 0), ntasks: 4, ..job(3, "alice") });
    let plan = fx.plan();
    let starts = |id| plan.starts.iter().filter(|s| s.job == id).count();
    assert_eq!((starts(1), starts(2)), (3, 3));
    let reason = |id| plan.pending.iter().find(|p| p.job == id).map(|p| (p.reason.code, p.reason.sentence()));
    assert_eq!(reason(1), Some((C::JobArrayTaskLimit, "5 of the array's tasks run, its limit (%5)".into())));
    assert_eq!(reason(2), None, "all its tasks started");
    // 16 CPUs less the 6 taken: two whole-node tasks of job 3 fit.
    assert_eq!(starts(3), 2);
    assert_eq!(reason(3).map(|r| r.0), Some(C::Resources));
    // At its limit before the pass: no start, the reason at once.
    let full = Fx::new(2, 4, 0, 0).job(crate::Job { array: array(10, 2, 2), ..job(1, "alice") }).plan();
    assert!(full.starts.is_empty());
    assert_eq!(full.pending[0].reason.code, C::JobArrayTaskLimit);
}
