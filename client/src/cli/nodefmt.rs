//! Nodes and partitions as both `sinfo` and `scontrol show` print them: a
//! node's state in Slurm's spellings, and the JSON of `--json`, so the two
//! commands agree without importing each other.

use crate::cli::fmt::json_pairs;
use crate::vocab::nodestate::NodeState;
use crate::vocab::txn::format_time;
use spur_proto::v1 as pb;

/// A node's state in parts, for Slurm's spellings.
pub fn state(n: &pb::Node) -> NodeState<'_> {
    n.node_state()
}

/// A node as JSON, shared by `sinfo --json` and `scontrol show node --json`.
pub fn node_json(n: &pb::Node) -> serde_json::Value {
    let st = state(n);
    let time = |ms: i64| (ms != 0).then(|| format_time(ms));
    serde_json::json!({
        "name": n.name, "state": st.scontrol(), "state_long": st.long(), "state_short": st.short(),
        "base_state": n.base_state, "drain": n.drain, "not_responding": n.not_responding,
        "cpus": n.cpus, "alloc_cpus": n.alloc_cpus, "memory_mb": n.memory_mb,
        "alloc_memory_mb": n.alloc_memory_mb, "gres": n.gres, "gres_used": n.gres_used,
        "features": n.features, "weight": n.weight, "partitions": n.partitions,
        "reason": n.reason, "reason_user": n.reason_user, "reason_uid": n.reason_uid,
        "reason_time": time(n.reason_time_ms), "agent_host": n.agent_host,
        "last_heartbeat": time(n.last_heartbeat_ms), "running_jobs": n.running_jobs,
        "definitions": n.definitions, "annotations": json_pairs(&n.annotations), "facts": json_pairs(&n.facts),
        "modaliases": n.modaliases, "reservation": n.reservation, "dynamic": n.dynamic,
    })
}

/// A partition as JSON, shared by `sinfo --json` and `scontrol show partition --json`.
pub fn partition_json(p: &pb::Partition) -> serde_json::Value {
    serde_json::json!({
        "name": p.name, "nodes": p.nodes, "default": p.is_default, "state": p.state,
        "max_time_minutes": p.max_time_minutes, "default_time_minutes": p.default_time_minutes,
        "priority_tier": p.priority_tier, "preempt_mode": p.preempt_mode,
        "preempt_exempt_time_secs": p.preempt_exempt_time_secs,
        "total_nodes": p.total_nodes, "total_cpus": p.total_cpus,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_drained_nodes_are_draining() {
        let mut n = pb::Node { base_state: "IDLE".into(), drain: true, ..Default::default() };
        assert!(!state(&n).busy);
        n.alloc_cpus = 2;
        assert!(state(&n).busy);
        assert_eq!(node_json(&n)["drain"], true);
        assert_eq!(node_json(&n)["reason_time"], serde_json::Value::Null);
    }
}
