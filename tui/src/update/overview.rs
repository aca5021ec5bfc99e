//! The Overview pane's data. Its sums of the jobs and nodes are made when
//! either changes ([`data_changed`], from `nav::update_data`, the one path
//! every change of data takes) while the pane is shown, and on opening it
//! when they changed meanwhile: one walk per change, never one per frame.
//! The scheduler's figures (`Cluster.Diag`) are read on opening, on `r`, and
//! whenever the watch reports a change while the pane is shown (a pass is a
//! batch of job changes), one read at a time as every pane's re-reads are;
//! never on a timer. Enter on a reason opens the Queue filtered to it.

use crate::model::action::{Effect, Rpc};
use crate::model::filter::Filter;
use crate::model::jobs::StateFilter;
use crate::model::overview::{self, queue_filter};
use crate::model::pane::PaneId;
use crate::model::state::State;
use crate::model::table::Target;
use crate::model::view::Refetch;
use crate::update::nav;
use spur_proto::v1::DiagResponse;
use std::sync::Arc;

/// Add up the jobs and nodes now.
pub fn recompute(state: &mut State) {
    let sums = overview::aggregate(state.queue.jobs.as_deref(), state.nodes.list.as_deref());
    state.overview.sums = Arc::new(sums);
    state.overview.stale = false;
}

/// The jobs or nodes changed: add them up again if the pane is shown, else on opening.
pub fn data_changed(state: &mut State) {
    if state.pane == PaneId::Overview {
        recompute(state);
    } else {
        state.overview.stale = true;
    }
}

/// The pane was opened: its sums if they are behind, and the figures.
pub fn open(state: &mut State) -> Vec<Effect> {
    if state.overview.stale {
        recompute(state);
        nav::clamp_all(state);
    }
    ask(state)
}

/// Something changed: read the figures again if the pane is shown.
pub fn stale(state: &mut State) -> Vec<Effect> {
    if state.pane == PaneId::Overview { ask(state) } else { Vec::new() }
}

fn ask(state: &mut State) -> Vec<Effect> {
    if state.overview.unsupported || !state.overview.refetch.ask() {
        return Vec::new();
    }
    vec![Effect::Rpc(Rpc::FetchDiag)]
}

/// A (re)connect or a lost connection: a read asked of the old connection is void.
pub fn reset(state: &mut State) {
    state.overview.refetch = Refetch::Idle;
    state.overview.unsupported = false;
}

pub fn on_loaded(state: &mut State, diag: Box<DiagResponse>) -> Vec<Effect> {
    state.overview.diag = Some(diag);
    state.overview.diag_error = None;
    settle(state)
}

/// A controller without `Cluster.Diag` leaves the section saying so; any other refusal is shown there.
pub fn on_failed(state: &mut State, error: String, unsupported: bool) -> Vec<Effect> {
    state.overview.unsupported = unsupported;
    state.overview.diag_error = (!unsupported).then_some(error);
    settle(state)
}

fn settle(state: &mut State) -> Vec<Effect> {
    if state.overview.refetch.done() { stale(state) } else { Vec::new() }
}

/// Enter on a reason: the Queue, showing the pending jobs with that reason
/// (its `/` filter and `t` state filter, so Esc and `t` undo it as usual).
pub fn open_reason(state: &mut State) -> Option<PaneId> {
    let Some(Target::Reason(reason)) = nav::current_target(state) else {
        state.info("no pending reason selected");
        return None;
    };
    let filter = match Filter::parse(&queue_filter(&reason)) {
        Ok(f) => f,
        Err(e) => {
            state.error(format!("filtering the Queue by {reason}: {e}"));
            return None;
        }
    };
    let queue = &mut state.views[PaneId::Queue.index()];
    queue.filter = filter;
    queue.job_states = StateFilter::Pending;
    queue.selected = 0;
    queue.offset = 0;
    state.info(format!("pending jobs waiting for {reason} (esc clears the filter)"));
    Some(PaneId::Queue)
}
