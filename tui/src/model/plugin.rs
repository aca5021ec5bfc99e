//! k9s-style plugins from console.toml's `[[plugins]]`: a key on some
//! panes runs a command whose argv is a template over the selected row
//! (`{jobid}`, `{nodes}`, `{user}` ...). Everything is checked when the
//! config loads (the fields a template names exist on every pane it
//! applies to, the key is free there), so a bad plugin is an error naming
//! it before the console starts, and nothing runs. Substitution is per
//! argv word, never through a shell (a user who wants one writes `sh -c`).
//! Running is `net/plugin.rs`; the key, the row's fields and the
//! confirmation, `update/plugin.rs`.

use crate::model::keymap::{KeySpec, Keymap};
use crate::model::pane::PaneId;
use std::collections::BTreeMap;

/// Every field a template may name, and what it is.
pub const FIELDS: &[(&str, &str)] = &[
    ("jobid", "the job's id"),
    ("name", "the job's, QOS's or reservation's name"),
    ("user", "the job's or association's user"),
    ("account", "the job's or row's account"),
    ("partition", "the job's partition, or the association's"),
    ("qos", "the job's QOS, or the QOS row's name"),
    ("state", "the job's state (RUNNING, PENDING, ...)"),
    ("nodes", "the job's node list (node[01-02]), or the node's name"),
    ("node", "the job's first node, or the node's name"),
];

/// The fields the rows of `pane` have (a row may leave one empty: an
/// account's row has no user).
pub fn fields_of(pane: PaneId) -> &'static [&'static str] {
    match pane {
        PaneId::Queue => &["jobid", "name", "user", "account", "partition", "qos", "state", "nodes", "node"],
        PaneId::Nodes => &["nodes", "node"],
        PaneId::Accounts => &["account", "user", "partition"],
        PaneId::Fairshare => &["account", "user"],
        PaneId::Qos => &["qos", "name"],
        PaneId::Reservations => &["name"],
        _ => &[],
    }
}

/// One piece of an argv word: text, or a field to fill in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Field(String),
}

/// One `[[plugins]]` entry, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Plugin {
    pub key: KeySpec,
    pub name: String,
    pub panes: Vec<PaneId>,
    /// The argv template, one list of pieces per word.
    pub command: Vec<Vec<Piece>>,
    /// Needs the write role and a confirmation naming the command.
    pub dangerous: bool,
}

/// `ssh {node}` → words of text and fields; `{{` and `}}` are braces.
pub fn parse_word(word: &str) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '{' => {
                let mut field = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => field.push(c),
                        None => {
                            return Err(format!(
                                "\"{word}\": a '{{' without its '}}' (write {{{{ for a brace)"
                            ));
                        }
                    }
                }
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(Piece::Field(field));
            }
            '}' => return Err(format!("\"{word}\": a '}}' without its '{{' (write }}}} for a brace)")),
            c => text.push(c),
        }
    }
    if !text.is_empty() || out.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

/// The fields a plugin's command names, in order.
pub fn named(command: &[Vec<Piece>]) -> Vec<&str> {
    command
        .iter()
        .flatten()
        .filter_map(|p| match p {
            Piece::Field(f) => Some(f.as_str()),
            Piece::Text(_) => None,
        })
        .collect()
}

/// Checks every `[[plugins]]` entry against the panes and the keymap.
pub fn parse_all(value: &toml::Value, keymap: &Keymap) -> Result<Vec<Plugin>, String> {
    let list = value.as_array().ok_or("plugins: expected [[plugins]] tables")?;
    let mut out: Vec<Plugin> = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let p = parse_one(i, item, keymap)?;
        for pane in &p.panes {
            if let Some(other) = out.iter().find(|o| o.key == p.key && o.panes.contains(pane)) {
                return Err(format!(
                    "plugin \"{}\": key \"{}\" is also plugin \"{}\"'s on the {} pane",
                    p.name,
                    p.key,
                    other.name,
                    pane.name()
                ));
            }
        }
        out.push(p);
    }
    Ok(out)
}

fn parse_one(i: usize, item: &toml::Value, keymap: &Keymap) -> Result<Plugin, String> {
    let t = item.as_table().ok_or_else(|| format!("plugins[{i}]: expected a table"))?;
    let name = match t.get("name").and_then(|v| v.as_str()) {
        Some(n) if !n.trim().is_empty() => n.to_string(),
        _ => return Err(format!("plugins[{i}]: name = \"...\" is required")),
    };
    let who = format!("plugin \"{name}\"");
    for k in t.keys() {
        if !["key", "name", "panes", "command", "dangerous"].contains(&k.as_str()) {
            return Err(format!("{who}: unknown key \"{k}\" (known: key, name, panes, command, dangerous)"));
        }
    }
    let key_text =
        t.get("key").and_then(|v| v.as_str()).ok_or_else(|| format!("{who}: key = \"...\" is required"))?;
    let key = KeySpec::parse(key_text).map_err(|e| format!("{who}: key \"{key_text}\": {e}"))?;
    let strings = |field: &str| -> Result<Vec<String>, String> {
        let bad = || format!("{who}: {field} must be a list of strings");
        let items = t.get(field).ok_or_else(|| format!("{who}: {field} = [...] is required"))?;
        let items = items.as_array().ok_or_else(bad)?;
        items.iter().map(|v| v.as_str().map(str::to_string).ok_or_else(bad)).collect()
    };
    let panes = strings("panes")?
        .iter()
        .map(|w| PaneId::named(w).ok_or_else(|| format!("{who}: panes: no pane \"{w}\"")))
        .collect::<Result<Vec<_>, _>>()?;
    if panes.is_empty() {
        return Err(format!("{who}: panes is empty: name the panes its key works on"));
    }
    let words = strings("command")?;
    if words.first().is_none_or(|w| w.trim().is_empty()) {
        return Err(format!("{who}: command is empty: its first word is the program"));
    }
    let command = words
        .iter()
        .map(|w| parse_word(w).map_err(|e| format!("{who}, key \"{key}\": command {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let dangerous = match t.get("dangerous") {
        None => false,
        Some(v) => v.as_bool().ok_or_else(|| format!("{who}: dangerous must be true or false"))?,
    };
    for field in named(&command) {
        if !FIELDS.iter().any(|(f, _)| *f == field) {
            let known: Vec<&str> = FIELDS.iter().map(|(f, _)| *f).collect();
            return Err(format!(
                "{who}, key \"{key}\": unknown field {{{field}}} in its command (known: {})",
                known.join(", ")
            ));
        }
        if let Some(pane) = panes.iter().find(|p| !fields_of(**p).contains(&field)) {
            return Err(format!(
                "{who}, key \"{key}\": the {} pane's rows have no {{{field}}} (they have: {})",
                pane.name(),
                fields_of(*pane).join(", ")
            ));
        }
    }
    for pane in &panes {
        if let Some(b) = keymap
            .bindings()
            .iter()
            .find(|b| b.keys.contains(&key) && (!b.action.pane_only() || pane.offers(&b.action)))
        {
            return Err(format!(
                "{who}: key \"{key}\" is the {} pane's \"{}\" ({}); pick another key",
                pane.name(),
                b.name,
                b.desc
            ));
        }
    }
    Ok(Plugin { key, name, panes, command, dangerous })
}

/// The argv for a row, or the first field the row has no value for.
pub fn argv(command: &[Vec<Piece>], fields: &BTreeMap<&str, String>) -> Result<Vec<String>, String> {
    command
        .iter()
        .map(|word| {
            word.iter()
                .map(|p| match p {
                    Piece::Text(t) => Ok(t.clone()),
                    Piece::Field(f) => {
                        fields.get(f.as_str()).cloned().ok_or_else(|| format!("this row has no {{{f}}}"))
                    }
                })
                .collect::<Result<String, String>>()
        })
        .collect()
}
