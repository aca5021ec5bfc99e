//! On-call node work: drain, resume and down on the marked (else the
//! selected) nodes, and the reason field that drain and down ask for.
//! Called only from [`crate::update::dispatch()`], which checks read-only mode and the
//! role before anything here runs and opens the confirmation after.
//!
//! The reason field ([`ReasonPrompt`]) offers recent reasons (this session's, then those on
//! nodes now), because an incident usually drains several nodes for the
//! same reason and `sinfo -R` groups nodes by identical text.

use crate::model::action::{Action, Effect, Rpc};
use crate::model::nodes::NodeEvents;
use crate::model::pane::PaneId;
use crate::model::state::{Mode, ReasonPrompt, State};
use crate::model::write::{NodeOp, WriteOp};
use crate::update::nav;
use tui_input::Input;

/// Reasons typed this session that are remembered.
const REMEMBERED: usize = 8;

/// The nodes an action is for: the marked ones (even if a filter hides
/// them), else the selected one or the one in the detail view.
pub fn targets(state: &State) -> Result<Vec<String>, String> {
    let nodes = state.nodes.list.as_deref().unwrap_or_default();
    let marks = &state.views[PaneId::Nodes.index()].marks;
    let names: Vec<String> = if marks.is_empty() {
        nav::current_key(state).into_iter().filter(|k| nodes.iter().any(|n| &n.name == k)).collect()
    } else {
        nodes.iter().filter(|n| marks.contains(&n.name)).map(|n| n.name.clone()).collect()
    };
    if names.is_empty() { Err("Nodes: no node selected".into()) } else { Ok(names) }
}

/// Reasons worth offering: this session's newest first, then those on
/// nodes now, newest first, without repeats.
fn recent(state: &State) -> Vec<String> {
    let mut on_nodes: Vec<(i64, &str)> = state
        .nodes
        .list
        .iter()
        .flatten()
        .filter(|n| !n.reason.trim().is_empty())
        .map(|n| (n.reason_time_ms, n.reason.as_str()))
        .collect();
    on_nodes.sort_by_key(|(t, _)| std::cmp::Reverse(*t));
    let mut out: Vec<String> = Vec::new();
    for r in state.recent_reasons.iter().map(String::as_str).chain(on_nodes.into_iter().map(|(_, r)| r)) {
        if !out.iter().any(|o| o == r) {
            out.push(r.to_string());
        }
    }
    out
}

/// The operator pressed a node action key. Resume goes straight to its
/// confirmation (the returned write); drain and down open the reason field.
pub fn start(state: &mut State, op: NodeOp) -> Option<WriteOp> {
    let nodes = match targets(state) {
        Ok(n) => n,
        Err(e) => {
            state.error(e);
            return None;
        }
    };
    if !op.needs_reason() {
        return Some(WriteOp::UpdateNodes { nodes, op, reason: String::new() });
    }
    let prev = Box::new(std::mem::take(&mut state.mode));
    let recent = recent(state);
    let prompt = ReasonPrompt {
        op,
        nodes,
        input: Input::default(),
        typed: String::new(),
        recent,
        pick: None,
        hint: None,
        prev,
    };
    state.mode = Mode::Reason(Box::new(prompt));
    None
}

/// A key in the reason field; a submitted, non-empty reason becomes the write to confirm.
pub fn prompt(state: &mut State, action: Action) -> Option<WriteOp> {
    let Mode::Reason(p) = &mut state.mode else { return None };
    match action {
        Action::Input(req) => {
            p.input.handle(req);
            p.typed = p.input.value().to_string();
            p.pick = None;
            p.hint = None;
        }
        Action::FocusNext | Action::Complete => p.walk(true),
        Action::FocusPrev => p.walk(false),
        Action::Submit => {
            let reason = p.input.value().trim().to_string();
            if reason.is_empty() {
                p.hint = Some(format!("a reason is required to {} (sinfo -R shows it)", p.op.state()));
                return None;
            }
            let op = WriteOp::UpdateNodes { nodes: p.nodes.clone(), op: p.op, reason: reason.clone() };
            remember(state, reason);
            return Some(op);
        }
        Action::Back => {
            let verb = p.op.state();
            let prev = std::mem::take(&mut p.prev);
            state.mode = *prev;
            state.info(format!("{verb} cancelled"));
        }
        _ => {}
    }
    None
}

/// Keep a typed reason for the next drain, newest first, each once.
fn remember(state: &mut State, reason: String) {
    let recent = &mut state.recent_reasons;
    recent.retain(|r| r != &reason);
    recent.insert(0, reason);
    recent.truncate(REMEMBERED);
}

/// Enter on a node: its detail, and a read of its history (the newest
/// [`crate::model::nodes::EVENT_ROWS`] txn rows of it), shown when it answers.
pub fn open(state: &mut State) -> Vec<Effect> {
    nav::normal(state, Action::Open);
    let Mode::Detail { key, .. } = &state.mode else { return Vec::new() };
    let node = key.clone();
    state.nodes.events = Some(NodeEvents { node: node.clone(), answer: None });
    vec![Effect::Rpc(Rpc::NodeEvents(node))]
}

/// A node's history: kept only while its detail is the one asked for.
pub fn on_events(
    state: &mut State,
    node: String,
    rows: Result<Vec<spur_proto::v1::TxnRow>, String>,
) -> Vec<Effect> {
    if let Some(ev) = state.nodes.events.as_mut().filter(|e| e.node == node) {
        ev.answer = Some(rows.map(|r| NodeEvents::derive(&node, &r)));
    }
    Vec::new()
}
