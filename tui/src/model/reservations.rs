//! The Reservations pane: one row per admin reservation, pushed whole by
//! `Cluster.Watch` whenever one is made, changed or deleted, or a window
//! begins or ends: name, state (upcoming or active, by the controller's
//! clock), start, end, nodes, who may use it, flags and licenses. A MAINT
//! window in force stands out (BOLD with a symbol, not colour alone).

use crate::model::table::{
    Alert, Column, Detail, Row, SortKey, TableModel, Target, filter_and_sort, text_key,
};
use crate::model::view::PaneView;
use spur_proto::v1::{ListReservationsResponse, Reservation};
use spur_vocab::time::format_seconds;
use spur_vocab::txn::format_time;

const fn col(name: &'static str, priority: u8, max: u16, numeric: bool) -> Column {
    Column { name, priority, max, numeric, sparse: false }
}

/// Sized for 80 columns: name, state, start and nodes first; the rest as width allows.
pub const COLUMNS: &[Column] = &[
    col("Name", 0, 16, false),
    col("State", 0, 10, false),
    col("Start", 0, 19, false),
    col("End", 2, 19, false),
    col("Nodes", 1, 20, false),
    col("Users/Accounts", 2, 20, false),
    col("Flags", 3, 18, false),
    col("Licenses", 4, 14, false),
];

/// The pane's data: the last list the controller pushed (None before the first).
#[derive(Debug, Clone, Default)]
pub struct Reservations {
    pub list: Option<ListReservationsResponse>,
}

impl Reservations {
    pub fn all(&self) -> &[Reservation] {
        self.list.as_ref().map_or(&[], |l| l.reservations.as_slice())
    }
}

/// `upcoming` or `active`, as the controller said when it sent the list.
pub fn state_word(r: &Reservation) -> &'static str {
    if r.state == "ACTIVE" { "active" } else { "upcoming" }
}

/// Who may use it: users, then accounts, as scontrol names them.
fn who(r: &Reservation) -> String {
    match (r.users.is_empty(), r.accounts.is_empty()) {
        (false, true) => r.users.clone(),
        (true, false) => format!("acct {}", r.accounts),
        (false, false) => format!("{} & acct {}", r.users, r.accounts),
        (true, true) => String::new(),
    }
}

fn row(r: &Reservation) -> Row {
    let maint_now = r.maint && r.state == "ACTIVE";
    let cells = vec![
        r.name.clone(),
        format!("{} {}", if maint_now { "⚠" } else { " " }, state_word(r)),
        format_time(r.start_ms),
        format_time(r.end_ms),
        r.nodes.clone(),
        who(r),
        r.flags.clone(),
        r.licenses.clone(),
    ];
    let sort = vec![
        text_key(&r.name),
        text_key(state_word(r)),
        SortKey::Num(r.start_ms as f64),
        SortKey::Num(r.end_ms as f64),
        SortKey::Num(f64::from(r.node_count)),
        text_key(&cells[5]),
        text_key(&r.flags),
        text_key(&r.licenses),
    ];
    let mut row = Row::new(r.name.clone(), Target::Reservation(r.name.clone()), cells, sort);
    row.alert = maint_now.then_some(Alert::Error);
    row
}

pub fn table(all: &[Reservation], view: &PaneView) -> TableModel {
    let rows: Vec<Row> = all.iter().map(row).collect();
    let total = rows.len();
    TableModel { columns: COLUMNS, rows: filter_and_sort(rows, view).into(), total, cell_widths: None }
}

/// The whole reservation, and the `scontrol` line that would make it again.
pub fn detail(all: &[Reservation], key: &str) -> Option<Detail> {
    let r = all.iter().find(|r| r.name == key)?;
    let f = |label: &str, value: String| (label.to_string(), value);
    let none = |s: &str| if s.is_empty() { "(none)".to_string() } else { s.to_string() };
    let secs = r.duration_secs();
    let fields = vec![
        f("Reservation", r.name.clone()),
        f("State", format!("{} ({})", state_word(r), r.state)),
        f("Start", format_time(r.start_ms)),
        f("End", format_time(r.end_ms)),
        f("Duration", format_seconds(secs)),
        f("Nodes", format!("{} ({} nodes)", none(&r.nodes), r.node_count)),
        f("Partition", none(&r.partition)),
        f("Users", none(&r.users)),
        f("Accounts", none(&r.accounts)),
        f("Flags", none(&r.flags)),
        f("Licenses", none(&r.licenses)),
    ];
    let body = vec![
        "Made again with:".to_string(),
        format!("  scontrol create reservation {}", scontrol_words(r).join(" ")),
    ];
    Some(Detail { title: format!("Reservation {}", r.name), crumb: r.name.clone(), fields, body })
}

/// The words of `scontrol create reservation` for this reservation.
pub fn scontrol_words(r: &Reservation) -> Vec<String> {
    let mut w = vec![
        format!("ReservationName={}", r.name),
        format!("StartTime={}", format_time(r.start_ms)),
        format!("EndTime={}", format_time(r.end_ms)),
        format!("Nodes={}", r.nodes),
    ];
    let flags: Vec<&str> = r.flags.split(',').filter(|f| !f.is_empty() && *f != "SPEC_NODES").collect();
    for (k, v) in [
        ("PartitionName", r.partition.clone()),
        ("Users", r.users.clone()),
        ("Accounts", r.accounts.clone()),
        ("Licenses", r.licenses.clone()),
        ("Flags", flags.join(",")),
    ] {
        if !v.is_empty() {
            w.push(format!("{k}={v}"));
        }
    }
    w
}

/// The words typed at the pane's prompt, checked with the CLI's one parser:
/// the write to confirm (with the nodes and the window named), or why not.
/// `editing` names the reservation an `e` changes.
pub fn checked(
    line: &str,
    editing: Option<&str>,
    now: chrono::DateTime<chrono::Local>,
) -> Result<crate::model::write::WriteOp, String> {
    use spur_vocab::resv::{NodeEdit, ResvRequest};
    let mut words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    if words.is_empty() {
        return Err("type Key=value words, as scontrol takes them".into());
    }
    if let Some(name) = editing {
        words.retain(|w| !w.to_ascii_lowercase().starts_with("reservationname="));
        words.insert(0, format!("ReservationName={name}"));
    }
    let r = ResvRequest::parse(&words, now)?;
    let time = |ms: i64| format_time(ms);
    let mut summary = vec![];
    match (&r.nodes, r.node_cnt) {
        (Some(NodeEdit::All), _) => summary.push("Nodes:  ALL".to_string()),
        (Some(NodeEdit::List(_, l)), _) => {
            summary.push(format!("Nodes:  {}", words_of(&words, "Nodes").unwrap_or(l.clone())))
        }
        (Some(NodeEdit::Items(_)), _) => {
            summary.push(format!("Nodes:  {}", words_of(&words, "Nodes").unwrap_or_default()))
        }
        (None, Some(n)) => summary.push(format!("Nodes:  {n}, picked by the controller (idle first)")),
        (None, None) if editing.is_none() => return Err("Nodes= or NodeCnt= says which nodes".into()),
        (None, None) => {}
    }
    let end = match (r.start_ms, r.end_ms, r.duration) {
        (_, Some(e), _) => Some(e),
        (Some(s), None, Some(d)) => Some(d.minutes().map_or(s + 365 * 86_400_000, |m| s + m as i64 * 60_000)),
        _ => None,
    };
    match (r.start_ms, end) {
        (Some(s), Some(e)) => summary.push(format!("Window: {} → {}", time(s), time(e))),
        (Some(s), None) => summary.push(format!("Start:  {}", time(s))),
        (None, Some(e)) => summary.push(format!("End:    {}", time(e))),
        (None, None) if editing.is_none() => {
            return Err("StartTime= and Duration= (or EndTime=) give the window".into());
        }
        (None, None) => {}
    }
    if editing.is_none() && r.users.is_none() && r.accounts.is_none() {
        return Err("Users= or Accounts= says who may use it".into());
    }
    for key in ["Users", "Accounts", "Flags", "Licenses"] {
        if let Some(v) = words_of(&words, key) {
            summary.push(format!("{key}: {v}"));
        }
    }
    Ok(crate::model::write::WriteOp::Reservation { editing: editing.map(str::to_string), words, summary })
}

/// The value of `key` as typed (with `+=`/`-=` kept), by the word's key prefix.
fn words_of(words: &[String], key: &str) -> Option<String> {
    let k = key.to_ascii_lowercase();
    words.iter().find_map(|w| {
        let (wk, v) = w.split_once('=')?;
        let wk = wk.to_ascii_lowercase();
        let op = if wk.ends_with('+') {
            "+"
        } else if wk.ends_with('-') {
            "-"
        } else {
            ""
        };
        let bare = wk.trim_end_matches(['+', '-']);
        (!bare.is_empty() && k.starts_with(bare)).then(|| format!("{op}{v}"))
    })
}
