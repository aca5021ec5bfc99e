//! The Audit pane's live tail of the txn log: the bounded row buffer,
//! pausing, the controller-side filter and resuming without a gap after a
//! reconnect. Called only from [`crate::dispatch`].
//!
//! Subscribing: the first open fills the pane with the newest [`FILL`] rows
//! (`ListTxn`) and tails after the last of them; a reconnect tails after the
//! last id seen. Either way the controller replays what was missed, and rows
//! at or below the last id are dropped here, so there is no gap and no
//! duplicate.

use crate::action::{Action, Effect, Rpc, TailSpec};
use crate::nav;
use crate::pane::PaneId;
use crate::state::{Mode, State};
use crate::views::{self, Row};
use spur_client::vocab::txn::TxnFilter;
use spur_proto::v1::TxnRow;
use std::collections::VecDeque;
use tui_input::Input;

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
    fn subscribe(&mut self, after_id: Option<i64>) -> Effect {
        self.sub += 1;
        if after_id.is_none() || !matches!(self.status, TailStatus::Live) {
            self.status = TailStatus::Loading;
        }
        Effect::Rpc(Rpc::Tail(TailSpec { sub: self.sub, filter: self.filter.clone(), after_id }))
    }

    /// Keep only rows newer than any seen (a replay may overlap), as entries.
    fn accept(&mut self, rows: Vec<TxnRow>) -> Vec<Entry> {
        let mut out = Vec::with_capacity(rows.len());
        for txn in rows {
            if self.last_id.is_some_and(|l| txn.id <= l) {
                continue;
            }
            self.last_id = Some(txn.id);
            let row = views::audit::row(&txn);
            self.widths.resize(row.cells.len(), 0);
            for (w, cell) in self.widths.iter_mut().zip(row.cells.iter()) {
                *w = (*w).max(views::width(cell));
            }
            out.push(Entry { row, txn });
        }
        out
    }

    /// Append to the shown rows; returns the keys of the rows the bound pushed out.
    fn show(&mut self, entries: Vec<Entry>) -> Vec<String> {
        self.rows.extend(entries);
        let excess = self.rows.len().saturating_sub(CAPACITY);
        self.rows.drain(..excess).map(|e| e.row.key).collect()
    }

    fn hold(&mut self, entries: Vec<Entry>) {
        self.arrived += entries.len();
        self.held.extend(entries);
        let excess = self.held.len().saturating_sub(CAPACITY);
        self.held.drain(..excess);
    }
}

/// Split `Actor=alice Outcome=denied` into pairs and check them with the
/// controller's own parser, so a typo is caught while typing.
pub fn parse_filter(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    for word in text.split_whitespace() {
        let (k, v) = word.split_once('=').ok_or_else(|| format!("'{word}': expected Key=value"))?;
        if k.is_empty() || v.is_empty() {
            return Err(format!("'{word}': expected Key=value"));
        }
        pairs.push((k.to_string(), v.to_string()));
    }
    TxnFilter::parse(&pairs, chrono::Local::now()).map_err(|e| e.to_string())?;
    Ok(pairs)
}

/// Filter keys as sacctmgr spells them, for Tab completion.
const KEYS: &[&str] =
    &["Actor=", "Action=", "Entity=", "Name=", "Outcome=", "Peer=", "Start=", "End=", "limit="];

/// Tab on the filter line: complete the last word's key, or the value of a
/// key with a fixed vocabulary (Action=, Outcome=), when only one fits.
pub fn complete_filter(line: &str) -> String {
    let start = line.rfind(char::is_whitespace).map_or(0, |i| i + 1);
    let (head, word) = line.split_at(start);
    let lower = word.to_ascii_lowercase();
    let unique = |options: Vec<String>| -> Option<String> {
        let fits: Vec<String> =
            options.into_iter().filter(|o| o.to_ascii_lowercase().starts_with(&lower)).collect();
        (fits.len() == 1).then(|| fits[0].clone())
    };
    let done = match word.split_once('=') {
        None => unique(KEYS.iter().map(|k| k.to_string()).collect()),
        Some((key, _)) => {
            let values: &[&str] = match key.to_ascii_lowercase().as_str() {
                "action" => &["create", "update", "delete"],
                "outcome" => &["success", "denied", "error"],
                _ => &[],
            };
            unique(values.iter().map(|v| format!("{key}={v}")).collect())
        }
    };
    match done {
        Some(w) => format!("{head}{w}"),
        None => line.to_string(),
    }
}

/// The txn filter is checked on every key but applied only on Enter:
/// applying re-subscribes, which is not free.
pub fn prompt(state: &mut State, action: Action) -> Vec<Effect> {
    let Mode::TxnFilter(p) = &mut state.mode else {
        return Vec::new();
    };
    match action {
        Action::Input(req) => {
            p.input.handle(req);
            p.hint = parse_filter(p.input.value()).err();
        }
        Action::Complete => {
            let line = complete_filter(p.input.value());
            p.input = Input::new(line);
            p.hint = parse_filter(p.input.value()).err();
        }
        Action::Submit => {
            let text = p.input.value().to_string();
            match apply_filter(state, &text) {
                Ok(effects) => {
                    state.mode = Mode::Normal;
                    let shown = if text.trim().is_empty() { "none".to_string() } else { text };
                    state.info(format!("audit filter: {shown}"));
                    return effects;
                }
                Err(e) => {
                    if let Mode::TxnFilter(p) = &mut state.mode {
                        p.hint = Some(e);
                    }
                }
            }
        }
        // Esc keeps the filter in force; an empty filter is applied with Enter.
        Action::Back => state.mode = Mode::Normal,
        _ => {}
    }
    Vec::new()
}

/// The pane was opened: subscribe the first time.
pub fn open(state: &mut State) -> Vec<Effect> {
    if state.audit.status == TailStatus::Idle { vec![state.audit.subscribe(None)] } else { Vec::new() }
}

/// A (re)connect: resume after the last row seen, if the pane was ever opened.
pub fn resume(state: &mut State) -> Vec<Effect> {
    if state.audit.status == TailStatus::Idle {
        return Vec::new();
    }
    let after = state.audit.last_id;
    vec![state.audit.subscribe(after)]
}

/// `r` on the Audit pane: retry a failed tail (a live one needs nothing).
pub fn retry(state: &mut State) -> Vec<Effect> {
    match state.audit.status {
        TailStatus::Live | TailStatus::Loading => Vec::new(),
        TailStatus::Idle => open(state),
        TailStatus::Failed(_) => resume(state),
    }
}

/// Apply a new filter: start over, since the rows shown were chosen by the old one.
pub fn apply_filter(state: &mut State, text: &str) -> Result<Vec<Effect>, String> {
    let pairs = parse_filter(text)?;
    let log = &mut state.audit;
    log.filter_text = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
    log.filter = pairs;
    log.rows.clear();
    log.held.clear();
    log.arrived = 0;
    log.last_id = None;
    log.widths.clear();
    let effect = log.subscribe(None);
    let view = &mut state.views[PaneId::Audit.index()];
    view.marks.clear();
    view.selected = 0;
    view.offset = 0;
    Ok(vec![effect])
}

pub fn on_rows(state: &mut State, sub: u64, rows: Vec<TxnRow>, lagged: Option<String>) {
    if sub != state.audit.sub {
        return;
    }
    state.audit.status = TailStatus::Live;
    if let Some(note) = lagged {
        state.info(format!("audit: {note}"));
    }
    let entries = state.audit.accept(rows);
    if entries.is_empty() {
        return;
    }
    if state.audit.paused {
        state.audit.hold(entries);
    } else {
        show(state, entries);
    }
}

pub fn on_failed(state: &mut State, sub: u64, error: String) {
    if sub == state.audit.sub {
        state.audit.status = TailStatus::Failed(error);
    }
}

pub fn toggle_pause(state: &mut State) {
    let log = &mut state.audit;
    log.paused = !log.paused;
    if log.paused {
        state.info("audit paused: new rows are held (p resumes)");
        return;
    }
    let held: Vec<Entry> = log.held.drain(..).collect();
    let arrived = std::mem::take(&mut log.arrived);
    show(state, held);
    state.info(format!("audit resumed: {arrived} new row(s)"));
}

/// Show new rows. A selection on the last row follows the tail (like
/// `tail -f`); any other stays on its record.
fn show(state: &mut State, entries: Vec<Entry>) {
    let pane = PaneId::Audit;
    let (count, key) = match views::table(state, pane) {
        Some(t) => {
            let sel = state.views[pane.index()].selected;
            (t.rows.len(), t.rows.get(sel).map(|r| r.key.clone()))
        }
        None => (0, None),
    };
    let follow = state.views[pane.index()].selected + 1 >= count;
    let dropped = state.audit.show(entries);
    let marks = &mut state.views[pane.index()].marks;
    if !marks.is_empty() {
        for k in &dropped {
            marks.remove(k);
        }
    }
    if follow {
        let n = views::table(state, pane).map(|t| t.rows.len()).unwrap_or(0);
        state.views[pane.index()].selected = n.saturating_sub(1);
    } else {
        nav::reselect(state, pane, key);
    }
    nav::clamp_all(state);
}
