//! The pass's shortcuts for preemption (`screen`): the candidates it weighs
//! are the ones `explain` ranks eligible, whatever the pool, and a job that
//! found no room tells only later jobs that ask no less.

use super::{Fx, MIN, NOW, job, run_on};
use crate::{Job, Outcome, PreemptConfig};
use spur_vocab::names::PreemptMode;

fn fx(nodes: usize) -> Fx {
    Fx::new(nodes, 4, 0, 0).with(|f| {
        f.snap.partitions[0].preempt_mode = PreemptMode::Requeue;
        f.snap.config.preempt = PreemptConfig {
            enabled: true,
            min_runtime_secs: 0,
            exempt_secs: 60,
            threshold_pct: 50.0,
            ..PreemptConfig::default()
        };
    })
}

fn wide(id: u64, prio: u64) -> Job {
    Job { priority: Some(prio), ntasks: 4, requeueable: true, ..job(id, "alice") }
}

#[test]
fn a_pass_evicts_the_candidate_explain_ranks_first() {
    // Job 1 is lowest but still exempt; job 4 is lower than 2 but outside the pool.
    let f = fx(4)
        .running(run_on(wide(1, 50), &["n1"], NOW - 10_000))
        .running(run_on(wide(2, 200), &["n2"], NOW - 10 * MIN))
        .running(run_on(wide(3, 100), &["n3"], NOW - 10 * MIN))
        .running(run_on(wide(4, 60), &["n4"], NOW - 10 * MIN))
        .job(Job { exclude: vec!["n4".into()], ..wide(10, 1000) });
    let plan = f.plan();
    let got: Vec<_> = plan.preemptions.iter().map(|p| (p.victim, p.by)).collect();
    assert_eq!(got, vec![(3, 10)]);
    let v = f.explained(10);
    let ranked: Vec<(u64, bool)> = v.candidates.iter().map(|c| (c.candidate.job, c.eligible())).collect();
    assert_eq!(ranked[..2], [(3, true), (2, true)]);
    assert!(ranked.contains(&(1, false)) && ranked.contains(&(4, false)), "{ranked:?}");
    let by = |id| v.candidates.iter().find(|c| c.candidate.job == id).and_then(|c| c.decided_by());
    assert_eq!((by(1).as_deref(), by(4).as_deref()), (Some("exempt time"), Some("node overlap")));
}

#[test]
fn no_room_is_remembered_only_for_jobs_asking_no_less() {
    // Two full nodes, one victim at a time: a 2-node job cannot get room,
    // nor can a lower one asking as much; a lower 1-node job still can.
    let two_nodes = |id, prio| Job { num_nodes: 2, exclusive: true, ..wide(id, prio) };
    let f = fx(2)
        .running(run_on(wide(1, 100), &["n1"], NOW - 10 * MIN))
        .running(run_on(wide(2, 100), &["n2"], NOW - 10 * MIN))
        .job(two_nodes(10, 1000))
        .job(two_nodes(11, 900))
        .job(wide(12, 800));
    let plan = f.plan();
    let not_enough = Outcome::NotEnough { eligible: 2, multi_victim: false };
    assert_eq!(plan.verdict_of(10).unwrap().outcome, not_enough);
    assert_eq!(plan.verdict_of(11).unwrap().outcome, not_enough);
    assert!(
        matches!(&plan.verdict_of(12).unwrap().outcome, Outcome::Evict { victims, .. } if victims == &vec![1])
    );
    // With multi-victim on the 2-node job gets both, and the lower ones none.
    let f = f.with(|f| f.snap.config.preempt.multi_victim = true);
    let plan = f.plan();
    assert!(
        matches!(&plan.verdict_of(10).unwrap().outcome, Outcome::Evict { victims, .. } if victims.len() == 2)
    );
    assert_eq!(plan.verdict_of(11).unwrap().outcome, Outcome::NoCandidate);
}
