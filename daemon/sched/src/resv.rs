//! Making and changing a reservation: a parsed `scontrol create|update
//! reservation` ([`ResvRequest`]) applied to the reservation it names (or
//! to none), checked against the cluster as it is now. Pure: the caller
//! gives the nodes, what runs on them, the other reservations and `now`.
//!
//! Slurm's rules, as its scontrol page gives them: a new reservation needs
//! a start, an end or a duration, nodes (named or counted) and users or
//! accounts; two reservations may share a node in overlapping windows only
//! when one of them is OVERLAP or MAINT; a node running a job past the
//! start is reserved only with IGNORE_JOBS; a counted reservation takes
//! idle nodes first, in name order; an active reservation's start does not
//! move.

use crate::model::resv::{Resv, UNLIMITED_MS};
use crate::model::{HresMode, HresResource};
use spur_vocab::hostlist;
use spur_vocab::resv::{Access, NodeEdit, Op, ResvFlags, ResvRequest, split_layer};
use spur_vocab::time::TimeLimit;
use std::collections::{BTreeMap, BTreeSet};

/// A node as a reservation sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResvNode {
    pub name: String,
    pub partitions: Vec<String>,
    /// Up and not drained: a counted reservation picks only these.
    pub up: bool,
    /// When the last job running on it ends: None when idle, `i64::MAX` for a job without limit.
    pub busy_until: Option<i64>,
}

/// The cluster a request is checked against.
#[derive(Debug, Clone, Copy)]
pub struct ResvCx<'a> {
    pub now_ms: i64,
    pub nodes: &'a [ResvNode],
    /// Every other reservation.
    pub others: &'a [Resv],
    /// Configured count of each plain licence.
    pub licenses: &'a BTreeMap<String, u32>,
    /// The hierarchical resources, whose layers `Licenses=name(layer):N` holds.
    pub hres: &'a [HresResource],
    /// The name a reservation made without `ReservationName=` takes.
    pub default_name: &'a str,
}

/// A refusal: the key it concerns and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResvError {
    pub key: &'static str,
    pub message: String,
}

fn err<T>(key: &'static str, message: impl Into<String>) -> Result<T, ResvError> {
    Err(ResvError { key, message: message.into() })
}

/// The reservation `req` makes from `old` (None: a new one).
pub fn resolve(old: Option<&Resv>, req: &ResvRequest, cx: &ResvCx) -> Result<Resv, ResvError> {
    let creating = old.is_none();
    let mut r = match old {
        Some(o) => o.clone(),
        None => Resv {
            name: req.name.clone().unwrap_or_else(|| cx.default_name.to_string()),
            start_ms: 0,
            end_ms: 0,
            nodes: vec![],
            partition: String::new(),
            users: vec![],
            users_deny: false,
            accounts: vec![],
            accounts_deny: false,
            licenses: vec![],
            flags: 0,
        },
    };
    if creating && cx.others.iter().any(|o| o.name == r.name) {
        return err("ReservationName", format!("a reservation named '{}' exists", r.name));
    }
    times(&mut r, old, req, cx.now_ms)?;
    if let Some((op, f)) = req.flags {
        let f = f.without(ResvFlags::SPEC_NODES);
        let kept = ResvFlags::from_bits(r.flags);
        let flags = match op {
            // SPEC_NODES is the controller's to say; the rest is as given.
            Op::Set => {
                f.with(if kept.has(ResvFlags::SPEC_NODES) { ResvFlags::SPEC_NODES } else { ResvFlags::NONE })
            }
            Op::Add => kept.with(f),
            Op::Remove => kept.without(f),
        };
        if flags.has(ResvFlags::DAILY) && flags.has(ResvFlags::WEEKLY) {
            return err("Flags", "DAILY and WEEKLY cannot both be set");
        }
        r.flags = flags.bits();
    }
    access(&mut r.users, &mut r.users_deny, "Users", &req.users)?;
    access(&mut r.accounts, &mut r.accounts_deny, "Accounts", &req.accounts)?;
    if r.users.is_empty() && r.accounts.is_empty() {
        return err("Users", "either Users and/or Accounts must be given; no reservation made");
    }
    if let Some(p) = &req.partition {
        if !cx.nodes.iter().any(|n| n.partitions.contains(p)) {
            return err("PartitionName", format!("no partition named '{p}' has nodes"));
        }
        r.partition = p.clone();
    }
    nodes(&mut r, req, cx)?;
    if let Some(l) = &req.licenses {
        r.licenses = l.clone();
    }
    check_licenses(&r, cx)?;
    Ok(r)
}

fn times(r: &mut Resv, old: Option<&Resv>, req: &ResvRequest, now: i64) -> Result<(), ResvError> {
    let was_active = old.is_some_and(|o| o.active(now));
    let length = |d: TimeLimit| d.minutes().map_or(UNLIMITED_MS, |m| (m as i64).saturating_mul(60_000));
    if let Some(s) = req.start_ms {
        if was_active && s != r.start_ms {
            return err("StartTime", "an ACTIVE reservation's start cannot change");
        }
        // A start already past begins now, as Slurm's does.
        let keep = r.end_ms - r.start_ms;
        r.start_ms = s.max(now);
        if old.is_some() && req.end_ms.is_none() && req.duration.is_none() {
            r.end_ms = r.start_ms + keep;
        }
    } else if old.is_none() {
        return err("StartTime", "a start time must be given; no reservation made");
    }
    match (req.end_ms, req.duration) {
        (Some(e), Some(d)) if r.start_ms.saturating_add(length(d)) != e => {
            return err("Duration", "StartTime + Duration does not equal EndTime; no reservation made");
        }
        (Some(e), _) => r.end_ms = e,
        (None, Some(d)) => r.end_ms = r.start_ms.saturating_add(length(d)),
        (None, None) if old.is_none() => {
            return err("EndTime", "an end time or duration must be given; no reservation made");
        }
        (None, None) => {}
    }
    if r.end_ms <= r.start_ms {
        return err("EndTime", "the start time cannot be at or after the end time; no reservation made");
    }
    if r.end_ms <= now {
        return err("EndTime", "the reservation would have ended already");
    }
    Ok(())
}

fn access(
    names: &mut Vec<String>,
    deny: &mut bool,
    key: &str,
    edit: &Option<(Op, Access)>,
) -> Result<(), ResvError> {
    let Some((op, a)) = edit else { return Ok(()) };
    let mut cur = Access { names: std::mem::take(names), deny: *deny };
    let k = if key == "Users" { "Users" } else { "Accounts" };
    cur.apply(key, *op, a).map_err(|m| ResvError { key: k, message: m })?;
    (*names, *deny) = (cur.names, cur.deny);
    Ok(())
}

/// Node names of a hostlist; each must be a node of the cluster.
fn named(list: &str, cx: &ResvCx) -> Result<Vec<String>, ResvError> {
    let longest = cx.nodes.iter().map(|n| n.name.len()).max().unwrap_or(0);
    let names = hostlist::expand_bounded(list, cx.nodes.len().max(1), longest.max(1))
        .map_err(|e| ResvError { key: "Nodes", message: e })?;
    if let Some(n) = names.iter().find(|n| !cx.nodes.iter().any(|c| &c.name == *n)) {
        return err("Nodes", format!("no node named '{n}'"));
    }
    Ok(names)
}

fn nodes(r: &mut Resv, req: &ResvRequest, cx: &ResvCx) -> Result<(), ResvError> {
    let in_part = |n: &ResvNode| r.partition.is_empty() || n.partitions.contains(&r.partition);
    let mut set: BTreeSet<String> = r.nodes.iter().cloned().collect();
    let named_any = req.nodes.is_some();
    match &req.nodes {
        None => {}
        Some(NodeEdit::All) => set = cx.nodes.iter().filter(|n| in_part(n)).map(|n| n.name.clone()).collect(),
        Some(NodeEdit::List(Op::Set, l)) => set = named(l, cx)?.into_iter().collect(),
        Some(NodeEdit::List(Op::Add, l)) => set.extend(named(l, cx)?),
        Some(NodeEdit::List(Op::Remove, l)) => named(l, cx)?.iter().for_each(|n| {
            set.remove(n);
        }),
        Some(NodeEdit::Items(items)) => {
            for (op, l) in items {
                let names = named(l, cx)?;
                match op {
                    Op::Remove => names.iter().for_each(|n| {
                        set.remove(n);
                    }),
                    _ => set.extend(names),
                }
            }
        }
    }
    let flags = ResvFlags::from_bits(r.flags);
    if named_any {
        r.flags = flags.with(ResvFlags::SPEC_NODES).bits();
    }
    // A node another window holds in time with this one: shared only when one side allows it.
    let shares = |o: &Resv| {
        flags.has(ResvFlags::OVERLAP)
            || flags.has(ResvFlags::MAINT)
            || o.flags().has(ResvFlags::OVERLAP)
            || o.maint()
    };
    let clash = |n: &str| {
        cx.others.iter().find(|o| {
            o.name != r.name
                && o.overlaps(r.start_ms, r.end_ms)
                && !shares(o)
                && o.nodes.iter().any(|x| x == n)
        })
    };
    let crosses =
        |n: &ResvNode| !flags.has(ResvFlags::IGNORE_JOBS) && n.busy_until.is_some_and(|t| t > r.start_ms);
    if let Some(want) = req.node_cnt {
        let want = want as usize;
        if set.len() > want {
            // Keep the first `want` in name order (Slurm keeps a subset).
            set = set.into_iter().take(want).collect();
        } else {
            let mut free: Vec<&ResvNode> = cx
                .nodes
                .iter()
                .filter(|n| {
                    in_part(n) && n.up && !set.contains(&n.name) && clash(&n.name).is_none() && !crosses(n)
                })
                .collect();
            // Idle first, then those whose jobs end soonest; names break ties.
            free.sort_by_key(|n| (n.busy_until.unwrap_or(i64::MIN), n.name.clone()));
            let missing = want - set.len();
            if free.len() < missing {
                let where_ = if r.partition.is_empty() {
                    String::new()
                } else {
                    format!(" in partition {}", r.partition)
                };
                return err(
                    "NodeCnt",
                    format!(
                        "{want} nodes asked, {} free for the window{where_} (not in another reservation, nor running jobs past its start unless IGNORE_JOBS)",
                        set.len() + free.len()
                    ),
                );
            }
            set.extend(free.into_iter().take(missing).map(|n| n.name.clone()));
        }
    }
    if set.is_empty() {
        return err("Nodes", "a reservation needs nodes: name them (Nodes=) or count them (NodeCnt=)");
    }
    for n in &set {
        if let Some(o) = clash(n) {
            return err(
                "Nodes",
                format!(
                    "{n} is in reservation {} for an overlapping window (one of them needs Flags=OVERLAP)",
                    o.name
                ),
            );
        }
        if named_any && let Some(node) = cx.nodes.iter().find(|c| &c.name == n).filter(|c| crosses(c)) {
            return err(
                "Nodes",
                format!("{} runs jobs past the start (Flags=IGNORE_JOBS reserves it anyway)", node.name),
            );
        }
    }
    r.nodes = set.into_iter().collect();
    Ok(())
}

fn check_licenses(r: &Resv, cx: &ResvCx) -> Result<(), ResvError> {
    let others = || cx.others.iter().filter(|o| o.name != r.name && o.overlaps(r.start_ms, r.end_ms));
    // The spec's rule: "a job or reservation can request only one Mode 3 resource".
    let mut mode3: Vec<&str> = (r.licenses.iter().map(|(n, _)| split_layer(n).0))
        .filter(|n| cx.hres.iter().any(|h| h.name == *n && h.mode == HresMode::Three))
        .collect();
    mode3.sort_unstable();
    mode3.dedup();
    if mode3.len() > 1 {
        return err(
            "Licenses",
            format!("a reservation may hold only one Mode 3 resource; it names {}", mode3.join(" and ")),
        );
    }
    for (name, count) in &r.licenses {
        let (res_name, layer) = split_layer(name);
        if let Some(res) = cx.hres.iter().find(|h| h.name == res_name) {
            check_hres(res, layer, *count, &others().collect::<Vec<_>>())?;
            continue;
        }
        let Some(total) = cx.licenses.get(name).filter(|_| layer.is_none()) else {
            return err(
                "Licenses",
                format!("'{name}' is not a license or hierarchical resource of this cluster"),
            );
        };
        let held: u32 =
            others().flat_map(|o| o.licenses.iter().filter(|(n, _)| n == name).map(|(_, c)| *c)).sum();
        if held.saturating_add(*count) > *total {
            return err(
                "Licenses",
                format!(
                    "{name}:{count} asked; {total} configured, {held} held by other reservations in the window"
                ),
            );
        }
    }
    Ok(())
}

/// A hold of `count` on one layer of `res` (and, in Mode 3, on each layer
/// above it, where usage sums): it must fit what the layer leaves for jobs
/// less what other reservations in the window hold there.
fn check_hres(
    res: &HresResource,
    layer: Option<&str>,
    count: u32,
    others: &[&Resv],
) -> Result<(), ResvError> {
    let layers = || res.layers.iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join(", ");
    let Some(layer) = layer else {
        return err(
            "Licenses",
            format!(
                "'{}' is a hierarchical resource: name the layer held, as {}(LAYER):N (layers: {})",
                res.name,
                res.name,
                layers()
            ),
        );
    };
    let Some(at) = res.layer(layer) else {
        return err("Licenses", format!("'{}' has no layer '{layer}' (layers: {})", res.name, layers()));
    };
    let mut held = vec![0u64; res.layers.len()];
    for (n, c) in others.iter().flat_map(|o| o.licenses.iter()) {
        if let (rn, Some(l)) = split_layer(n)
            && rn == res.name
            && let Some(i) = res.layer(l)
        {
            hold_chain(res, i).for_each(|j| held[j] += u64::from(*c));
        }
    }
    for j in hold_chain(res, at) {
        let Some(total) = res.layers[j].total() else { continue };
        if held[j] + u64::from(count) > total {
            return err(
                "Licenses",
                format!(
                    "{}({layer}):{count} asked; layer {} leaves {total} for jobs, {} held by other reservations in the window",
                    res.name, res.layers[j].name, held[j]
                ),
            );
        }
    }
    Ok(())
}

/// The layers a hold on layer `i` takes from: the layer, and in Mode 3 each one above it.
pub fn hold_chain(res: &HresResource, i: usize) -> impl Iterator<Item = usize> + '_ {
    let mut at = Some(i);
    let mut steps = 0;
    std::iter::from_fn(move || {
        let cur = at?;
        steps += 1;
        at = (res.mode == HresMode::Three && steps <= res.layers.len())
            .then(|| res.layers[cur].parent.as_deref().and_then(|p| res.layer(p)))
            .flatten();
        Some(cur)
    })
}
