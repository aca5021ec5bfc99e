//! The Audit pane: the txn log, oldest first, newest at the bottom like
//! `tail -f`, kept in a bounded buffer ([`AuditLog`]). Rows are turned
//! into table rows once, when they arrive ([`row`]), because the pane is
//! rebuilt many times a second while busy.

use crate::model::action::{Effect, Rpc, TailSpec};
use crate::model::format::width;
use crate::model::table::{
    Alert, Column, Detail, Row, SortKey, TableModel, Target, filter_and_sort, text_key,
};
use crate::model::view::PaneView;
use spur_proto::v1::TxnRow;
use spur_vocab::txn::format_time;
use std::collections::VecDeque;

/// Rows kept on screen (and, separately, held while paused); the oldest go first.
pub const CAPACITY: usize = 5_000;
/// Rows fetched to fill the pane when it is first opened.
pub const FILL: i64 = 200;

/// A txn row with its table row, built once when it arrives.
#[derive(Debug, Clone)]
pub struct Entry {
    pub txn: TxnRow,
    pub row: Row,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TailStatus {
    /// The pane was never opened: nothing subscribed.
    #[default]
    Idle,
    /// Subscribed; the fill has not arrived yet.
    Loading,
    Live,
    /// The controller refused or ended the tail; the reason is shown in the pane.
    Failed(String),
}

#[derive(Debug, Clone, Default)]
pub struct AuditLog {
    /// Shown rows in id order, at most [`CAPACITY`].
    pub rows: VecDeque<Entry>,
    /// Rows that arrived while paused, at most [`CAPACITY`].
    pub held: VecDeque<Entry>,
    pub paused: bool,
    /// Rows that arrived while paused, counting any the bound dropped.
    pub arrived: usize,
    /// The highest id received: where a reconnect resumes.
    pub last_id: Option<i64>,
    /// The applied filter as typed, and as pairs for the controller.
    pub filter_text: String,
    pub filter: Vec<(String, String)>,
    /// The widest cell per column so far, kept as rows arrive so a frame
    /// need not measure 5,000 rows (it never shrinks as old rows go).
    pub widths: Vec<u16>,
    /// The current subscription's generation.
    pub sub: u64,
    pub status: TailStatus,
}

impl AuditLog {
    /// A new subscription; older subscriptions' reports are ignored from now on.
    pub fn subscribe(&mut self, after_id: Option<i64>) -> Effect {
        self.sub += 1;
        if after_id.is_none() || !matches!(self.status, TailStatus::Live) {
            self.status = TailStatus::Loading;
        }
        Effect::Rpc(Rpc::Tail(TailSpec { sub: self.sub, filter: self.filter.clone(), after_id }))
    }

    /// Keep only rows newer than any seen (a replay may overlap), as entries.
    pub fn accept(&mut self, rows: Vec<TxnRow>) -> Vec<Entry> {
        let mut out = Vec::with_capacity(rows.len());
        for txn in rows {
            if self.last_id.is_some_and(|l| txn.id <= l) {
                continue;
            }
            self.last_id = Some(txn.id);
            let row = row(&txn);
            self.widths.resize(row.cells.len(), 0);
            for (w, cell) in self.widths.iter_mut().zip(row.cells.iter()) {
                *w = (*w).max(width(cell));
            }
            out.push(Entry { row, txn });
        }
        out
    }

    /// Append to the shown rows; returns the keys of the rows the bound pushed out.
    pub fn show(&mut self, entries: Vec<Entry>) -> Vec<String> {
        self.rows.extend(entries);
        let excess = self.rows.len().saturating_sub(CAPACITY);
        self.rows.drain(..excess).map(|e| e.row.key).collect()
    }

    pub fn hold(&mut self, entries: Vec<Entry>) {
        self.arrived += entries.len();
        self.held.extend(entries);
        let excess = self.held.len().saturating_sub(CAPACITY);
        self.held.drain(..excess);
    }
}

const fn col(name: &'static str, priority: u8, max: u16) -> Column {
    Column { name, priority, max, numeric: false, sparse: false }
}

pub const COLUMNS: &[Column] = &[
    col("Time", 0, 19),
    col("Actor", 1, 16),
    col("Action", 3, 6),
    col("Where", 1, 32),
    col("Outcome", 0, 9),
    col("Peer", 4, 24),
];

/// Denied and failed attempts are what an auditor looks for.
pub fn alert(outcome: &str) -> Option<Alert> {
    match outcome {
        "denied" => Some(Alert::Denied),
        "error" => Some(Alert::Error),
        _ => None,
    }
}

/// The Outcome cell: a symbol as well as the word, so it stands out without colour.
fn outcome_cell(outcome: &str) -> String {
    match alert(outcome) {
        Some(Alert::Denied) => format!("✗ {outcome}"),
        Some(Alert::Error) => format!("! {outcome}"),
        // alert() gives txn rows no node alerts.
        _ => outcome.to_string(),
    }
}

/// `entity:name`, as `sacctmgr show txn` prints Where.
pub fn where_of(r: &TxnRow) -> String {
    format!("{}:{}", r.entity, r.name)
}

pub fn row(r: &TxnRow) -> Row {
    let cells = vec![
        format_time(r.time_ms),
        r.actor.clone(),
        r.action.clone(),
        where_of(r),
        outcome_cell(&r.outcome),
        r.peer.clone(),
    ];
    let sort = vec![
        SortKey::Num(r.time_ms as f64),
        text_key(&r.actor),
        text_key(&r.action),
        text_key(&cells[3]),
        text_key(&r.outcome),
        text_key(&r.peer),
    ];
    Row { alert: alert(&r.outcome), ..Row::new(r.id.to_string(), Target::Txn(r.id), cells, sort) }
}

pub fn table(log: &AuditLog, view: &PaneView) -> TableModel {
    let rows: Vec<Row> = log.rows.iter().map(|e| e.row.clone()).collect();
    let total = rows.len();
    let cell_widths = Some(log.widths.clone());
    TableModel { columns: COLUMNS, rows: filter_and_sort(rows, view).into(), total, cell_widths }
}

/// Info, pretty-printed when it is JSON (it always should be), else as stored.
pub fn pretty_info(info: &str) -> Vec<String> {
    let text = match serde_json::from_str::<serde_json::Value>(info) {
        Ok(v) => serde_json::to_string_pretty(&v).unwrap_or_else(|_| info.to_string()),
        Err(_) => info.to_string(),
    };
    text.lines().map(str::to_string).collect()
}

pub fn detail(log: &AuditLog, key: &str) -> Option<Detail> {
    let id: i64 = key.parse().ok()?;
    // Rows arrive in id order, so the held rows (while paused) come after the shown ones.
    let r = log.rows.iter().chain(log.held.iter()).map(|e| &e.txn).find(|t| t.id == id)?;
    let f = |label: &str, value: String| (label.to_string(), value);
    let fields = vec![
        f("Id", r.id.to_string()),
        f("Time", format_time(r.time_ms)),
        f("Actor", r.actor.clone()),
        f("ActorUID", r.actor_uid.map(|u| u.to_string()).unwrap_or_default()),
        f("Verified", if r.verified { "yes" } else { "no" }.into()),
        f("Peer", r.peer.clone()),
        f("Source", r.source.clone()),
        f("Action", r.action.clone()),
        f("Where", where_of(r)),
        f("Outcome", outcome_cell(&r.outcome)),
    ];
    let mut body = vec!["Info:".to_string()];
    body.extend(pretty_info(&r.info));
    Some(Detail {
        title: format!("txn {} — {} {} by {}", r.id, r.action, where_of(r), r.actor),
        crumb: format!("txn {}", r.id),
        fields,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denied_and_error_rows_carry_a_symbol() {
        let r = TxnRow {
            id: 7,
            outcome: "denied".into(),
            entity: "qos".into(),
            name: "x".into(),
            ..Default::default()
        };
        let row = row(&r);
        assert_eq!(row.alert, Some(Alert::Denied));
        assert_eq!(row.cells[4], "✗ denied");
        assert_eq!(row.cells[3], "qos:x");
        assert_eq!(outcome_cell("error"), "! error");
        assert_eq!(outcome_cell("success"), "success");
    }

    #[test]
    fn info_is_pretty_printed_when_json() {
        assert_eq!(pretty_info(r#"{"a":1}"#), ["{", "  \"a\": 1", "}"]);
        assert_eq!(pretty_info("not json"), ["not json"]);
    }
}
