//! The merged Queue (`:queue all`, `model::merged`): opening and closing
//! it (the app opens one connection per context, [`Effect::Merge`]), the
//! reports of those connections, and a job action on its rows, which goes
//! to the rows' own cluster ([`Effect::RpcTo`]) under that cluster's rules
//! (dispatch's write path, given the context).

use crate::model::action::{Action, Effect, Msg, Rpc};
use crate::model::jobs::JobOp;
use crate::model::merged::{Merged, Part};
use crate::model::pane::PaneId;
use crate::model::state::State;
use crate::model::view::Refetch;
use crate::model::write::WriteOp;
use crate::update::nav;

/// `:queue all`.
pub fn open(state: &mut State) -> Vec<Effect> {
    let names: Vec<String> = state.settings.contexts.names().into_iter().map(String::from).collect();
    if names.is_empty() {
        state.error(":queue all: no contexts; add [[contexts]] to console.toml");
        return Vec::new();
    }
    state.info(format!("Queue of every context: {}", names.join(", ")));
    if state.merged.is_some() {
        // Open already, its connections up and its jobs read: only go back to it.
        nav::switch(state, PaneId::Queue);
        return Vec::new();
    }
    let parts = names.iter().map(|n| Part { name: n.clone(), ..Part::default() }).collect();
    state.merged = Some(Merged { parts });
    forget_marks(state);
    nav::switch(state, PaneId::Queue);
    vec![Effect::Merge(true)]
}

/// `:queue` (or a context switch): back to the current context's queue.
pub fn close(state: &mut State) -> Vec<Effect> {
    if state.merged.take().is_none() {
        return Vec::new();
    }
    forget_marks(state);
    vec![Effect::Merge(false)]
}

/// Marks and selection are keys of the other view's rows.
fn forget_marks(state: &mut State) {
    let view = &mut state.views[PaneId::Queue.index()];
    view.marks.clear();
    view.selected = 0;
    view.offset = 0;
    // Column numbers differ between the two views.
    view.sort = None;
}

/// Ask for one context's jobs: one read at a time, one more when asked meanwhile.
fn read(part: &mut Part, ctx: usize) -> Vec<Effect> {
    if part.refetch.ask() { vec![Effect::RpcTo(ctx, Rpc::FetchJobs)] } else { Vec::new() }
}

pub fn on_remote(state: &mut State, ctx: usize, msg: Msg) -> Vec<Effect> {
    let Some(part) = state.merged.as_mut().and_then(|m| m.parts.get_mut(ctx)) else {
        return Vec::new();
    };
    let name = part.name.clone();
    match msg {
        Msg::Connected => {
            part.error = None;
            part.refetch = Refetch::Idle;
            return read(part, ctx);
        }
        Msg::Jobs(set) => {
            part.jobs = Some(set);
            if part.refetch.done() {
                return read(part, ctx);
            }
        }
        Msg::JobsFailed { error, .. } => {
            part.refetch = Refetch::Idle;
            part.error = Some(error);
        }
        // Its watch says jobs changed: read them again.
        Msg::Cluster(update) if !update.jobs.is_empty() => return read(part, ctx),
        Msg::Reconnecting { error, .. } | Msg::Disconnected { error } => {
            // An unreachable cluster's jobs are not shown as if current.
            part.jobs = None;
            part.refetch = Refetch::Idle;
            part.error = Some(error);
        }
        Msg::WriteDone { summary } => {
            let effects = read(part, ctx);
            state.info(format!("{name}: {summary}"));
            return effects;
        }
        Msg::WriteWarned { summary, warning } => {
            let effects = read(part, ctx);
            state.error(format!("{name}: {summary}; warning: {warning}"));
            return effects;
        }
        Msg::WriteFailed { error } => state.error(format!("{name}: {error}")),
        _ => {}
    }
    Vec::new()
}

/// A job action on the merged Queue's marked (else selected) rows: the
/// context they are all on and the write, or None (the error said why).
pub fn start(state: &mut State, op: JobOp) -> Option<(usize, WriteOp)> {
    let merged = state.merged.as_ref()?;
    let marks = &state.views[PaneId::Queue.index()].marks;
    let keys: Vec<String> = match marks.is_empty() {
        true => nav::current_key(state).into_iter().collect(),
        false => marks.iter().cloned().collect(),
    };
    let mut on = None;
    let (mut ids, mut owners, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
    for key in &keys {
        let Some((ctx, r)) = merged.job(key) else { continue };
        if on.is_some_and(|c| c != ctx) {
            state.error(format!("{}: mark jobs of one cluster at a time", op.verb()));
            return None;
        }
        on = Some(ctx);
        match op.skip_reason(r) {
            None => {
                ids.push(r.id);
                owners.push(r.user.to_string());
            }
            Some(why) => skipped.push(format!("{key} {why}")),
        }
    }
    let Some(ctx) = on else {
        state.error("Queue: no job selected");
        return None;
    };
    if ids.is_empty() {
        state.error(format!("{}: nothing to do: {}", op.verb(), skipped.join(", ")));
        return None;
    }
    ids.sort_unstable();
    ids.dedup();
    owners.sort();
    owners.dedup();
    Some((ctx, WriteOp::UpdateJobs { op, ids, owners }))
}

/// Keys of the Queue that read the current context's controller by job id:
/// on the merged view they would read the wrong cluster's job.
pub fn refuses(state: &State, action: &Action) -> Option<String> {
    let wrong = matches!(action, Action::Explain | Action::Output(_));
    (state.merged.is_some() && state.pane == PaneId::Queue && wrong)
        .then(|| "not in the merged Queue: go to the job's cluster (:ctx NAME, then :queue)".to_string())
}
