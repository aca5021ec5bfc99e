//! Node history, Slurm's `sacctmgr show event`: who set which state with
//! which reason, when, and when it ended, derived from the txn log's node
//! rows. The controller already audits every node state change in the same
//! commit as the change (an admin's `scontrol update`, and its own: a node
//! not responding, responding again, a plugin's drain), so the events are a
//! reading of those rows and no second record is kept that could disagree
//! with them. An event ends when the next row for its node starts another
//! (TimeEnd); the newest is open (`Unknown`).
//!
//! The read is bounded: the newest [`MAX_LIMIT`] node rows, fetched by
//! `show txn`'s paging with `Entity=node Outcome=success` (and `Name=` for a
//! single node) pushed to the store's query. Start= and End= are applied
//! after the derivation, since an event that began before the window (or
//! ends after it) needs the rows outside it for its bounds.

//!
//! The derivation is here, outside `cli`, because the console's node detail
//! shows the same events (it takes `conn` and this, never `cli`).

use crate::vocab::hostlist;
use crate::vocab::nodestate::Requested;
use crate::vocab::txn::parse_time;
use chrono::{DateTime, Local};
use spur_proto::v1 as pb;

pub use crate::vocab::txn::MAX_LIMIT;

/// One state a node was in, from `start_ms` to `end_ms` (None: still in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub cluster: String,
    pub node: String,
    pub start_ms: i64,
    pub end_ms: Option<i64>,
    /// Slurm's spelling: DRAIN, DOWN, IDLE (resumed), or the system's words.
    pub state: String,
    pub reason: String,
    pub user: String,
}

/// `show event`'s filters, checked before any call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub nodes: Vec<String>,
    pub start_ms: Option<i64>,
    pub end_ms: Option<i64>,
    pub states: Vec<String>,
    pub users: Vec<String>,
}

const KEYS: &[&str] = &["nodes", "start", "end", "states", "users"];

/// Reads `Nodes= Start= End= States= User=` (any unambiguous prefix, any
/// case, as sacctmgr reads keys); an unknown key or a bad value names it.
pub fn parse_filter(pairs: &[(String, String)], now: DateTime<Local>) -> Result<Filter, String> {
    let mut f = Filter::default();
    for (k, v) in pairs {
        let key = match crate::vocab::keyword::resolve(k, KEYS) {
            Ok(Some(key)) => key,
            Ok(None) => {
                return Err(format!(
                    "unknown key '{k}' for show event (use Nodes=, Start=, End=, States=, User=)"
                ));
            }
            Err(e) => return Err(format!("{k}: {e}")),
        };
        match key {
            "nodes" => f.nodes.extend(hostlist::expand(v).map_err(|e| format!("Nodes: '{v}': {e}"))?),
            "start" => f.start_ms = Some(parse_time(v, now).map_err(|e| format!("Start: {e}"))?),
            "end" => f.end_ms = Some(parse_time(v, now).map_err(|e| format!("End: {e}"))?),
            "states" => f.states.extend(crate::cli::kv::list(v).iter().map(|s| s.to_ascii_uppercase())),
            _ => f.users.extend(crate::cli::kv::list(v)),
        }
    }
    Ok(f)
}

impl Filter {
    /// One node's events (the console's node detail).
    pub fn node(name: &str) -> Filter {
        Filter { nodes: vec![name.to_string()], ..Filter::default() }
    }

    /// The txn query: the newest `limit` node rows that changed something,
    /// one node's when one is named.
    pub fn txn_query(&self, limit: i64) -> Vec<pb::KeyValue> {
        let kv = |k: &str, v: String| pb::KeyValue { key: k.into(), value: v };
        let mut q = vec![
            kv("Entity", "node".into()),
            kv("Outcome", "success".into()),
            kv("limit", limit.to_string()),
        ];
        if let [one] = self.nodes.as_slice() {
            q.push(kv("Name", one.clone()));
        }
        q
    }

    fn admits(&self, e: &Event) -> bool {
        let any = |want: &[String], have: &str| {
            want.is_empty() || want.iter().any(|w| w.eq_ignore_ascii_case(have))
        };
        any(&self.nodes, &e.node)
            && any(&self.states, &e.state)
            && any(&self.users, &e.user)
            && self.end_ms.is_none_or(|end| e.start_ms <= end)
            && self.start_ms.is_none_or(|start| e.end_ms.is_none_or(|t| t >= start))
    }
}

/// What one txn row set: the nodes, the state and its reason.
fn change(r: &pb::TxnRow) -> Option<(Vec<String>, String, String)> {
    if r.entity != "node" || r.outcome != "success" || r.action != "update" {
        return None;
    }
    let info: serde_json::Value = serde_json::from_str(&r.info).ok()?;
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    // An admin's request carries its parameters and the nodes it changed;
    // the controller's own rows name one node and what happened to it.
    let (nodes, state, reason) = match info.get("params") {
        Some(p) => {
            let updated = text(&info["updated"]);
            let nodes = hostlist::expand(if updated.is_empty() { &r.name } else { &updated }).ok()?;
            (nodes, text(&p["state"]), text(&p["reason"]))
        }
        None => (vec![r.name.clone()], text(&info["state"]), text(&info["reason"])),
    };
    let word = state.trim().to_ascii_lowercase();
    let name = |r: Requested| match r {
        Requested::Drain => "DRAIN",
        Requested::Down => "DOWN",
        Requested::Resume => "IDLE",
    };
    let state = match (info.get("params").is_some(), word.as_str()) {
        // An admin's request, as the controller read it: anything else resumes the node.
        (true, w) => name(Requested::parse(w).0).to_string(),
        // The controller's own words.
        (false, "not responding") => return Some((nodes, "DOWN".into(), "Not responding".into())),
        (false, "responding again") => "IDLE".to_string(),
        (false, w) => match Requested::parse(w) {
            (r, None) => name(r).to_string(),
            (_, Some(_)) => w.to_ascii_uppercase(),
        },
    };
    Some((nodes, state, reason))
}

/// The events in `rows` (oldest first), each ended by the next change of its
/// node, filtered by `f`; newest first per node order of the rows. Pure.
pub fn derive(rows: &[pb::TxnRow], cluster: &str, f: &Filter) -> Vec<Event> {
    let mut out: Vec<Event> = vec![];
    let mut open: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for r in rows {
        let Some((nodes, state, reason)) = change(r) else { continue };
        for node in nodes {
            if let Some(&i) = open.get(&node) {
                out[i].end_ms = Some(r.time_ms);
            }
            open.insert(node.clone(), out.len());
            let user = r.actor.clone();
            out.push(Event {
                cluster: cluster.into(),
                node,
                start_ms: r.time_ms,
                end_ms: None,
                state: state.clone(),
                reason: reason.clone(),
                user,
            });
        }
    }
    out.retain(|e| f.admits(e));
    out
}
