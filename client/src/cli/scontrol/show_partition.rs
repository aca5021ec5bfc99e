//! `scontrol show partition [NAME]`: Slurm's `PartitionName=...` records,
//! with the preemption settings an admin checks before `explain`, or `--json`.

use super::command::Flags;
use crate::cli::fmt::{null, record, status};
use crate::cli::nodefmt::partition_json;
use crate::conn::Clients;
use crate::vocab::time::{UNLIMITED, format_minutes, format_seconds};
use spur_proto::v1 as pb;

/// `scontrol show partition` for one partition.
pub fn partition_record(p: &pb::Partition, oneliner: bool) -> String {
    let time = |m: Option<i64>, none: &str| m.map(|m| format_minutes(m.max(0) as u64)).unwrap_or(none.into());
    let exempt = p.preempt_exempt_time_secs.map(|s| format_seconds(s.max(0) as u64)).unwrap_or("NONE".into());
    let mode = if p.preempt_mode.is_empty() { "OFF".into() } else { p.preempt_mode.to_ascii_uppercase() };
    let lines = [
        format!("PartitionName={}", p.name),
        format!(
            "Default={} DefaultTime={} MaxTime={}",
            if p.is_default { "YES" } else { "NO" },
            time(p.default_time_minutes, "NONE"),
            time(p.max_time_minutes, UNLIMITED)
        ),
        format!("Nodes={}", null(&p.nodes)),
        format!("PriorityTier={} PreemptMode={mode} PreemptExemptTime={exempt}", p.priority_tier),
        format!(
            "State={} TotalCPUs={} TotalNodes={}",
            p.state.to_ascii_uppercase(),
            p.total_cpus,
            p.total_nodes
        ),
    ];
    record(&lines, oneliner)
}

pub fn show_partitions(all: &[pb::Partition], name: Option<&str>, f: &Flags) -> Result<String, String> {
    let parts: Vec<&pb::Partition> = all.iter().filter(|p| name.is_none_or(|n| p.name == n)).collect();
    if let (Some(n), true) = (name, parts.is_empty()) {
        return Err(format!("partition '{n}' not found"));
    }
    if f.json {
        let v: Vec<serde_json::Value> = parts.iter().map(|p| partition_json(p)).collect();
        return Ok(
            serde_json::to_string_pretty(&serde_json::json!({ "partitions": v })).unwrap_or_default() + "\n"
        );
    }
    if parts.is_empty() {
        return Ok("No partitions in the system\n".into());
    }
    Ok(parts.iter().map(|p| partition_record(p, f.oneliner)).collect())
}

pub async fn execute(name: Option<&str>, f: &Flags, c: &mut Clients) -> Result<String, String> {
    let all =
        c.nodes.list_partitions(pb::ListRequest::default()).await.map_err(status)?.into_inner().partitions;
    show_partitions(&all, name, f)
}
