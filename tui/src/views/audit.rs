//! The Audit pane: the txn log, oldest first, newest at the bottom like
//! `tail -f`. Rows are turned into table rows once, when they arrive
//! ([`row`]), because the pane is rebuilt many times a second while busy.

use super::{Alert, Column, Detail, Row, SortKey, TableModel, Target, filter_and_sort, text_key};
use crate::audit::{AuditLog, TailStatus};
use crate::state::PaneView;
use spur_client::vocab::txn::format_time;
use spur_proto::v1::TxnRow;

const fn col(name: &'static str, priority: u8, max: u16) -> Column {
    Column { name, priority, max, numeric: false }
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

/// What the pane says while it has no rows, and whether that is an error.
pub fn empty_note(log: &AuditLog) -> (String, bool) {
    match &log.status {
        TailStatus::Failed(reason) => (format!("✗ audit log unavailable: {reason} (r retries)"), true),
        TailStatus::Idle | TailStatus::Loading => ("loading the txn log…".into(), false),
        TailStatus::Live if !log.filter.is_empty() => {
            (format!("no txn rows match {} yet (f changes the filter)", log.filter_text), false)
        }
        TailStatus::Live => ("no txn rows yet; new ones appear here as they commit".into(), false),
    }
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
