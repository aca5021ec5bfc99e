//! The Overview pane: the cluster on one screen. Per partition its nodes by
//! state and CPU, memory and GPU allocation; pending jobs by their reason
//! (the typed reasons the queue already carries, counted, never
//! recomputed); the accounts running the most CPUs; and the scheduler's own
//! figures from `Cluster.Diag`, with the last hour the controller keeps.
//!
//! The aggregates ([`Sums`]) are one walk of the jobs and one of the nodes,
//! made when either changes (`update::overview`), never per frame: a frame
//! only draws them. The pane's rows are the pending reasons, so the shared
//! keys (move, `/`, Enter) work on them; Enter opens the Queue filtered to
//! the reason.

use crate::model::jobs::{Class, JobSet};
use crate::model::nodes;
use crate::model::table::{Alert, Column, Row, SortKey, TableModel, Target, filter_and_sort, text_key};
use crate::model::view::{PaneView, Refetch};
use spur_proto::v1::{DiagResponse, Node, RpcStat};
use std::collections::HashMap;
use std::sync::Arc;

/// Accounts listed (by running CPUs).
pub const TOP_ACCOUNTS: usize = 8;
/// RPC types listed (by mean time).
pub const SLOWEST_RPCS: usize = 3;

/// The pane's data.
#[derive(Debug, Clone, Default)]
pub struct Overview {
    /// What the jobs and nodes add up to, as of the last change seen while the pane was open.
    pub sums: Arc<Sums>,
    /// The jobs or nodes changed while another pane was shown: opening recomputes.
    pub stale: bool,
    /// `Cluster.Diag`'s last answer; None until one arrives.
    pub diag: Option<Box<DiagResponse>>,
    /// Why the last read failed (the figures shown, if any, are older).
    pub diag_error: Option<String>,
    /// The controller has no `Cluster.Diag`: the scheduler section says so.
    pub unsupported: bool,
    pub refetch: Refetch,
}

/// Nodes of a partition by state, as sinfo counts them: down before drain,
/// drain before the allocation state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeCounts {
    pub idle: u32,
    pub alloc: u32,
    pub mix: u32,
    pub drain: u32,
    pub down: u32,
}

impl NodeCounts {
    pub fn total(&self) -> u32 {
        self.idle + self.alloc + self.mix + self.drain + self.down
    }

    /// Down before drain, as the Nodes pane marks them ([`nodes::alert`]), then by allocation.
    fn add(&mut self, n: &Node) {
        let is = |state: &str| n.base_state.eq_ignore_ascii_case(state);
        let slot = match nodes::alert(n) {
            Some(Alert::Down) => &mut self.down,
            Some(Alert::Drain) => &mut self.drain,
            _ if is("ALLOCATED") => &mut self.alloc,
            _ if is("MIXED") => &mut self.mix,
            _ => &mut self.idle,
        };
        *slot += 1;
    }
}

/// Used of total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Use {
    pub used: u64,
    pub total: u64,
}

impl Use {
    fn add(&mut self, used: u64, total: u64) {
        self.used += used;
        self.total += total;
    }

    /// The used share, 0 when there is none to use.
    pub fn ratio(&self) -> f64 {
        if self.total == 0 { 0.0 } else { (self.used as f64 / self.total as f64).min(1.0) }
    }
}

/// One partition's nodes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Partition {
    pub name: String,
    pub nodes: NodeCounts,
    pub cpus: Use,
    /// Megabytes.
    pub mem: Use,
    pub gpus: Use,
}

/// An account's running jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountUse {
    pub account: Arc<str>,
    pub cpus: u64,
    pub jobs: u64,
}

/// The jobs and nodes, added up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sums {
    /// By name; a node in several partitions counts in each.
    pub partitions: Vec<Partition>,
    /// Pending jobs by reason, most first (ties by name).
    pub reasons: Vec<(Arc<str>, u64)>,
    pub pending: u64,
    pub running: u64,
    /// The accounts with the most running CPUs, most first; at most [`TOP_ACCOUNTS`].
    pub accounts: Vec<AccountUse>,
    /// Whether any node has GPUs (the GPU bars are left out otherwise).
    pub gpus: bool,
}

/// GPUs in a GRES string (`gpu:8`, `gpu:a100:4(S:0-1),gpu:v100:2`); 0 for none.
pub fn gpus(gres: &str) -> u64 {
    gres.split(',')
        .filter(|g| g.trim_start().starts_with("gpu"))
        .filter_map(|g| g.split('(').next()?.rsplit(':').next()?.trim().parse::<u64>().ok())
        .sum()
}

/// One walk of the jobs and one of the nodes.
pub fn aggregate(jobs: Option<&JobSet>, nodes: Option<&[Node]>) -> Sums {
    let mut parts: HashMap<&str, Partition> = HashMap::new();
    let mut any_gpu = false;
    for n in nodes.unwrap_or_default() {
        let total_gpus = gpus(&n.gres);
        let used_gpus = gpus(&n.gres_used).min(total_gpus);
        any_gpu |= total_gpus > 0;
        for p in &n.partitions {
            let part = parts
                .entry(p.as_str())
                .or_insert_with(|| Partition { name: p.clone(), ..Default::default() });
            part.nodes.add(n);
            part.cpus.add(u64::from(n.alloc_cpus), u64::from(n.cpus));
            part.mem.add(n.alloc_memory_mb, n.memory_mb);
            part.gpus.add(used_gpus, total_gpus);
        }
    }
    let mut partitions: Vec<Partition> = parts.into_values().collect();
    partitions.sort_by(|a, b| a.name.cmp(&b.name));

    // Keyed by the shared strings' addresses: a queue has a few reasons and
    // accounts but many jobs, so no job's text is hashed.
    let mut reasons: HashMap<*const u8, (Arc<str>, u64)> = HashMap::new();
    let mut accounts: HashMap<*const u8, AccountUse> = HashMap::new();
    let (mut pending, mut running) = (0, 0);
    for r in jobs.map(|j| j.jobs.as_slice()).unwrap_or_default() {
        match r.class() {
            Class::Pending => {
                pending += 1;
                let e = reasons.entry(Arc::as_ptr(&r.reason).cast()).or_insert_with(|| (r.reason.clone(), 0));
                e.1 += 1;
            }
            Class::Running => {
                running += 1;
                let e = accounts.entry(Arc::as_ptr(&r.account).cast()).or_insert_with(|| AccountUse {
                    account: r.account.clone(),
                    cpus: 0,
                    jobs: 0,
                });
                e.cpus += u64::from(r.num_cpus);
                e.jobs += 1;
            }
            _ => {}
        }
    }
    // Sets built apart may hold equal strings at two addresses: merge by text.
    let mut by_text: HashMap<Arc<str>, u64> = HashMap::new();
    for (reason, n) in reasons.into_values() {
        *by_text.entry(reason).or_default() += n;
    }
    let mut reasons: Vec<(Arc<str>, u64)> = by_text.into_iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut merged: HashMap<Arc<str>, AccountUse> = HashMap::new();
    for a in accounts.into_values() {
        let e =
            merged.entry(a.account.clone()).or_insert_with(|| AccountUse { cpus: 0, jobs: 0, ..a.clone() });
        e.cpus += a.cpus;
        e.jobs += a.jobs;
    }
    let mut accounts: Vec<AccountUse> = merged.into_values().collect();
    accounts.sort_by(|a, b| b.cpus.cmp(&a.cpus).then_with(|| a.account.cmp(&b.account)));
    accounts.truncate(TOP_ACCOUNTS);
    Sums { partitions, reasons, pending, running, accounts, gpus: any_gpu }
}

/// A reason's name as the rows show it (a pending job with none says `None`, as squeue does).
pub fn reason_name(reason: &str) -> &str {
    if reason.is_empty() { "None" } else { reason }
}

pub const COLUMNS: &[Column] = &[
    Column { name: "Reason", priority: 0, max: 40, numeric: false, sparse: false },
    Column { name: "Jobs", priority: 0, max: 9, numeric: true, sparse: false },
];

/// The pane's rows: one per pending reason, most jobs first.
pub fn table(sums: &Sums, view: &PaneView) -> TableModel {
    let rows: Vec<Row> = (sums.reasons.iter())
        .map(|(reason, n)| {
            let name = reason_name(reason).to_string();
            let cells = vec![name.clone(), n.to_string()];
            Row::new(
                name.clone(),
                Target::Reason(name.clone()),
                cells,
                vec![text_key(&name), SortKey::Num(*n as f64)],
            )
        })
        .collect();
    let total = rows.len();
    // Without a sort of the operator's, most jobs first (the order aggregate made).
    let rows = if view.sort.is_none() && view.filter.is_none() { rows } else { filter_and_sort(rows, view) };
    TableModel { columns: COLUMNS, rows: rows.into(), total, cell_widths: None }
}

/// The Queue's `/` filter that shows the jobs pending for `reason`: squeue's
/// `(Reason)` cell, matched whole.
pub fn queue_filter(reason: &str) -> String {
    format!(r"\({}\)", regex::escape(reason_name(reason)))
}

/// A text bar `████░░░░` of `width` cells for a used share.
pub fn bar(ratio: f64, width: usize) -> String {
    let full = ((ratio.clamp(0.0, 1.0) * width as f64).round() as usize).min(width);
    format!("{}{}", "█".repeat(full), "░".repeat(width - full))
}

/// The RPC types with the longest mean time, slowest first (`Jobs/Submit 7.0 ms`).
pub fn slowest(rpcs: &[RpcStat], n: usize) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = (rpcs.iter())
        .filter(|r| r.count > 0)
        .map(|r| (r.name.clone(), r.total_us as f64 / r.count as f64 / 1000.0))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(n);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_are_read_from_every_gres_form() {
        assert_eq!(gpus("gpu:8"), 8);
        assert_eq!(gpus("gpu:a100:4(S:0-1),gpu:v100:2"), 6);
        assert_eq!(gpus("mps:100"), 0);
        assert_eq!(gpus(""), 0);
    }

    #[test]
    fn bars_round_and_never_overflow() {
        assert_eq!(bar(0.5, 4), "██░░");
        assert_eq!(bar(2.0, 3), "███");
        assert_eq!(bar(-1.0, 2), "░░");
        assert_eq!(bar(0.5, 0), "");
    }

    #[test]
    fn a_reason_filter_matches_its_cell_only() {
        let f = crate::model::filter::Filter::parse(&queue_filter("Priority")).unwrap().unwrap();
        assert!(f.matches("103 carol (Priority) x"));
        assert!(!f.matches("103 carol (PriorityX) Priority"));
        assert_eq!(queue_filter(""), r"\(None\)");
    }
}
