//! Reservations in a pass: each node's windows (a hole in its timeline for
//! every job the reservation does not admit), and the licences each
//! reservation holds out for its window. Built once per pass; a node
//! outside every reservation has an empty list, so a cluster without
//! reservations pays one empty-slice look per node considered.

use crate::model::{HresResource, Resv};
use rustc_hash::FxHashMap as FxMap;
use spur_vocab::licenses::LicenseAlloc;
use spur_vocab::resv::split_layer;
use std::collections::HashMap;

/// One reservation's window on one node.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    pub resv: u16,
    pub start: i64,
    pub end: i64,
}

#[derive(Debug, Default)]
pub(crate) struct Windows<'a> {
    pub list: &'a [Resv],
    /// By node index: the windows not yet over, earliest first.
    per_node: Vec<Vec<Window>>,
    /// By node index: the start and reservation of its earliest window
    /// (`i64::MAX` when none), so a job in no reservation, which any
    /// window keeps out, is judged without walking the node's list.
    first: Vec<(i64, u16)>,
    by_name: FxMap<&'a str, u16>,
    /// By reservation: each licence it holds out, less what its running jobs use.
    held: Vec<Vec<(&'a str, u32)>>,
    /// By reservation: its nodes' indexes, so a job in it scans only those.
    nodes: Vec<Vec<u32>>,
    /// What reservations hold of hierarchical resources, as charges on the
    /// layers (Mode 3: the named layer and each above it), less what their
    /// running jobs were charged there: taken from the counters while a job
    /// they do not admit is tried.
    hres: Vec<(u16, LicenseAlloc)>,
}

/// The running jobs' reservations and licences, to know what each reservation still holds out.
pub(crate) type MemberUse<'a> = (&'a str, &'a [(String, u32)]);

impl<'a> Windows<'a> {
    pub fn new(
        list: &'a [Resv],
        node_idx: &HashMap<&str, u32>,
        nodes: usize,
        now: i64,
        running: impl Iterator<Item = MemberUse<'a>>,
    ) -> Windows<'a> {
        let mut w = Windows { list, ..Windows::default() };
        if list.is_empty() {
            return w;
        }
        w.per_node = vec![Vec::new(); nodes];
        w.nodes = vec![Vec::new(); list.len()];
        for (k, r) in list.iter().enumerate().filter(|(_, r)| r.end_ms > now) {
            w.by_name.insert(r.name.as_str(), k as u16);
            for &n in r.nodes.iter().filter_map(|n| node_idx.get(n.as_str())) {
                w.per_node[n as usize].push(Window { resv: k as u16, start: r.start_ms, end: r.end_ms });
                w.nodes[k].push(n);
            }
        }
        w.per_node.iter_mut().for_each(|l| l.sort_by_key(|x| x.start));
        w.first =
            (w.per_node.iter()).map(|l| l.first().map_or((i64::MAX, 0), |x| (x.start, x.resv))).collect();
        w.held = list.iter().map(|r| r.licenses.iter().map(|(n, c)| (n.as_str(), *c)).collect()).collect();
        for (resv, lic) in running {
            let Some(&k) = w.by_name.get(resv) else { continue };
            for (name, used) in lic {
                if let Some(h) = w.held[k as usize].iter_mut().find(|(n, _)| n == name) {
                    h.1 = h.1.saturating_sub(*used);
                }
            }
        }
        w
    }

    /// Turns the reservations' `name(layer):N` holds into charges on `hres`'s
    /// layers; `members` are the running jobs' reservations and charges.
    pub fn hold_hres<'j>(
        &mut self,
        hres: &[HresResource],
        members: impl Iterator<Item = (&'j str, &'j [LicenseAlloc])>,
    ) {
        let mut used: HashMap<(u16, &str, &str), u64> = HashMap::new();
        for (resv, charged) in members {
            let Some(&k) = self.by_name.get(resv) else { continue };
            for a in charged {
                for (layer, amount) in &a.layers {
                    *used.entry((k, a.name.as_str(), layer.as_str())).or_default() += amount;
                }
            }
        }
        for (k, r) in self.list.iter().enumerate() {
            // Only reservations not yet over are in `by_name`.
            if self.by_name.get(r.name.as_str()) != Some(&(k as u16)) {
                continue;
            }
            for (name, count) in &r.licenses {
                let (rn, Some(layer)) = split_layer(name) else { continue };
                let Some(res) = hres.iter().find(|h| h.name == rn) else { continue };
                let Some(at) = res.layer(layer) else { continue };
                let spent = used.get(&(k as u16, rn, layer)).copied().unwrap_or(0);
                let left = u64::from(*count).saturating_sub(spent);
                if left == 0 {
                    continue;
                }
                let layers =
                    crate::resv::hold_chain(res, at).map(|j| (res.layers[j].name.clone(), left)).collect();
                self.hres.push((k as u16, LicenseAlloc { name: rn.to_string(), count: *count, layers }));
            }
        }
    }

    /// The hierarchical holds that apply to a job of `member` running from
    /// now until `end` and asking for `asks`: reservation and charge (a copy:
    /// the pass charges it while it tries the job).
    pub fn hres_holds(
        &self,
        member: Option<u16>,
        now: i64,
        end: i64,
        asks: &[(String, u32)],
    ) -> Vec<(u16, LicenseAlloc)> {
        (self.hres.iter())
            .filter(|(k, a)| {
                let r = &self.list[*k as usize];
                Some(*k) != member && r.overlaps(now, end) && asks.iter().any(|(n, _)| *n == a.name)
            })
            .map(|(k, a)| (*k, a.clone()))
            .collect()
    }

    /// The reservation named, if it has not ended.
    pub fn named(&self, name: &str) -> Option<(u16, &'a Resv)> {
        self.by_name.get(name).map(|&k| (k, &self.list[k as usize]))
    }

    /// The window that keeps a job ending at `end` off node `i` (a job in
    /// reservation `member` is not kept off by its own).
    pub fn blocks(&self, i: u32, member: Option<u16>, end: i64) -> Option<u16> {
        self.blocks_from(i, member, end).map(|(k, _)| k)
    }

    /// As [`Windows::blocks`], with the start of the window that blocks.
    pub fn blocks_from(&self, i: u32, member: Option<u16>, end: i64) -> Option<(u16, i64)> {
        if member.is_none() {
            // The earliest window keeps it out if any does.
            let &(start, k) = self.first.get(i as usize)?;
            return (end > start).then_some((k, start));
        }
        let l = self.per_node.get(i as usize)?;
        l.iter().find(|w| Some(w.resv) != member && end > w.start).map(|w| (w.resv, w.start))
    }

    /// Whether node `i` is in reservation `k`.
    pub fn holds(&self, i: u32, k: u16) -> bool {
        self.per_node.get(i as usize).is_some_and(|l| l.iter().any(|w| w.resv == k))
    }

    /// Nodes in a window now, and the reservation holding each (the first).
    pub fn walled(&self, now: i64) -> impl Iterator<Item = (u32, u16)> + '_ {
        (self.per_node.iter().enumerate())
            .filter_map(move |(i, l)| l.iter().find(|w| w.start <= now).map(|w| (i as u32, w.resv)))
    }

    /// Reservation `k`'s nodes (indexes into the pass's nodes).
    pub fn nodes_of(&self, k: u16) -> &[u32] {
        self.nodes.get(k as usize).map_or(&[], Vec::as_slice)
    }

    /// The windows on node `i` a job of `member` is kept out of: start and end.
    pub fn spans(&self, i: u32, member: Option<u16>) -> impl Iterator<Item = (i64, i64)> + '_ {
        let l = self.per_node.get(i as usize).map_or(&[][..], Vec::as_slice);
        l.iter().filter(move |w| Some(w.resv) != member).map(|w| (w.start, w.end))
    }

    /// Whether a window not of `member` begins before `end`: one that could
    /// keep a job of `member` running until `end` off its nodes.
    pub fn any_before(&self, member: Option<u16>, end: i64) -> bool {
        self.by_name.values().any(|&k| Some(k) != member && self.list[k as usize].start_ms < end)
    }

    /// Whether any node has a window.
    pub fn any(&self) -> bool {
        !self.by_name.is_empty()
    }

    /// Nodes with a window, for the backfill estimate's re-checks.
    pub fn nodes_with_windows(&self) -> impl Iterator<Item = u32> + '_ {
        self.per_node.iter().enumerate().filter(|(_, l)| !l.is_empty()).map(|(i, _)| i as u32)
    }

    /// When the windows that would keep a job of `span` ms starting at `t`
    /// off node `i` are all over: `t` itself when none does.
    pub fn free_from(&self, i: u32, member: Option<u16>, t: i64, span: i64) -> i64 {
        let Some(l) = self.per_node.get(i as usize) else { return t };
        let mut at = t;
        for w in l.iter().filter(|w| Some(w.resv) != member) {
            if at.saturating_add(span) > w.start && at < w.end {
                at = w.end;
            }
        }
        at
    }

    /// How many of licence `name` reservations hold out from a job of
    /// `member` running from now until `end`, and the first that does.
    pub fn held_licenses(&self, name: &str, member: Option<u16>, now: i64, end: i64) -> (u32, Option<u16>) {
        let (mut sum, mut first) = (0u32, None);
        let holding = (self.held.iter().enumerate()).filter(|(k, _)| {
            Some(*k as u16) != member && self.list[*k].overlaps(now, end) && self.list[*k].end_ms > now
        });
        for (k, l) in holding {
            for (_, c) in l.iter().filter(|(n, c)| *n == name && *c > 0) {
                sum = sum.saturating_add(*c);
                first = first.or(Some(k as u16));
            }
        }
        (sum, first)
    }
}
