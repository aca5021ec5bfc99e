//! What the network task reports ([`Msg`]), folded into the state: the
//! dispatcher's `Action::Net` arm, kept apart so the dispatcher stays the
//! place of keys, writes and confirmations.

use super::dispatch::refetch_unless_live;
use crate::model::action::{Effect, Msg, Rpc};
use crate::model::state::{Conn, State};
use crate::update::{
    audit, fairshare, hres, live, merged, nav, nodes, output, overview, preempt, provisioners, queue,
};

pub(super) fn on_net(state: &mut State, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Connected => {
            state.conn = Conn::Connected;
            state.relayout();
            live::reset(state);
            // Errors from before this connection describe a controller that is back.
            state.last_error = None;
            state.loading = true;
            // The role may have changed while away; the tail resumes after the last row seen.
            let mut effects = vec![Effect::Rpc(Rpc::FetchAll), Effect::Rpc(Rpc::WhoAmI)];
            effects.extend(audit::resume(state));
            effects.extend(queue::on_connected(state));
            effects.extend(hres::stale(state));
            effects.extend(provisioners::stale(state));
            effects.extend(fairshare::if_open(state));
            effects
        }
        Msg::On { controller, primary } => {
            let on = state.on.get_or_insert_with(Default::default);
            if !on.controller.is_empty() {
                on.failovers += 1;
            }
            on.controller = controller;
            on.primary = primary;
            Vec::new()
        }
        Msg::Reconnecting { attempt, retry_in, error } => {
            state.conn = Conn::Reconnecting { attempt, retry_in };
            state.relayout();
            live::reset(state);
            output::lost(state);
            queue::reset(state);
            preempt::reset(state);
            state.last_error = Some(error);
            state.loading = false;
            Vec::new()
        }
        Msg::Disconnected { error } => {
            state.conn = Conn::Disconnected;
            state.relayout();
            live::reset(state);
            output::lost(state);
            queue::reset(state);
            preempt::reset(state);
            state.loading = false;
            state.error(error);
            Vec::new()
        }
        Msg::Loaded(snapshot) => {
            nav::replace_data(state, snapshot);
            Vec::new()
        }
        Msg::FetchFailed { error } => {
            state.loading = false;
            state.error(format!("fetch failed: {error}"));
            Vec::new()
        }
        // With the watch live the change is pushed; re-fetching is only for a controller without it.
        Msg::WriteDone { summary } => {
            state.info(summary);
            refetch_unless_live(state)
        }
        Msg::WriteWarned { summary, warning } => {
            state.error(format!("{summary}; warning: {warning}"));
            refetch_unless_live(state)
        }
        Msg::Jobs(set) => {
            // What changed the jobs changed the verdicts too.
            let mut effects = queue::on_loaded(state, set);
            effects.extend(preempt::stale(state));
            effects.extend(overview::stale(state));
            effects
        }
        Msg::Diag(diag) => overview::on_loaded(state, diag),
        Msg::DiagFailed { error, unsupported } => overview::on_failed(state, error, unsupported),
        Msg::Explained { job, answer } => preempt::on_loaded(state, job, answer),
        Msg::NodeEvents { node, rows } => nodes::on_events(state, node, rows),
        Msg::Licenses(list) => hres::on_loaded(state, list),
        Msg::LicensesFailed => hres::on_failed(state),
        Msg::Shares(data) => fairshare::on_loaded(state, data),
        Msg::SharesFailed { error } => fairshare::on_failed(state, error),
        Msg::Provisioners(list) => provisioners::on_loaded(state, list),
        Msg::ProvisionersFailed { error, unsupported } => provisioners::on_failed(state, error, unsupported),
        Msg::JobsFailed { error, unsupported } => queue::on_failed(state, error, unsupported),
        Msg::WriteFailed { error } => {
            // A refusal means the role shown is stale: ask again.
            let denied = error.contains("PermissionDenied");
            state.error(error);
            // Part of a multi-row delete may have landed; show what is true now.
            let mut effects = refetch_unless_live(state);
            if denied {
                effects.push(Effect::Rpc(Rpc::WhoAmI));
            }
            effects
        }
        Msg::Session(s) => {
            state.session = Some(s);
            Vec::new()
        }
        Msg::SessionFailed { error } => {
            state.error(format!("whoami: {error}"));
            Vec::new()
        }
        Msg::AuditRows { sub, rows, lagged } => {
            audit::on_rows(state, sub, rows, lagged);
            Vec::new()
        }
        Msg::AuditFailed { sub, error } => {
            audit::on_failed(state, sub, error);
            Vec::new()
        }
        Msg::Cluster(update) => live::on_update(state, update),
        Msg::WatchRefused { error } => {
            state.watch_error = Some(error.clone());
            state.error(format!("cluster watch: {error}"));
            Vec::new()
        }
        Msg::ListLoaded(list) => live::on_list(state, list),
        Msg::Output { sub, data, note } => {
            output::on_piece(state, sub, &data, &note);
            Vec::new()
        }
        Msg::OutputEnded { sub, error } => {
            output::on_ended(state, sub, error);
            Vec::new()
        }
        Msg::Remote { ctx, msg } => merged::on_remote(state, ctx, *msg),
        Msg::ListFailed { list, error } => {
            live::on_list_failed(state, list, error);
            Vec::new()
        }
    }
}
