//! HRES work from the console: flipping DisableLayer on the selected layer,
//! or DisableHRES on a resource's own row (the confirmation's text is
//! [`crate::model::hres::describe`]).
//! Called only from [`crate::update::dispatch()`], which checks read-only mode and the
//! role first and opens the confirmation after.

use crate::model::state::State;
use crate::model::table::Target;
use crate::model::write::WriteOp;
use crate::update::nav;

/// The write that flips the selected HRES row's disabled flag, or why there is none.
pub fn start(state: &mut State) -> Option<WriteOp> {
    let Some(Target::Layer { resource, layer }) = nav::current_target(state) else { return None };
    let all = state.licenses.as_deref().unwrap_or_default();
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
