//! Idle-fill's reclaim half (spur-idle-fill.md, "Reclaim" and "Priority
//! inside the opportunistic tier"): a job with a quota claim that finds no
//! room takes back nodes from opportunistic runs (borrowed runs, and jobs
//! of an `idlefillpreemptable` QOS) before preemption is tried. The set is
//! all or nothing: it must provably make the job placeable, using only
//! nodes every job of which is reclaimable; the cheapest runs (by QOS
//! priority) go first and no more than needed. preempt_mode, the gap, the
//! allow-list and preempt_exempt_time are not consulted; only the exempt
//! window (doubling per reclaim of the run, capped at an hour) guards a run.
//! The fate is always requeue.

use super::Preemption;
use super::job::{Job, JobId, JobState, Shape};
use super::loan::ReclaimTier;
pub use super::loan::{EXEMPT_CAP_SECS, ReclaimChecks, exempt_window};
use super::nodes::NodeState;
use super::pass_state::{Pass, secs};
use spur_vocab::names::PreemptMode;
use std::rc::Rc;

impl<'a> Pass<'a> {
    /// The QOS priority a run stands at within the opportunistic tier.
    fn tier_priority(&self, scope: u32) -> i64 {
        self.scopes.list[scope as usize].qos.map_or(0, |q| q.priority)
    }

    /// Running job `r` is opportunistic (borrowed, or in an idlefillpreemptable QOS).
    fn opportunistic(&self, r: usize) -> bool {
        let run = &self.snap.jobs[self.running[r].job];
        run.borrowed
            || self.scopes.list[self.running[r].scope as usize].qos.is_some_and(|q| q.idle_fill_preemptable)
    }

    /// The runs reclaimable for claimants of tier `below` (pool aside),
    /// cheapest first: found once a pass per tier, since what a run is
    /// depends on the claimant only through its tier; evicted runs are
    /// filtered out where it is used.
    fn reclaim_tier(&mut self, below: Option<i64>) -> Rc<ReclaimTier> {
        if let Some(t) = self.reclaim_tiers.get(&below) {
            return t.clone();
        }
        let mut list: Vec<(i64, JobId, usize)> = (self.reclaim_checks(below, &[]).into_iter())
            .filter(|(_, c)| c.alone() && !c.mixed)
            .map(|(r, c)| (c.qos_priority, c.job, r))
            .collect();
        list.sort_unstable();
        let mut released: Vec<Option<NodeState>> = vec![None; self.nodes.len()];
        for &(_, _, r) in &list {
            let a = &self.allocs[self.running[r].alloc];
            for &n in &a.nodes {
                released[n as usize].get_or_insert_with(|| self.nodes[n as usize].clone()).release(&a.shape);
            }
        }
        let tier = Rc::new(ReclaimTier { list, released });
        self.reclaim_tiers.insert(below, tier.clone());
        tier
    }

    /// What reclaim weighs of every running job for a claimant of scope
    /// `sc` with pool `pool`; `(index into running, checks)`.
    pub(super) fn reclaim_checks(&self, below: Option<i64>, pool: &[u32]) -> Vec<(usize, ReclaimChecks)> {
        let base = self.snap.config.idle_fill.exempt_secs;
        let mut in_pool = vec![false; self.nodes.len()];
        pool.iter().for_each(|n| in_pool[*n as usize] = true);
        let mut all: Vec<(usize, ReclaimChecks)> = (0..self.running.len())
            .filter(|&r| !self.running[r].evicted)
            .map(|r| {
                let run = &self.snap.jobs[self.running[r].job];
                let ran_s = match run.state {
                    JobState::Running { start_ms, .. } => secs(self.now.saturating_sub(start_ms)),
                    _ => 0,
                };
                let scope = self.running[r].scope;
                let nodes = &self.allocs[self.running[r].alloc].nodes;
                let c = ReclaimChecks {
                    job: run.id,
                    qos: run.qos.clone(),
                    qos_priority: self.tier_priority(scope),
                    borrowed: run.borrowed,
                    preemptable_qos: self.scopes.list[scope as usize]
                        .qos
                        .is_some_and(|q| q.idle_fill_preemptable),
                    ran_s,
                    window_s: exempt_window(base, run.reclaims),
                    reclaims: run.reclaims,
                    below,
                    in_pool: nodes.iter().any(|n| in_pool[*n as usize]),
                    mixed: false,
                };
                (r, c)
            })
            .collect();
        // A node counts as recovered only when every job on it is reclaimable.
        let mut mixed = vec![false; self.nodes.len()];
        for (r, _) in all.iter().filter(|(_, c)| !c.alone()) {
            for &n in &self.allocs[self.running[*r].alloc].nodes {
                mixed[n as usize] = true;
            }
        }
        for (r, c) in all.iter_mut() {
            c.mixed = self.allocs[self.running[*r].alloc].nodes.iter().any(|n| mixed[*n as usize]);
        }
        all
    }

    /// Reclaims room for `job`, left pending for room in partition `pi`:
    /// chooses the victims (recorded as requeue preemptions marked
    /// `reclaim`) and returns them. None when the set cannot close the
    /// shortfall, or would pass the eviction cap.
    pub(super) fn reclaim(&mut self, job: &'a Job, sc: u32, pi: usize) -> Option<Vec<JobId>> {
        let below = self.claimant_tier(sc);
        self.reclaim_as(job, pi, below)
    }

    /// A claimant's ceiling in the opportunistic tier: an idlefillpreemptable
    /// QOS's priority; None for a job with a claim, which may take any such run.
    pub(super) fn claimant_tier(&self, sc: u32) -> Option<i64> {
        let own = self.scopes.list[sc as usize].qos;
        own.filter(|q| q.idle_fill_preemptable).map(|q| q.priority)
    }

    /// [`Pass::reclaim`] for a claimant of tier `below` (a borrow candidate
    /// reclaims as an opportunistic job of its QOS's priority).
    pub(super) fn reclaim_as(&mut self, job: &'a Job, pi: usize, below: Option<i64>) -> Option<Vec<JobId>> {
        let cfg = &self.snap.config;
        let max = cfg.preempt.max_evictions;
        if !cfg.idle_fill.enabled || self.evictions >= max {
            return None;
        }
        let any = match self.any_opportunistic {
            Some(any) => any,
            None => *self.any_opportunistic.insert((0..self.running.len()).any(|r| self.opportunistic(r))),
        };
        if !any {
            return None;
        }
        // A plain job asking no less than one a reclaim could not serve here fails too.
        let plain = job.nodelist.is_empty() && job.exclude.is_empty() && job.constraint.is_empty();
        let shape = job.shape();
        let failed = |f: &(usize, Option<i64>, Shape)| f.0 == pi && f.1 == below && shape.covers(&f.2);
        if plain && self.reclaim_failed.iter().any(failed) {
            return None;
        }
        let pool = self.pool(job, pi);
        let mut in_pool = vec![false; self.nodes.len()];
        pool.iter().for_each(|n| in_pool[*n as usize] = true);
        let tier = self.reclaim_tier(below);
        // An upper bound first, with no set built: the pool's nodes that fit
        // the job now or once every reclaimable run on them is gone.
        let could = |n: &u32| {
            let i = *n as usize;
            self.nodes[i].fits(&shape) || tier.released[i].as_ref().is_some_and(|s| s.fits(&shape))
        };
        if pool.iter().filter(|n| could(n)).count() < shape.nodes as usize {
            if plain {
                self.reclaim_failed.push((pi, below, shape));
            }
            return None;
        }
        let cands: Vec<usize> = (tier.list.iter())
            .map(|c| c.2)
            .filter(|&r| !self.running[r].evicted)
            .filter(|&r| self.allocs[self.running[r].alloc].nodes.iter().any(|n| in_pool[*n as usize]))
            .collect();
        // All of them first: when even that is not enough, one check says so.
        let all: Vec<(usize, PreemptMode)> = cands.iter().map(|r| (*r, PreemptMode::Requeue)).collect();
        let mut fits = !all.is_empty() && self.fits_without(job, &pool, &all).is_some();
        let mut set: Vec<(usize, PreemptMode)> = vec![];
        // The set may not pass the eviction cap, so cheapest-first stops there.
        let left = max.saturating_sub(self.evictions) as usize;
        if fits {
            fits = false;
            for &r in cands.iter().take(left) {
                set.push((r, PreemptMode::Requeue));
                if self.fits_without(job, &pool, &set).is_some() {
                    fits = true;
                    break;
                }
            }
        }
        if !fits {
            if plain {
                self.reclaim_failed.push((pi, below, shape));
            }
            return None;
        }
        // Only as many as needed: the dearest go back first.
        for k in (0..set.len()).rev() {
            let mut fewer = set.clone();
            fewer.remove(k);
            if self.fits_without(job, &pool, &fewer).is_some() {
                set = fewer;
            }
        }
        let mut victims = vec![];
        for (r, mode) in set {
            self.running[r].evicted = true;
            self.evictions += 1;
            let victim = self.snap.jobs[self.running[r].job].id;
            self.plan.preemptions.push(Preemption { victim, by: job.id, mode, reclaim: true });
            self.plan.idle_fill.reclaims += 1;
            victims.push(victim);
        }
        Some(victims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exempt_window_doubles_per_reclaim_up_to_an_hour() {
        // "The window doubles on each successive eviction of the same job, up to one hour."
        let w: Vec<u64> = (0..8).map(|n| exempt_window(60, n)).collect();
        assert_eq!(w, [60, 120, 240, 480, 960, 1920, 3600, 3600]);
        assert_eq!(exempt_window(60, 200), 3600, "no overflow");
        assert_eq!(exempt_window(0, 5), 0);
    }
}
