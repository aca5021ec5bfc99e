//! A pane's records as table rows and detail pages: plain data (keys,
//! cells, sort keys), no widgets. Rows are part of the model because
//! selection, marks, the `/` filter and sorting are defined on them, and
//! dispatch needs them as much as the renderer does.
//!
//! A pane with data implements two things in its module (`model/PANE.rs`):
//! a `table` (rows already filtered and sorted for its [`PaneView`]) and a
//! `detail`. Panes whose data the controller does not serve yet return
//! `None` and the renderer says so in one line; every pane has its service now.
//!
//! Small panes build every row ([`Rows::Built`]). The Queue may hold
//! 100,000 jobs, so its rows are built on demand from a [`RowSource`] in a
//! precomputed order ([`Rows::Lazy`]): a frame builds only the rows on screen.

use crate::model::view::PaneView;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    /// Lower is more important; the least important columns are hidden first on narrow terminals.
    pub priority: u8,
    /// Cap on the column width; longer cells are cut (the detail view shows
    /// them whole), unless it is the last column shown and the room left over fits them.
    pub max: u16,
    pub numeric: bool,
    /// Left out while no row has a value in it (and not counted as hidden):
    /// the Queue's Borrowed column, blank on every cluster without idle-fill.
    pub sparse: bool,
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
    /// A job, by id: cancelled, held, released or requeued, never deleted.
    Job(u64),
    /// A license, or a layer of a hierarchical resource (empty `layer`: the resource or a plain license).
    Layer {
        resource: String,
        layer: String,
    },
    /// A provisioner definition, by id: provisioners.yaml is its source, so it is only read.
    Provisioner(String),
    /// An admin reservation, by name: made, edited and deleted from the Reservations pane.
    Reservation(String),
    /// A pending reason on the Overview pane: Enter lists its jobs in the Queue.
    Reason(String),
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
    /// A job that failed, timed out or lost its node (`✗`).
    JobFailed,
    /// A job that ended otherwise (`✓`, `⊘`): DIM, as it needs nothing.
    JobEnded,
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

/// Where a lazily built table gets its rows.
pub trait RowSource: fmt::Debug + Send + Sync {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The row of record `index` (in the source's own order).
    fn row(&self, index: usize) -> Row;
    /// Just the key of record `index`, without building the row.
    fn key(&self, index: usize) -> String;
    /// The record with this key.
    fn find(&self, key: &str) -> Option<usize>;
}

/// A table's rows in display order.
#[derive(Debug, Clone)]
pub enum Rows {
    Built(Vec<Row>),
    /// Rows of `source` in `order` (indexes into it; None: the source's order).
    Lazy {
        source: Arc<dyn RowSource>,
        order: Option<Arc<[u32]>>,
    },
}

impl Default for Rows {
    fn default() -> Self {
        Rows::Built(Vec::new())
    }
}

impl From<Vec<Row>> for Rows {
    fn from(rows: Vec<Row>) -> Self {
        Rows::Built(rows)
    }
}

impl Rows {
    pub fn len(&self) -> usize {
        match self {
            Rows::Built(rows) => rows.len(),
            Rows::Lazy { source, order: None } => source.len(),
            Rows::Lazy { order: Some(order), .. } => order.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The source index of display row `i`.
    fn index(&self, i: usize) -> Option<usize> {
        match self {
            Rows::Built(_) => None,
            Rows::Lazy { source, order: None } => (i < source.len()).then_some(i),
            Rows::Lazy { order: Some(order), .. } => order.get(i).map(|&o| o as usize),
        }
    }

    pub fn get(&self, i: usize) -> Option<Cow<'_, Row>> {
        match self {
            Rows::Built(rows) => rows.get(i).map(Cow::Borrowed),
            Rows::Lazy { source, .. } => self.index(i).map(|s| Cow::Owned(source.row(s))),
        }
    }

    /// The key of display row `i`, without building a lazy row.
    pub fn key(&self, i: usize) -> Option<String> {
        match self {
            Rows::Built(rows) => rows.get(i).map(|r| r.key.clone()),
            Rows::Lazy { source, .. } => self.index(i).map(|s| source.key(s)),
        }
    }

    /// The display position of the row with `key`.
    pub fn position(&self, key: &str) -> Option<usize> {
        match self {
            Rows::Built(rows) => rows.iter().position(|r| r.key == key),
            Rows::Lazy { source, order } => {
                let s = source.find(key)?;
                match order {
                    None => Some(s),
                    Some(order) => order.iter().position(|&o| o as usize == s),
                }
            }
        }
    }

    /// Rows `first..first + count`: the only rows a frame builds.
    pub fn window(&self, first: usize, count: usize) -> Vec<Cow<'_, Row>> {
        let end = first.saturating_add(count).min(self.len());
        (first.min(end)..end).filter_map(|i| self.get(i)).collect()
    }

    /// Built rows, for measuring; a lazy source keeps its own widths.
    pub fn built(&self) -> &[Row] {
        match self {
            Rows::Built(rows) => rows,
            Rows::Lazy { .. } => &[],
        }
    }
}

/// Every row, built (tests, and panes small enough to build anyway).
impl IntoIterator for Rows {
    type Item = Row;
    type IntoIter = std::vec::IntoIter<Row>;

    fn into_iter(self) -> Self::IntoIter {
        match self {
            Rows::Built(rows) => rows.into_iter(),
            lazy => {
                lazy.window(0, lazy.len()).into_iter().map(Cow::into_owned).collect::<Vec<_>>().into_iter()
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct TableModel {
    pub columns: &'static [Column],
    pub rows: Rows,
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
