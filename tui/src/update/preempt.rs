//! The Preemption pane: reading the controller's explanation of one
//! pending job (`Jobs.Explain`), opened with `w` on a Queue row or
//! `:explain ID`.
//!
//! Re-reads: whenever job changes arrive on the cluster watch (a pass that
//! started, ended or re-reasoned a job is one batch) or the jobs are re-read
//! (`r`, a reconnect), a shown explanation is asked again, so it follows the
//! scheduler's passes with no timer of its own. At most one
//! read is in flight, plus one follow-up for changes that came meanwhile.

use crate::model::action::{Effect, Rpc};
use crate::model::jobs::RowKey;
use crate::model::pane::PaneId;
use crate::model::preempt::Preempt;
use crate::model::state::State;
use crate::model::view::Refetch;
use crate::update::nav;
use spur_proto::v1 as pb;

/// Open the pane on `job` and read its explanation.
pub fn open(state: &mut State, job: u64) -> Vec<Effect> {
    if state.preempt.job != Some(job) {
        state.preempt = Preempt { job: Some(job), ..Preempt::default() };
        state.views[PaneId::Preempt.index()] = Default::default();
    }
    nav::switch(state, PaneId::Preempt);
    stale(state)
}

/// `w` in the Queue: explain the selected job.
pub fn open_selected(state: &mut State) -> Vec<Effect> {
    // An array's row explains the array's own record, as `:explain 12` would.
    match nav::current_key(state).as_deref().and_then(RowKey::parse) {
        Some(key) => open(state, key.job()),
        None => {
            state.info("no job selected");
            Vec::new()
        }
    }
}

/// The explanation may have changed: read it if the pane shows one.
pub fn stale(state: &mut State) -> Vec<Effect> {
    let Some(job) = state.preempt.job.filter(|_| state.pane == PaneId::Preempt) else {
        return Vec::new();
    };
    if state.preempt.refetch.ask() { vec![Effect::Rpc(Rpc::Explain(job))] } else { Vec::new() }
}

pub fn reset(state: &mut State) {
    state.preempt.refetch = Refetch::Idle;
}

/// An answer: kept only if it is for the job still shown.
pub fn on_loaded(state: &mut State, job: u64, answer: Result<Box<pb::Explanation>, String>) -> Vec<Effect> {
    let dirty = state.preempt.refetch.done();
    if state.preempt.job != Some(job) {
        return stale(state);
    }
    let key = nav::selected_key(state, PaneId::Preempt);
    match answer {
        Ok(e) => {
            state.preempt.data = Some(*e);
            state.preempt.error = None;
        }
        Err(e) => state.preempt.error = Some(e),
    }
    // The summary above the table changed, and with it the rows' room.
    state.relayout();
    nav::reselect(state, PaneId::Preempt, key);
    nav::clamp_all(state);
    if dirty { stale(state) } else { Vec::new() }
}
