//! The scheduler's evictions (cancel, requeue, suspend) and resumes.

use super::*;
use crate::jobs::effect::{Effect, SIGCONT, SIGSTOP, SIGTERM};
use crate::sched::{Plan, Preemption};
use spur_vocab::names::PreemptMode;

fn evict(victim: u64, mode: PreemptMode) -> Preemption {
    Preemption { victim, by: 10, mode, reclaim: false }
}

#[test]
fn a_cancelled_victim_ends_preempted_and_is_terminated() {
    let q = queue([running(1, "n1")]);
    let fx = q.preempt(&Plan { preemptions: vec![evict(1, PreemptMode::Cancel)], ..Plan::default() }, NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!(
        (j.state, j.reason, j.preempted_by),
        (JobState::Cancelled, Some(spur_vocab::reason::ReasonCode::Preempted), Some(10))
    );
    assert_eq!(fx.signals(), [(1, "n1", SIGTERM, KW)]);
    assert_eq!(fx.audits(), [(1, "preempt")]);
}

#[test]
fn a_requeued_victim_waits_again_and_its_end_is_ignored() {
    let q = queue([running(1, "n1")]);
    let fx = q.preempt(&Plan { preemptions: vec![evict(1, PreemptMode::Requeue)], ..Plan::default() }, NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!((j.state, j.preempted_by, j.nodes.len()), (JobState::Pending, Some(10), 0));
    assert!(fx.0.contains(&Effect::IgnoreReport(1)));
    assert_eq!(fx.signals(), [(1, "n1", SIGTERM, KW)]);
}

#[test]
fn a_reclaimed_borrowed_run_is_requeued_counted_and_audited_as_a_reclaim() {
    let lent = JobRecord { borrowed: true, requeue: false, ..running(1, "n1") };
    let q = queue([lent]);
    let reclaim = Preemption { reclaim: true, ..evict(1, PreemptMode::Requeue) };
    let fx = q.preempt(&Plan { preemptions: vec![reclaim], ..Plan::default() }, NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    // "--no-requeue does not prevent this"; the stamp goes with the run.
    assert_eq!((j.state, j.preempted_by, j.reclaims, j.borrowed), (JobState::Pending, Some(10), 1, false));
    let info = fx.0.iter().find_map(|e| match e {
        Effect::Audit { info, .. } => Some(info.clone()),
        _ => None,
    });
    assert_eq!(info, Some(serde_json::json!({ "by": 10, "mode": "requeue", "reason": "idle-fill reclaim" })));
}

#[test]
fn suspend_stops_the_victim_and_resume_keeps_the_pause_off_its_limit() {
    let q = queue([running(1, "n1")]);
    let fx = q.preempt(&Plan { preemptions: vec![evict(1, PreemptMode::Suspend)], ..Plan::default() }, NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!((j.state, j.suspend_ms, j.held()), (JobState::Suspended, NOW, (0, 100, 0)));
    assert_eq!(fx.signals(), [(1, "n1", SIGSTOP, 0)]);

    let q = queue([suspended(2, "n2", NOW - 5 * MIN), running(3, "n3")]);
    let fx = q.preempt(&Plan { resumes: vec![2, 3], ..Plan::default() }, NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!((j.id, j.state, j.suspend_ms, j.suspended_total_ms), (2, JobState::Running, 0, 5 * MIN));
    assert_eq!(fx.signals(), [(2, "n2", SIGCONT, 0)], "a running job is not resumed");
    assert_eq!(fx.audits(), [(2, "resume")]);
}

#[test]
fn a_victim_no_longer_running_is_left_alone() {
    let q =
        queue([pending(1), JobRecord { state: JobState::Completed, ..running(2, "n2") }, running(3, "n3")]);
    let plan = Plan {
        preemptions: vec![
            evict(1, PreemptMode::Cancel),
            evict(2, PreemptMode::Requeue),
            evict(3, PreemptMode::Cancel),
            evict(3, PreemptMode::Suspend),
        ],
        ..Plan::default()
    };
    let fx = q.preempt(&plan, NOW);
    assert_eq!(
        fx.persisted().iter().map(|j| (j.id, j.state)).collect::<Vec<_>>(),
        [(3, JobState::Cancelled)]
    );
    assert_eq!(fx.audits(), [(3, "preempt")], "one eviction per victim");
}
