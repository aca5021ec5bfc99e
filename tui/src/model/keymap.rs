//! The keymap is data: a table of (action name, [`Action`], keys,
//! description). Key lookup, the help overlay, the hint line and config
//! rebinding all read this one table.

use crate::model::action::Action;
use crate::model::jobs::JobOp;
use crate::model::pane::PaneId;
use crate::model::write::NodeOp;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::HashMap;
use std::fmt;

/// A key as the keymap sees it: Shift is folded into the character
/// (`G`, not `shift-g`) so a config and a terminal agree on one spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeySpec {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

/// Ctrl-C always quits, whatever the config says, so an operator is never trapped.
pub const QUIT_KEY: KeySpec = KeySpec { code: KeyCode::Char('c'), mods: KeyModifiers::CONTROL };

impl KeySpec {
    pub fn from_event(ev: &KeyEvent) -> KeySpec {
        let mut mods = ev.modifiers;
        if matches!(ev.code, KeyCode::Char(_) | KeyCode::BackTab) {
            mods.remove(KeyModifiers::SHIFT);
        }
        KeySpec { code: ev.code, mods }
    }

    /// Parse `q`, `G`, `ctrl-d`, `shift-tab`, `pgdn`, `space`, `f5`, ...
    pub fn parse(text: &str) -> Result<KeySpec, String> {
        let mut mods = KeyModifiers::NONE;
        let mut rest = text.trim();
        if rest.is_empty() {
            return Err("empty key".into());
        }
        while let Some((m, tail)) = split_modifier(rest) {
            mods |= m;
            rest = tail;
        }
        let code = parse_code(rest).ok_or_else(|| format!("unknown key name \"{rest}\""))?;
        if mods.contains(KeyModifiers::SHIFT) {
            mods.remove(KeyModifiers::SHIFT);
            return match code {
                KeyCode::Tab | KeyCode::BackTab => Ok(KeySpec { code: KeyCode::BackTab, mods }),
                KeyCode::Char(c) => Ok(KeySpec { code: KeyCode::Char(c.to_ascii_uppercase()), mods }),
                _ => Err(format!("shift is not supported with \"{rest}\"")),
            };
        }
        Ok(KeySpec { code, mods })
    }
}

/// Splits a leading `ctrl-`/`alt-`/`shift-` (or `ctrl+`...) off `rest`.
fn split_modifier(rest: &str) -> Option<(KeyModifiers, &str)> {
    const PREFIXES: [(&str, KeyModifiers); 8] = [
        ("ctrl", KeyModifiers::CONTROL),
        ("c", KeyModifiers::CONTROL),
        ("alt", KeyModifiers::ALT),
        ("meta", KeyModifiers::ALT),
        ("a", KeyModifiers::ALT),
        ("m", KeyModifiers::ALT),
        ("shift", KeyModifiers::SHIFT),
        ("s", KeyModifiers::SHIFT),
    ];
    let lower = rest.to_ascii_lowercase();
    PREFIXES.iter().find_map(|(p, m)| {
        let after = lower.strip_prefix(p)?;
        // A lone "-" or "+" after the prefix is the key itself, not a separator.
        (after.len() > 1 && (after.starts_with('-') || after.starts_with('+')))
            .then(|| (*m, &rest[p.len() + 1..]))
    })
}

fn parse_code(name: &str) -> Option<KeyCode> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Some(KeyCode::Char(c));
    }
    let lower = name.to_ascii_lowercase();
    Some(match lower.as_str() {
        "space" => KeyCode::Char(' '),
        "enter" | "return" | "cr" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "pgup" | "pageup" => KeyCode::PageUp,
        "pgdn" | "pgdown" | "pagedown" => KeyCode::PageDown,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "del" | "delete" => KeyCode::Delete,
        "ins" | "insert" => KeyCode::Insert,
        "backspace" | "bs" => KeyCode::Backspace,
        f if f.starts_with('f') => KeyCode::F(f[1..].parse().ok().filter(|n| (1..=24).contains(n))?),
        _ => return None,
    })
}

impl fmt::Display for KeySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("ctrl-")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("alt-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::BackTab => f.write_str("shift-tab"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::PageUp => f.write_str("pgup"),
            KeyCode::PageDown => f.write_str("pgdn"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::Delete => f.write_str("del"),
            KeyCode::Insert => f.write_str("ins"),
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::F(n) => write!(f, "f{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// One row of the keymap table.
#[derive(Debug, Clone)]
pub struct Binding {
    /// The name used in `[keys]` of console.toml.
    pub name: &'static str,
    pub action: Action,
    pub keys: Vec<KeySpec>,
    pub desc: &'static str,
}

/// A config problem with `[keys]`; each message names what to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeymapError {
    UnknownAction(String),
    BadKey { action: String, key: String, reason: String },
    Conflict { key: String, first: String, second: String },
}

impl fmt::Display for KeymapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeymapError::UnknownAction(name) => write!(
                f,
                "[keys] unknown action \"{name}\" (known: {})",
                default_table().iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
            ),
            KeymapError::BadKey { action, key, reason } => {
                write!(f, "[keys] {action} = \"{key}\": {reason}")
            }
            KeymapError::Conflict { key, first, second } => {
                write!(f, "[keys] key \"{key}\" is bound to both \"{first}\" and \"{second}\"")
            }
        }
    }
}

impl std::error::Error for KeymapError {}

#[derive(Debug, Clone)]
pub struct Keymap {
    bindings: Vec<Binding>,
    /// A key's bindings: one, or pane-only keys of panes that share none (`O`).
    lookup: HashMap<KeySpec, Vec<usize>>,
}

impl Default for Keymap {
    fn default() -> Self {
        // The default table is tested to be conflict-free.
        Keymap::build(default_table())
            .unwrap_or_else(|_| Keymap { bindings: Vec::new(), lookup: HashMap::new() })
    }
}

impl Keymap {
    /// The defaults with `[keys]` overrides applied; an override replaces all
    /// default keys of its action (an empty list unbinds it).
    pub fn with_overrides(overrides: &[(String, Vec<String>)]) -> Result<Keymap, KeymapError> {
        let mut table = default_table();
        for (name, keys) in overrides {
            let binding = table
                .iter_mut()
                .find(|b| b.name == name)
                .ok_or_else(|| KeymapError::UnknownAction(name.clone()))?;
            binding.keys = keys
                .iter()
                .map(|k| {
                    KeySpec::parse(k).map_err(|reason| KeymapError::BadKey {
                        action: name.clone(),
                        key: k.clone(),
                        reason,
                    })
                })
                .collect::<Result<_, _>>()?;
        }
        Keymap::build(table)
    }

    fn build(bindings: Vec<Binding>) -> Result<Keymap, KeymapError> {
        let mut lookup: HashMap<KeySpec, Vec<usize>> = HashMap::new();
        for (i, b) in bindings.iter().enumerate() {
            for key in &b.keys {
                if *key == QUIT_KEY && b.action != Action::Quit {
                    return Err(KeymapError::Conflict {
                        key: key.to_string(),
                        first: "quit (fixed)".into(),
                        second: b.name.into(),
                    });
                }
                let held = lookup.entry(*key).or_default();
                if let Some(&j) = held.iter().find(|&&j| j != i && !apart(&bindings[j].action, &b.action)) {
                    return Err(KeymapError::Conflict {
                        key: key.to_string(),
                        first: bindings[j].name.into(),
                        second: b.name.into(),
                    });
                }
                if !held.contains(&i) {
                    held.push(i);
                }
            }
        }
        Ok(Keymap { bindings, lookup })
    }

    pub fn action_for(&self, key: KeySpec) -> Option<&Action> {
        if key == QUIT_KEY {
            return Some(&Action::Quit);
        }
        self.lookup.get(&key).and_then(|held| held.first()).map(|&i| &self.bindings[i].action)
    }

    /// The action of `key` on `pane`: of a key several panes' own keys share, the one `pane` offers.
    pub fn action_on(&self, key: KeySpec, pane: PaneId) -> Option<&Action> {
        let held = self.lookup.get(&key);
        let mine = held.and_then(|h| h.iter().find(|&&i| pane.offers(&self.bindings[i].action)));
        match mine {
            Some(&i) => Some(&self.bindings[i].action),
            None => self.action_for(key),
        }
    }

    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    /// The keys of an action joined for display (`j/↓`), or "unbound".
    pub fn keys_of(&self, action: &Action) -> String {
        self.bindings
            .iter()
            .find(|b| &b.action == action)
            .filter(|b| !b.keys.is_empty())
            .map(|b| b.keys.iter().map(|k| k.to_string()).collect::<Vec<_>>().join("/"))
            .unwrap_or_else(|| "unbound".into())
    }
}

/// Fixed keys of prompts, forms and dialogs, for the help overlay.
pub const FIXED_KEYS: &[(&str, &str)] = &[
    ("ctrl-c", "quit, from anywhere"),
    ("enter", "prompt/form: submit; dialog: press the focused button"),
    ("esc", "prompt/form/dialog: cancel"),
    ("tab", "command, audit filter: complete; form/dialog: next field/button"),
    ("↑/↓", "drain/down reason: pick a recent reason (tab too)"),
];

/// Two pane-only keys no pane offers both of may share a key (`O`: the
/// HRES pane's toggle, the Queue's stderr).
fn apart(a: &Action, b: &Action) -> bool {
    a.pane_only() && b.pane_only() && PaneId::ALL.iter().all(|p| !(p.offers(a) && p.offers(b)))
}

fn keys(specs: &[&str]) -> Vec<KeySpec> {
    specs.iter().filter_map(|s| KeySpec::parse(s).ok()).collect()
}

/// The default keymap, in the order the help overlay lists it.
pub fn default_table() -> Vec<Binding> {
    let b = |name, action, k: &[&str], desc| Binding { name, action, keys: keys(k), desc };
    let mut t = vec![
        b("help", Action::Help, &["?"], "toggle this help"),
        b("command", Action::CommandMode, &[":"], "command (:qos :explain ID)"),
        b("filter", Action::FilterMode, &["/"], "filter by regex (! inverts)"),
        b("refresh", Action::Refresh, &["r"], "re-fetch from controller"),
        b("quit", Action::Quit, &["q"], "quit (ctrl-c always quits)"),
        b("next_pane", Action::NextPane, &["tab"], "next pane"),
        b("prev_pane", Action::PrevPane, &["shift-tab"], "previous pane"),
    ];
    t.extend([
        b("up", Action::Up, &["k", "up"], "move up"),
        b("down", Action::Down, &["j", "down"], "move down"),
        b("half_page_up", Action::HalfPageUp, &["ctrl-u"], "half page up"),
        b("half_page_down", Action::HalfPageDown, &["ctrl-d"], "half page down"),
        b("page_up", Action::PageUp, &["pgup"], "page up"),
        b("page_down", Action::PageDown, &["pgdn"], "page down"),
        b("top", Action::Top, &["g", "home"], "first row"),
        b("bottom", Action::Bottom, &["G", "end"], "last row"),
        b("sort", Action::SortNext, &["s"], "sort by the next column"),
        b("reverse", Action::SortReverse, &["S"], "reverse the sort order"),
        b("mark", Action::ToggleMark, &["space"], "mark / unmark the row"),
        // The help overlay has 27 columns for this at 80x24.
        b("open", Action::Open, &["enter"], "detail; array: expand/fold"),
        b("back", Action::Back, &["esc"], "back / clear filter, marks"),
        b("edit", Action::Edit, &["e"], "edit QOS, account or user"),
        b("delete", Action::Delete, &["D"], "delete marked/selected rows"),
        // Lower-case d is drain, not delete: on the Nodes pane D is refused anyway.
        b("node_drain", Action::NodeAction(NodeOp::Drain), &["d"], "drain marked/selected nodes"),
        b("node_resume", Action::NodeAction(NodeOp::Resume), &["u"], "resume nodes into service"),
        b("node_down", Action::NodeAction(NodeOp::Down), &["x"], "down marked/selected nodes"),
        // Upper case: the Nodes pane's d/u/x are lower case, and these act on other people's work.
        b("job_cancel", Action::JobAction(JobOp::Cancel), &["C"], "cancel marked/selected jobs"),
        b("job_hold", Action::JobAction(JobOp::Hold), &["H"], "hold pending jobs"),
        b("job_release", Action::JobAction(JobOp::Release), &["L"], "release held jobs"),
        b("job_requeue", Action::JobAction(JobOp::Requeue), &["Q"], "requeue running jobs"),
        b("job_states", Action::JobStates, &["t"], "cycle all/PD/R/done jobs"),
        b("explain", Action::Explain, &["w"], "why: the job's reason and preemption verdicts"),
        b("job_output", Action::Output(false), &["o"], "the job's stdout, live"),
        b("job_stderr", Action::Output(true), &["O"], "the job's stderr, live"),
        b("hres_toggle", Action::HresToggle, &["O"], "HRES: disable/enable layer (resource row: all)"),
        b("resv_new", Action::NewResv, &["n"], "new reservation"),
        b("pause", Action::TogglePause, &["p"], "pause/resume the audit tail"),
        b("txn_filter", Action::TxnFilterMode, &["f"], "filter audit: Outcome=error"),
    ]);
    for pane in PaneId::ALL {
        let name = pane.name();
        // Past the tenth pane no number is left: unbound unless console.toml binds one.
        let key = pane.key();
        let keys: Vec<&str> = key.as_deref().into_iter().collect();
        t.push(b(name, Action::GoPane(pane), &keys, pane.goto_desc()));
    }
    t
}
