//! Licenses inside a pass: plain counters and hierarchical resources (HRES).
//! Pure: usage is rebuilt from what running jobs were charged, so a restart
//! or a layer whose nodes changed releases exactly what each job took.
//!
//! - Mode 1: enough on any one layer over the job's nodes; the job is charged
//!   on one (an infinite layer first, else the one with fewest nodes).
//! - Mode 2: enough on every layer over any of the job's nodes; charged on each.
//! - Mode 3: charged per node on its leaf and summed up to the root; every
//!   layer stays within its count minus its base usage.
//!
//! A node under no layer of a resource cannot serve it. Placement keeps to
//! nodes that could serve each resource alone; Mode 3's sum over several
//! nodes is checked once the nodes are picked, and on overflow the layer
//! keeps only the picked nodes it has room for while placement tries again.

use super::job::Job;
use super::reason::{Facts, Reason, ReasonCode as C};
use crate::model::{HresMode, HresResource};
use spur_vocab::licenses::LicenseAlloc;
use std::collections::HashMap;

struct Res<'a> {
    r: &'a HresResource,
    used: Vec<u64>,
    /// Per snapshot node: the layers over it (Mode 3: its leaf, then each ancestor).
    over: Vec<Vec<u16>>,
    /// Per layer: its ancestors, nearest first (Mode 3).
    up: Vec<Vec<u16>>,
    /// Leaves first, then resources.yaml order: how `LicensesAlloc` lists layers.
    print_order: Vec<u16>,
}

/// Whether a node can serve an ask of a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Serve {
    Ok,
    /// Not enough left, or no layer over the node.
    Short,
    /// Only disabled layers could serve it.
    Off,
}

pub(crate) struct Counters<'a> {
    plain: HashMap<&'a str, u32>,
    res: Vec<Res<'a>>,
    by_name: HashMap<&'a str, usize>,
}

impl<'a> Counters<'a> {
    /// `totals` are the plain licenses' counts; `running` the jobs holding licenses now.
    pub(crate) fn new(
        totals: &'a std::collections::BTreeMap<String, u32>,
        hres: &'a [HresResource],
        node_idx: &HashMap<&str, u32>,
        n_nodes: usize,
        running: impl Iterator<Item = &'a Job>,
    ) -> Counters<'a> {
        let mut res = Vec::with_capacity(hres.len());
        for r in hres {
            let mut over = vec![Vec::new(); n_nodes];
            let layer_at: HashMap<&str, usize> =
                r.layers.iter().enumerate().map(|(i, l)| (l.name.as_str(), i)).collect();
            let up: Vec<Vec<u16>> = (0..r.layers.len())
                .map(|i| {
                    let (mut chain, mut at) = (vec![], i);
                    while let Some(p) = r.layers[at].parent.as_deref().and_then(|p| layer_at.get(p)) {
                        if chain.len() > r.layers.len() {
                            break;
                        }
                        chain.push(*p as u16);
                        at = *p;
                    }
                    chain
                })
                .collect();
            for (i, l) in r.layers.iter().enumerate() {
                if !r.is_leaf(i) {
                    continue;
                }
                for n in l.nodes.iter().filter_map(|n| node_idx.get(n.as_str())) {
                    let o = &mut over[*n as usize];
                    o.push(i as u16);
                    if r.mode == HresMode::Three {
                        o.extend(&up[i]);
                    }
                }
            }
            let mut print_order: Vec<u16> = (0..r.layers.len() as u16).collect();
            print_order.sort_by_key(|&i| std::cmp::Reverse(up[i as usize].len()));
            res.push(Res { r, used: vec![0; r.layers.len()], over, up, print_order });
        }
        let by_name = hres.iter().enumerate().map(|(i, r)| (r.name.as_str(), i)).collect();
        let mut c = Counters { plain: totals.iter().map(|(k, v)| (k.as_str(), *v)).collect(), res, by_name };
        for job in running {
            // What a job was charged is the record; a job without one (started
            // before charges were kept, or built by a test) holds its plain asks.
            if !job.charged.is_empty() {
                c.take(&job.charged);
                continue;
            }
            for (name, n) in &job.licenses {
                if let Some(free) = c.plain.get_mut(name.as_str()) {
                    *free = free.saturating_sub(*n);
                }
            }
        }
        c
    }

    /// Charges allocations. A layer that no longer exists is skipped: nothing can be taken from it.
    pub(crate) fn take(&mut self, allocs: &[LicenseAlloc]) {
        self.apply(allocs, true);
    }

    /// Gives back what allocations took: the inverse of [`Counters::take`],
    /// to weigh whether evicting their holders would make room.
    pub(crate) fn release(&mut self, allocs: &[LicenseAlloc]) {
        self.apply(allocs, false);
    }

    fn apply(&mut self, allocs: &[LicenseAlloc], take: bool) {
        let step = |v: u64, by: u64| if take { v.saturating_sub(by) } else { v.saturating_add(by) };
        for a in allocs {
            let Some(&ri) = self.by_name.get(a.name.as_str()) else {
                // Plain counters hold what is free; layers hold what is used.
                if a.layers.is_empty()
                    && let Some(free) = self.plain.get_mut(a.name.as_str())
                {
                    *free = step(u64::from(*free), u64::from(a.count)).min(u64::from(u32::MAX)) as u32;
                }
                continue;
            };
            let res = &mut self.res[ri];
            for (layer, amount) in &a.layers {
                if let Some(i) = res.r.layer(layer) {
                    res.used[i] = if take {
                        res.used[i].saturating_add(*amount)
                    } else {
                        res.used[i].saturating_sub(*amount)
                    };
                }
            }
        }
    }

    /// The Mode 3 resource the job asks for, if any (submit allows one).
    pub(crate) fn mode3_of(&self, job: &Job) -> Option<&'a str> {
        job.licenses.iter().find_map(|(name, _)| {
            let res = &self.res[*self.by_name.get(name.as_str())?];
            (res.r.mode == HresMode::Three).then_some(res.r.name.as_str())
        })
    }

    /// The names of a resource's layers over any of `nodes`, in resources.yaml order.
    pub(crate) fn layers_over(&self, name: &str, nodes: &[u32]) -> Vec<String> {
        let Some(res) = self.by_name.get(name).map(|&i| &self.res[i]) else { return vec![] };
        let mut hit = vec![false; res.r.layers.len()];
        for &n in nodes {
            res.over.get(n as usize).into_iter().flatten().for_each(|&i| hit[i as usize] = true);
        }
        (0..hit.len()).filter(|&i| hit[i]).map(|i| res.r.layers[i].name.clone()).collect()
    }

    /// Usage per layer of a resource, in resources.yaml order.
    #[cfg(test)]
    pub(crate) fn used(&self, name: &str) -> Option<&[u64]> {
        self.by_name.get(name).map(|&i| self.res[i].used.as_slice())
    }

    /// Free on a layer; None is infinite.
    fn free(res: &Res, i: usize) -> Option<u64> {
        res.r.layers[i].total().map(|t| t.saturating_sub(res.used[i]))
    }

    fn enabled(res: &Res, i: usize) -> bool {
        !res.r.disabled && !res.r.layers[i].disabled
    }

    fn serve(res: &Res, node: usize, asks: u64) -> Serve {
        let over = &res.over[node];
        if over.is_empty() {
            return Serve::Short;
        }
        let fits = |i: usize| Self::free(res, i).is_none_or(|f| f >= asks);
        match res.r.mode {
            HresMode::One => {
                let live = |i: &&u16| res.r.layers[**i as usize].count != 0;
                if over.iter().any(|&i| Self::enabled(res, i as usize) && fits(i as usize)) {
                    Serve::Ok
                } else if over.iter().filter(live).any(|&i| Self::enabled(res, i as usize)) {
                    Serve::Short
                } else if over.iter().any(|i| live(&i)) {
                    Serve::Off
                } else {
                    Serve::Short
                }
            }
            HresMode::Two | HresMode::Three => {
                if over.iter().any(|&i| !Self::enabled(res, i as usize)) {
                    Serve::Off
                } else if over.iter().all(|&i| fits(i as usize)) {
                    Serve::Ok
                } else {
                    Serve::Short
                }
            }
        }
    }

    /// What is left of a plain licence (None for a hierarchical resource or an unknown name).
    pub(crate) fn plain_free(&self, name: &str) -> Option<u32> {
        self.plain.get(name).copied()
    }

    /// The checks that need no nodes: plain counts, a disabled resource, and
    /// a resource with nothing left anywhere.
    pub(crate) fn check(&self, job: &Job) -> Result<(), Reason> {
        for (name, asks) in &job.licenses {
            let Some(&ri) = self.by_name.get(name.as_str()) else {
                let free = self.plain.get(name.as_str()).copied().unwrap_or(0);
                if free < *asks {
                    let facts = Facts::License { name: name.clone(), free, asks: *asks };
                    return Err(Reason::new(C::Licenses, facts));
                }
                continue;
            };
            let res = &self.res[ri];
            if res.r.disabled {
                return Err(disabled(name, true));
            }
            let asks = u64::from(*asks);
            let roots = (0..res.r.layers.len()).filter(|&i| res.up[i].is_empty() && Self::enabled(res, i));
            let most = roots.filter_map(|i| Self::free(res, i).map(|f| (f, i))).max();
            // Mode 3 charges the root at least once; Mode 1 and 2 need one layer with enough.
            let short = match res.r.mode {
                HresMode::Three => most.filter(|(f, _)| *f < asks),
                _ => {
                    let best = (0..res.r.layers.len())
                        .filter(|&i| Self::enabled(res, i))
                        .map(|i| (Self::free(res, i).unwrap_or(u64::MAX), i))
                        .max();
                    best.filter(|(f, _)| *f < asks)
                }
            };
            if let Some((free, i)) = short {
                return Err(short_reason(name, Some(&res.r.layers[i].name), free, asks));
            }
        }
        Ok(())
    }

    /// Adds to `excluded` (sorted) the candidate nodes that cannot serve each
    /// of the job's resources, or says why too few are left.
    pub(crate) fn exclude(
        &self,
        job: &Job,
        candidates: &[u32],
        required: &[u32],
        excluded: &mut Vec<u32>,
        need: usize,
    ) -> Result<(), Reason> {
        for (name, asks) in &job.licenses {
            let Some(&ri) = self.by_name.get(name.as_str()) else { continue };
            let res = &self.res[ri];
            let (mut ok, mut live, mut out) = (0usize, 0usize, vec![]);
            for &n in candidates.iter().filter(|n| excluded.binary_search(n).is_err()) {
                match Self::serve(res, n as usize, u64::from(*asks)) {
                    Serve::Ok => (ok, live) = (ok + 1, live + 1),
                    Serve::Short => {
                        live += 1;
                        out.push(n)
                    }
                    Serve::Off => out.push(n),
                }
            }
            let worst = required.iter().map(|&n| Self::serve(res, n as usize, u64::from(*asks))).max();
            if live < need || worst == Some(Serve::Off) {
                return Err(disabled(name, false));
            }
            if ok < need || worst == Some(Serve::Short) {
                return Err(short_reason(name, None, 0, u64::from(*asks)));
            }
            excluded.extend(out);
            excluded.sort_unstable();
            excluded.dedup();
        }
        Ok(())
    }

    /// What the job takes on `picked` nodes, or why the nodes together are not enough (Mode 3 sums).
    pub(crate) fn fit(&self, job: &Job, picked: &[u32]) -> Result<Vec<LicenseAlloc>, Reason> {
        let mut out = Vec::with_capacity(job.licenses.len());
        for (name, count) in &job.licenses {
            let mut alloc = LicenseAlloc { name: name.clone(), count: *count, layers: vec![] };
            if let Some(&ri) = self.by_name.get(name.as_str()) {
                let res = &self.res[ri];
                let charge = self.charge(res, picked, u64::from(*count));
                for &i in &res.print_order {
                    let i = i as usize;
                    let Some(&amount) = charge.get(&i) else { continue };
                    if let Some(free) = Self::free(res, i).filter(|f| *f < amount) {
                        return Err(short_reason(name, Some(&res.r.layers[i].name), free, amount));
                    }
                    alloc.layers.push((res.r.layers[i].name.clone(), amount));
                }
                if alloc.layers.is_empty() {
                    return Err(short_reason(name, None, 0, u64::from(*count)));
                }
            }
            out.push(alloc);
        }
        Ok(out)
    }

    /// After a Mode 3 overflow: each overflowing layer keeps only as many of
    /// the picked nodes under it as it has room for, and its other nodes are
    /// added to `keep_off`. False when nothing new could be kept off.
    pub(crate) fn narrow(&self, job: &Job, picked: &[u32], keep_off: &mut Vec<u32>) -> bool {
        let before = keep_off.len();
        // Named nodes are the job's to choose; no other placement is tried.
        if !job.nodelist.is_empty() {
            return false;
        }
        for (name, count) in &job.licenses {
            let Some(res) = self.by_name.get(name.as_str()).map(|&i| &self.res[i]) else { continue };
            let asks = u64::from(*count).max(1);
            if res.r.mode != HresMode::Three {
                continue;
            }
            for (i, amount) in self.charge(res, picked, asks) {
                let Some(free) = Self::free(res, i).filter(|f| *f < amount) else { continue };
                let under = |n: u32| res.over[n as usize].contains(&(i as u16));
                let kept: Vec<u32> =
                    picked.iter().copied().filter(|n| under(*n)).take((free / asks) as usize).collect();
                keep_off.extend((0..res.over.len() as u32).filter(|n| under(*n) && !kept.contains(n)));
            }
        }
        // A set, kept sorted: what grew it is what is new.
        keep_off.sort_unstable();
        keep_off.dedup();
        keep_off.len() > before
    }

    fn charge(&self, res: &Res, picked: &[u32], asks: u64) -> HashMap<usize, u64> {
        let mut charge: HashMap<usize, u64> = HashMap::new();
        match res.r.mode {
            HresMode::One => {
                let fits = |i: usize| Self::enabled(res, i) && Self::free(res, i).is_none_or(|f| f >= asks);
                let best = (picked.iter().flat_map(|&n| res.over[n as usize].iter()))
                    .map(|&i| i as usize)
                    .filter(|&i| fits(i))
                    .min_by_key(|&i| {
                        (res.r.layers[i].count != crate::model::INFINITE, res.r.layers[i].nodes.len(), i)
                    });
                if let Some(i) = best {
                    charge.insert(i, asks);
                }
            }
            HresMode::Two => {
                for &i in picked.iter().flat_map(|&n| res.over[n as usize].iter()) {
                    charge.insert(i as usize, asks);
                }
            }
            HresMode::Three => {
                for &i in picked.iter().flat_map(|&n| res.over[n as usize].iter()) {
                    *charge.entry(i as usize).or_default() += asks;
                }
            }
        }
        charge
    }
}

fn disabled(name: &str, whole: bool) -> Reason {
    Reason::new(C::HRESDisabled, Facts::HresDisabled { name: name.into(), whole })
}

fn short_reason(name: &str, layer: Option<&str>, free: u64, asks: u64) -> Reason {
    Reason::new(C::Licenses, Facts::Hres { name: name.into(), layer: layer.map(Into::into), free, asks })
}

/// Each layer's usage, in resources.yaml order, summed from what running jobs
/// were charged (`scontrol show license`, the console).
pub fn usage<'a>(res: &HresResource, charged: impl Iterator<Item = &'a LicenseAlloc>) -> Vec<u64> {
    let mut used = vec![0u64; res.layers.len()];
    for a in charged.filter(|a| a.name == res.name) {
        for (layer, amount) in &a.layers {
            if let Some(i) = res.layer(layer) {
                used[i] = used[i].saturating_add(*amount);
            }
        }
    }
    used
}
