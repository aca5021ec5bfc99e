//! Nodes during a pass: free resources as starts consume them, each
//! partition's nodes in weight order with a skip list past nodes that can
//! take nothing more, picking nodes for a job, and the backfill reservation's
//! earliest start.

use super::SchedNode;
use super::job::{JobId, Shape};
use super::provision::Exclusive;
use super::windows::Windows;

#[derive(Debug, Clone)]
pub(crate) struct NodeState {
    pub cpus: u32,
    pub mem: u64,
    pub gpus: u64,
    pub free_cpus: u32,
    pub free_mem: u64,
    pub free_gpus: u64,
    pub jobs: u32,
    /// Held by an exclusive job.
    pub exclusive: bool,
    pub up: bool,
    pub weight: u32,
    /// The start of the earliest reservation holding this node; `i64::MAX` when none.
    pub reserved_from: i64,
    pub reserved_by: JobId,
    /// Capacity a suspended job gave up, kept for its preemptor (or for its
    /// own resume once the preemptor is gone).
    pub held_for: Option<JobId>,
    /// Placement order before weight: the lowest `costPerHour` of the node's definitions.
    pub cost: f64,
    /// The strictest `exclusive` of the node's definitions.
    pub pool_excl: Exclusive,
    /// The workflow of the jobs on an `exclusive: workflow` node.
    pub workflow: u64,
    /// In an admin reservation's window now: no job outside it may start
    /// here this pass, so partition scans skip it (its own jobs list its nodes).
    pub walled: bool,
    /// A borrowed node's end; `i64::MAX` for a node of this cluster.
    pub expires: i64,
    /// A borrowed node whose agent has not registered yet.
    pub booting: bool,
}

impl NodeState {
    pub fn new(n: &SchedNode) -> NodeState {
        NodeState {
            cpus: n.cpus,
            mem: n.mem_mb,
            gpus: n.gpus,
            free_cpus: n.free_cpus.min(n.cpus),
            free_mem: n.free_mem_mb.min(n.mem_mb),
            free_gpus: n.free_gpus.min(n.gpus),
            jobs: 0,
            exclusive: false,
            up: n.schedulable,
            weight: n.weight,
            reserved_from: i64::MAX,
            reserved_by: 0,
            held_for: None,
            cost: 0.0,
            pool_excl: Exclusive::None,
            workflow: 0,
            walled: false,
            expires: n.expires_ms.unwrap_or(i64::MAX),
            booting: n.booting,
        }
    }

    /// Whether the node's definitions let one more job of `s` share it.
    fn pool_allows(&self, s: &Shape) -> bool {
        match self.pool_excl {
            Exclusive::None => true,
            Exclusive::Job => self.jobs == 0,
            Exclusive::Workflow => self.jobs == 0 || (s.workflow != 0 && s.workflow == self.workflow),
        }
    }

    /// Nothing more fits for the rest of the pass: within a pass resources only shrink.
    pub fn closed(&self) -> bool {
        !self.up
            || self.walled
            || self.exclusive
            || self.free_cpus == 0
            || (self.pool_excl == Exclusive::Job && self.jobs > 0)
    }

    fn empty(&self) -> bool {
        self.jobs == 0
            && self.free_cpus == self.cpus
            && self.free_mem == self.mem
            && self.free_gpus == self.gpus
    }

    /// Room for one node of `s` now, reservations aside.
    pub fn fits(&self, s: &Shape) -> bool {
        self.up
            && !self.exclusive
            && self.pool_allows(s)
            && if s.exclusive {
                self.empty() && self.cpus >= s.cpus && self.mem >= s.mem_mb && self.gpus >= s.gpus
            } else {
                self.free_cpus >= s.cpus && self.free_mem >= s.mem_mb && self.free_gpus >= s.gpus
            }
    }

    pub fn take(&mut self, s: &Shape) {
        if self.jobs == 0 {
            self.workflow = s.workflow;
        }
        self.jobs += 1;
        if s.exclusive {
            self.exclusive = true;
            (self.free_cpus, self.free_mem, self.free_gpus) = (0, 0, 0);
        } else {
            self.free_cpus = self.free_cpus.saturating_sub(s.cpus);
            self.free_mem = self.free_mem.saturating_sub(s.mem_mb);
            self.free_gpus = self.free_gpus.saturating_sub(s.gpus);
        }
    }

    pub fn release(&mut self, s: &Shape) {
        self.jobs = self.jobs.saturating_sub(1);
        if s.exclusive {
            self.exclusive = false;
        }
        if self.jobs == 0 {
            self.workflow = 0;
            (self.free_cpus, self.free_mem, self.free_gpus) = (self.cpus, self.mem, self.gpus);
        } else if !s.exclusive {
            self.free_cpus = self.free_cpus.saturating_add(s.cpus).min(self.cpus);
            self.free_mem = self.free_mem.saturating_add(s.mem_mb).min(self.mem);
            self.free_gpus = self.free_gpus.saturating_add(s.gpus).min(self.gpus);
        }
    }
}

/// A running (or just started) job's footprint, for the reservation estimate.
#[derive(Debug, Clone)]
pub(crate) struct Alloc {
    pub nodes: Vec<u32>,
    pub shape: Shape,
    /// `i64::MAX` for an unbounded job: it never frees its nodes.
    pub end_ms: i64,
}

/// A partition's nodes in placement order (lowest weight first).
#[derive(Debug, Clone)]
pub(crate) struct PartNodes {
    pub order: Vec<u32>,
    /// Skip list over `order`: `next[i] == i` while position i may still take
    /// work, else a pointer further on (path-compressed), so full nodes cost
    /// nothing after the first look.
    next: Vec<u32>,
    pub member: Vec<bool>,
}

impl PartNodes {
    pub fn new(mut members: Vec<u32>, nodes: &[NodeState]) -> PartNodes {
        // Cheapest definition first, then Slurm's weight (costs are finite and never negative).
        let key = |i: &u32| nodes.get(*i as usize).map_or((0, 0), |n| (n.cost.to_bits(), n.weight));
        members.sort_by_key(|i| (key(i), *i));
        members.dedup();
        let mut member = vec![false; nodes.len()];
        members.iter().for_each(|i| member[*i as usize] = true);
        let next = (0..=members.len() as u32).collect();
        PartNodes { order: members, next, member }
    }

    fn find(&mut self, i: usize) -> usize {
        let mut root = i;
        while (self.next[root] as usize) != root {
            root = self.next[root] as usize;
        }
        let mut cur = i;
        while cur != root {
            let nx = self.next[cur] as usize;
            self.next[cur] = root as u32;
            cur = nx;
        }
        root
    }
}

/// Per-pass scratch marking the nodes picked for the job being placed.
#[derive(Debug, Clone)]
pub(crate) struct Marks {
    stamp: Vec<u32>,
    cur: u32,
}

impl Marks {
    pub fn new(n: usize) -> Marks {
        Marks { stamp: vec![0; n], cur: 0 }
    }

    pub fn next_job(&mut self) {
        self.cur = self.cur.wrapping_add(1);
        if self.cur == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.cur = 1;
        }
    }
}

/// The nodes picked so far for one job, and those that fit but are reserved.
#[derive(Debug)]
pub(crate) struct Pick {
    pub nodes: Vec<u32>,
    pub reserved: usize,
    pub reserved_by: Option<JobId>,
    /// A listed node had no room even ignoring reservations.
    pub listed_busy: bool,
    /// Nodes that fit but are in a reservation's window the job may not use, and the first such reservation.
    pub in_window: usize,
    pub window: Option<u16>,
    /// The latest of the window starts and reservation starts that kept
    /// nodes from the job: any end after it (and up to the job's) meets the
    /// same holes, which lets the pass's memory answer shorter jobs too.
    pub lo: i64,
    /// Borrowed nodes the job would outlive: a shorter job of its shape may fit them.
    pub expired: u32,
}

/// What a job needs from one node and until when.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Want<'a> {
    pub job: JobId,
    pub shape: Shape,
    pub end_ms: i64,
    pub excluded: &'a [u32],
    /// The reservation the job runs in: only its nodes, and its own window is no hole.
    pub member: Option<u16>,
    /// How long the job runs, for the backfill estimate's windows (`i64::MAX`: no limit).
    pub span: i64,
    pub windows: &'a Windows<'a>,
}

impl Default for Pick {
    fn default() -> Pick {
        Pick {
            nodes: Vec::new(),
            reserved: 0,
            reserved_by: None,
            listed_busy: false,
            in_window: 0,
            window: None,
            lo: i64::MIN,
            expired: 0,
        }
    }
}

impl Pick {
    fn consider(&mut self, nodes: &[NodeState], i: u32, want: &Want<'_>, marks: &mut Marks) -> bool {
        let n = &nodes[i as usize];
        let held = n.held_for.is_some_and(|h| h != want.job);
        if marks.stamp[i as usize] == marks.cur || held || !n.fits(&want.shape) {
            return false;
        }
        marks.stamp[i as usize] = marks.cur;
        if want.member.is_some_and(|k| !want.windows.holds(i, k)) {
            return false;
        }
        if let Some((k, start)) = want.windows.blocks_from(i, want.member, want.end_ms) {
            self.in_window += 1;
            self.window.get_or_insert(k);
            self.lo = self.lo.max(start);
            return false;
        }
        // A borrowed node is gone at its expiry: a job ending by then may still fit it.
        if want.end_ms > n.expires {
            self.lo = self.lo.max(n.expires);
            self.expired += 1;
            return false;
        }
        if want.end_ms <= n.reserved_from {
            self.nodes.push(i);
            true
        } else {
            self.reserved += 1;
            self.reserved_by.get_or_insert(n.reserved_by);
            self.lo = self.lo.max(n.reserved_from);
            false
        }
    }

    /// Named nodes (`--nodelist`, or a group's occupied nodes to pack onto), up to `need`.
    pub fn listed(
        &mut self,
        nodes: &[NodeState],
        list: &[u32],
        want: &Want<'_>,
        need: usize,
        marks: &mut Marks,
    ) {
        for &i in list {
            if self.nodes.len() >= need {
                break;
            }
            let before = (self.nodes.len(), self.reserved);
            if marks.stamp[i as usize] != marks.cur
                && !self.consider(nodes, i, want, marks)
                && (self.nodes.len(), self.reserved) == before
            {
                self.listed_busy = true;
            }
        }
    }

    /// Any other nodes of the partition, in weight order, up to `need`.
    pub fn scan(
        &mut self,
        nodes: &[NodeState],
        part: &mut PartNodes,
        want: &Want<'_>,
        need: usize,
        marks: &mut Marks,
    ) {
        let mut pos = part.find(0);
        while pos < part.order.len() && self.nodes.len() < need {
            let i = part.order[pos];
            if nodes[i as usize].closed() {
                part.next[pos] = pos as u32 + 1;
            } else if want.excluded.binary_search(&i).is_err() {
                self.consider(nodes, i, want, marks);
            }
            pos = part.find(pos + 1);
        }
    }
}

/// When a blocked job could start if nothing else started, and on which
/// nodes: release running jobs' nodes in end-time order until it fits.
/// None when it never fits on what is known (unbounded jobs never end).
pub(crate) fn earliest_start(
    nodes: &[NodeState],
    part: &PartNodes,
    allocs: &[Alloc],
    want: &Want<'_>,
    required: &[u32],
    now_ms: i64,
) -> Option<(i64, Vec<u32>)> {
    let (shape, excluded, job) = (&want.shape, want.excluded, want.job);
    let windows = want.windows;
    let eligible = |i: u32| {
        let n = &nodes[i as usize];
        part.member[i as usize]
            && n.up
            && n.held_for.is_none_or(|h| h == job)
            && excluded.binary_search(&i).is_err()
            && want.member.is_none_or(|k| windows.holds(i, k))
            // A borrowed node the job would outlive even if it started now never serves it.
            && now_ms.saturating_add(want.span) <= n.expires
    };
    // A reservation's window is a hole in its nodes' timelines: at each
    // time tried, a node with windows fits only if the job would run clear of them.
    let win_nodes: Vec<u32> = windows.nodes_with_windows().filter(|&i| eligible(i)).collect();
    let clear = |i: u32, t: i64| windows.free_from(i, want.member, t, want.span) == t;
    let mut sim: Vec<NodeState> = nodes.to_vec();
    let mut fit: Vec<bool> =
        sim.iter().enumerate().map(|(i, n)| eligible(i as u32) && n.fits(shape)).collect();
    let mut fit_count = fit.iter().filter(|f| **f).count();
    // When a window node's answer may change: once at the start, then where
    // a window begins to matter (its start less the job's run) and where it ends.
    let mut turns: Vec<(i64, u32)> = win_nodes.iter().map(|&n| (now_ms, n)).collect();
    for &n in &win_nodes {
        for (from, to) in windows.spans(n, want.member) {
            turns.push((from.saturating_sub(want.span).saturating_add(1).max(now_ms), n));
            turns.push((to.max(now_ms), n));
        }
    }
    turns.sort_unstable();
    let mut turned = 0;
    let mut recheck = |fit: &mut Vec<bool>, fit_count: &mut usize, sim: &[NodeState], t: i64| {
        while let Some(&(_, n)) = turns.get(turned).filter(|(at, _)| *at <= t) {
            turned += 1;
            let now_fits = sim[n as usize].fits(shape) && clear(n, t);
            match (fit[n as usize], now_fits) {
                (false, true) => *fit_count += 1,
                (true, false) => *fit_count -= 1,
                _ => {}
            }
            fit[n as usize] = now_fits;
        }
    };
    recheck(&mut fit, &mut fit_count, &sim, now_ms);
    let required_fit = |fit: &[bool]| required.iter().all(|r| fit[*r as usize]);
    let choose = |fit: &[bool]| {
        let mut out: Vec<u32> = required.to_vec();
        let rest = part.order.iter().filter(|i| fit[**i as usize] && !required.contains(i));
        out.extend(rest.take((shape.nodes as usize).saturating_sub(required.len())));
        out
    };
    if fit_count >= shape.nodes as usize && required_fit(&fit) {
        return Some((now_ms, choose(&fit)));
    }
    let mut events: Vec<(i64, usize)> = allocs
        .iter()
        .enumerate()
        .filter(|(_, a)| a.end_ms < i64::MAX && a.nodes.iter().any(|n| part.member[*n as usize]))
        .map(|(k, a)| (a.end_ms, k))
        .collect();
    // A window's end is a time to try too (no job's nodes to release: usize::MAX).
    for &n in &win_nodes {
        let end = windows.free_from(n, want.member, now_ms, want.span);
        if end > now_ms && end < i64::MAX {
            events.push((end, usize::MAX));
        }
    }
    events.sort_unstable();
    let mut k = 0;
    while k < events.len() {
        let t = events[k].0;
        while k < events.len() && events[k].0 == t {
            let Some(a) = allocs.get(events[k].1) else {
                k += 1;
                continue;
            };
            for &n in &a.nodes {
                let node = &mut sim[n as usize];
                node.release(&a.shape);
                let now_fits = eligible(n) && node.fits(shape) && clear(n, t);
                match (fit[n as usize], now_fits) {
                    (false, true) => fit_count += 1,
                    (true, false) => fit_count -= 1,
                    _ => {}
                }
                fit[n as usize] = now_fits;
            }
            k += 1;
        }
        recheck(&mut fit, &mut fit_count, &sim, t);
        if fit_count >= shape.nodes as usize && required_fit(&fit) {
            return Some((t.max(now_ms), choose(&fit)));
        }
    }
    None
}
