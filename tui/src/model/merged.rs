//! The merged Queue (`:queue all`): every context's jobs in one table with
//! a Cluster column, which no Slurm tool has. Each context has its own
//! connection and cluster watch (the app keeps them, reporting as
//! `Msg::Remote`); its jobs are read on connect and again, one read at a
//! time, when its watch says jobs changed. Rows are keyed by (cluster,
//! job id), `CLUSTER/ID`, so two clusters' job 1 never meet, and a write
//! from this view goes to the row's own cluster with that cluster's rules.

use crate::model::jobs::{JobRec, JobSet, StateFilter};
use crate::model::queue;
use crate::model::table::{Column, Detail, Row, Rows, SortKey, TableModel, filter_and_sort, text_key};
use crate::model::view::PaneView;
use crate::model::view::Refetch;
use std::sync::Arc;

/// Jobs shown per cluster: the merged view builds its rows whole, so it is
/// bounded; past this the crumb says how many are left out (a cluster's own
/// Queue, `:queue`, shows all of them).
pub const PER_CLUSTER: usize = 5_000;

/// One cluster's part of the merged view.
#[derive(Debug, Clone, Default)]
pub struct Part {
    pub name: String,
    pub jobs: Option<Arc<JobSet>>,
    /// Its jobs' reads: one at a time, one more when they changed meanwhile.
    pub refetch: Refetch,
    /// Why the cluster shows nothing (unreachable, refused).
    pub error: Option<String>,
}

/// The merged view while it is open.
#[derive(Debug, Clone, Default)]
pub struct Merged {
    /// One per context, in console.toml's order (the index is the context's).
    pub parts: Vec<Part>,
}

const fn col(name: &'static str, priority: u8, max: u16) -> Column {
    Column { name, priority, max, numeric: false, sparse: false }
}

/// Cluster, then squeue's columns as the Queue has them.
pub const COLUMNS: &[Column] = &[
    col("Cluster", 0, 12),
    col("ID", 0, 18),
    col("User", 1, 12),
    col("Account", 4, 12),
    col("QOS", 5, 10),
    col("Partition", 3, 12),
    col("State", 0, 7),
    Column { numeric: true, ..col("Time", 2, 11) },
    Column { numeric: true, ..col("Nodes", 6, 5) },
    col("NodeList(Reason)", 1, 40),
];

/// The Queue's cells of this view's columns (ID through Nodes, and NodeList(Reason)).
const FROM_QUEUE: [usize; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

impl Merged {
    /// The row key of `cluster`'s job `id`.
    pub fn key(cluster: &str, id: u64) -> String {
        format!("{cluster}/{id}")
    }

    /// A key's cluster index and job id.
    pub fn parse(&self, key: &str) -> Option<(usize, u64)> {
        let (cluster, id) = key.rsplit_once('/')?;
        Some((self.parts.iter().position(|p| p.name == cluster)?, id.parse().ok()?))
    }

    pub fn job(&self, key: &str) -> Option<(usize, &JobRec)> {
        let (i, id) = self.parse(key)?;
        Some((i, self.parts[i].jobs.as_ref()?.get(id)?))
    }

    /// Jobs left out by [`PER_CLUSTER`], over every cluster.
    pub fn left_out(&self) -> usize {
        self.parts
            .iter()
            .filter_map(|p| p.jobs.as_ref())
            .map(|j| j.jobs.len().saturating_sub(PER_CLUSTER))
            .sum()
    }

    /// The breadcrumb's word on the merged view: which clusters are missing and why.
    pub fn crumb(&self) -> String {
        let mut s = "all contexts".to_string();
        for p in &self.parts {
            match (&p.jobs, &p.error) {
                (_, Some(_)) => s.push_str(&format!(" · {} ✖", p.name)),
                (None, None) => s.push_str(&format!(" · {} …", p.name)),
                _ => {}
            }
        }
        match self.left_out() {
            0 => s,
            n => format!("{s} · {n} jobs past {PER_CLUSTER} a cluster left out"),
        }
    }

    pub fn table(&self, view: &PaneView, now_ms: i64) -> TableModel {
        let mut rows = Vec::new();
        for part in &self.parts {
            let Some(set) = &part.jobs else { continue };
            for r in set.jobs.iter().take(PER_CLUSTER) {
                if view.job_states != StateFilter::All && !view.job_states.admits(r.class()) {
                    continue;
                }
                rows.push(row(&part.name, r, now_ms));
            }
        }
        let total = rows.len();
        let rows = filter_and_sort(rows, view);
        TableModel { columns: COLUMNS, rows: Rows::Built(rows), total, cell_widths: None }
    }

    pub fn detail(&self, key: &str, now_ms: i64) -> Option<Detail> {
        let (i, id) = self.parse(key)?;
        let mut d = queue::detail(self.parts[i].jobs.as_ref()?, &id.to_string(), now_ms)?;
        d.fields.insert(0, ("Cluster".into(), self.parts[i].name.clone()));
        d.crumb = format!("{} {}", self.parts[i].name, d.crumb);
        Some(d)
    }
}

fn row(cluster: &str, r: &JobRec, now_ms: i64) -> Row {
    let q = queue::row(r, now_ms);
    let reason = q.cells.last().cloned().unwrap_or_default();
    let mut cells = vec![cluster.to_string()];
    cells.extend(FROM_QUEUE.iter().map(|&i| q.cells.get(i).cloned().unwrap_or_default()));
    cells.push(reason);
    let num = |v: u64| SortKey::Num(v as f64);
    let sort: Vec<SortKey> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| match i {
            1 => num(r.id),
            7 => num(r.run_secs(now_ms)),
            8 => num(u64::from(r.num_nodes)),
            _ => text_key(c),
        })
        .collect();
    Row { key: Merged::key(cluster, r.id), cells: cells.into(), sort: sort.into(), ..q }
}
