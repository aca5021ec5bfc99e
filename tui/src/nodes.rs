//! On-call node work: drain, resume and down on the marked (else the
//! selected) nodes, and the reason field that drain and down ask for.
//! Called only from [`crate::dispatch`], which checks read-only mode and the
//! role before anything here runs and opens the confirmation after.
//!
//! The reason field offers recent reasons (this session's, then those on
//! nodes now), because an incident usually drains several nodes for the
//! same reason and `sinfo -R` groups nodes by identical text.

use crate::action::{Action, NodeOp, WriteOp};
use crate::nav;
use crate::pane::PaneId;
use crate::state::{Mode, State};
use tui_input::Input;

/// Recent reasons offered at once.
pub const OFFERED: usize = 6;
/// Reasons typed this session that are remembered.
const REMEMBERED: usize = 8;

/// The reason field of a drain or down.
#[derive(Debug, Clone)]
pub struct ReasonPrompt {
    pub op: NodeOp,
    pub nodes: Vec<String>,
    pub input: Input,
    /// What the operator typed; recent reasons are matched against it, so
    /// walking the list and coming back restores it.
    pub typed: String,
    /// Every reason on offer, best first.
    pub recent: Vec<String>,
    /// The offered reason shown in the field, as an index into [`ReasonPrompt::offered`].
    pub pick: Option<usize>,
    /// Why Enter was refused (an empty reason).
    pub hint: Option<String>,
    /// Where Esc returns (the detail view the action started from).
    pub prev: Box<Mode>,
}

impl ReasonPrompt {
    /// The recent reasons that contain what was typed (ignoring case).
    pub fn offered(&self) -> Vec<&str> {
        let want = self.typed.trim().to_lowercase();
        self.recent
            .iter()
            .map(String::as_str)
            .filter(|r| r.to_lowercase().contains(&want))
            .take(OFFERED)
            .collect()
    }

    /// Down/Tab walks the offered reasons, past the last back to what was typed.
    fn walk(&mut self, forward: bool) {
        let n = self.offered().len();
        if n == 0 {
            return;
        }
        self.pick = match (self.pick, forward) {
            (None, true) => Some(0),
            (None, false) => Some(n - 1),
            (Some(i), true) if i + 1 < n => Some(i + 1),
            (Some(i), false) if i > 0 => Some(i - 1),
            _ => None,
        };
        let text = match self.pick {
            Some(i) => self.offered()[i].to_string(),
            None => self.typed.clone(),
        };
        self.input = Input::new(text);
        self.hint = None;
    }
}

/// The nodes an action is for: the marked ones (even if a filter hides
/// them), else the selected one or the one in the detail view.
pub fn targets(state: &State) -> Result<Vec<String>, String> {
    let nodes = state.nodes.as_deref().unwrap_or_default();
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
    if state.pane != PaneId::Nodes {
        state.info(format!("that key works in the Nodes pane ({})", PaneId::Nodes.number()));
        return None;
    }
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
