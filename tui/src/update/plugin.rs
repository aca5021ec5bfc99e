//! A plugin's key (console.toml's `[[plugins]]`, checked in
//! `model/plugin.rs`): its command filled in from the selected row, run at
//! once, or, for a `dangerous` one, through the write confirmation (the
//! write role, and a dialog naming the command). Its stdout and stderr
//! show in the output view (`o`'s), fed by `net/plugin.rs`.
//! Called only from [`crate::update::dispatch()`].

use crate::model::action::Effect;
use crate::model::jobs::RowKey;
use crate::model::output::OutputView;
use crate::model::pane::PaneId;
use crate::model::plugin;
use crate::model::state::{Mode, State};
use crate::model::table::Target;
use crate::model::write::{WriteOp, shown};
use crate::update::nav;
use std::collections::BTreeMap;

/// The plugin's command for the selected row, as a write to confirm when
/// it is dangerous (the bool), or why there is none.
pub fn start(state: &mut State, index: usize) -> Option<(WriteOp, bool)> {
    let p = state.settings.plugins.get(index)?.clone();
    // The Queue's row key names its job: no need to build 100,000 rows for the target.
    let target = match state.pane {
        PaneId::Queue => {
            nav::current_key(state).as_deref().and_then(RowKey::parse).map(|k| Target::Job(k.job()))
        }
        _ => nav::current_target(state),
    };
    let Some(target) = target else {
        state.info(format!("plugin {}: no row selected", p.name));
        return None;
    };
    match plugin::argv(&p.command, &fields(state, &target)) {
        Ok(argv) => Some((WriteOp::RunPlugin { name: p.name, argv }, p.dangerous)),
        Err(e) => {
            state.error(format!("plugin {}: {e}", p.name));
            None
        }
    }
}

/// Runs a plugin's command: the output view opens on it at once.
pub fn run(state: &mut State, name: &str, argv: Vec<String>) -> Vec<Effect> {
    state.output_seq += 1;
    let sub = state.output_seq;
    state.output = Some(OutputView::plugin(format!("plugin {name}: {}", shown(&argv)), sub));
    state.mode = Mode::Output;
    vec![Effect::Run { sub, argv }]
}

/// The selected row's fields, by its target.
pub fn fields(state: &State, target: &Target) -> BTreeMap<&'static str, String> {
    let mut f = BTreeMap::new();
    match target {
        Target::Job(id) => {
            if let Some(j) = state.queue.jobs.as_ref().and_then(|s| s.get(*id)) {
                let first = spur_vocab::hostlist::expand(&j.nodelist).ok().and_then(|n| n.into_iter().next());
                f.insert("jobid", j.id.to_string());
                f.insert("name", j.name.to_string());
                f.insert("user", j.user.to_string());
                f.insert("account", j.account.to_string());
                f.insert("partition", j.partition.to_string());
                f.insert("qos", j.qos.to_string());
                f.insert("state", j.state.as_str().to_string());
                f.insert("nodes", j.nodelist.to_string());
                f.insert("node", first.unwrap_or_default());
            }
        }
        Target::Node(n) => {
            f.insert("nodes", n.clone());
            f.insert("node", n.clone());
        }
        Target::Account(a) => {
            f.insert("account", a.clone());
        }
        Target::Assoc { user, account, partition } => {
            f.insert("user", user.clone());
            f.insert("account", account.clone());
            f.insert("partition", partition.clone());
        }
        Target::Qos(q) => {
            f.insert("qos", q.clone());
            f.insert("name", q.clone());
        }
        Target::Reservation(r) => {
            f.insert("name", r.clone());
        }
        _ => {}
    }
    f.retain(|_, v| !v.is_empty());
    f
}
