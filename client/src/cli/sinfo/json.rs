//! `sinfo --json` and `--yaml`: data_parser's document, an `sinfo` record per
//! line of the default listing (nodes of one partition in one state) with
//! Slurm's keys, then `meta`, `errors`, `warnings`. Spur's own `nodes` and
//! `partitions` (every selected node and partition, as `scontrol show`
//! prints them in JSON) stay beside it for the scripts that read them.

use super::cells::{Group, cell};
use crate::cli::jobjson::{limit, number, reply_value, secs};
use crate::cli::nodefmt::{node_json, partition_json, state};
use serde_json::{Value, json};
use spur_proto::v1 as pb;

/// `(minimum, maximum)` of a per-node size over a group.
fn range(g: &Group, f: fn(&pb::Node) -> u64) -> (u64, u64) {
    let lo = g.nodes.iter().map(|n| f(n)).min().unwrap_or(0);
    (lo, g.nodes.iter().map(|n| f(n)).max().unwrap_or(0))
}

/// Slurm's `allocated/idle/other/total` cell (`%C`, `%F`) as numbers.
fn aiot(g: &Group, code: char) -> Value {
    let c: Vec<u64> = cell(code, g).split('/').map(|v| v.parse().unwrap_or(0)).collect();
    let at = |i: usize| c.get(i).copied().unwrap_or(0);
    json!({ "allocated": at(0), "idle": at(1), "other": at(2), "total": at(3) })
}

/// One line of the default listing, as data_parser writes it.
pub fn record(g: &Group) -> Value {
    let first = g.nodes.first();
    let names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
    let (cpu_lo, cpu_hi) = range(g, |n| n.cpus.into());
    let (mem_lo, mem_hi) = range(g, |n| n.memory_mb);
    let (w_lo, w_hi) = range(g, |n| n.weight.into());
    let mut nodes = aiot(g, 'F');
    nodes["nodes"] = json!(names);
    nodes["hostnames"] = json!(g.nodes.iter().map(|n| n.agent_host.as_str()).collect::<Vec<_>>());
    let mut cpus = aiot(g, 'C');
    cpus["minimum"] = cpu_lo.into();
    cpus["maximum"] = cpu_hi.into();
    let states: Vec<String> =
        first.map(|n| state(n).scontrol().split('+').map(String::from).collect()).unwrap_or_default();
    let p = g.part.map(|(_, p)| p);
    json!({
        "node": { "state": states },
        "nodes": nodes,
        "cpus": cpus,
        "memory": {
            "minimum": mem_lo,
            "maximum": mem_hi,
            "allocated": g.nodes.iter().map(|n| n.alloc_memory_mb).sum::<u64>(),
        },
        "weight": { "minimum": w_lo, "maximum": w_hi },
        "features": {
            "total": first.map(|n| n.features.join(",")).unwrap_or_default(),
            "active": first.map(|n| n.features.join(",")).unwrap_or_default(),
        },
        "gres": {
            "total": first.map(|n| n.gres.clone()).unwrap_or_default(),
            "used": first.map(|n| n.gres_used.clone()).unwrap_or_default(),
        },
        "reason": {
            "description": first.map(|n| n.reason.clone()).unwrap_or_default(),
            "time": number(first.map(|n| secs(n.reason_time_ms))),
            "user": first.map(|n| n.reason_user.clone()).unwrap_or_default(),
        },
        "partition": {
            "name": p.map(|p| p.name.clone()).unwrap_or_default(),
            "default": p.is_some_and(|p| p.is_default),
            "state": p.map(|p| p.state.clone()).unwrap_or_default(),
            "maximums": { "time": limit(p.and_then(|p| p.max_time_minutes).map(|m| m.max(0) as u64)) },
            "defaults": { "time": limit(p.and_then(|p| p.default_time_minutes).map(|m| m.max(0) as u64)) },
            "priority": { "tier": p.map_or(0, |p| p.priority_tier) },
        },
        "cluster": "",
    })
}

/// The whole document: the lines' records, then Spur's nodes and partitions.
pub fn document(groups: &[Group], nodes: &[&pb::Node], parts: &[&pb::Partition], yaml: bool) -> String {
    let records = groups.iter().map(record).collect();
    let extra = vec![
        ("nodes", Value::Array(nodes.iter().map(|n| node_json(n)).collect())),
        ("partitions", Value::Array(parts.iter().map(|p| partition_json(p)).collect())),
    ];
    crate::cli::output::document(&reply_value("sinfo", records, None, extra), yaml)
}
