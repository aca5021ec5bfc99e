//! The Preemption pane's data: the controller's explanation of one pending
//! job (`Jobs.Explain`), opened with `w` on a Queue row or `:explain ID`.
//! The console shows the scheduler's marks and sentences as they come; it
//! never recomputes a verdict.
//!
//! Re-reads: whenever job changes arrive on the cluster watch (a pass that
//! started, ended or re-reasoned a job is one batch) or the jobs are re-read
//! (`r`, a reconnect), a shown explanation is asked again, so it follows the
//! scheduler's passes with no timer of its own. At most one
//! read is in flight, plus one follow-up for changes that came meanwhile.

use crate::action::{Effect, Rpc};
use crate::live::Refetch;
use crate::nav;
use crate::pane::PaneId;
use crate::state::State;
use spur_proto::v1 as pb;

#[derive(Debug, Clone, Default)]
pub struct Explain {
    /// The job the pane is about.
    pub job: Option<u64>,
    /// The last answer for `job`.
    pub data: Option<pb::Explanation>,
    /// Why the last read failed (the job ended, is not pending, ...).
    pub error: Option<String>,
    pub refetch: Refetch,
}

/// Open the pane on `job` and read its explanation.
pub fn open(state: &mut State, job: u64) -> Vec<Effect> {
    if state.explain.job != Some(job) {
        state.explain = Explain { job: Some(job), ..Explain::default() };
        state.views[PaneId::Preemption.index()] = Default::default();
    }
    nav::switch(state, PaneId::Preemption);
    stale(state)
}

/// `w` in the Queue: explain the selected job.
pub fn open_selected(state: &mut State) -> Vec<Effect> {
    if state.pane != PaneId::Queue {
        state.info(format!("that key works in the Queue pane ({})", PaneId::Queue.number()));
        return Vec::new();
    }
    match nav::current_key(state).and_then(|k| k.parse().ok()) {
        Some(id) => open(state, id),
        None => {
            state.info("no job selected");
            Vec::new()
        }
    }
}

/// The explanation may have changed: read it if the pane shows one.
pub fn stale(state: &mut State) -> Vec<Effect> {
    let Some(job) = state.explain.job.filter(|_| state.pane == PaneId::Preemption) else {
        return Vec::new();
    };
    match state.explain.refetch {
        Refetch::Idle => {
            state.explain.refetch = Refetch::InFlight;
            vec![Effect::Rpc(Rpc::Explain(job))]
        }
        _ => {
            state.explain.refetch = Refetch::Dirty;
            Vec::new()
        }
    }
}

pub fn reset(state: &mut State) {
    state.explain.refetch = Refetch::Idle;
}

/// An answer: kept only if it is for the job still shown.
pub fn on_loaded(state: &mut State, job: u64, answer: Result<Box<pb::Explanation>, String>) -> Vec<Effect> {
    let dirty = state.explain.refetch == Refetch::Dirty;
    state.explain.refetch = Refetch::Idle;
    if state.explain.job != Some(job) {
        return stale(state);
    }
    let key = nav::selected_key(state, PaneId::Preemption);
    match answer {
        Ok(e) => {
            state.explain.data = Some(*e);
            state.explain.error = None;
        }
        Err(e) => state.explain.error = Some(e),
    }
    nav::reselect(state, PaneId::Preemption, key);
    nav::clamp_all(state);
    if dirty { stale(state) } else { Vec::new() }
}
