//! The one dispatcher: `dispatch(state, action) -> effects`.
//!
//! This is the only place that enforces read-only mode, the role rule and
//! confirmations: every write is requested with [`Action::Request`] (or a
//! key that builds one), checked by `write_block`, shown in a dialog whose
//! focus starts on Cancel, and only `commit` ever produces an [`Rpc::Write`].
//! Node actions need Administrator, accounting writes Operator; job actions
//! are open to a job's owner and to Operator and above ([`queue::refusal`]).

use crate::model::action::{Action, Effect, Rpc};
use crate::model::pane::{Offered, PaneId, Reads};
use crate::model::session::{self, Role};
use crate::model::state::{Choice, Confirm, Mode, Prompt, State};
use crate::model::table::Target;
use crate::model::write::WriteOp;
use crate::update::command::{self, Command};
use crate::update::{
    audit, context, delete, fairshare, form, hres, merged, nav, nodes, output, overview, plugin, preempt,
    provisioners, queue, reservations,
};
use tui_input::Input;

pub fn dispatch(state: &mut State, action: Action) -> Vec<Effect> {
    if !matches!(action, Action::Net(_) | Action::Resize(..)) {
        // Feedback is about the previous key; the status bar keeps the last error.
        state.message = None;
    }
    // A job action on the merged Queue is checked against the rows' own cluster instead.
    let merged_jobs = state.merged.is_some() && matches!(action, Action::JobAction(_));
    if action.is_write()
        && !merged_jobs
        && let Some(why) = write_block(state, action.verb(), action.role())
    {
        state.error(why);
        return Vec::new();
    }
    match action {
        Action::Quit => vec![Effect::Quit],
        Action::Net(msg) => super::reports::on_net(state, msg),
        Action::Resize(w, h) => {
            state.size = (w, h);
            state.relayout();
            nav::clamp_all(state);
            Vec::new()
        }
        Action::Request(op) => {
            request_write(state, op);
            Vec::new()
        }
        other => match &state.mode {
            Mode::Command(_) | Mode::Filter(_) => match command::prompt(state, other) {
                Some(cmd) => run_command(state, cmd),
                None => Vec::new(),
            },
            Mode::TxnFilter(_) => audit::prompt(state, other),
            Mode::Resv(_) => {
                if let Some(op) = reservations::prompt(state, other) {
                    request_write(state, op);
                }
                Vec::new()
            }
            Mode::Confirm(_) => confirm(state, other),
            Mode::Form(_) => {
                if let Some(op) = form::key(state, other) {
                    request_write(state, op);
                }
                Vec::new()
            }
            Mode::Reason(_) => {
                if let Some(op) = nodes::prompt(state, other) {
                    request_write(state, op);
                }
                Vec::new()
            }
            Mode::Help { .. } => {
                nav::help(state, other);
                Vec::new()
            }
            Mode::Output => output::key(state, other),
            Mode::Normal | Mode::Detail { .. } => normal(state, other),
        },
    }
}

/// Why `what` (which needs `role`) may not be written now, or None. Checked
/// on the key, on the request and again on the confirm, so no path around
/// the dialog writes.
fn write_block(state: &State, what: &str, role: Role) -> Option<String> {
    write_block_on(state, None, what, role)
}

/// [`write_block`] for a write to context `on` (None: the current one). The
/// session's role is the current context's, so another's is left to its controller.
fn write_block_on(state: &State, on: Option<usize>, what: &str, role: Role) -> Option<String> {
    if state.settings.read_only {
        return Some(format!("read-only mode: {what} refused (the console was started with --read-only)"));
    }
    if let Some(why) = context::of(state, on).and_then(|c| c.write_refusal(what)) {
        return Some(why);
    }
    if context::elsewhere(state, on) {
        return None;
    }
    session::refusal(state.session.as_ref(), role).map(|why| format!("{what} refused: {why}"))
}

/// [`write_block`] for a concrete write, plus whose jobs it touches.
fn op_block(state: &State, on: Option<usize>, op: &WriteOp) -> Option<String> {
    if context::elsewhere(state, on) {
        return write_block_on(state, on, op.verb(), op.role());
    }
    write_block(state, op.verb(), op.role()).or_else(|| queue::refusal(state, op))
}

/// Open the confirmation dialog for a write. Cancel returns to where the
/// operator was (an edit form keeps its edits).
fn request_write(state: &mut State, op: WriteOp) {
    request_write_on(state, None, op);
}

/// [`request_write`] to context `on` (None: the current one), under its rules.
fn request_write_on(state: &mut State, on: Option<usize>, op: WriteOp) {
    if let Some(why) = op_block(state, on, &op) {
        state.error(why);
        return;
    }
    let prev = std::mem::take(&mut state.mode);
    let prev = match prev {
        // A dialog never stacks on a dialog or an overlay.
        Mode::Confirm(c) => c.prev,
        Mode::Help { prev, .. } => *prev,
        other => other,
    };
    let typed = context::typed_name(state, on);
    state.mode = Mode::Confirm(Box::new(Confirm { op, focus: Choice::Cancel, prev, typed, on }));
}

/// The operator said yes: the only producer of [`Rpc::Write`].
fn commit(state: &mut State) -> Vec<Effect> {
    let Mode::Confirm(c) = std::mem::take(&mut state.mode) else {
        return Vec::new();
    };
    let unconfirmed = || context::unconfirmed(state, c.on, c.typed.as_ref());
    if let Some(why) = op_block(state, c.on, &c.op).or_else(unconfirmed) {
        state.error(why);
        return Vec::new();
    }
    // Past the reason field, back to where the node action started.
    let prev = match c.prev {
        Mode::Reason(r) => *r.prev,
        other => other,
    };
    state.mode = match prev {
        Mode::Detail { key, scroll } if !c.op.destructive() => Mode::Detail { key, scroll },
        _ => Mode::Normal,
    };
    if c.op.consumes_marks() {
        state.view_mut().marks.clear();
    }
    if let Some(ctx) = c.on {
        // The merged Queue's row: to its own cluster's connection, whose answer re-reads its jobs.
        state.info(format!("{}…", c.op.verb()));
        return vec![Effect::RpcTo(ctx, Rpc::Write(c.op))];
    }
    if matches!(c.op, WriteOp::UpdateJobs { .. }) {
        // Its answer re-reads the queue.
        state.queue.writes += 1;
    }
    if let WriteOp::RunPlugin { name, argv } = c.op {
        return plugin::run(state, &name, argv);
    }
    state.loading = true;
    state.info(format!("{}…", c.op.verb()));
    vec![Effect::Rpc(Rpc::Write(c.op))]
}

fn confirm(state: &mut State, action: Action) -> Vec<Effect> {
    let Mode::Confirm(c) = &mut state.mode else {
        return Vec::new();
    };
    if let Some(t) = c.typed.as_mut() {
        return match context::typed_key(t, action) {
            context::Typed::Commit => commit(state),
            context::Typed::Cancel => {
                if let Mode::Confirm(c) = std::mem::take(&mut state.mode) {
                    state.mode = c.prev;
                }
                state.info("cancelled");
                Vec::new()
            }
            context::Typed::Stay => Vec::new(),
        };
    }
    match action {
        Action::FocusNext | Action::FocusPrev => {
            c.focus = match c.focus {
                Choice::Cancel => Choice::Confirm,
                Choice::Confirm => Choice::Cancel,
            };
            Vec::new()
        }
        Action::Submit if c.focus == Choice::Confirm => commit(state),
        Action::Submit | Action::Back => {
            if let Mode::Confirm(c) = std::mem::take(&mut state.mode) {
                state.mode = c.prev;
            }
            state.info("cancelled");
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// After a write: re-fetch unless the watch pushes the change. `loading`
/// (set when the write was sent) then ends here, or when the fetch answers.
/// Jobs are not pushed yet: a job action's answer always re-reads them.
pub(super) fn refetch_unless_live(state: &mut State) -> Vec<Effect> {
    let jobs = queue::after_write(state);
    if state.live {
        state.loading = false;
        return jobs;
    }
    let mut effects = vec![Effect::Rpc(Rpc::FetchAll)];
    effects.extend(jobs);
    effects
}

/// Every pane switch goes through here, and reads what the pane declares
/// it reads when opened: the Audit pane starts its tail, the Preemption
/// pane re-reads its explanation.
fn switch(state: &mut State, pane: PaneId) -> Vec<Effect> {
    nav::switch(state, pane);
    match pane.decl().reads {
        Reads::Tail => audit::open(state),
        Reads::Explanation => preempt::stale(state),
        Reads::Diag => overview::open(state),
        Reads::Shares => fairshare::stale(state),
        Reads::Shared => Vec::new(),
    }
}

/// A pane-only key pressed where the pane's declaration does not offer it:
/// say where it works. `e` and `D` say why per pane ([`form::edit`], [`delete`]).
fn elsewhere(state: &State, action: &Action) -> Option<String> {
    if !action.pane_only() || matches!(action, Action::Edit | Action::Delete) || state.pane.offers(action) {
        return None;
    }
    let home = PaneId::home_of(action)?;
    let how = home.key().unwrap_or_else(|| format!(":{}", home.name()));
    Some(format!("that key works in the {} pane ({how})", home.title()))
}

fn normal(state: &mut State, action: Action) -> Vec<Effect> {
    if let Some(note) = elsewhere(state, &action).or_else(|| merged::refuses(state, &action)) {
        state.info(note);
        return Vec::new();
    }
    match action {
        Action::Help => {
            let prev = Box::new(std::mem::take(&mut state.mode));
            state.mode = Mode::Help { scroll: 0, prev };
        }
        Action::CommandMode => state.mode = Mode::Command(Prompt::default()),
        Action::FilterMode if state.table(state.pane).is_some() => {
            let text = state.view().filter.as_ref().map(|f| f.text.clone()).unwrap_or_default();
            state.mode = Mode::Filter(Prompt { input: Input::new(text), hint: None });
        }
        Action::FilterMode => state.info(format!("{}: nothing to filter", state.pane.title())),
        Action::NextPane => return switch(state, state.pane.next()),
        Action::PrevPane => return switch(state, state.pane.prev()),
        Action::GoPane(p) => return switch(state, p),
        Action::Refresh => {
            state.loading = true;
            let mut effects = vec![Effect::Rpc(Rpc::FetchAll)];
            if state.pane.decl().reads == Reads::Tail {
                effects.extend(audit::retry(state));
            }
            effects.extend(queue::stale(state));
            effects.extend(hres::stale(state));
            effects.extend(provisioners::stale(state));
            effects.extend(overview::stale(state));
            effects.extend(fairshare::if_open(state));
            return effects;
        }
        Action::TogglePause => audit::toggle_pause(state),
        Action::TxnFilterMode => {
            let text = state.audit.filter_text.clone();
            state.mode = Mode::TxnFilter(Prompt { input: Input::new(text), hint: None });
        }
        Action::Edit if state.pane == PaneId::Reservations => reservations::open_edit(state),
        Action::Edit => form::edit(state),
        Action::NewResv => reservations::open_new(state),
        Action::Delete => delete(state),
        Action::NodeAction(op) => {
            if let Some(op) = nodes::start(state, op) {
                request_write(state, op);
            }
        }
        Action::JobAction(op) if state.merged.is_some() => {
            if let Some((ctx, op)) = merged::start(state, op) {
                request_write_on(state, Some(ctx), op);
            }
        }
        Action::JobAction(op) => {
            if let Some(op) = queue::start(state, op) {
                request_write(state, op);
            }
        }
        Action::JobStates => queue::cycle_states(state),
        // A pane whose Enter opens arrays (the Queue's) folds and unfolds them.
        Action::Open if state.pane.decl().hints.iter().any(|h| h.offered == Offered::OnArray) => {
            queue::open(state)
        }
        Action::Explain => return preempt::open_selected(state),
        Action::Open if state.pane == PaneId::Nodes => return nodes::open(state),
        Action::ClickRow(_) if state.pane == PaneId::Overview => {} // its rows are not where a table's are
        Action::Open if state.pane == PaneId::Overview => {
            if let Some(queue) = overview::open_reason(state) {
                return switch(state, queue);
            }
        }
        Action::Output(stderr) => return output::open(state, stderr),
        Action::HresToggle => {
            if let Some(op) = hres::start(state) {
                request_write(state, op);
            }
        }
        Action::Plugin(i) => match plugin::start(state, i) {
            Some((op, true)) => request_write(state, op),
            Some((WriteOp::RunPlugin { name, argv }, false)) => return plugin::run(state, &name, argv),
            _ => {}
        },
        other => nav::normal(state, other),
    }
    Vec::new()
}

/// Targets: the marked rows, else the selected one.
fn delete(state: &mut State) {
    if let Some((why, instead)) = &state.pane.decl().not_deleted {
        // Said before building rows: the queue may hold 100,000 jobs.
        let keys = state.settings.keymap.keys_of(instead);
        state.error(format!("{why}: press {keys}"));
        return;
    }
    let marks = state.view().marks.clone();
    let rows = state.all_rows(state.pane);
    let targets: Vec<Target> = if marks.is_empty() {
        let key = nav::current_key(state);
        rows.into_iter().filter(|r| Some(&r.key) == key.as_ref()).map(|r| r.target).collect()
    } else {
        rows.into_iter().filter(|r| marks.contains(&r.key)).map(|r| r.target).collect()
    };
    match delete::write_of(state, targets) {
        Ok(op) => request_write(state, op),
        Err(e) => state.error(e),
    }
}

fn run_command(state: &mut State, cmd: Command) -> Vec<Effect> {
    match cmd {
        Command::Pane(PaneId::Queue) => {
            let mut effects = merged::close(state);
            effects.extend(switch(state, PaneId::Queue));
            return effects;
        }
        Command::Pane(p) => return switch(state, p),
        Command::QueueAll => return merged::open(state),
        Command::Explain(id) => return preempt::open(state, id),
        Command::Help => state.mode = Mode::Help { scroll: 0, prev: Box::new(Mode::Normal) },
        Command::Quit => return vec![Effect::Quit],
        Command::Context(name) => return context::command(state, name),
    }
    Vec::new()
}
