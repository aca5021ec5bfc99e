//! Turning records into table rows and detail pages, one module per pane.
//!
//! A pane with data implements two things here: a `table` (rows already
//! filtered and sorted for its [`PaneView`]) and a `detail`. Panes whose
//! data the controller does not serve yet return `None` and the renderer
//! says so in one line. Queue, HRES and Preemption plug in here when their
//! services exist.

pub mod accounts;
pub mod audit;
pub mod nodes;
pub mod qos;

use crate::pane::PaneId;
use crate::state::{PaneView, State};
use ratatui::text::Span;
use std::cmp::Ordering;
use std::sync::Arc;

#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    /// Lower is more important; the least important columns are hidden first on narrow terminals.
    pub priority: u8,
    /// Cap on the column width; longer cells are cut (the detail view shows them whole).
    pub max: u16,
    pub numeric: bool,
}

/// What a row stands for, so writes can name their target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Qos(String),
    Account(String),
    Assoc {
        user: String,
        account: String,
        partition: String,
    },
    /// The account tree's root when the controller has no `root` record.
    Root,
    /// A txn log row, by id: a record of the past, never a write target.
    Txn(i64),
    /// A node, by name: drained, resumed or downed, never deleted.
    Node(String),
}

/// Rows that must stand out (drawn BOLD with a symbol, coloured unless mono).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alert {
    Denied,
    Error,
    /// A node that is DOWN (`▼`).
    Down,
    /// A draining or drained node (`◐`).
    Drain,
    /// A node whose agent stopped heartbeating, not yet down (`?`, `*`).
    NotResponding,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SortKey {
    Num(f64),
    Text(String),
    /// An unset limit: sorts after every value, as "no limit" is the largest.
    Blank,
}

#[derive(Debug, Clone)]
pub struct Row {
    /// Stable identity for selection and marks.
    pub key: String,
    pub target: Target,
    /// Shared, because the Audit pane rebuilds its table of up to 5,000
    /// rows several times a frame; cloning a row must not copy its text.
    pub cells: Arc<[String]>,
    pub sort: Arc<[SortKey]>,
    /// Tree glyphs drawn before the first cell.
    pub prefix: String,
    pub alert: Option<Alert>,
}

impl Row {
    pub fn new(key: String, target: Target, cells: Vec<String>, sort: Vec<SortKey>) -> Row {
        Row { key, target, cells: cells.into(), sort: sort.into(), prefix: String::new(), alert: None }
    }

    /// The text a filter is matched against: every cell, hidden columns included.
    pub fn text(&self) -> String {
        self.cells.join(" ")
    }
}

#[derive(Debug, Clone)]
pub struct TableModel {
    pub columns: &'static [Column],
    pub rows: Vec<Row>,
    /// Rows before filtering.
    pub total: usize,
    /// The widest cell of each column when the pane keeps track as rows
    /// arrive (Audit); None: measured from the rows on every call.
    pub cell_widths: Option<Vec<u16>>,
}

/// A detail page: a title and label/value lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    pub title: String,
    /// The record's short name for the breadcrumb.
    pub crumb: String,
    pub fields: Vec<(String, String)>,
    /// Preformatted lines shown whole after the fields (e.g. a txn row's JSON).
    pub body: Vec<String>,
}

/// The visible rows of a pane, or None when the controller has no data for it.
pub fn table(state: &State, pane: PaneId) -> Option<TableModel> {
    table_with(state, pane, &state.views[pane.index()])
}

/// Every row of a pane, ignoring the filter (to resolve marks hidden by it).
pub fn all_rows(state: &State, pane: PaneId) -> Vec<Row> {
    table_with(state, pane, &PaneView::default()).map(|t| t.rows).unwrap_or_default()
}

fn table_with(state: &State, pane: PaneId, view: &PaneView) -> Option<TableModel> {
    let data = state.data.as_ref();
    match pane {
        PaneId::Qos => Some(qos::table(data.map(|d| d.qos.as_slice()).unwrap_or_default(), view)),
        PaneId::Accounts => Some(accounts::table(data, view)),
        PaneId::Audit => Some(audit::table(&state.audit, view)),
        PaneId::Nodes => state.nodes.as_deref().map(|n| nodes::table(n, view)),
        PaneId::Queue | PaneId::Hres | PaneId::Preemption => None,
    }
}

pub fn detail(state: &State, pane: PaneId, key: &str) -> Option<Detail> {
    // Neither the txn log nor the nodes (live from the cluster watch) are in the fetched snapshot.
    match pane {
        PaneId::Audit => return audit::detail(&state.audit, key),
        PaneId::Nodes => return nodes::detail(state.nodes.as_deref()?, key),
        _ => {}
    }
    let data = state.data.as_ref()?;
    match pane {
        PaneId::Qos => qos::detail(&data.qos, key),
        PaneId::Accounts => accounts::detail(data, key),
        _ => None,
    }
}

pub fn compare(a: &SortKey, b: &SortKey) -> Ordering {
    match (a, b) {
        (SortKey::Num(x), SortKey::Num(y)) => x.total_cmp(y),
        (SortKey::Text(x), SortKey::Text(y)) => x.to_lowercase().cmp(&y.to_lowercase()).then(x.cmp(y)),
        (SortKey::Blank, SortKey::Blank) => Ordering::Equal,
        (SortKey::Blank, _) => Ordering::Greater,
        (_, SortKey::Blank) => Ordering::Less,
        (SortKey::Num(_), SortKey::Text(_)) => Ordering::Less,
        (SortKey::Text(_), SortKey::Num(_)) => Ordering::Greater,
    }
}

/// Order two rows by a column; a stable sort keeps the controller's order for ties.
pub fn compare_rows(a: &Row, b: &Row, sort: Option<(usize, bool)>) -> Ordering {
    let Some((col, desc)) = sort else { return Ordering::Equal };
    let ord = match (a.sort.get(col), b.sort.get(col)) {
        (Some(x), Some(y)) => compare(x, y),
        _ => Ordering::Equal,
    };
    if desc { ord.reverse() } else { ord }
}

/// Filter then sort a flat list of rows for a view.
pub fn filter_and_sort(mut rows: Vec<Row>, view: &PaneView) -> Vec<Row> {
    if let Some(f) = &view.filter {
        rows.retain(|r| f.matches(&r.text()));
    }
    rows.sort_by(|a, b| compare_rows(a, b, view.sort));
    rows
}

/// A text sort key; empty text sorts like an unset value.
pub fn text_key(s: &str) -> SortKey {
    if s.is_empty() { SortKey::Blank } else { SortKey::Text(s.to_string()) }
}

pub fn num_key(v: Option<i64>) -> SortKey {
    v.map(|v| SortKey::Num(v as f64)).unwrap_or(SortKey::Blank)
}

/// Display width. ASCII (nearly every cell) is its length: measuring
/// thousands of audit cells per frame through unicode-width was the
/// console's hottest path.
pub fn width(s: &str) -> u16 {
    let w = if s.is_ascii() { s.len() } else { Span::raw(s).width() };
    u16::try_from(w).unwrap_or(u16::MAX)
}

/// Pick the columns that fit in `width` and their widths, dropping the least
/// important first. The first column and the sort column always stay.
pub fn fit_columns(model: &TableModel, avail: u16, sort_col: Option<usize>) -> Vec<(usize, u16)> {
    let columns = model.columns;
    let natural: Vec<u16> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let widest = match &model.cell_widths {
                Some(w) => w.get(i).copied().unwrap_or(0),
                None => model
                    .rows
                    .iter()
                    .map(|r| {
                        let cell = r.cells.get(i).map(String::as_str).unwrap_or_default();
                        if i == 0 { width(&r.prefix).saturating_add(width(cell)) } else { width(cell) }
                    })
                    .max()
                    .unwrap_or(0),
            };
            let arrow = u16::from(Some(i) == sort_col);
            widest.max(width(c.name) + arrow).min(c.max).max(1)
        })
        .collect();
    let mut keep: Vec<usize> = (0..columns.len()).collect();
    let total = |keep: &[usize]| -> u32 {
        keep.iter().map(|&i| u32::from(natural[i])).sum::<u32>() + keep.len().saturating_sub(1) as u32
    };
    while total(&keep) > u32::from(avail) {
        let victim = keep
            .iter()
            .copied()
            .filter(|&i| i != 0 && Some(i) != sort_col)
            .max_by_key(|&i| (columns[i].priority, i));
        match victim {
            Some(v) => keep.retain(|&i| i != v),
            None => break,
        }
    }
    keep.into_iter().map(|i| (i, natural[i])).collect()
}
