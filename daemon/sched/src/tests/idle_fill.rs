//! Idle-fill's lending half, each test naming the sentence of
//! spur-idle-fill.md it checks: sole-breach eligibility, the kinds never
//! lent, placement after every job with a claim and off reservations,
//! borrowed runs outside the quota aggregates, and the loan ceilings.

use super::{Fx, MIN, NOW, assoc, job, outcome, qos, run_on, tres, user};
use crate::model::Qos;
use crate::{IdleFillConfig, Job, Plan};

const TEAM: &str = "team";

/// An exclusive job of alice's in QOS `team` with a one-hour limit: a whole node each.
fn team(id: u64) -> Job {
    Job {
        qos: Some(TEAM.into()),
        account: Some("phys".into()),
        exclusive: true,
        time_limit: Some(60),
        ..job(id, "alice")
    }
}

/// An in-quota job of bob's (QOS `normal`, no caps), exclusive, one hour.
fn other(id: u64) -> Job {
    Job {
        qos: Some("normal".into()),
        account: Some("phys".into()),
        exclusive: true,
        time_limit: Some(60),
        ..job(id, "bob")
    }
}

/// `n` nodes; QOS `team` capped at `node=1` and already at it (job 50 on n1).
fn at_cap(n: usize, idle_fill: bool) -> Fx {
    Fx::new(n, 8, 16000, 2)
        .qos(Qos { grp_tres: tres("node=1"), priority: 100, ..qos(TEAM) })
        .user(user("bob", "phys", vec![assoc("phys")]))
        .running(run_on(team(50), &["n1"], NOW - MIN))
        .with(|f| f.snap.config.idle_fill.enabled = idle_fill)
}

fn borrowed(plan: &Plan) -> Vec<u64> {
    plan.borrowed().map(|s| s.job).collect()
}

const CAPPED: &str = "QOSGrpNodeLimit: QOS team is at 1/1 nodes (grptres); the job needs 1 more";

#[test]
fn off_by_default_nothing_is_lent() {
    // "The feature is off by default."
    let plan = at_cap(3, false).job(team(1)).plan();
    assert_eq!(outcome(&plan, 1), Err(CAPPED.into()));
    assert!(!IdleFillConfig::default().enabled);
}

#[test]
fn a_job_held_only_by_its_qos_node_cap_borrows_an_idle_node() {
    // "Idle-fill lets such a job run anyway, on capacity no job with a quota claim wants."
    let plan = at_cap(3, true).job(team(1)).job(team(2)).plan();
    assert_eq!(borrowed(&plan), [1, 2]);
    assert_eq!(outcome(&plan, 1).unwrap().len(), 1);
    assert_eq!(plan.idle_fill.admitted, 2);
    // "A borrowed run is held outside every quota aggregate": the second loan was not
    // refused by the first one's node.
}

#[test]
fn a_second_breach_keeps_the_job_waiting_on_its_real_reason() {
    // "A job over both its node cap and its GPU cap must not be lent nodes": here the
    // association's own node cap is the second breach (its GPU cap fails before placement).
    let fx = at_cap(3, true).with(|f| {
        let mut a = assoc("phys");
        a.grp_tres = tres("node=1");
        f.catalog.users.insert("alice".into(), user("alice", "phys", vec![a]));
    });
    let plan = fx.job(team(1)).plan();
    assert!(borrowed(&plan).is_empty());
    // "An over-quota job that has not been lent capacity keeps reporting its real reason."
    assert_eq!(outcome(&plan, 1), Err(CAPPED.into()));
    let gpu = at_cap(3, true).with(|f| {
        f.catalog.qos.get_mut(TEAM).unwrap().grp_tres = tres("node=1,gres/gpu=1");
        f.snap.jobs[0].gpus = 1;
    });
    let plan = gpu.job(Job { gpus: 1, ..team(1) }).plan();
    assert!(borrowed(&plan).is_empty());
    assert!(outcome(&plan, 1).unwrap_err().starts_with("QOSGrpGRES"), "{:?}", outcome(&plan, 1));
}

#[test]
fn jobs_without_a_time_limit_or_with_licenses_are_never_lent() {
    // "Jobs with no effective time limit." / "Jobs requesting licenses."
    let fx = at_cap(3, true).with(|f| {
        f.snap.licenses.insert("matlab".into(), 5);
    });
    let plan = fx
        .job(Job { time_limit: None, ..team(1) })
        .job(Job { licenses: vec![("matlab".into(), 1)], ..team(2) })
        .plan();
    assert!(borrowed(&plan).is_empty());
    assert_eq!(outcome(&plan, 1), Err(CAPPED.into()));
    assert_eq!(outcome(&plan, 2), Err(CAPPED.into()));
}

#[test]
fn borrow_candidates_are_placed_after_every_job_with_a_claim() {
    // "They are considered last, below every job with a claim": the team job is
    // first by priority, yet bob's in-quota job takes the one idle node.
    let plan = at_cap(2, true).job(team(1)).job(Job { submit_ms: NOW - 1, ..other(2) }).plan();
    assert_eq!(outcome(&plan, 2), Ok(vec!["n2".into()]));
    assert_eq!(outcome(&plan, 1), Err(CAPPED.into()));
    assert!(borrowed(&plan).is_empty());
}

#[test]
fn a_loan_never_takes_a_reservation_s_nodes_nor_holds_one() {
    // Bob's 2-node job reserves n1 and n2 behind job 50; a one-hour loan could end before
    // that start, and backfill would allow it, but "it cannot displace a future slot".
    let fx = at_cap(2, true).with(|f| f.snap.jobs[0].time_limit = Some(120));
    let plan = fx.job(Job { num_nodes: 2, ..other(2) }).job(Job { time_limit: Some(1), ..team(1) }).plan();
    assert!(outcome(&plan, 2).unwrap_err().starts_with("Resources"));
    assert_eq!(outcome(&plan, 1), Err(CAPPED.into()));
    // "A candidate that cannot start immediately ... holds no future reservation."
    assert!(plan.reservations.iter().all(|r| r.job != 1), "{:?}", plan.reservations);
    // A job with a claim and the same one-minute limit does backfill there.
    let fx = at_cap(2, true).with(|f| f.snap.jobs[0].time_limit = Some(120));
    let plan = fx.job(Job { num_nodes: 2, ..other(2) }).job(Job { time_limit: Some(1), ..other(3) }).plan();
    assert_eq!(outcome(&plan, 3), Ok(vec!["n2".into()]));
}

#[test]
fn a_loan_is_never_placed_on_a_node_an_admin_reservation_holds_even_before_its_window() {
    // A window on n2 from two hours on: the one-hour loan would end before it,
    // but lent capacity goes back only on a reclaim, so it keeps off n2.
    let window = |nodes: &[&str]| crate::model::Resv {
        name: "later".into(),
        start_ms: NOW + 120 * MIN,
        end_ms: NOW + 180 * MIN,
        nodes: nodes.iter().map(|n| n.to_string()).collect(),
        partition: String::new(),
        users: vec!["bob".into()],
        users_deny: false,
        accounts: vec![],
        accounts_deny: false,
        licenses: vec![],
        flags: 0,
    };
    let resvs = |nodes: &[&str]| std::sync::Arc::new(vec![window(nodes)]);
    let fx = at_cap(3, true).with(|f| f.snap.resvs = resvs(&["n2"]));
    let plan = fx.job(team(1)).plan();
    assert_eq!(outcome(&plan, 1), Ok(vec!["n3".into()]));
    assert_eq!(borrowed(&plan), [1]);
    let fx = at_cap(3, true).with(|f| f.snap.resvs = resvs(&["n2", "n3"]));
    let plan = fx.job(team(1)).plan();
    assert!(borrowed(&plan).is_empty(), "every idle node is reserved: nothing is lent");
    // A job with a claim and the same limit runs on n2 before the window.
    let fx = at_cap(3, true).with(|f| f.snap.resvs = resvs(&["n2", "n3"]));
    assert_eq!(outcome(&fx.job(other(2)).plan(), 2), Ok(vec!["n2".into()]));
}

#[test]
fn a_borrowed_run_counts_in_no_aggregate_so_the_team_s_next_job_is_in_quota() {
    // Job 50 on n1 is borrowed: the team occupies 0/1 nodes of quota, so job 1 starts
    // inside its quota (not borrowed) and job 2 then borrows.
    let fx = at_cap(3, true).with(|f| f.snap.jobs[0].borrowed = true);
    let plan = fx.job(team(1)).job(team(2)).plan();
    assert!(outcome(&plan, 1).is_ok());
    assert_eq!(borrowed(&plan), [2]);
}

#[test]
fn the_ceilings_refuse_new_loans_and_name_which_one() {
    // "2.0 against a cap of node=4 allows 8": here 1.0 against node=1 allows 1, held by job 50.
    let factor = at_cap(4, true).with(|f| {
        f.snap.jobs[0].borrowed = true;
        f.snap.jobs.push(run_on(Job { borrowed: true, ..team(51) }, &["n2"], NOW - MIN));
        f.snap.config.idle_fill =
            IdleFillConfig { max_borrow_factor: 1.0, ..f.snap.config.idle_fill.clone() };
    });
    let plan = factor.job(team(1)).job(team(2)).plan();
    // Job 1 fits in quota (the borrowed runs count in none); job 2 would be a second loan.
    assert!(outcome(&plan, 1).is_ok() && borrowed(&plan).is_empty());
    assert_eq!(outcome(&plan, 2), Err(CAPPED.into()));
    assert_eq!((plan.idle_fill.refused_factor, plan.idle_fill.admitted), (1, 0));
    // 0.25 of 4 nodes is 1, and it is taken.
    let fraction = at_cap(4, true).with(|f| {
        f.snap.jobs.push(run_on(Job { borrowed: true, ..team(51) }, &["n2"], NOW - MIN));
        f.snap.config.idle_fill =
            IdleFillConfig { max_cluster_fraction: 0.25, ..f.snap.config.idle_fill.clone() };
    });
    let plan = fraction.job(team(1)).plan();
    assert_eq!(plan.idle_fill.refused_fraction, 1);
    assert_eq!(outcome(&plan, 1), Err(CAPPED.into()));
}

/// n1 holds team's in-quota job 50; `borrowed` runs sit on the other nodes, started `ago` ms ago.
fn lent_out(n: usize, ago: i64) -> Fx {
    at_cap(n, true).with(|f| {
        for i in 2..=n {
            let j = run_on(Job { borrowed: true, ..team(50 + i as u64) }, &[&format!("n{i}")], NOW - ago);
            f.snap.jobs.push(j);
        }
    })
}

fn evicted(plan: &Plan) -> Vec<(u64, u64, bool)> {
    plan.preemptions.iter().map(|p| (p.victim, p.by, p.reclaim)).collect()
}

#[test]
fn a_job_with_a_claim_reclaims_a_borrowed_run_whatever_preempt_mode_says() {
    // "Reclaim ignores preempt_mode": the fixtures' partition is "off" and preemption is disabled.
    let plan = lent_out(2, 10 * MIN).job(other(1)).plan();
    assert_eq!(evicted(&plan), [(52, 1, true)]);
    // "The fate is always requeue", even for a job that may not requeue.
    assert_eq!(plan.preemptions[0].mode, spur_vocab::names::PreemptMode::Requeue);
    let fx = lent_out(2, 10 * MIN).with(|f| f.snap.jobs[1].requeueable = false);
    assert_eq!(fx.job(other(1)).plan().preemptions[0].mode, spur_vocab::names::PreemptMode::Requeue);
    // Off, nothing is reclaimed.
    let off = lent_out(2, 10 * MIN).with(|f| f.snap.config.idle_fill.enabled = false);
    assert!(off.job(other(1)).plan().preemptions.is_empty());
}

#[test]
fn the_exempt_window_guards_a_borrowed_run_and_doubles_per_reclaim() {
    // "How long a borrowed job runs before it may be reclaimed": 60 s by default.
    assert!(lent_out(2, 30_000).job(other(1)).plan().preemptions.is_empty());
    let twice = |ago| lent_out(2, ago).with(|f| f.snap.jobs[1].reclaims = 1).job(other(1)).plan();
    assert!(twice(90_000).preemptions.is_empty(), "reclaimed once before: 120 s");
    assert_eq!(evicted(&twice(130_000)), [(52, 1, true)]);
}

#[test]
fn all_or_nothing_a_job_that_cannot_be_served_evicts_nothing() {
    // "A node counts as recovered only when every job on it is reclaimable": n1 holds an
    // in-quota run, so a 2-node claim cannot be served by reclaiming n2 alone.
    assert!(lent_out(2, 10 * MIN).job(Job { num_nodes: 2, ..other(1) }).plan().preemptions.is_empty());
    // "A job that can never be placed anywhere ... evicts nothing, ever."
    assert!(lent_out(2, 10 * MIN).job(Job { gpus: 9, ..other(1) }).plan().preemptions.is_empty());
    // "Only as many nodes as the claim needs are taken."
    assert_eq!(evicted(&lent_out(4, 10 * MIN).job(other(1)).plan()).len(), 1);
}

/// Burst QOS (idlefillpreemptable, priority -1000) with job 60 running on n3, in quota.
fn with_burst(fx: Fx) -> Fx {
    let burst = Qos { idle_fill_preemptable: true, priority: -1000, ..qos("burst") };
    let job = Job { qos: Some("burst".into()), ..other(60) };
    fx.qos(burst).with(|f| {
        f.snap.jobs.retain(|j| j.id != 53);
        f.snap.jobs.push(run_on(job, &["n3"], NOW - 10 * MIN));
    })
}

#[test]
fn a_claim_takes_the_cheapest_opportunistic_run_first() {
    // "A job with a quota claim evicts the lowest-priority opportunistic run available."
    let plan = with_burst(lent_out(3, 10 * MIN)).job(other(1)).plan();
    assert_eq!(evicted(&plan), [(60, 1, true)], "the burst job, not team's borrowed run");
}

#[test]
fn an_opportunistic_job_displaces_only_strictly_cheaper_work() {
    // "A burst job never displaces a dearer borrowed run."
    let fx = with_burst(lent_out(3, 10 * MIN)).with(|f| f.snap.jobs.retain(|j| j.id != 60));
    let burst = Job { qos: Some("burst".into()), ..other(1) };
    assert!(fx.job(burst).plan().preemptions.is_empty());
    // "A high-priority idle-fill job outranks a low-priority burst job": a claimant in an
    // idlefillpreemptable QOS of priority 200 may take team's run (100).
    let high = Qos { idle_fill_preemptable: true, priority: 200, ..qos("high") };
    let fx = lent_out(2, 10 * MIN).qos(high);
    let plan = fx.job(Job { qos: Some("high".into()), ..other(1) }).plan();
    assert_eq!(evicted(&plan), [(52, 1, true)]);
}

#[test]
fn reclaims_count_against_max_evictions_per_tick() {
    // "max_evictions_per_tick caps reclaims and preemptions together."
    let fx = lent_out(3, 10 * MIN).with(|f| f.snap.config.preempt.max_evictions = 1);
    let plan = fx.job(other(1)).job(other(2)).plan();
    assert_eq!(plan.preemptions.len(), 1);
}

#[test]
fn explain_says_whether_an_over_quota_job_may_borrow_and_what_else_holds_it() {
    use crate::idle_fill_explain::{Borrow, IdleFillVerdict};
    // Nothing idle: eligible, no node now.
    let fx = at_cap(1, true).job(team(1));
    assert_eq!(
        fx.explained(1).idle_fill,
        Some(IdleFillVerdict::Borrow { eligible: true, why: Borrow::NoIdleNode })
    );
    let fx = at_cap(2, true).with(|f| {
        let mut a = assoc("phys");
        a.grp_tres = tres("node=1");
        f.catalog.users.insert("alice".into(), user("alice", "phys", vec![a]));
    });
    let v = fx.job(team(1)).explained(1).idle_fill.unwrap();
    let IdleFillVerdict::Borrow { eligible: false, why: Borrow::AlsoBreaches(r) } = &v else {
        panic!("{v:?}")
    };
    assert!(r.to_string().starts_with("AssocGrpNodeLimit"), "{r}");
    assert!(v.sentence().contains("not its only breach: AssocGrpNodeLimit"), "{}", v.sentence());
    let v = at_cap(2, true).job(Job { time_limit: None, ..team(1) }).explained(1).idle_fill.unwrap();
    assert_eq!(v, IdleFillVerdict::Borrow { eligible: false, why: Borrow::NoTimeLimit });
    assert!(at_cap(2, false).job(team(1)).explained(1).idle_fill.is_none(), "off: nothing to say");
}

#[test]
fn explain_lists_the_runs_reclaim_weighed_with_their_checks() {
    use crate::idle_fill_explain::IdleFillVerdict;
    // Job 52 borrowed on n2 for 10 minutes, job 53 on n3 for 30 s (inside its window).
    let fx = lent_out(3, 10 * MIN).with(|f| {
        if let crate::JobState::Running { start_ms, .. } = &mut f.snap.jobs[2].state {
            *start_ms = NOW - 30_000;
        }
    });
    let v = fx.job(other(1)).explained(1).idle_fill.unwrap();
    let IdleFillVerdict::Reclaim { candidates, considered, chosen } = &v else { panic!("{v:?}") };
    assert_eq!((candidates.len(), *considered, chosen.as_slice()), (3, 3, &[52][..]));
    assert_eq!(candidates[0].job, 52, "the eligible one first");
    let marks = candidates.iter().find(|c| c.job == 53).unwrap().marks();
    let window = marks.iter().find(|m| m.0 == "exempt window").unwrap();
    assert!(!window.1 && window.2.starts_with("ran 30s of its 60s exempt window"), "{window:?}");
    let in_quota = candidates.iter().find(|c| c.job == 50).unwrap().marks();
    assert!(!in_quota[0].1 && in_quota[0].2.starts_with("holds a claim"), "{in_quota:?}");
    assert_eq!(v.sentence(), "idle-fill reclaim: requeue 52 (cheapest first, no more than needed)");
}

#[test]
fn a_borrower_reclaims_only_from_strictly_cheaper_opportunistic_work() {
    // "A borrowed job that needs nodes can reclaim from an idlefillpreemptable QOS of
    // strictly lower priority": team (100) over its cap, n2 and n3 held by burst (-1000).
    let burst = Qos { idle_fill_preemptable: true, priority: -1000, ..qos("burst") };
    let fx = at_cap(2, true).qos(burst.clone()).with(|f| {
        let job = Job { qos: Some("burst".into()), ..other(60) };
        f.snap.jobs.push(run_on(job, &["n2"], NOW - 10 * MIN));
    });
    let plan = fx.job(team(1)).plan();
    assert_eq!(evicted(&plan), [(60, 1, true)]);
    assert_eq!(outcome(&plan, 1), Err(CAPPED.into()), "it borrows once the node is free");
    // "The reverse is refused": burst at 500 is dearer than team's 100.
    let dear = Qos { priority: 500, ..burst };
    let fx = at_cap(2, true).qos(dear).with(|f| {
        let job = Job { qos: Some("burst".into()), ..other(60) };
        f.snap.jobs.push(run_on(job, &["n2"], NOW - 10 * MIN));
    });
    assert!(fx.job(team(1)).plan().preemptions.is_empty());
}
