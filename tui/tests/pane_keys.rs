//! Each pane's declaration (`PaneId::decl`) against dispatch: every key a
//! pane's hint line offers does something there (opens something, changes
//! the view or asks the controller), and every pane-only key that does
//! something on a pane is one its hint line offers. So the hints never
//! advertise a key that does nothing (the old `e edit  D delete` on HRES
//! and Preemption) nor hide one that works (the old HRES pane's `O`).

mod common;

use spur_console::model::session::Role;
use spur_console::model::state::State;
use spur_console::{Action, ClusterUpdate, Msg, PaneId, dispatch};
use spur_proto::v1::{ExplainSide, Explanation, License, PairExplanation};

fn layer(layer: &str, parent: &str) -> License {
    License {
        name: "power".into(),
        total: 100,
        free: 100,
        layer_name: layer.into(),
        parent_name: parent.into(),
        nodes: "node[01-08]".into(),
        mode: 3,
        conf_total: 100,
        ..License::default()
    }
}

fn candidate(id: u64) -> PairExplanation {
    let side = |job_id| Some(ExplainSide { job_id, user: "bob".into(), ..ExplainSide::default() });
    PairExplanation { pending: side(103), candidate: side(id), ..PairExplanation::default() }
}

/// A console as an Administrator with data in every pane (jobs, nodes,
/// provisioners, licenses, txn rows, an explanation), open on `pane` with
/// its second row selected.
fn on(pane: PaneId) -> State {
    let mut state = common::on_queue(false, (200, 50), Some(Role::Administrator));
    let nodes = ClusterUpdate {
        snapshot: true,
        nodes: common::nodes(),
        reservations: Some(common::reservations()),
        ..Default::default()
    };
    dispatch(&mut state, Action::Net(Msg::Cluster(nodes)));
    dispatch(&mut state, Action::Net(Msg::Provisioners(common::provisioners())));
    let licenses = vec![layer("top", ""), layer("rack1", "top"), layer("rack2", "top")];
    dispatch(&mut state, Action::Net(Msg::Licenses(licenses)));
    dispatch(&mut state, Action::Net(Msg::Shares(common::shares::shares())));
    dispatch(&mut state, Action::GoPane(PaneId::Audit));
    let sub = state.audit.sub;
    dispatch(&mut state, Action::Net(Msg::AuditRows { sub, rows: common::txn_rows(), lagged: None }));
    spur_console::update::preempt::open(&mut state, 103);
    let answer =
        Explanation { job_id: 103, candidates: vec![candidate(201), candidate(202)], ..Default::default() };
    dispatch(&mut state, Action::Net(Msg::Explained { job: 103, answer: Ok(Box::new(answer)) }));
    dispatch(&mut state, Action::GoPane(pane));
    dispatch(&mut state, Action::Down);
    if pane == PaneId::Queue {
        // Jobs of every kind marked, so each job action has some job it applies to.
        dispatch(&mut state, Action::Top);
        for _ in 0..state.table(pane).unwrap().rows.len() {
            dispatch(&mut state, Action::ToggleMark);
            dispatch(&mut state, Action::Down);
        }
    }
    state
}

/// What a key can change that an operator sees: the mode, the pane, the views, the tail's pause.
fn seen(state: &State) -> String {
    format!("{:?} {:?} {:?} {}", state.mode, state.pane, state.views, state.audit.paused)
}

/// Whether `action` on `pane` does something: asks the controller or changes what is seen.
fn handled(pane: PaneId, action: &Action) -> bool {
    let mut state = on(pane);
    let before = seen(&state);
    let effects = dispatch(&mut state, action.clone());
    !effects.is_empty() || seen(&state) != before
}

#[test]
fn every_offered_key_does_something_on_its_pane() {
    for pane in PaneId::ALL {
        let decl = pane.decl();
        assert!(!decl.hints.is_empty(), "{pane:?} offers no keys");
        for hint in &decl.hints {
            assert!(
                handled(pane, &hint.action),
                "{pane:?} offers {:?} ({}), which does nothing",
                hint.action,
                hint.label
            );
        }
    }
}

#[test]
fn every_pane_only_key_that_works_is_offered() {
    let mut keys: Vec<Action> = vec![Action::Edit, Action::Delete];
    for pane in PaneId::ALL {
        keys.extend(pane.decl().hints.iter().map(|h| h.action.clone()).filter(Action::pane_only));
    }
    keys.dedup();
    for pane in PaneId::ALL {
        for key in &keys {
            if handled(pane, key) {
                assert!(pane.offers(key), "{key:?} works on {pane:?}, whose hints do not offer it");
            }
        }
    }
    // Edit and delete are offered exactly where the form opens.
    for pane in PaneId::ALL {
        assert_eq!(pane.offers(&Action::Edit), pane.edits(), "{pane:?}");
        assert_eq!(pane.offers(&Action::Delete), pane.edits(), "{pane:?}");
    }
}

#[test]
fn a_pane_only_key_elsewhere_says_where_it_works() {
    let mut state = on(PaneId::Qos);
    dispatch(&mut state, Action::HresToggle);
    assert_eq!(state.message.unwrap().text, "that key works in the HRES pane (5)");
    let mut state = on(PaneId::Preempt);
    dispatch(&mut state, Action::JobStates);
    assert_eq!(state.message.unwrap().text, "that key works in the Queue pane (1)");
}

#[test]
fn every_pane_is_a_command_that_completes() {
    use spur_console::update::command::{self, Command};
    for pane in PaneId::ALL {
        assert_eq!(command::parse(pane.name()), Ok(Command::Pane(pane)));
        assert!(command::complete(pane.name()).candidates.contains(&pane.name()), "{pane:?}");
        assert_eq!(PaneId::named(pane.name()), Some(pane));
    }
    assert_eq!(command::complete("q").candidates, ["qos", "queue", "quit"]);
}
