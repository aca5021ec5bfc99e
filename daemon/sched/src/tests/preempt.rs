//! Preemption: the strict 2× gap on the spec's numbers, each guard in order
//! with its sentence, the pool threshold, victim sets that provably make
//! room, the per-pass cap, the drain timeout, and suspend/resume.

use super::{Fx, MIN, NOW, job, qos, run_on};
use crate::{Job, JobState, Outcome, PreemptConfig, explain_job, explain_pair};
use spur_vocab::names::PreemptMode;

/// Two 4-CPU nodes in partition `batch` (preempt_mode=requeue), preemption on
/// with no exemption, no runtime floor and a threshold every full pool meets.
fn fx() -> Fx {
    Fx::new(2, 4, 0, 0).preempting()
}

/// A 4-CPU job with an explicit base priority.
fn wide(id: u64, prio: u64) -> Job {
    Job { priority: Some(prio), ntasks: 4, requeueable: true, ..job(id, "alice") }
}

/// Both nodes full: job 1 (base 100) on n1, job 2 (base 5000) on n2, running 10 minutes.
fn full(f: Fx) -> Fx {
    f.running(run_on(wide(1, 100), &["n1"], NOW - 10 * MIN)).running(run_on(
        wide(2, 5000),
        &["n2"],
        NOW - 10 * MIN,
    ))
}

fn victims(f: &Fx) -> Vec<(u64, u64, PreemptMode)> {
    f.plan().preemptions.iter().map(|p| (p.victim, p.by, p.mode)).collect()
}

#[test]
fn the_gap_is_strict_and_the_lowest_candidate_goes() {
    // 100 < 1000/2 fires; job 2 at 5000 does not.
    let f = full(fx()).job(wide(10, 1000));
    assert_eq!(victims(&f), vec![(1, 10, PreemptMode::Requeue)]);
    let v = f.explained(10);
    assert!(matches!(&v.outcome, Outcome::Evict { victims, .. } if victims == &vec![1]), "{:?}", v.outcome);
    assert!(f.plan().verdict_of(10).unwrap().candidates.is_empty(), "a pass keeps no pairs");
    assert_eq!(v.candidates[0].gap.to_string(), "gap: 100.0 < 1000.0/2 = 500.0 → holds");
    assert_eq!(v.candidates[1].gap.to_string(), "gap: 5000.0 < 1000.0/2 = 500.0 → fails");
    // Exactly half does not fire: 500 < 1000/2 is false.
    let f = fx()
        .running(run_on(wide(1, 500), &["n1"], NOW - MIN))
        .running(run_on(wide(2, 500), &["n2"], NOW))
        .job(wide(10, 1000));
    assert!(victims(&f).is_empty());
    assert_eq!(f.plan().verdict_of(10).unwrap().outcome, Outcome::NoCandidate);
}

#[test]
fn tiers_and_age_follow_the_spec_tables() {
    // Tier 3 over tier 1 fires (1000 < 3000/2); tier 2 cancels out exactly.
    for (tier, fires) in [(3, true), (2, false)] {
        let f = fx()
            .with(|f| {
                let mut hi = f.snap.partitions[0].clone();
                (hi.name, hi.priority_tier, hi.is_default) = ("hi".into(), tier, false);
                f.snap.partitions.push(hi);
            })
            .running(run_on(Job { ntasks: 4, requeueable: true, ..job(1, "alice") }, &["n1"], NOW - MIN))
            .running(run_on(Job { ntasks: 4, ..job(2, "alice") }, &["n2"], NOW - MIN))
            .job(Job { ntasks: 4, partition: "hi".into(), ..job(10, "alice") });
        assert_eq!(!victims(&f).is_empty(), fires, "tier {tier}");
    }
    // Fully aged pending (2000) against a fresh equal job (1000): P < P is false.
    let f = full(fx()).job(Job { submit_ms: NOW - 7 * 24 * 60 * MIN, ..wide(10, 100) });
    assert!(victims(&f).iter().all(|v| v.0 != 1));
}

#[test]
fn each_guard_blocks_with_its_sentence() {
    let guard_line = |f: &Fx| {
        let v = f.explained(10);
        let c = v.candidates.iter().find(|c| c.candidate.job == 1).unwrap();
        (c.decided_by(), c.guards.iter().find(|g| !g.passes()).map(ToString::to_string))
    };
    // QOS allow-list under qos_priority.
    let f = full(fx())
        .qos(qos("reserved"))
        .with(|f| {
            f.snap.config.preempt.qos_allow_list = true;
            f.snap.jobs[0].qos = Some("reserved".into());
            f.snap.jobs[0].account = Some("phys".into());
        })
        .job(Job { qos: Some("normal".into()), account: Some("phys".into()), ..wide(10, 1000) });
    let (by, line) = guard_line(&f);
    assert_eq!(by.as_deref(), Some("qos allow-list"));
    assert_eq!(
        line.unwrap(),
        "guard qos allow-list: QOS 'normal' does not list 'reserved' (its preempt list is empty) → blocks"
    );
    // The candidate's mode: a QOS preemptmode overrides the partition's.
    let f = full(fx())
        .qos(Qos { preempt_mode: PreemptMode::Cancel, ..qos("burst") })
        .with(|f| f.snap.jobs[0].qos = Some("burst".into()))
        .job(wide(10, 1000));
    assert_eq!(victims(&f), vec![(1, 10, PreemptMode::Cancel)]);
    let f = full(fx()).with(|f| f.snap.partitions[0].preempt_mode = PreemptMode::Off).job(wide(10, 1000));
    assert!(victims(&f).is_empty());
    let plan = f.plan();
    assert_eq!(
        plan.verdict_of(10).unwrap().outcome,
        Outcome::Checks,
        "pending partition off is checked first"
    );
    // Exempt time: QOS over partition over global.
    let f = full(fx())
        .qos(Qos { preempt_exempt_time: Some(3600), ..qos("burst") })
        .with(|f| {
            f.snap.config.preempt.exempt_secs = 60;
            f.snap.jobs[0].qos = Some("burst".into());
        })
        .job(wide(10, 1000));
    let (by, line) = guard_line(&f);
    assert_eq!(by.as_deref(), Some("exempt time"));
    assert!(line.unwrap().contains("(QOS 'burst') → blocks"));
    let f = full(fx())
        .with(|f| f.snap.partitions[0].preempt_exempt_time = Some(0))
        .with(|f| f.snap.config.preempt.exempt_secs = 3600)
        .job(wide(10, 1000));
    assert_eq!(victims(&f).len(), 1, "the partition's 0 overrides the global hour");
    // Min runtime floor.
    let f = full(fx()).with(|f| f.snap.config.preempt.min_runtime_secs = 3600).job(wide(10, 1000));
    assert_eq!(guard_line(&f).0.as_deref(), Some("min runtime"));
    // Reservation: only a strictly higher tier may preempt into one.
    let active = crate::model::Resv {
        name: "maint".into(),
        start_ms: NOW - 60_000,
        end_ms: NOW + 3_600_000,
        nodes: vec![],
        partition: String::new(),
        users: vec!["root".into()],
        users_deny: false,
        accounts: vec![],
        accounts_deny: false,
        licenses: vec![],
        flags: 0,
    };
    let f = full(fx())
        .with(|f| f.snap.jobs[0].reservation = Some("maint".into()))
        .with(|f| f.snap.resvs = std::sync::Arc::new(vec![active]))
        .job(wide(10, 1000));
    assert_eq!(guard_line(&f).0.as_deref(), Some("reservation"));
    // No shared node: the pending job excludes n1.
    let f = full(fx()).job(Job { exclude: vec!["n1".into()], ..wide(10, 1000) });
    assert!(victims(&f).is_empty());
    let plan = explain_job(&f.snap_with_catalog(), None, NOW, 10).unwrap();
    let c = plan.candidates.iter().find(|c| c.candidate.job == 1).unwrap();
    assert_eq!(c.decided_by().as_deref(), Some("node overlap"));
}

use crate::model::Qos;

#[test]
fn requeue_turns_into_cancel_for_a_job_that_may_not_requeue() {
    let f = full(fx()).with(|f| f.snap.jobs[0].requeueable = false).job(wide(10, 1000));
    assert_eq!(victims(&f), vec![(1, 10, PreemptMode::Cancel)]);
}

#[test]
fn pool_threshold_and_min_gap_gate_eviction() {
    // One of four nodes busy: 25% < 75%, so nothing is evicted even with a gap.
    let f = Fx::new(4, 4, 0, 0)
        .with(|f| {
            f.snap.partitions[0].preempt_mode = PreemptMode::Requeue;
            f.snap.config.preempt =
                PreemptConfig { enabled: true, min_runtime_secs: 0, ..PreemptConfig::default() };
        })
        .running(run_on(wide(1, 100), &["n1"], NOW - MIN))
        .job(Job { num_nodes: 4, ntasks: 16, ..wide(10, 1000) });
    let plan = f.plan();
    let v = plan.verdict_of(10).unwrap();
    assert_eq!(v.outcome, Outcome::Checks);
    assert_eq!(
        v.checks.last().unwrap().to_string(),
        "pool cpu utilization 25% vs scheduler.preemption_threshold 75% → blocks"
    );
    // preemption_gap: 1000 - 100 = 900 is short of 950.
    let f = full(fx()).with(|f| f.snap.config.preempt.min_gap = Some(950.0)).job(wide(10, 1000));
    assert!(victims(&f).is_empty());
}

#[test]
fn several_victims_only_when_the_set_makes_room() {
    // The pending job needs both nodes; each alone is not enough.
    let both = |multi: bool| {
        fx().with(|f| f.snap.config.preempt.multi_victim = multi)
            .running(run_on(wide(1, 100), &["n1"], NOW - MIN))
            .running(run_on(wide(2, 200), &["n2"], NOW - MIN))
            .job(Job { num_nodes: 2, ntasks: 8, ..wide(10, 1000) })
    };
    assert!(victims(&both(false)).is_empty());
    let plan = both(false).plan();
    assert!(matches!(
        plan.verdict_of(10).unwrap().outcome,
        Outcome::NotEnough { eligible: 2, multi_victim: false }
    ));
    let mut got: Vec<u64> = victims(&both(true)).iter().map(|v| v.0).collect();
    got.sort();
    assert_eq!(got, vec![1, 2]);
    // With job 2 above the gap, the one eligible victim cannot make room: evict none.
    let f = fx()
        .with(|f| f.snap.config.preempt.multi_victim = true)
        .running(run_on(wide(1, 100), &["n1"], NOW - MIN))
        .running(run_on(wide(2, 900), &["n2"], NOW - MIN))
        .job(Job { num_nodes: 2, ntasks: 8, ..wide(10, 1000) });
    assert!(victims(&f).is_empty());
    // The per-pass cap.
    let f = both(true).with(|f| f.snap.config.preempt.max_evictions = 1);
    assert!(victims(&f).is_empty());
    assert!(matches!(f.plan().verdict_of(10).unwrap().outcome, Outcome::OverCap { needed: 2, left: 1 }));
}

#[test]
fn the_drain_timeout_waits_before_new_victims() {
    let f = full(fx()).job(wide(10, 1000)).with(|f| {
        f.snap.evicted_for.insert(10, NOW - 5_000);
    });
    assert!(victims(&f).is_empty());
    let f = f.with(|f| {
        f.snap.evicted_for.insert(10, NOW - 31_000);
    });
    assert_eq!(victims(&f).len(), 1);
}

#[test]
fn a_suspended_job_keeps_its_room_for_the_preemptor_then_resumes() {
    let susp = |j: Job, by: u64| Job {
        state: JobState::Suspended { nodes: vec!["n1".into()], start_ms: NOW - MIN, by },
        ..j
    };
    // Job 1 suspended for 10; n1's CPUs are free (the controller gave them back).
    let f = fx()
        .running(run_on(wide(2, 5000), &["n2"], NOW - MIN))
        .job(susp(wide(1, 100), 10))
        .job(wide(11, 9000))
        .job(wide(10, 1000));
    let plan = f.plan();
    assert_eq!(plan.start_of(10).map(|s| s.nodes.clone()), Some(vec!["n1".to_string()]));
    assert!(plan.start_of(11).is_none(), "a higher job may not take the room held for the preemptor");
    // The preemptor is gone: job 1 resumes before anything else starts.
    let f = fx()
        .running(run_on(wide(2, 5000), &["n2"], NOW - MIN))
        .job(susp(wide(1, 100), 10))
        .job(wide(11, 9000));
    let plan = f.plan();
    assert_eq!(plan.resumes, vec![1]);
    assert!(plan.start_of(11).is_none());
}

#[test]
fn explain_pair_gives_every_guard_in_order() {
    let f = full(fx()).job(wide(10, 1000));
    let v = explain_pair(&f.snap_with_catalog(), NOW, 10, 1).unwrap();
    let names: Vec<&str> = v.guards.iter().map(|g| g.name()).collect();
    assert_eq!(
        names,
        [
            "partition mode",
            "qos allow-list",
            "preempt mode",
            "exempt time",
            "min runtime",
            "reservation",
            "node overlap"
        ]
    );
    assert!(v.eligible());
    let lines = v.lines();
    assert!(
        lines[0].starts_with("pending job 10: 1000.0 × min(1.00, 10) × 1.000 × max(1, 1) = 1000.0"),
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap(), "verdict: job 10 may preempt job 1 (requeue)");
    assert!(explain_pair(&f.snap_with_catalog(), NOW, 1, 10).unwrap_err().contains("not pending"));
    assert!(explain_pair(&f.snap_with_catalog(), NOW, 10, 99).unwrap_err().contains("not running"));
}
