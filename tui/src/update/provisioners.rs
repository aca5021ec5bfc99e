//! The Provisioners pane's data. A definition's pool changes when its nodes
//! register, change state or are reconfigured, and each of those reaches the
//! console as a node change on `Cluster.Watch`, the Nodes pane's own cycle.
//! So the definitions are read on (re)connect, re-read after each batch of
//! node changes and on `r`, and never on a timer. Re-reads are coalesced like
//! catalog lists: one in flight, and one more if nodes changed meanwhile.
//! Called only from [`crate::update`]; the pane has no keys of its own.

use crate::model::action::{Effect, Rpc};
use crate::model::state::State;
use crate::model::view::Refetch;
use crate::update::nav;
use spur_proto::v1::Provisioner;

/// The pools may have changed: read them, or note that they must be read again.
pub fn stale(state: &mut State) -> Vec<Effect> {
    if state.provisioners.refetch.ask() { vec![Effect::Rpc(Rpc::FetchProvisioners)] } else { Vec::new() }
}

/// A (re)connect or a lost connection: a read asked of the old connection is void.
pub fn reset(state: &mut State) {
    state.provisioners.refetch = Refetch::Idle;
}

/// The definitions arrived: show them, keeping the selection, and read
/// again if nodes changed while this read was under way.
pub fn on_loaded(state: &mut State, list: Vec<Provisioner>) -> Vec<Effect> {
    nav::update_data(state, |s| s.provisioners.list = Some(list));
    settle(state)
}

/// A controller without `ListProvisioners` leaves the pane saying so; any
/// other refusal is shown, and the definitions last read stay.
pub fn on_failed(state: &mut State, error: String, unsupported: bool) -> Vec<Effect> {
    if !unsupported {
        state.error(format!("reading provisioner definitions: {error}"));
    }
    settle(state)
}

fn settle(state: &mut State) -> Vec<Effect> {
    if state.provisioners.refetch.done() { stale(state) } else { Vec::new() }
}
