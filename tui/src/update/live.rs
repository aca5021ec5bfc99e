//! Keeping the console current from `Cluster.Watch` instead of polling or
//! re-fetching after each write: nodes are replaced by name as they change,
//! changed jobs by id (see [`crate::update::queue`]), and a catalog change re-reads
//! just the list it names. Called only from
//! [`crate::update::dispatch()`].
//!
//! Re-reads are coalesced: while one read of a list is under way, further
//! changes to it only mark it dirty, and one more read follows when the
//! first answers (it may have started before those changes committed). A
//! burst of a hundred user changes thus costs two reads, not a hundred.

use crate::model::action::{Catalog, CatalogList, ClusterUpdate, Effect, Rpc, Snapshot};
use crate::model::state::State;
use crate::update::{fairshare, hres, nav, preempt, provisioners, queue};
use spur_proto::v1::Node;
use std::collections::HashMap;

/// A (re)connect or a lost connection: nothing is live until the new
/// watch's snapshot arrives, and reads asked of the old connection are void.
pub fn reset(state: &mut State) {
    state.live = false;
    state.watch_error = None;
    state.accounting.refetch = Default::default();
    provisioners::reset(state);
    hres::reset(state);
    crate::update::overview::reset(state);
    fairshare::reset(state);
}

/// The watch reported: merge nodes, re-read stale lists.
pub fn on_update(state: &mut State, update: ClusterUpdate) -> Vec<Effect> {
    let ClusterUpdate { snapshot, nodes, stale, lagged, licenses, jobs, reservations } = update;
    if let Some(r) = reservations {
        nav::update_data(state, |s| s.resvs.list = Some(r));
    }
    // A batch with jobs in it is a pass (or a change) the scheduler re-evaluates on.
    let passed = jobs.iter().any(|b| !b.jobs.is_empty());
    let mut effects = queue::on_pushed(state, jobs);
    if passed {
        effects.extend(preempt::stale(state));
        // The Overview's scheduler figures move with a pass, not with a heartbeat.
        effects.extend(crate::update::overview::stale(state));
    }
    // The first snapshot of a connection comes with `Connected`, which reads the jobs anyway.
    let first = !state.live;
    state.live = true;
    state.watch_error = None;
    let nodes_changed = snapshot || !nodes.is_empty();
    if nodes_changed {
        nav::update_jobs_or_nodes(state, |s| merge_nodes(s, snapshot, nodes));
    }
    // Jobs starting and ending change node allocations: a controller that
    // does not push jobs is re-read on a node change; missed changes always re-read.
    let nodes_cue = nodes_changed && !first && !state.queue.pushed;
    if nodes_cue || lagged.is_some() {
        effects.extend(queue::stale(state));
    }
    // Pools follow their nodes; the first snapshot's are read with `Connected`.
    if (nodes_changed && !first) || lagged.is_some() {
        effects.extend(provisioners::stale(state));
    }
    // Missed accounting changes could be any of them.
    let stale = if lagged.is_some() { Catalog::ALL.to_vec() } else { stale };
    if let Some(note) = lagged {
        state.info(format!("cluster watch: {note}"));
    }
    effects.extend(stale.into_iter().flat_map(|list| mark_stale(state, list)));
    // Pushed, not polled: an HRES update, or a job taking or releasing licenses.
    if licenses && !first {
        effects.extend(hres::stale(state));
    }
    effects
}

fn merge_nodes(state: &mut State, snapshot: bool, nodes: Vec<Node>) {
    if snapshot {
        state.nodes.list = Some(nodes);
        return;
    }
    let all = state.nodes.list.get_or_insert_with(Vec::new);
    let mut at: HashMap<String, usize> = all.iter().enumerate().map(|(i, n)| (n.name.clone(), i)).collect();
    for n in nodes {
        match at.get(&n.name) {
            Some(&i) => all[i] = n,
            None => {
                at.insert(n.name.clone(), all.len());
                all.push(n);
            }
        }
    }
}

/// `list` changed on the controller: read it, or note that it must be read again.
pub fn mark_stale(state: &mut State, list: Catalog) -> Vec<Effect> {
    if state.accounting.refetch[list.index()].ask() {
        vec![Effect::Rpc(Rpc::FetchList(list))]
    } else {
        Vec::new()
    }
}

/// A re-read list arrived: show it, keeping selections and marks.
pub fn on_list(state: &mut State, list: CatalogList) -> Vec<Effect> {
    let kind = list.kind();
    nav::update_data(state, |s| {
        let data = s.accounting.data.get_or_insert_with(Snapshot::default);
        match list {
            CatalogList::Qos(q) => data.qos = q,
            CatalogList::Accounts { cluster, accounts } => {
                data.cluster = cluster;
                data.accounts = accounts;
            }
            CatalogList::Users(u) => data.users = u,
        }
    });
    if state.accounting.refetch[kind.index()].done() { mark_stale(state, kind) } else { Vec::new() }
}

pub fn on_list_failed(state: &mut State, list: Catalog, error: String) {
    // Idle again, so the next change (or `r`) reads it.
    state.accounting.refetch[list.index()].done();
    state.error(format!("re-reading {list:?}: {error}"));
}
