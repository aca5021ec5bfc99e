//! The Fairshare pane's reads. Usage decays and grows with every running
//! job, and no watch event says so, so the tree is read when the pane is
//! opened and on `r` (never on a timer), coalesced like every pane's
//! re-reads ([`crate::model::view::Refetch`]). Called only from
//! [`crate::update::dispatch()`]; the pane has no keys of its own.

use crate::model::action::{Effect, Rpc};
use crate::model::pane::Reads;
use crate::model::state::State;
use crate::model::view::Refetch;
use crate::update::nav;
use spur_proto::v1::ListSharesResponse;

/// Read the tree, or note that it must be read again.
pub fn stale(state: &mut State) -> Vec<Effect> {
    if state.fairshare.refetch.ask() { vec![Effect::Rpc(Rpc::FetchShares)] } else { Vec::new() }
}

/// A (re)connect or `r`: read the tree again if the pane is open.
pub fn if_open(state: &mut State) -> Vec<Effect> {
    if state.pane.decl().reads == Reads::Shares { stale(state) } else { Vec::new() }
}

/// A (re)connect or a lost connection: a read asked of the old connection is void.
pub fn reset(state: &mut State) {
    state.fairshare.refetch = Refetch::Idle;
}

/// The tree arrived: show it, keeping the selection.
pub fn on_loaded(state: &mut State, data: ListSharesResponse) -> Vec<Effect> {
    nav::update_data(state, |s| s.fairshare.data = Some(data));
    settle(state)
}

/// A refusal is shown; the tree last read stays.
pub fn on_failed(state: &mut State, error: String) -> Vec<Effect> {
    state.error(format!("reading fair shares: {error}"));
    settle(state)
}

fn settle(state: &mut State) -> Vec<Effect> {
    if state.fairshare.refetch.done() { stale(state) } else { Vec::new() }
}
