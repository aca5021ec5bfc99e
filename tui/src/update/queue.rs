//! The Queue pane's jobs: when they are read, the job changes the cluster
//! watch pushes, the `t` state filter, and cancel / hold / release / requeue
//! on the marked (else the selected) jobs. Called only from
//! [`crate::update::dispatch()`], which checks read-only mode before anything here
//! runs and opens the confirmation after.
//!
//! Reads: on a (re)connect, after missed changes (`lagged`) and on `r`.
//! In between, `Cluster.Watch` pushes changed jobs in numbered batches and
//! they are applied to the console's own copy ([`on_pushed`]); a listing
//! says which batch it reflects, so a batch that arrives while a read is
//! under way waits for it and is applied only if newer. A controller whose
//! watch carries no jobs is served as before: a node change (jobs starting
//! and ending change allocations) and each job action re-read the jobs.
//! Every re-read goes through [`stale`]; at most one is in flight, plus one
//! follow-up for changes that arrived while it was. There is no timer.

use crate::model::action::{Action, Effect, Rpc};
use crate::model::jobs::{JobOp, JobSet, RowKey};
use crate::model::pane::PaneId;
use crate::model::queue::Status;
use crate::model::session;
use crate::model::state::{Mode, State};
use crate::model::view::Refetch;
use crate::model::write::WriteOp;
use crate::update::nav;
use spur_proto::v1::JobsChanged;
use std::sync::Arc;

/// The jobs may have changed: read them, or note that they must be read again.
pub fn stale(state: &mut State) -> Vec<Effect> {
    let q = &mut state.queue;
    if q.status == Status::Unsupported {
        return Vec::new();
    }
    if q.refetch.ask() { vec![Effect::Rpc(Rpc::FetchJobs)] } else { Vec::new() }
}

/// The connection was lost: reads, writes and pushes of it are void.
pub fn reset(state: &mut State) {
    state.queue.refetch = Refetch::Idle;
    state.queue.writes = 0;
    state.queue.pushed = false;
    state.queue.waiting.clear();
}

/// Batches kept for a read that is slow to answer (or keeps failing); past
/// this, the next read replaces them.
const MAX_WAITING: usize = 1024;

/// The watch pushed batches of changed jobs: apply them to the jobs shown,
/// or keep them until the read under way answers.
pub fn on_pushed(state: &mut State, batches: Vec<JobsChanged>) -> Vec<Effect> {
    if batches.is_empty() {
        return Vec::new();
    }
    state.queue.pushed = true;
    state.queue.waiting.extend(batches);
    if state.queue.refetch == Refetch::Idle && state.queue.jobs.is_some() {
        apply_waiting(state);
    } else if state.queue.waiting.len() > MAX_WAITING {
        state.queue.waiting.clear();
        return stale(state);
    }
    Vec::new()
}

fn apply_waiting(state: &mut State) {
    let waiting = std::mem::take(&mut state.queue.waiting);
    if waiting.iter().all(|b| b.jobs.is_empty() && b.removed.is_empty()) {
        if let (Some(set), Some(last)) = (state.queue.jobs.as_mut(), waiting.last()) {
            let set = Arc::make_mut(set);
            set.seq = set.seq.max(last.seq);
        }
        return;
    }
    // The console's clock (fixed in tests), as every other time it shows.
    let now = state.now_ms();
    nav::update_jobs_or_nodes(state, |s| {
        if let Some(set) = s.queue.jobs.as_mut() {
            Arc::make_mut(set).apply_all(waiting.into_iter().map(|b| (b.jobs, b.removed, b.seq)), now);
        }
    });
}

/// A (re)connect: read the jobs once the cluster watch is subscribed (it
/// is, when `Connected` arrives), so no node change falls in between.
pub fn on_connected(state: &mut State) -> Vec<Effect> {
    reset(state);
    // The controller may have been upgraded while away.
    if state.queue.status == Status::Unsupported {
        state.queue.status = Status::Loading;
    }
    stale(state)
}

/// A read answered: show it, keeping selection and marks on the same jobs.
pub fn on_loaded(state: &mut State, set: Arc<JobSet>) -> Vec<Effect> {
    nav::update_jobs_or_nodes(state, |s| s.queue.jobs = Some(set));
    state.queue.status = Status::Loaded;
    let effects = follow_up(state);
    if state.queue.refetch == Refetch::Idle {
        apply_waiting(state);
    }
    effects
}

pub fn on_failed(state: &mut State, error: String, unsupported: bool) -> Vec<Effect> {
    if unsupported {
        state.queue.refetch = Refetch::Idle;
        state.queue.status = Status::Unsupported;
        return Vec::new();
    }
    state.error(format!("reading jobs: {error}"));
    state.queue.status = Status::Failed(error);
    follow_up(state)
}

fn follow_up(state: &mut State) -> Vec<Effect> {
    if state.queue.refetch.done() { stale(state) } else { Vec::new() }
}

/// A write answered (done, warned or failed): if it was a job action, the
/// queue changed (or the refusal may be stale), so read it again.
pub fn after_write(state: &mut State) -> Vec<Effect> {
    if state.queue.writes == 0 {
        return Vec::new();
    }
    state.queue.writes -= 1;
    if state.queue.pushed {
        return Vec::new();
    }
    stale(state)
}

/// `t`: All → Pending → Running → Finished → All, keeping the selected job if it is still shown.
pub fn cycle_states(state: &mut State) {
    let key = nav::selected_key(state, PaneId::Queue);
    let view = state.view_mut();
    view.job_states = view.job_states.next();
    let label = view.job_states.label();
    nav::reselect(state, PaneId::Queue, key);
    nav::clamp_all(state);
    state.info(format!("showing {label} jobs"));
}

/// Enter on the Queue: an array's row opens to show its records beneath
/// it, or folds them away again; any other row opens its detail view, as
/// on every pane.
pub fn open(state: &mut State) {
    let key = nav::selected_key(state, PaneId::Queue);
    match key.as_deref().and_then(RowKey::parse) {
        Some(RowKey::Array(id)) if matches!(state.mode, Mode::Normal) => {
            state.view_mut().expanded.toggle(id);
            nav::reselect(state, PaneId::Queue, key);
            nav::clamp_all(state);
        }
        _ => nav::normal(state, Action::Open),
    }
}

/// The job ids an action is for: the marked ones (even if a filter hides
/// them), else the selected one or the one in the detail view. An array's
/// row stands for every record of the array, as its id does in Slurm.
fn targets(state: &State, set: &JobSet) -> Vec<u64> {
    let marks = &state.views[PaneId::Queue.index()].marks;
    let keys: Vec<String> = match marks.is_empty() {
        true => nav::current_key(state).into_iter().collect(),
        false => marks.iter().cloned().collect(),
    };
    let mut ids: Vec<u64> = (keys.iter().filter_map(|k| RowKey::parse(k)))
        .flat_map(|k| match k {
            RowKey::Job(id) => vec![id],
            RowKey::Array(id) => set.array_records(id),
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The operator pressed a job action key: the write to confirm, with the
/// jobs it does not apply to left out (and said so), or None with the reason.
pub fn start(state: &mut State, op: JobOp) -> Option<WriteOp> {
    let Some(set) = state.queue.jobs.clone() else {
        state.error("Queue: no jobs loaded yet");
        return None;
    };
    let wanted = targets(state, &set);
    if wanted.is_empty() {
        state.error("Queue: no job selected");
        return None;
    }
    let (mut ids, mut owners, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
    for id in wanted {
        match set.get(id).map(|r| (r, op.skip_reason(r))) {
            Some((r, None)) => {
                ids.push(id);
                owners.push(r.user.to_string());
            }
            Some((_, Some(why))) => skipped.push(format!("{id} {why}")),
            None => skipped.push(format!("{id} gone")),
        }
    }
    owners.sort();
    owners.dedup();
    let note = skipped.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    let more = if skipped.len() > 5 { format!(" (+{} more)", skipped.len() - 5) } else { String::new() };
    if ids.is_empty() {
        state.error(format!("{}: nothing to do: {note}{more}", op.verb()));
        return None;
    }
    if !skipped.is_empty() {
        state.info(format!("skipping {note}{more}"));
    }
    Some(WriteOp::UpdateJobs { op, ids, owners })
}

/// Why this session may not act on these jobs, or None. A user may act on
/// their own jobs; anyone else's need Operator (the controller's rule,
/// checked first so the operator learns why before the dialog). An unknown
/// session is not refused: the controller still decides.
pub fn refusal(state: &State, op: &WriteOp) -> Option<String> {
    let WriteOp::UpdateJobs { op, ids, .. } = op else { return None };
    let s = state.session.as_ref()?;
    if s.role >= session::OTHERS_JOBS_ROLE {
        return None;
    }
    let set = state.queue.jobs.as_ref()?;
    let (id, owner) =
        ids.iter().filter_map(|&id| set.get(id)).find(|r| *r.user != s.user).map(|r| (r.id, &r.user))?;
    Some(format!(
        "{} refused: job {id} belongs to {owner}; only its owner or an {} may change it (you are {}, {})",
        op.verb(),
        session::OTHERS_JOBS_ROLE.as_str(),
        s.user,
        s.role.as_str()
    ))
}
