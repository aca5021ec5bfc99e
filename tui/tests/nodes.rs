//! The Nodes pane through dispatch: role and read-only gating of drain,
//! resume and down, the reason field, the confirmation, and live updates
//! from the cluster watch.

mod common;

use common::{on_nodes, type_text};
use spur_console::model::session::Role;
use spur_console::model::state::{Choice, Mode};
use spur_console::{
    Action, Catalog, CatalogList, ClusterUpdate, Effect, Msg, NodeOp, PaneId, Rpc, WriteOp, dispatch,
};

const OPS: [NodeOp; 3] = [NodeOp::Drain, NodeOp::Resume, NodeOp::Down];

fn writes(effects: &[Effect]) -> usize {
    effects.iter().filter(|e| matches!(e, Effect::Rpc(Rpc::Write(_)))).count()
}

fn keys(state: &spur_console::State) -> Vec<String> {
    state.table(PaneId::Nodes).unwrap().rows.into_iter().map(|r| r.key).collect()
}

fn drain_op() -> WriteOp {
    WriteOp::UpdateNodes { nodes: vec!["node01".into()], op: NodeOp::Drain, reason: "fan".into() }
}

#[test]
fn node_actions_are_refused_in_read_only_mode() {
    for op in OPS {
        let mut state = on_nodes((80, 24), Role::Administrator);
        state.settings.read_only = true;
        let mut effects = dispatch(&mut state, Action::NodeAction(op));
        effects.extend(dispatch(&mut state, Action::Request(drain_op())));
        for follow in [Action::FocusNext, Action::Submit, Action::Submit] {
            effects.extend(dispatch(&mut state, follow));
        }
        assert_eq!(writes(&effects), 0, "{op:?} wrote in read-only mode");
        assert!(matches!(state.mode, Mode::Normal), "{op:?} opened {:?}", state.mode);
        let err = state.last_error.clone().unwrap_or_default();
        assert!(err.contains("read-only"), "{op:?}: {err}");
    }
}

#[test]
fn node_actions_need_administrator_and_say_so() {
    for op in OPS {
        let mut state = on_nodes((80, 24), Role::Operator);
        let mut effects = dispatch(&mut state, Action::NodeAction(op));
        assert!(matches!(state.mode, Mode::Normal), "{op:?} opened {:?}", state.mode);
        let err = state.last_error.clone().unwrap_or_default();
        assert_eq!(err, format!("{} refused: needs Administrator; you are Operator", op.verb()));
        // A request built elsewhere is refused the same way, before any dialog.
        effects.extend(dispatch(&mut state, Action::Request(drain_op())));
        assert!(matches!(state.mode, Mode::Normal));
        assert_eq!(writes(&effects), 0);
    }
    // Operator still does accounting writes: the node rule is not the write rule.
    let mut state = on_nodes((80, 24), Role::Operator);
    dispatch(&mut state, Action::GoPane(PaneId::Qos));
    dispatch(&mut state, Action::Delete);
    assert!(matches!(state.mode, Mode::Confirm(_)));
}

#[test]
fn drain_needs_a_reason() {
    let mut state = on_nodes((80, 24), Role::Administrator);
    dispatch(&mut state, Action::NodeAction(NodeOp::Drain));
    let Mode::Reason(p) = &state.mode else { panic!("no reason field: {:?}", state.mode) };
    assert_eq!(p.nodes, ["node01"]);
    type_text(&mut state, "   ");
    assert!(dispatch(&mut state, Action::Submit).is_empty());
    let Mode::Reason(p) = &state.mode else { panic!("the field closed on an empty reason") };
    assert!(p.hint.as_deref().unwrap_or_default().contains("reason is required"), "{:?}", p.hint);
    // Esc leaves without writing anything.
    dispatch(&mut state, Action::Back);
    assert!(matches!(state.mode, Mode::Normal));
}

#[test]
fn drain_confirmation_names_nodes_and_reason_and_starts_on_cancel() {
    let mut state = on_nodes((80, 24), Role::Administrator);
    dispatch(&mut state, Action::ToggleMark); // node01, moves to node02
    dispatch(&mut state, Action::ToggleMark); // node02
    dispatch(&mut state, Action::NodeAction(NodeOp::Drain));
    type_text(&mut state, "swap PSU");
    assert!(dispatch(&mut state, Action::Submit).is_empty());
    let Mode::Confirm(c) = &state.mode else { panic!("no confirmation: {:?}", state.mode) };
    assert_eq!(c.focus, Choice::Cancel);
    let (title, body) = c.op.describe();
    assert_eq!(title, "Drain 2 nodes?");
    assert!(body.iter().any(|l| l.contains("node[01-02]")), "{body:?}");
    assert!(body.iter().any(|l| l.contains("Reason: swap PSU")), "{body:?}");
    assert_eq!(c.op.button(), "Drain");
    // Enter on the default focus cancels, back to the reason field with the text kept.
    assert_eq!(writes(&dispatch(&mut state, Action::Submit)), 0);
    let Mode::Reason(p) = &state.mode else { panic!("cancel should return to the reason: {:?}", state.mode) };
    assert_eq!(p.input.value(), "swap PSU");
    dispatch(&mut state, Action::Submit);
    dispatch(&mut state, Action::FocusNext);
    let effects = dispatch(&mut state, Action::Submit);
    let want = WriteOp::UpdateNodes {
        nodes: vec!["node01".into(), "node02".into()],
        op: NodeOp::Drain,
        reason: "swap PSU".into(),
    };
    assert_eq!(effects, vec![Effect::Rpc(Rpc::Write(want))]);
    assert!(matches!(state.mode, Mode::Normal));
    assert!(state.view().marks.is_empty(), "the marks were spent on the drain");
    assert_eq!(state.recent_reasons, ["swap PSU"]);
}

#[test]
fn reason_field_offers_recent_reasons() {
    let mut state = on_nodes((80, 24), Role::Administrator);
    state.recent_reasons = vec!["rack 7 power".into()];
    dispatch(&mut state, Action::NodeAction(NodeOp::Down));
    let Mode::Reason(p) = &state.mode else { panic!("no reason field") };
    // This session's first, then those on nodes now, newest first.
    assert_eq!(p.offered(), ["rack 7 power", "Not responding", "bad DIMM", "kernel upgrade"]);
    dispatch(&mut state, Action::FocusNext);
    dispatch(&mut state, Action::FocusNext);
    let Mode::Reason(p) = &state.mode else { panic!() };
    assert_eq!(p.input.value(), "Not responding");
    // Walking back past the first restores what was typed (nothing).
    dispatch(&mut state, Action::FocusPrev);
    dispatch(&mut state, Action::FocusPrev);
    let Mode::Reason(p) = &state.mode else { panic!() };
    assert_eq!(p.input.value(), "");
    // Typing narrows the offer; Tab takes the match.
    type_text(&mut state, "dimm");
    dispatch(&mut state, Action::Complete);
    let Mode::Reason(p) = &state.mode else { panic!() };
    assert_eq!(p.offered(), ["bad DIMM"]);
    assert_eq!(p.input.value(), "bad DIMM");
    dispatch(&mut state, Action::Submit);
    let Mode::Confirm(c) = &state.mode else { panic!("no confirmation") };
    assert!(matches!(&c.op, WriteOp::UpdateNodes { op: NodeOp::Down, reason, .. } if reason == "bad DIMM"));
}

#[test]
fn resume_confirms_without_a_reason() {
    let mut state = on_nodes((80, 24), Role::Administrator);
    dispatch(&mut state, Action::Down); // node02
    dispatch(&mut state, Action::NodeAction(NodeOp::Resume));
    let Mode::Confirm(c) = &state.mode else { panic!("no confirmation: {:?}", state.mode) };
    assert_eq!(c.focus, Choice::Cancel);
    let want =
        WriteOp::UpdateNodes { nodes: vec!["node02".into()], op: NodeOp::Resume, reason: String::new() };
    assert_eq!(c.op, want);
}

#[test]
fn node_keys_elsewhere_and_delete_on_nodes_explain_themselves() {
    let mut state = on_nodes((80, 24), Role::Administrator);
    dispatch(&mut state, Action::Delete);
    assert!(matches!(state.mode, Mode::Normal));
    assert!(state.last_error.clone().unwrap_or_default().contains("drain (d)"), "{:?}", state.last_error);
    dispatch(&mut state, Action::GoPane(PaneId::Qos));
    dispatch(&mut state, Action::NodeAction(NodeOp::Drain));
    assert!(matches!(state.mode, Mode::Normal));
    assert!(state.message.as_ref().is_some_and(|m| m.text.contains("Nodes pane")));
}

#[test]
fn watch_changes_replace_nodes_by_name_and_keep_the_selection() {
    let mut state = on_nodes((80, 24), Role::Administrator);
    dispatch(&mut state, Action::SortNext); // Node ▲
    dispatch(&mut state, Action::SortNext); // State ▲: trouble first
    assert_eq!(keys(&state)[..3], ["node04", "node02", "node03"]);
    for a in [Action::Top, Action::Down, Action::Down, Action::Down] {
        dispatch(&mut state, a);
    }
    assert_eq!(keys(&state)[state.view().selected], "node01");
    let mut node01 = common::nodes()[0].clone();
    node01.base_state = "DOWN".into();
    let update = ClusterUpdate { nodes: vec![node01], ..Default::default() };
    assert!(dispatch(&mut state, Action::Net(Msg::Cluster(update))).is_empty());
    assert_eq!(state.nodes.list.as_ref().unwrap().len(), 6, "replaced, not added");
    assert_eq!(keys(&state)[0], "node01", "now down, so first");
    assert_eq!(state.view().selected, 0, "the selection followed node01");
}

#[test]
fn catalog_changes_reread_one_list_coalesced() {
    let mut state = on_nodes((80, 24), Role::Administrator);
    let fetch = |l| vec![Effect::Rpc(Rpc::FetchList(l))];
    let changed =
        |stale: Vec<Catalog>| Action::Net(Msg::Cluster(ClusterUpdate { stale, ..Default::default() }));
    assert_eq!(dispatch(&mut state, changed(vec![Catalog::Qos])), fetch(Catalog::Qos));
    // While that read is under way, more changes only ask for one more read after it.
    assert!(dispatch(&mut state, changed(vec![Catalog::Qos])).is_empty());
    assert!(dispatch(&mut state, changed(vec![Catalog::Qos])).is_empty());
    let mut qos = common::snapshot().qos;
    qos.truncate(1);
    let loaded = || Action::Net(Msg::ListLoaded(CatalogList::Qos(qos.clone())));
    assert_eq!(dispatch(&mut state, loaded()), fetch(Catalog::Qos));
    assert!(dispatch(&mut state, loaded()).is_empty());
    assert_eq!(state.accounting.data.as_ref().unwrap().qos.len(), 1);
    // A lagged watcher re-reads every list.
    let lagged = ClusterUpdate { lagged: Some("missed 3 changes".into()), ..Default::default() };
    let effects = dispatch(&mut state, Action::Net(Msg::Cluster(lagged)));
    assert_eq!(effects.len(), 3);
    // With the watch live, a write's effect is pushed: no re-fetch.
    state.loading = true; // as the confirm left it
    let done = Msg::WriteDone { summary: "drained node01".into() };
    assert!(dispatch(&mut state, Action::Net(done)).is_empty());
    assert!(!state.loading, "no fetch follows, so nothing is loading");
}

#[test]
fn a_refused_node_write_shows_the_reason_and_asks_the_role_again() {
    let mut state = on_nodes((80, 24), Role::Administrator);
    let error =
        "drain nodes: PermissionDenied: UpdateNodes needs Administrator; alice is Operator".to_string();
    let effects = dispatch(&mut state, Action::Net(Msg::WriteFailed { error: error.clone() }));
    assert_eq!(effects, vec![Effect::Rpc(Rpc::WhoAmI)]);
    assert_eq!(state.last_error.as_deref(), Some(error.as_str()));
    let warned = Msg::WriteWarned { summary: "drained node01".into(), warning: "state fell back".into() };
    dispatch(&mut state, Action::Net(warned));
    assert!(state.message.as_ref().is_some_and(|m| m.error && m.text.contains("warning: state fell back")));
}

/// node01's history as the txn log has it: drained by boss, resumed by
/// carla, then down because its agent went silent (the controller's row).
fn node01_rows() -> Vec<spur_proto::v1::TxnRow> {
    let row = |id: i64, actor: &str, info: &str| spur_proto::v1::TxnRow {
        info: info.into(),
        ..common::txn(id, actor, "update", "node:node01", "success")
    };
    vec![
        row(
            1,
            "boss",
            r#"{"params":{"nodename":"node01","state":"drain","reason":"fan"},"updated":"node01"}"#,
        ),
        row(
            2,
            "carla",
            r#"{"params":{"nodename":"node01","state":"resume","reason":""},"updated":"node01"}"#,
        ),
        row(3, "spurctld", r#"{"state":"Not responding"}"#),
    ]
}

#[test]
fn a_node_s_detail_reads_and_shows_its_last_events_newest_first() {
    for size in [(80, 24), (120, 40)] {
        let mut state = on_nodes(size, Role::Operator);
        let effects = dispatch(&mut state, Action::Open);
        let Mode::Detail { key, .. } = &state.mode else { panic!("no detail: {:?}", state.mode) };
        let node = key.clone();
        assert_eq!(effects, [Effect::Rpc(Rpc::NodeEvents(node.clone()))]);
        let body = |state: &spur_console::State| state.detail(PaneId::Nodes, &node).unwrap().body.join("\n");
        assert!(body(&state).contains("reading…"), "{}", body(&state));
        // An answer for another node (a detail since closed) is not shown.
        dispatch(
            &mut state,
            Action::Net(Msg::NodeEvents { node: "elsewhere".into(), rows: Ok(node01_rows()) }),
        );
        assert!(body(&state).contains("reading…"));
        let rows = node01_rows().into_iter().map(|mut r| {
            r.name = node.clone();
            r.info = r.info.replace("node01", &node);
            r
        });
        dispatch(&mut state, Action::Net(Msg::NodeEvents { node: node.clone(), rows: Ok(rows.collect()) }));
        let text = body(&state);
        let at = |line: &str| text.find(line).unwrap_or_else(|| panic!("no {line} in\n{text}"));
        assert!(
            at("DOWN  Not responding (by spurctld") < at("IDLE  (by carla")
                && at("IDLE  (by carla") < at("DRAIN fan (by boss"),
            "{text}"
        );
        // On 24 lines the section is below the fields: scrolled to, as an operator would.
        if size.1 == 24 {
            // ctrl-d (half a page) and two lines down.
            for a in [Action::HalfPageDown, Action::Down, Action::Down] {
                dispatch(&mut state, a);
            }
        }
        let screen = common::draw(&state).backend().to_string();
        assert!(screen.contains("Not responding (by spurctld"), "{screen}");
        insta::assert_snapshot!(format!("node_events_{}x{}", size.0, size.1), common::draw(&state).backend());
    }
}

#[test]
fn a_refused_history_read_says_why() {
    let mut state = on_nodes((120, 40), Role::Operator);
    dispatch(&mut state, Action::Open);
    let Mode::Detail { key, .. } = &state.mode else { panic!() };
    let node = key.clone();
    let error = "permission denied: ListTxn needs Operator".to_string();
    dispatch(&mut state, Action::Net(Msg::NodeEvents { node, rows: Err(error) }));
    let text = state.detail(PaneId::Nodes, &key_of(&state)).unwrap().body.join("\n");
    assert!(text.contains("not read: permission denied"), "{text}");
}

fn key_of(state: &spur_console::State) -> String {
    match &state.mode {
        Mode::Detail { key, .. } => key.clone(),
        other => panic!("no detail: {other:?}"),
    }
}

#[test]
fn an_admins_drain_of_several_nodes_is_one_event_in_each_nodes_history() {
    let mut state = on_nodes((120, 40), Role::Operator);
    dispatch(&mut state, Action::Open);
    let node = key_of(&state);
    // The store's Name= match returns a request for node[01-04]: one drain, of four nodes.
    let info = format!(
        r#"{{"params":{{"nodename":"{node},x[2-4]","state":"drain","reason":"rack"}},"updated":"{node},x[2-4]"}}"#
    );
    let row = spur_proto::v1::TxnRow {
        info,
        ..common::txn(1, "boss", "update", &format!("node:{node},x[2-4]"), "success")
    };
    dispatch(&mut state, Action::Net(Msg::NodeEvents { node: node.clone(), rows: Ok(vec![row]) }));
    let text = state.detail(PaneId::Nodes, &node).unwrap().body.join("\n");
    assert_eq!(text.matches("DRAIN").count(), 1, "this node's event only:\n{text}");
}
