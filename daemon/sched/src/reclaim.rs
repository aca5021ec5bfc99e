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
use super::job::{Job, JobState, Shape};
use super::pass_state::{Pass, secs};
use spur_vocab::names::PreemptMode;

/// The exempt window never grows past this (spec: "up to one hour").
pub const EXEMPT_CAP_SECS: u64 = 3600;

/// The window guarding a run reclaimed `reclaims` times before.
pub fn exempt_window(base_secs: u64, reclaims: u32) -> u64 {
    base_secs.saturating_mul(1u64.checked_shl(reclaims).unwrap_or(u64::MAX)).min(EXEMPT_CAP_SECS)
}

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

    /// Reclaims room for `job`, left pending for room in partition `pi`:
    /// chooses the victims (recorded as requeue preemptions marked
    /// `reclaim`) and says whether it did. Nothing when the set cannot close
    /// the shortfall, or would pass the eviction cap.
    pub(super) fn reclaim(&mut self, job: &'a Job, sc: u32, pi: usize) -> bool {
        let cfg = &self.snap.config;
        let (base, max) = (cfg.idle_fill.exempt_secs, cfg.preempt.max_evictions);
        if !cfg.idle_fill.enabled || self.evictions >= max {
            return false;
        }
        let any = match self.any_opportunistic {
            Some(any) => any,
            None => *self.any_opportunistic.insert((0..self.running.len()).any(|r| self.opportunistic(r))),
        };
        if !any {
            return false;
        }
        // An opportunistic claimant displaces only strictly cheaper opportunistic work.
        let own = self.scopes.list[sc as usize].qos;
        let below = own.filter(|q| q.idle_fill_preemptable).map(|q| q.priority);
        // A plain job asking no less than one a reclaim could not serve here fails too.
        let plain = job.nodelist.is_empty() && job.exclude.is_empty() && job.constraint.is_empty();
        let shape = job.shape();
        let failed = |f: &(usize, Option<i64>, Shape)| f.0 == pi && f.1 == below && shape.covers(&f.2);
        if plain && self.reclaim_failed.iter().any(failed) {
            return false;
        }
        let pool = self.pool(job, pi);
        let mut in_pool = vec![false; self.nodes.len()];
        pool.iter().for_each(|n| in_pool[*n as usize] = true);
        let reclaimable: Vec<bool> = (0..self.running.len())
            .map(|r| {
                let run = &self.snap.jobs[self.running[r].job];
                let JobState::Running { start_ms, .. } = run.state else { return false };
                let ran = secs(self.now.saturating_sub(start_ms));
                !self.running[r].evicted
                    && self.opportunistic(r)
                    && ran >= exempt_window(base, run.reclaims)
                    && below.is_none_or(|p| self.tier_priority(self.running[r].scope) < p)
            })
            .collect();
        // A node counts as recovered only when every job on it is reclaimable.
        let mut mixed = vec![false; self.nodes.len()];
        for (r, _) in reclaimable.iter().enumerate().filter(|(_, ok)| !**ok) {
            for &n in &self.allocs[self.running[r].alloc].nodes {
                mixed[n as usize] = true;
            }
        }
        let mut cands: Vec<(i64, u64, usize)> = (0..self.running.len())
            .filter(|&r| reclaimable[r])
            .filter(|&r| {
                let nodes = &self.allocs[self.running[r].alloc].nodes;
                nodes.iter().any(|n| in_pool[*n as usize]) && nodes.iter().all(|n| !mixed[*n as usize])
            })
            .map(|r| (self.tier_priority(self.running[r].scope), self.snap.jobs[self.running[r].job].id, r))
            .collect();
        // The cheapest opportunistic run first.
        cands.sort_unstable();
        let mut set: Vec<(usize, PreemptMode)> = vec![];
        let mut fits = false;
        for &(_, _, r) in &cands {
            set.push((r, PreemptMode::Requeue));
            if self.fits_without(job, &pool, &set).is_some() {
                fits = true;
                break;
            }
        }
        if !fits {
            if plain {
                self.reclaim_failed.push((pi, below, shape));
            }
            return false;
        }
        // Only as many as needed: the dearest go back first.
        for k in (0..set.len()).rev() {
            let mut fewer = set.clone();
            fewer.remove(k);
            if self.fits_without(job, &pool, &fewer).is_some() {
                set = fewer;
            }
        }
        if set.len() > max.saturating_sub(self.evictions) as usize {
            return false;
        }
        for (r, mode) in set {
            self.running[r].evicted = true;
            self.evictions += 1;
            let victim = self.snap.jobs[self.running[r].job].id;
            self.plan.preemptions.push(Preemption { victim, by: job.id, mode, reclaim: true });
        }
        true
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
