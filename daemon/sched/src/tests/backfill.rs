//! EASY backfill: the highest blocked job reserves; a lower job starts only if
//! it ends before the reservation or keeps off the reserved nodes; queue_depth
//! bounds the tries behind it; with backfill off, order is strict.

use super::{Fx, MIN, NOW, job, outcome, run_on};
use crate::{Facts, Job, JobState, Plan};

/// n1..n`nodes`; n1 and n2 run an exclusive job for the next hour. Job 1 is
/// wide (4 exclusive nodes, 2 hours) and outranks everything else.
fn blocked(nodes: usize) -> Fx {
    let busy = Job { exclusive: true, time_limit: Some(60), ..job(50, "bob") };
    Fx::new(nodes, 8, 16000, 0).running(run_on(busy, &["n1", "n2"], NOW)).job(Job {
        priority: Some(5000),
        num_nodes: 4,
        exclusive: true,
        time_limit: Some(120),
        ..job(1, "alice")
    })
}

fn short(id: u64, minutes: Option<u64>) -> Job {
    Job { time_limit: minutes, ..job(id, "carol") }
}

const RESERVED: &str = "Priority: it fits now only on nodes reserved for higher-priority job 1, which is expected \
                        to start in 01:00:00, and it would not end before then";

#[test]
fn backfill_starts_a_short_job_in_front_of_a_blocked_wide_one() {
    let fx = blocked(4).job(short(2, Some(30))).job(short(3, Some(120))).job(short(4, None));
    let plan = fx.plan();
    assert_eq!(
        outcome(&plan, 1),
        Err("Resources: partition batch has no room now for 4 nodes × 1 CPUs, exclusive; expected to start in 01:00:00".into())
    );
    assert_eq!(plan.reservations.len(), 1);
    assert_eq!((plan.reservations[0].job, plan.reservations[0].start_ms), (1, NOW + 60 * MIN));
    assert_eq!(plan.reservations[0].nodes, ["n1", "n2", "n3", "n4"]);
    // Ends in 30 minutes, before the reservation at 60: starts.
    assert_eq!(outcome(&plan, 2), Ok(vec!["n3".to_string()]));
    assert!(plan.start_of(2).unwrap().backfilled);
    // Would still run at 60 (or forever): stays behind.
    assert_eq!(outcome(&plan, 3), Err(RESERVED.into()));
    assert_eq!(outcome(&plan, 4), Err(RESERVED.into()));
    // ... without delaying it: with the short job running, the wide one's start is unchanged.
    let again = apply(fx, &plan).plan();
    assert_eq!(again.reservations[0].start_ms, NOW + 60 * MIN);
}

#[test]
fn a_lower_job_may_use_nodes_the_reservation_does_not_need() {
    let full = |id| Job { ntasks: 8, ..short(id, None) };
    let plan = blocked(5).job(full(2)).job(full(3)).plan();
    assert_eq!(plan.reservations[0].nodes, ["n1", "n2", "n3", "n4"]);
    assert_eq!(outcome(&plan, 2), Ok(vec!["n5".to_string()]));
    assert_eq!(outcome(&plan, 3), Err(RESERVED.into()));
}

#[test]
fn only_the_highest_blocked_job_reserves() {
    let second =
        Job { priority: Some(4000), num_nodes: 3, exclusive: true, time_limit: Some(10), ..job(5, "dave") };
    let plan = blocked(4).job(second).plan();
    assert_eq!(plan.reservations.iter().map(|r| r.job).collect::<Vec<_>>(), [1]);
    assert_eq!(
        outcome(&plan, 5),
        Err("Resources: partition batch has no room now for 3 nodes × 1 CPUs, exclusive".into())
    );
}

#[test]
fn backfill_off_keeps_strict_order() {
    let plan = blocked(4).job(short(2, Some(30))).with(|f| f.snap.config.backfill_enabled = false).plan();
    assert_eq!(
        outcome(&plan, 2),
        Err("Priority: backfill is off and higher-priority job 1 is waiting in partition batch".into())
    );
}

#[test]
fn queue_depth_bounds_the_tries_behind_a_reservation() {
    let fx =
        blocked(5).job(short(2, Some(30))).job(short(3, Some(30))).with(|f| f.snap.config.queue_depth = 1);
    let plan = fx.plan();
    assert!(outcome(&plan, 2).is_ok());
    assert_eq!(
        outcome(&plan, 3),
        Err("Priority: not tried this pass: only the first 1 jobs behind a blocked one are (scheduler.queue_depth)".into())
    );
    // Jobs ahead of any reservation are always tried.
    let plan = (1..=5)
        .fold(Fx::new(5, 8, 16000, 0), |fx, id| fx.job(short(id, None)))
        .with(|f| f.snap.config.queue_depth = 0)
        .plan();
    assert_eq!(plan.starts.len(), 5);
}

#[test]
fn every_pending_job_gets_a_reason_in_priority_order() {
    let plan = blocked(4).job(short(2, Some(30))).job(short(3, None)).plan();
    let ids: Vec<u64> = plan.pending.iter().map(|p| p.job).collect();
    assert_eq!(ids, [1, 3]);
    assert!(matches!(plan.pending[0].reason.facts, Facts::Resources { start_ms: Some(_), .. }));
}

/// The snapshot after the plan's starts have been applied.
fn apply(mut fx: Fx, plan: &Plan) -> Fx {
    for s in &plan.starts {
        if let Some(j) = fx.snap.jobs.iter().position(|j| j.id == s.job) {
            let j = fx.snap.jobs.remove(j);
            let running = Job { state: JobState::Running { nodes: s.nodes.clone(), start_ms: NOW }, ..j };
            fx = fx.running(running);
        }
    }
    fx
}
