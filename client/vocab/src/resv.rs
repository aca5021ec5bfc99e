//! Reservations in Slurm's words: the flags Spur honours, and `scontrol
//! create|update reservation`'s `Key=value` words parsed into a request
//! ([`ResvRequest`]), the one parser the CLI, the console's form and the
//! controller use. Pure: `now` comes from the caller.
//!
//! Keys are matched as scontrol matches them: case-insensitively, by any
//! unambiguous prefix. `Key+=v` adds to a list and `Key-=v` takes from it
//! (Nodes, Users, Accounts, Flags); `Users=-bob` denies. Keys of Slurm's
//! that Spur has no mechanism for (burst buffers, cores, TRES, watts,
//! groups, features, ...) are refused by name, never ignored: a reservation
//! that silently held less than asked would be a maintenance window that
//! lets jobs in.

use crate::licenses_impl::parse_request;
use crate::time_impl::TimeLimit;
use crate::when_impl::{Lean, parse_when};
use chrono::{DateTime, Local};
use std::fmt;

/// A reservation's flags, as `scontrol show reservation` prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ResvFlags(u16);

/// The flags Spur honours, with Slurm's names, in the order Slurm prints them.
const FLAG_NAMES: [(&str, u16); 7] = [
    ("MAINT", ResvFlags::MAINT.0),
    ("IGNORE_JOBS", ResvFlags::IGNORE_JOBS.0),
    ("OVERLAP", ResvFlags::OVERLAP.0),
    ("DAILY", ResvFlags::DAILY.0),
    ("WEEKLY", ResvFlags::WEEKLY.0),
    ("SPEC_NODES", ResvFlags::SPEC_NODES.0),
    ("NO_HOLD_JOBS_AFTER", ResvFlags::NO_HOLD_JOBS_AFTER.0),
];

/// Slurm's flags that Spur refuses, and why.
const REFUSED_FLAGS: &[(&str, &str)] = &[
    ("ANY_NODES", "reservations of licenses alone are not supported; name Nodes or NodeCnt"),
    ("LICENSE_ONLY", "reservations of licenses alone are not supported; name Nodes or NodeCnt"),
    ("FLEX", "jobs in a reservation run only on its nodes, within its window"),
    ("FORCE_START", "a recurring reservation starts at its StartTime"),
    ("HOURLY", "only DAILY and WEEKLY recur"),
    ("WEEKDAY", "only DAILY and WEEKLY recur"),
    ("WEEKEND", "only DAILY and WEEKLY recur"),
    ("MAGNETIC", "a job uses a reservation only when it names it"),
    ("PART_NODES", "nodes are named (Nodes=) or counted (NodeCnt=)"),
    ("PURGE_COMP", "a reservation ends at its EndTime"),
    ("REPLACE", "a reservation's nodes change only by update"),
    ("REPLACE_DOWN", "a reservation's nodes change only by update"),
    ("STATIC_ALLOC", "a reservation's nodes always stay as picked"),
    ("TIME_FLOAT", "a reservation's start is fixed when it is made"),
    ("USER_DELETE", "Operators and Administrators delete reservations"),
    ("FIRST_CORES", "whole nodes are reserved, never cores"),
    ("NO_MAINT", "the opposite of MAINT is leaving MAINT out"),
];

impl ResvFlags {
    /// A maintenance window: nodes show MAINT, waiting jobs say "Reserved for maintenance".
    pub const MAINT: ResvFlags = ResvFlags(1);
    /// Made over running jobs: nodes are picked whatever runs on them.
    pub const IGNORE_JOBS: ResvFlags = ResvFlags(2);
    /// May share nodes with another reservation.
    pub const OVERLAP: ResvFlags = ResvFlags(4);
    /// Repeats every day.
    pub const DAILY: ResvFlags = ResvFlags(8);
    /// Repeats every week.
    pub const WEEKLY: ResvFlags = ResvFlags(16);
    /// Its nodes were named (output only, as Slurm sets it).
    pub const SPEC_NODES: ResvFlags = ResvFlags(32);
    /// Its pending jobs are not held when it is deleted.
    pub const NO_HOLD_JOBS_AFTER: ResvFlags = ResvFlags(64);

    /// No flags.
    pub const NONE: ResvFlags = ResvFlags(0);

    /// Whether every flag of `other` is set.
    pub fn has(self, other: ResvFlags) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }

    /// Both sets.
    pub fn with(self, other: ResvFlags) -> ResvFlags {
        ResvFlags(self.0 | other.0)
    }

    /// These without `other`'s.
    pub fn without(self, other: ResvFlags) -> ResvFlags {
        ResvFlags(self.0 & !other.0)
    }

    /// The stored form.
    pub fn bits(self) -> u16 {
        self.0
    }

    /// From the stored form; unknown bits are dropped.
    pub fn from_bits(bits: u16) -> ResvFlags {
        ResvFlags(bits & FLAG_NAMES.iter().fold(0, |a, (_, b)| a | b))
    }

    /// Every flag Spur honours, by Slurm's name.
    pub fn names() -> impl Iterator<Item = &'static str> {
        FLAG_NAMES.iter().map(|(n, _)| *n)
    }

    /// `MAINT,DAILY` (any case); a flag Spur does not honour is refused with why.
    pub fn parse(raw: &str) -> Result<ResvFlags, String> {
        let mut out = ResvFlags::NONE;
        for word in raw.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let up = word.to_ascii_uppercase();
            // PURGE_COMP takes a time: `PURGE_COMP=10:00`.
            let name = up.split('=').next().unwrap_or_default();
            if let Some((_, bits)) = FLAG_NAMES.iter().find(|(n, _)| *n == name) {
                out = out.with(ResvFlags(*bits));
            } else if let Some((n, why)) = REFUSED_FLAGS.iter().find(|(n, _)| *n == name) {
                return Err(format!("Flags: {n} is not supported by Spur ({why})"));
            } else {
                let known: Vec<&str> = ResvFlags::names().collect();
                return Err(format!(
                    "Flags: '{word}' is not a reservation flag (Spur honours {})",
                    known.join(", ")
                ));
            }
        }
        if out.has(ResvFlags::DAILY) && out.has(ResvFlags::WEEKLY) {
            return Err("Flags: DAILY and WEEKLY cannot both be set".into());
        }
        Ok(out)
    }

    /// How far a recurring reservation moves each time, in ms.
    pub fn period_ms(self) -> Option<i64> {
        const DAY: i64 = 86_400_000;
        if self.has(ResvFlags::DAILY) {
            Some(DAY)
        } else if self.has(ResvFlags::WEEKLY) {
            Some(7 * DAY)
        } else {
            None
        }
    }
}

impl fmt::Display for ResvFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = FLAG_NAMES.iter().filter(|(_, b)| self.0 & b != 0).map(|(n, _)| *n).collect();
        f.write_str(&names.join(","))
    }
}

/// How a `Key=value` word changes a list: `=` sets, `+=` adds, `-=` takes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `Key=value`
    Set,
    /// `Key+=value`
    Add,
    /// `Key-=value`
    Remove,
}

/// Who may use a reservation: names allowed, or (with `deny`) every name but these.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Access {
    /// The names, in the order given, without duplicates.
    pub names: Vec<String>,
    /// `Users=-bob,-carol`: everyone but these.
    pub deny: bool,
}

impl Access {
    /// Whether `name` is let in; an empty allow list lets nobody in by itself.
    pub fn admits(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name) != self.deny
    }

    /// Whether the list says anything.
    pub fn is_set(&self) -> bool {
        !self.names.is_empty()
    }

    /// Applies an edit; a list may not mix allowed and denied names.
    pub fn apply(&mut self, key: &str, op: Op, edit: &Access) -> Result<(), String> {
        match op {
            Op::Set => *self = edit.clone(),
            Op::Add | Op::Remove if self.is_set() && edit.deny != self.deny => {
                return Err(format!("{key}: cannot mix allowed and denied names ('-name')"));
            }
            Op::Add => {
                self.deny = edit.deny;
                for n in &edit.names {
                    if !self.names.contains(n) {
                        self.names.push(n.clone());
                    }
                }
            }
            Op::Remove => self.names.retain(|n| !edit.names.contains(n)),
        }
        Ok(())
    }

    /// `Users=` as Slurm prints it: `alice,bob` or `-alice,-bob`.
    pub fn render(&self) -> String {
        let dash = if self.deny { "-" } else { "" };
        self.names.iter().map(|n| format!("{dash}{n}")).collect::<Vec<_>>().join(",")
    }

    /// Parses `alice,bob` or `-alice,-bob`.
    pub fn parse(key: &str, raw: &str) -> Result<Access, String> {
        let mut out = Access::default();
        let words: Vec<&str> = raw.split(',').map(str::trim).filter(|w| !w.is_empty()).collect();
        for (i, w) in words.iter().enumerate() {
            let (deny, name) = match w.strip_prefix('-') {
                Some(n) => (true, n),
                None => (false, *w),
            };
            if i > 0 && deny != out.deny {
                return Err(format!(
                    "{key}: '{raw}' mixes allowed and denied names; deny all with '-' or none"
                ));
            }
            out.deny = deny;
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.@".contains(c)) {
                return Err(format!("{key}: '{w}' is not a name"));
            }
            if !out.names.iter().any(|n| n == name) {
                out.names.push(name.to_string());
            }
        }
        Ok(out)
    }
}

/// `Nodes=`: `ALL`, a hostlist, or per-item `+name`/`-name` edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeEdit {
    /// Every node (of the partition, when one is named).
    All,
    /// A hostlist, set, added or taken away.
    List(Op, String),
    /// `nodes=+lx0,-lx[2-4]`: each item added or taken away.
    Items(Vec<(Op, String)>),
}

/// What one `scontrol create|update reservation` says, key by key; the
/// controller applies it to the existing reservation (or to none).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResvRequest {
    /// `ReservationName=`
    pub name: Option<String>,
    /// `StartTime=`, Unix ms.
    pub start_ms: Option<i64>,
    /// `EndTime=`, Unix ms.
    pub end_ms: Option<i64>,
    /// `Duration=`: minutes, or UNLIMITED.
    pub duration: Option<TimeLimit>,
    /// `Nodes=`
    pub nodes: Option<NodeEdit>,
    /// `NodeCnt=`
    pub node_cnt: Option<u32>,
    /// `PartitionName=`
    pub partition: Option<String>,
    /// `Users=` with its operator.
    pub users: Option<(Op, Access)>,
    /// `Accounts=` with its operator.
    pub accounts: Option<(Op, Access)>,
    /// `Licenses=`: name and count.
    pub licenses: Option<Vec<(String, u32)>>,
    /// `Flags=` with its operator.
    pub flags: Option<(Op, ResvFlags)>,
}

/// The keys Spur takes, by Slurm's name.
const KEYS: [&str; 11] = [
    "ReservationName",
    "StartTime",
    "EndTime",
    "Duration",
    "Nodes",
    "NodeCnt",
    "PartitionName",
    "Users",
    "Accounts",
    "Licenses",
    "Flags",
];

/// Slurm's keys that Spur refuses, and why.
const REFUSED_KEYS: &[(&str, &str)] = &[
    ("BurstBuffer", "Spur has no burst buffers"),
    ("CoreCnt", "whole nodes are reserved, never cores"),
    ("Features", "name the nodes (Nodes=) instead"),
    ("Groups", "name Users or Accounts"),
    ("MaxStartDelay", "jobs outside a reservation never delay its jobs"),
    ("Skip", "recurring reservations move on by themselves"),
    ("TRES", "reserve nodes (Nodes=, NodeCnt=) and licenses (Licenses=)"),
    ("Watts", "Spur has no power management"),
    ("Comment", "reservations carry no comment"),
];

/// The longest list a reservation's key may carry, in bytes: a name list
/// or hostlist past it is refused before any expansion.
pub const MAX_VALUE_LEN: usize = 4096;

/// Slurm's other spellings of the keys, beside the keys themselves.
const ALIASES: [(&str, &str); 9] = [
    ("Reservation", "ReservationName"),
    ("ResvName", "ReservationName"),
    ("Name", "ReservationName"),
    ("Partition", "PartitionName"),
    ("User", "Users"),
    ("Account", "Accounts"),
    ("License", "Licenses"),
    ("NodeList", "Nodes"),
    ("Flag", "Flags"),
];

/// Which key a word names: the vocabulary's one keyword rule (any case, any unambiguous prefix).
fn key_of(word: &str) -> Result<&'static str, String> {
    let table = KEYS.iter().map(|k| (*k, *k)).chain(ALIASES);
    match crate::keyword_impl::resolve_alias(word, table) {
        Ok(Some(k)) => Ok(k),
        Err(e) => Err(e.to_string()),
        Ok(None) => match REFUSED_KEYS.iter().find(|(k, _)| k.eq_ignore_ascii_case(word)) {
            Some((k, why)) => Err(format!("{k} is not supported by Spur ({why})")),
            None => Err(format!("'{word}' is not a reservation key (keys: {})", KEYS.join(", "))),
        },
    }
}

impl ResvRequest {
    /// Parses `Key=value` words. Times in Slurm's forms (`now+1hour`, ISO,
    /// `14:00`) read forward from `now`; `Duration` as a time limit.
    pub fn parse<S: AsRef<str>>(words: &[S], now: DateTime<Local>) -> Result<ResvRequest, String> {
        let mut r = ResvRequest::default();
        for w in words {
            let w = w.as_ref();
            let Some((k, v)) = w.split_once('=') else {
                return Err(format!("'{w}' is not Key=value"));
            };
            let (k, op) = match (k.strip_suffix('+'), k.strip_suffix('-')) {
                (Some(k), _) => (k, Op::Add),
                (_, Some(k)) => (k, Op::Remove),
                _ => (k, Op::Set),
            };
            let key = key_of(k)?;
            if v.len() > MAX_VALUE_LEN {
                return Err(format!(
                    "{key}: {} bytes, more than the {MAX_VALUE_LEN} a value may have",
                    v.len()
                ));
            }
            let listed = matches!(key, "Nodes" | "Users" | "Accounts" | "Flags");
            if op != Op::Set && !listed {
                return Err(format!("{key}: only Nodes, Users, Accounts and Flags take += or -="));
            }
            let time = |v: &str| parse_when(v, now, Lean::Future).map_err(|e| format!("{key}: {e}"));
            match key {
                "ReservationName" => r.name = Some(name(key, v)?),
                "StartTime" => r.start_ms = Some(time(v)?),
                "EndTime" => r.end_ms = Some(time(v)?),
                "Duration" => r.duration = Some(TimeLimit::parse(v).map_err(|e| format!("{key}: {e}"))?),
                "Nodes" => r.nodes = Some(nodes(op, v)?),
                "NodeCnt" => r.node_cnt = Some(node_cnt(v)?),
                "PartitionName" => r.partition = Some(name(key, v)?),
                "Users" => r.users = Some((op, Access::parse(key, v)?)),
                "Accounts" => r.accounts = Some((op, Access::parse(key, v)?)),
                "Licenses" => r.licenses = Some(licenses(v)?),
                _ => r.flags = Some((op, ResvFlags::parse(v)?)),
            }
        }
        Ok(r)
    }

    /// How the request reads as scontrol words (the console's "equivalent command").
    pub fn to_words(&self) -> Vec<String> {
        let mut out = vec![];
        let op = |o: Op| match o {
            Op::Set => "=",
            Op::Add => "+=",
            Op::Remove => "-=",
        };
        let time = |ms: i64| {
            chrono::DateTime::from_timestamp_millis(ms)
                .map(|t| t.with_timezone(&Local).format("%Y-%m-%dT%H:%M:%S").to_string())
                .unwrap_or_default()
        };
        if let Some(n) = &self.name {
            out.push(format!("ReservationName={n}"));
        }
        if let Some(s) = self.start_ms {
            out.push(format!("StartTime={}", time(s)));
        }
        if let Some(e) = self.end_ms {
            out.push(format!("EndTime={}", time(e)));
        }
        if let Some(d) = self.duration {
            out.push(format!("Duration={d}"));
        }
        match &self.nodes {
            Some(NodeEdit::All) => out.push("Nodes=ALL".into()),
            Some(NodeEdit::List(o, l)) => out.push(format!("Nodes{}{l}", op(*o))),
            Some(NodeEdit::Items(items)) => {
                let it: Vec<String> = items
                    .iter()
                    .map(|(o, n)| format!("{}{n}", if *o == Op::Add { "+" } else { "-" }))
                    .collect();
                out.push(format!("Nodes={}", it.join(",")));
            }
            None => {}
        }
        if let Some(c) = self.node_cnt {
            out.push(format!("NodeCnt={c}"));
        }
        if let Some(p) = &self.partition {
            out.push(format!("PartitionName={p}"));
        }
        if let Some((o, a)) = &self.users {
            out.push(format!("Users{}{}", op(*o), a.render()));
        }
        if let Some((o, a)) = &self.accounts {
            out.push(format!("Accounts{}{}", op(*o), a.render()));
        }
        if let Some(l) = &self.licenses {
            out.push(format!("Licenses={}", render_licenses(l)));
        }
        if let Some((o, f)) = &self.flags {
            out.push(format!("Flags{}{f}", op(*o)));
        }
        out
    }
}

/// `Licenses=` as Slurm prints it: `foo:4,bar:1`.
pub fn render_licenses(l: &[(String, u32)]) -> String {
    l.iter().map(|(n, c)| format!("{n}:{c}")).collect::<Vec<_>>().join(",")
}

fn name(key: &str, v: &str) -> Result<String, String> {
    let v = v.trim();
    if v.is_empty() || v.len() > 128 || !v.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
        return Err(format!("{key}: '{v}' is not a name (letters, digits, '_', '-', '.'; at most 128)"));
    }
    Ok(v.to_string())
}

fn nodes(op: Op, v: &str) -> Result<NodeEdit, String> {
    let v = v.trim();
    if op == Op::Set && v.eq_ignore_ascii_case("all") {
        return Ok(NodeEdit::All);
    }
    let check =
        |l: &str| crate::hostlist_impl::count(l).map(|_| l.to_string()).map_err(|e| format!("Nodes: {e}"));
    if op == Op::Set && (v.starts_with('+') || v.starts_with('-')) {
        let mut items = vec![];
        for item in split_outside_brackets(v) {
            let (o, l) = match (item.strip_prefix('+'), item.strip_prefix('-')) {
                (Some(l), _) => (Op::Add, l),
                (_, Some(l)) => (Op::Remove, l),
                _ => return Err(format!("Nodes: '{item}' needs a '+' or '-' like the items before it")),
            };
            items.push((o, check(l)?));
        }
        return Ok(NodeEdit::Items(items));
    }
    if v.is_empty() {
        return Err("Nodes: give ALL or a host list".into());
    }
    Ok(NodeEdit::List(op, check(v)?))
}

/// Commas outside `[...]`: `+a[1,2],-b` is two items.
fn split_outside_brackets(v: &str) -> Vec<&str> {
    let (mut out, mut depth, mut from) = (vec![], 0u32, 0);
    for (i, c) in v.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&v[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(&v[from..]);
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

fn node_cnt(v: &str) -> Result<u32, String> {
    let t = v.trim();
    let (num, mult) = match t.strip_suffix(['k', 'K']) {
        Some(n) => (n, 1024),
        None => (t, 1),
    };
    match num.parse::<u32>().ok().and_then(|n| n.checked_mul(mult)) {
        Some(n) if n > 0 => Ok(n),
        _ => Err(format!("NodeCnt: '{v}' is not a positive whole number")),
    }
}

/// `Licenses=`: `name:N` for a plain license, `name(layer):N` for a
/// hierarchical resource (Slurm's form: the layer held is always named).
fn licenses(v: &str) -> Result<Vec<(String, u32)>, String> {
    if v.contains('[') {
        let plain = parse_request(v).map_err(|e| format!("Licenses: {e}"))?;
        if let Some(r) = plain.iter().find(|r| !r.args.is_empty()) {
            return Err(format!("Licenses: '{}' takes no plugin arguments in a reservation", r.name));
        }
    }
    let mut out: Vec<(String, u32)> = vec![];
    for item in v.split(',').filter(|i| !i.is_empty()) {
        let (head, count) = match item.split_once(':') {
            Some((h, c)) => match c.parse::<u32>() {
                Ok(c) if c > 0 => (h, c),
                _ => return Err(format!("Licenses: '{item}': count '{c}' is not a whole number above 0")),
            },
            None => (item, 1),
        };
        let (res, layer) = split_layer(head);
        let ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
        if !ok(res) || layer.is_some_and(|l| !ok(l)) || (layer.is_none() && head.contains(['(', ')'])) {
            return Err(format!("Licenses: '{item}' is not NAME[:COUNT] or NAME(LAYER)[:COUNT]"));
        }
        if out.iter().any(|(n, _)| n == head) {
            return Err(format!("Licenses: '{head}' is given twice"));
        }
        out.push((head.to_string(), count));
    }
    Ok(out)
}

/// A reservation's license name: the resource, and the layer when it holds a
/// hierarchical resource's (`flat(low2)` is `flat` on layer `low2`).
pub fn split_layer(name: &str) -> (&str, Option<&str>) {
    match name.strip_suffix(')').and_then(|n| n.split_once('(')) {
        Some((res, layer)) => (res, Some(layer)),
        None => (name, None),
    }
}
