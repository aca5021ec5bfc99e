//! HRES work from the console: flipping DisableLayer on the selected layer,
//! or DisableHRES on a resource's own row, and the confirmation's text.
//! Called only from [`crate::dispatch`], which checks read-only mode and the
//! role first and opens the confirmation after.

use crate::action::WriteOp;
use crate::nav;
use crate::pane::PaneId;
use crate::state::State;
use crate::views::Target;

/// The write that flips the selected HRES row's disabled flag, or why there is none.
pub fn start(state: &mut State) -> Option<WriteOp> {
    if state.pane != PaneId::Hres {
        state.info(format!("that key works in the HRES pane ({})", PaneId::Hres.number()));
        return None;
    }
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

/// Title and body of the confirmation: what changes, and the scontrol line that does it.
pub fn describe(resource: &str, layer: &str, disable: bool) -> (String, Vec<String>) {
    let verb = if disable { "Disable" } else { "Enable" };
    let (what, key) = match layer {
        "" => (format!("resource {resource}"), "DisableHRES".to_string()),
        l => (format!("layer {resource}/{l}"), format!("LayerName={l} DisableLayer")),
    };
    let effect = if disable {
        "New jobs are not allocated from it; running jobs keep what they hold."
    } else {
        "New jobs may be allocated from it again."
    };
    let cmd = format!("= scontrol update HRESName={resource} {key}={disable}");
    (format!("{verb} {what}?"), vec![effect.to_string(), cmd])
}
