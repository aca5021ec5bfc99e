//! The Preemption pane: opened with `w` on a Queue row, filled from the
//! controller's explanation (marks and sentences as sent), re-read when the
//! jobs change, answers for another job dropped, provisioner definitions'
//! verdicts under the outcome, and snapshots at 80x24 and 120x40.

mod common;

use common::{draw, on_queue};
use spur_console::model::session::Role;
use spur_console::{Action, Effect, Msg, PaneId, Rpc, dispatch};
use spur_proto::v1::{DefinitionVerdict, ExplainSide, Explanation, Mark, PairExplanation, PriorityTerms};

fn mark(name: &str, passes: bool, sentence: &str) -> Mark {
    Mark { name: name.into(), passes, sentence: sentence.into() }
}

fn side(id: u64, user: &str, qos: &str, effective: f64) -> Option<ExplainSide> {
    let priority =
        Some(PriorityTerms { base: effective, fair_share: 1.0, age: 1.0, tier: 1, effective, ordered: None });
    Some(ExplainSide { job_id: id, user: user.into(), qos: qos.into(), partition: "batch".into(), priority })
}

const GUARDS: [&str; 7] = [
    "partition mode",
    "qos allow-list",
    "preempt mode",
    "exempt time",
    "min runtime",
    "reservation",
    "node overlap",
];

/// A candidate; `blocks` names the guard that fails, if any.
fn pair(id: u64, user: &str, qos: &str, eff: f64, gap: bool, blocks: Option<&str>) -> PairExplanation {
    let guards: Vec<Mark> =
        GUARDS.iter().map(|g| mark(g, Some(*g) != blocks, &format!("guard {g}: … → {}", "passes"))).collect();
    let eligible = gap && blocks.is_none();
    let decided_by = if !gap { "gap".to_string() } else { blocks.unwrap_or_default().to_string() };
    PairExplanation {
        pending: side(103, "carol", "gpu", 4000.0),
        candidate: side(id, user, qos, eff),
        gap: Some(mark(
            "gap",
            gap,
            &format!("gap: {eff:.1} < 4000.0/2 = 2000.0 → {}", if gap { "holds" } else { "fails" }),
        )),
        guards,
        eligible,
        decided_by,
        action: "requeue".into(),
        lines: vec![
            "pending job 103: 4000.0 × min(1.00, 10) × 1.000 × max(1, 1) = 4000.0".into(),
            format!("running job {id}: {eff:.1} × min(1.00, 10) × 1.000 × max(1, 1) = {eff:.1}"),
            format!("gap: {eff:.1} < 4000.0/2 = 2000.0 → {}", if gap { "holds" } else { "fails" }),
        ],
    }
}

fn explanation() -> Explanation {
    Explanation {
        job_id: 103,
        reason: "Resources".into(),
        reason_detail: "partition batch has no room now for 2 nodes × 8 CPUs".into(),
        checks: vec![
            mark("enabled", true, "scheduler.preemption_enabled = true → passes"),
            mark("partition mode", true, "partition 'batch' preempt_mode=requeue → passes"),
            mark(
                "eviction cap",
                true,
                "0 evictions this pass; scheduler.max_evictions_per_tick is 8 → passes",
            ),
            mark(
                "pool threshold",
                true,
                "pool cpu utilization 100% vs scheduler.preemption_threshold 75% → passes",
            ),
        ],
        candidates: vec![
            pair(201, "alice", "burst", 500.0, true, None),
            pair(204, "bob", "normal", 900.0, true, Some("exempt time")),
            pair(202, "dave", "", 3000.0, false, None),
        ],
        considered: 3,
        outcome: "evict job(s) 201: without them the job's 2 nodes × 8 CPUs fits on node[01-02]".into(),
        victims: vec![201],
        pair: None,
        pass_time_ms: 0,
        idle_fill: None,
        // No provisioners.yaml: the pane has no definitions section.
        definitions: vec![],
        priority_ordered: None,
        priority_inputs: vec![],
        dynamic: vec![],
    }
}

/// On the Queue, `w` on a job opens the pane and asks for its explanation.
fn opened(size: (u16, u16)) -> spur_console::State {
    let mut state = on_queue(false, size, Some(Role::Operator));
    let id = spur_console::update::nav::current_key(&state).unwrap().parse::<u64>().unwrap();
    let effects = dispatch(&mut state, Action::Explain);
    assert_eq!(state.pane, PaneId::Preempt);
    assert_eq!(effects, vec![Effect::Rpc(Rpc::Explain(id))]);
    let answer = Explanation { job_id: id, ..explanation() };
    dispatch(&mut state, Action::Net(Msg::Explained { job: id, answer: Ok(Box::new(answer)) }));
    state
}

#[test]
fn a_dynamic_definition_that_can_still_provision_shows_as_the_blocking_check() {
    let mut state = on_queue(false, (120, 40), Some(Role::Operator));
    let id = spur_console::update::nav::current_key(&state).unwrap().parse::<u64>().unwrap();
    dispatch(&mut state, Action::Explain);
    let headroom = spur_proto::v1::DynamicHeadroom {
        definition: "burst".into(),
        held: 2,
        max_nodes: 3,
        unavailable: false,
        blocks: true,
    };
    let answer = Explanation {
        job_id: id,
        dynamic: vec![headroom],
        candidates: vec![],
        outcome: "no preemption: a check above blocks it".into(),
        ..explanation()
    };
    dispatch(&mut state, Action::Net(Msg::Explained { job: id, answer: Ok(Box::new(answer)) }));
    let text = draw(&state).backend().to_string();
    assert!(text.contains("✗burst"), "{text}");
    assert!(
        text.contains(
            "✗ provisioner definition burst can still provision (2 of maxNodes 3 held): preemption waits"
        ),
        "{text}"
    );
}

#[test]
fn preemption_pane() {
    for size in [(80, 24), (120, 40)] {
        let state = opened(size);
        let text = draw(&state).backend().to_string();
        assert!(
            text.contains("✓ requeue") && text.contains("✗ exempt time") && text.contains("✗ gap"),
            "{text}"
        );
        assert!(text.contains("outcome: evict job(s) 201"), "{text}");
        insta::assert_snapshot!(format!("preemption_{}x{}", size.0, size.1), draw(&state).backend());
    }
}

#[test]
fn reclaim_verdicts_sit_beside_preemption_s() {
    use spur_proto::v1::{IdleFillExplanation, ReclaimCandidate};
    let mut state = on_queue(false, (80, 24), Some(Role::Operator));
    let id = spur_console::update::nav::current_key(&state).unwrap().parse::<u64>().unwrap();
    dispatch(&mut state, Action::Explain);
    let run = |job_id, eligible, why: &str| ReclaimCandidate {
        job_id,
        qos: "ifq".into(),
        qos_priority: 0,
        eligible,
        checks: vec![mark("exempt window", eligible, why)],
    };
    let idle_fill = IdleFillExplanation {
        kind: "reclaim".into(),
        eligible: true,
        sentence: "idle-fill reclaim: requeue 301 (cheapest first, no more than needed)".into(),
        candidates: vec![
            run(301, true, "ran 600s of its 60s exempt window"),
            run(302, false, "ran 5s of its 60s exempt window"),
        ],
        considered: 2,
        chosen: vec![301],
    };
    let answer = Explanation { job_id: id, idle_fill: Some(idle_fill), ..explanation() };
    dispatch(&mut state, Action::Net(Msg::Explained { job: id, answer: Ok(Box::new(answer)) }));
    let text = draw(&state).backend().to_string();
    assert!(text.contains("⇄ idle-fill reclaim: requeue 301"), "{text}");
    assert!(text.contains("⇄ job 301 (qos ifq, 0): reclaimable"), "{text}");
    assert!(text.contains("⇄ job 302 (qos ifq, 0): kept: ran 5s of its 60s"), "{text}");
}

#[test]
fn enter_shows_the_whole_verdict() {
    let mut state = opened((80, 24));
    dispatch(&mut state, Action::Open);
    let text = draw(&state).backend().to_string();
    assert!(text.contains("running job 201: 500.0"), "{text}");
    assert!(text.contains("gap: 500.0 < 4000.0/2 = 2000.0 → holds"), "{text}");
}

#[test]
fn a_job_change_re_reads_the_shown_explanation_once() {
    let mut state = opened((80, 24));
    let job = state.preempt.job.unwrap();
    let set = spur_console::JobSet::from_pb(common::jobs(), common::now());
    let effects = dispatch(&mut state, Action::Net(Msg::Jobs(std::sync::Arc::new(set.clone()))));
    assert!(effects.contains(&Effect::Rpc(Rpc::Explain(job))), "{effects:?}");
    // A second change while the read is out is coalesced into one follow-up.
    let effects = dispatch(&mut state, Action::Net(Msg::Jobs(std::sync::Arc::new(set))));
    assert!(!effects.iter().any(|e| matches!(e, Effect::Rpc(Rpc::Explain(_)))), "{effects:?}");
    let effects = dispatch(&mut state, Action::Net(Msg::Explained { job, answer: Err("job ended".into()) }));
    assert_eq!(effects, vec![Effect::Rpc(Rpc::Explain(job))]);
    let text = draw(&state).backend().to_string();
    assert!(text.contains("✗ job ended (showing the last answer)"), "{text}");
    // An answer for a job no longer shown is dropped.
    dispatch(&mut state, Action::Net(Msg::Explained { job: 999, answer: Ok(Box::new(explanation())) }));
    assert_eq!(state.preempt.job, Some(job));
}

#[test]
fn w_outside_the_queue_says_where_it_works() {
    let mut state = on_queue(false, (80, 24), Some(Role::Operator));
    dispatch(&mut state, Action::GoPane(PaneId::Nodes));
    assert!(dispatch(&mut state, Action::Explain).is_empty());
    assert!(state.message.as_ref().unwrap().text.contains("Queue pane"));
}

/// Three definitions as the controller words them: gpu admits the job,
/// ml-only's policy refuses it, gold wants an annotation the job lacks.
fn verdicts() -> Vec<DefinitionVerdict> {
    let policy = r#"request.owner.account_id == "ml""#;
    vec![
        DefinitionVerdict { id: "gpu".into(), admitted: true, kind: "admitted".into(), ..Default::default() },
        DefinitionVerdict {
            id: "ml-only".into(),
            kind: "policy".into(),
            why: format!("ml-only: policy is false ({policy})"),
            policy: policy.into(),
            ..Default::default()
        },
        DefinitionVerdict {
            id: "gold".into(),
            kind: "annotation".into(),
            why: "gold: annotation tier=gold not matched by tier=silver (ExactMatch)".into(),
            key: "tier".into(),
            wanted: "gold".into(),
            had: "silver".into(),
            matcher: "ExactMatch".into(),
            ..Default::default()
        },
    ]
}

/// The pane on the first Queue row with `answer` (its job id set to that row's).
fn explained(answer: Explanation) -> spur_console::State {
    let mut state = on_queue(false, (80, 24), Some(Role::Operator));
    let id = spur_console::update::nav::current_key(&state).unwrap().parse::<u64>().unwrap();
    dispatch(&mut state, Action::Explain);
    let answer = Explanation { job_id: id, ..answer };
    dispatch(&mut state, Action::Net(Msg::Explained { job: id, answer: Ok(Box::new(answer)) }));
    state
}

#[test]
fn definitions_are_listed_under_the_outcome() {
    let state = explained(Explanation { definitions: verdicts(), ..explanation() });
    let text = draw(&state).backend().to_string();
    assert!(text.contains("Provisioner definitions:"), "{text}");
    assert!(text.contains("✓ gpu: admits the job"), "{text}");
    assert!(text.contains(r#"✗ ml-only: policy is false (request.owner.account_id == "ml")"#), "{text}");
    assert!(text.contains("✗ gold: annotation tier=gold not matched by tier=silver (ExactMatch)"), "{text}");
    // The candidates still have rows below.
    assert!(text.contains("✓ requeue"), "{text}");
    insta::assert_snapshot!("preemption_definitions_80x24", draw(&state).backend());
}

/// A job no definition admits: the refusals are in the reason's facts and
/// the section; they are said once, in the section, in BOLD.
#[test]
fn when_none_admits_the_refusals_are_said_once_and_stand_out() {
    let mut defs = verdicts();
    defs[0] = DefinitionVerdict {
        admitted: false,
        kind: "no_usable_nodes".into(),
        why: "gpu: its pool has no usable node in the partition".into(),
        ..defs[0].clone()
    };
    let refusals: Vec<String> = defs.iter().map(|d| d.why.clone()).collect();
    let answer = Explanation {
        reason: "NoProvisionerDefinition".into(),
        reason_detail: format!(
            "no provisioner definition admits the job in partition batch; {}",
            refusals.join("; ")
        ),
        checks: vec![],
        candidates: vec![],
        considered: 0,
        outcome: "not considered: the job pends for NoProvisionerDefinition, which preempting cannot fix"
            .into(),
        victims: vec![],
        definitions: defs,
        ..explanation()
    };
    let state = explained(answer);
    let term = draw(&state);
    let text = term.backend().to_string();
    assert!(text.contains("pends: NoProvisionerDefinition: no provisioner definition"), "{text}");
    for why in &refusals {
        assert_eq!(text.matches(why).count(), 1, "{why}:\n{text}");
    }
    // The screen wraps lines, so the pends line is checked whole too.
    let job = state.preempt.job.unwrap();
    let want = format!(
        "job {job} pends: NoProvisionerDefinition: no provisioner definition admits the job in partition batch"
    );
    assert_eq!(state.preempt.summary()[0].0, want);
    let buf = term.backend().buffer();
    let y = (0..buf.area.height)
        .find(|&y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect::<String>().contains("✗ gpu:"))
        .expect("the gpu line");
    assert!(buf[(4, y)].modifier.contains(ratatui::style::Modifier::BOLD), "{text}");
}

#[test]
fn a_long_list_ends_with_how_many_more() {
    let mut defs = verdicts();
    defs.extend((1..=3).map(|i| DefinitionVerdict {
        id: format!("cloud{i}"),
        kind: "no_driver".into(),
        why: format!("cloud{i}: aws definitions have no driver in this build"),
        ..Default::default()
    }));
    let state = explained(Explanation { definitions: defs, ..explanation() });
    let text = draw(&state).backend().to_string();
    assert!(text.contains("✗ cloud1: aws definitions"), "{text}");
    assert!(!text.contains("cloud2"), "{text}");
    assert!(text.contains("… 2 more definition(s) (scontrol explain job"), "{text}");
}
