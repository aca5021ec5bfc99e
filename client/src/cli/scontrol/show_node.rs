//! `scontrol show node [NODELIST]`: every node, or the ones a hostlist names
//! (each must exist), as Slurm's `NodeName=...` records or `--json`.

use super::command::{Command, Flags};
use crate::cli::fmt::{null, record, status};
use crate::cli::nodefmt::{node_json, state};
use crate::conn::Clients;
use crate::vocab::hostlist;
use crate::vocab::txn::format_time;
use spur_proto::v1 as pb;
use std::collections::HashSet;

/// `show node [LIST]`; a malformed hostlist fails before any network call.
pub fn parse(arg: Option<String>) -> Result<Command, String> {
    if let Some(list) = &arg {
        hostlist::count(list)?;
    }
    Ok(Command::ShowNodes(arg))
}

/// `scontrol show node` for one node.
pub fn node_record(n: &pb::Node, f: &Flags) -> String {
    let features = n.features.join(",");
    let mut lines = vec![
        format!("NodeName={}", n.name),
        format!("CPUAlloc={} CPUTot={}", n.alloc_cpus, n.cpus),
        format!("AvailableFeatures={}", null(&features)),
        format!("ActiveFeatures={}", null(&features)),
        format!("Gres={}", null(&n.gres)),
    ];
    // Shown for nodes with GRES; nothing allocated reads as zero of each (`gpu:0`).
    if !n.gres.is_empty() || !n.gres_used.is_empty() {
        let name = |g: &'_ str| match g.rsplit_once(':') {
            Some((k, count)) if count.parse::<u64>().is_ok() => k.to_string(),
            _ => g.to_string(),
        };
        let zero = || n.gres.split(',').map(|g| format!("{}:0", name(g)));
        let used =
            if n.gres_used.is_empty() { zero().collect::<Vec<_>>().join(",") } else { n.gres_used.clone() };
        lines.push(format!("GresUsed={used}"));
    }
    if !n.agent_host.is_empty() {
        lines.push(format!("NodeHostName={}", n.agent_host));
    }
    lines.push(format!("RealMemory={} AllocMem={}", n.memory_mb, n.alloc_memory_mb));
    lines.push(format!("State={} Weight={}", state(n).scontrol(), n.weight));
    if !n.partitions.is_empty() {
        lines.push(format!("Partitions={}", n.partitions.join(",")));
    }
    provisioning(n, f.details, &mut lines);
    // Slurm: the first reason line carries [user@time]; later lines are indented 7 more.
    for (i, text) in n.reason.split('\n').filter(|t| !t.is_empty()).enumerate() {
        if i > 0 {
            lines.push(format!("       {text}"));
        } else if n.reason_time_ms != 0 {
            let user = match (n.reason_user.as_str(), n.reason_uid) {
                ("", Some(uid)) => uid.to_string(),
                ("", None) => "Unknown".into(),
                (u, _) => u.to_string(),
            };
            lines.push(format!("Reason={text} [{user}@{}]", format_time(n.reason_time_ms)));
        } else {
            lines.push(format!("Reason={text}"));
        }
    }
    record(&lines, f.oneliner)
}

/// What provisioner conditions see of a node and what they made of it.
/// Before Reason, which stays last as in Slurm: its text runs on over lines.
fn provisioning(n: &pb::Node, details: bool, lines: &mut Vec<String>) {
    lines.push(format!("Definitions={}", null(&n.definitions.join(","))));
    lines.push(format!("Annotations={}", null(&pb::KeyValue::join(&n.annotations, ","))));
    lines.push(format!("Facts={}", null(&pb::KeyValue::join(&n.facts, ","))));
    lines.push(format!("Modaliases={}", n.modaliases.len()));
    // A GPU node has dozens, each 50 characters: listed only when asked.
    if details {
        lines.push(format!("ModaliasList={}", null(&n.modaliases.join(","))));
    }
}

/// The nodes a `show node LIST` names, in the controller's order; every name must exist.
pub fn select_nodes<'a>(all: &'a [pb::Node], list: Option<&str>) -> Result<Vec<&'a pb::Node>, String> {
    let Some(list) = list else { return Ok(all.iter().collect()) };
    let want = hostlist::expand(list)?;
    // Sets, so a 10k-node list against a 10k-node cluster stays linear.
    let have: HashSet<&str> = all.iter().map(|n| n.name.as_str()).collect();
    let wanted: HashSet<&str> = want.iter().map(String::as_str).collect();
    let missing: Vec<&String> = want.iter().filter(|w| !have.contains(w.as_str())).collect();
    match missing.as_slice() {
        [] => Ok(all.iter().filter(|n| wanted.contains(n.name.as_str())).collect()),
        [one] => Err(format!("node '{one}' not found")),
        many => Err(format!("nodes '{}' not found", hostlist::compress(many))),
    }
}

pub fn show_nodes(nodes: &[&pb::Node], f: &Flags) -> String {
    if f.json {
        let v: Vec<serde_json::Value> = nodes.iter().map(|n| node_json(n)).collect();
        return serde_json::to_string_pretty(&serde_json::json!({ "nodes": v })).unwrap_or_default() + "\n";
    }
    if nodes.is_empty() {
        return "No nodes in the system\n".into();
    }
    nodes.iter().map(|n| node_record(n, f)).collect()
}

pub async fn execute(list: Option<&str>, f: &Flags, c: &mut Clients) -> Result<String, String> {
    let filter = list.iter().map(|l| pb::KeyValue { key: "name".into(), value: l.to_string() }).collect();
    let all = c.nodes.list_nodes(pb::ListRequest { filter }).await.map_err(status)?.into_inner().nodes;
    Ok(show_nodes(&select_nodes(&all, list)?, f))
}
