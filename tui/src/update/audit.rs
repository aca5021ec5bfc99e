//! The Audit pane's live tail of the txn log: subscribing, pausing, the
//! controller-side filter and resuming without a gap after a reconnect.
//! Called only from [`crate::update::dispatch()`]; the bounded buffer itself
//! is [`crate::model::audit::AuditLog`].
//!
//! Subscribing: the first open fills the pane with the newest
//! [`crate::model::audit::FILL`] rows
//! (`ListTxn`) and tails after the last of them; a reconnect tails after the
//! last id seen. Either way the controller replays what was missed, and rows
//! at or below the last id are dropped here, so there is no gap and no
//! duplicate.

use crate::model::action::{Action, Effect};
use crate::model::audit::{Entry, TailStatus};
use crate::model::pane::PaneId;
use crate::model::state::{Mode, State};

use crate::update::nav;
use spur_proto::v1::TxnRow;
use spur_vocab::txn::TxnFilter;
use tui_input::Input;

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
    let (count, key) = match state.table(pane) {
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
        let n = state.table(pane).map(|t| t.rows.len()).unwrap_or(0);
        state.views[pane.index()].selected = n.saturating_sub(1);
    } else {
        nav::reselect(state, pane, key);
    }
    nav::clamp_all(state);
}
