//! The HRES pane's data and work. The licenses are read on (re)connect,
//! on `r`, and whenever the cluster watch says they changed (an HRES update,
//! a job taking or releasing licenses), through [`stale`], coalesced like
//! every pane's re-reads ([`crate::model::view::Refetch`]); never on a
//! timer. Its key flips DisableLayer on the selected layer, or DisableHRES
//! on a resource's own row (the confirmation's text is
//! [`crate::model::hres::describe`]).
//! Called only from [`crate::update::dispatch()`], which checks read-only mode and the
//! role first and opens the confirmation after.

use crate::model::action::{Effect, Rpc};
use crate::model::state::State;
use crate::model::table::Target;
use crate::model::view::Refetch;
use crate::model::write::WriteOp;
use crate::update::nav;
use spur_proto::v1::License;

/// The licenses may have changed: read them, or note that they must be read again.
pub fn stale(state: &mut State) -> Vec<Effect> {
    if state.hres.refetch.ask() { vec![Effect::Rpc(Rpc::FetchLicenses)] } else { Vec::new() }
}

/// A (re)connect or a lost connection: a read asked of the old connection is void.
pub fn reset(state: &mut State) {
    state.hres.refetch = Refetch::Idle;
}

/// The licenses arrived: show them, keeping the selection, and read again
/// if they changed while this read was under way.
pub fn on_loaded(state: &mut State, list: Vec<License>) -> Vec<Effect> {
    nav::update_data(state, |s| s.hres.licenses = Some(list));
    if state.hres.refetch.done() { stale(state) } else { Vec::new() }
}

/// A read refused (a controller without the service): the pane keeps
/// saying it has no data, or shows the licenses last read; the next change reads again.
pub fn on_failed(state: &mut State) -> Vec<Effect> {
    if state.hres.refetch.done() { stale(state) } else { Vec::new() }
}

/// The write that flips the selected HRES row's disabled flag, or why there is none.
pub fn start(state: &mut State) -> Option<WriteOp> {
    let Some(Target::Layer { resource, layer }) = nav::current_target(state) else { return None };
    let all = state.hres.licenses.as_deref().unwrap_or_default();
    let mut rows = all.iter().filter(|l| l.name == resource);
    let disable = match layer.as_str() {
        "" => match rows.find(|l| !l.layer_name.is_empty()) {
            Some(l) => !l.disable_hres,
            None => {
                state.error(format!(
                    "{resource} is a plain license; only hierarchical resources are disabled"
                ));
                return None;
            }
        },
        l => !rows.find(|x| x.layer_name == l)?.disable_layer,
    };
    Some(WriteOp::UpdateHres { resource, layer, disable })
}
