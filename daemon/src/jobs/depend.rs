//! Dependencies as the controller sees them: the named jobs must be known
//! at submit (Slurm's "Job dependency problem" otherwise); each pass
//! evaluates every pending job's dependency against the queue with the
//! pure [`crate::sched::depend::gate`]; and a job purged from memory while
//! a pending job still names it leaves its fate behind ([`Queue::fates`]),
//! so `afterok` on a job purged after it failed never turns into a start.

use super::queue::Queue;
use super::record::JobRecord;
use crate::error::{Error, Result};
use crate::sched::depend::{DepGate, Target, gate};
use spur_vocab::JobState;
use spur_vocab::depend::Dependency;
use std::collections::{HashMap, HashSet};

/// Slurm's sentence for a dependency on a job it does not know.
pub const DEPENDENCY_PROBLEM: &str = "Job dependency problem";

pub(crate) fn target(j: &JobRecord) -> Target {
    Target { state: j.state, exit_code: j.exit_code, start_ms: j.start_ms }
}

/// The user and name `singleton` keys on.
fn singleton_key(j: &JobRecord) -> String {
    format!("{}/{}", j.user, j.name)
}

impl Queue {
    /// Every job `dep` names is in memory, or its fate is kept.
    pub fn dependencies_known(&self, dep: &Dependency) -> Result<()> {
        match dep.jobs().find(|id| !self.jobs().contains_key(id) && !self.fates.contains_key(id)) {
            Some(id) => {
                Err(Error::invalid("dependency", format!("{DEPENDENCY_PROBLEM}: job {id} is not known")))
            }
            None => Ok(()),
        }
    }

    /// The gate of each pending job with a dependency, in id order, and for
    /// an array's pending tasks under `aftercorr`, how many of them may start.
    pub fn dependency_gates(&self, now: i64) -> Vec<(u64, DepGate, Option<u64>)> {
        let waiting: Vec<(&JobRecord, Dependency)> = (self.jobs().values())
            .filter(|j| j.state == JobState::Pending)
            .filter_map(|j| {
                j.extra.as_ref().filter(|x| !x.dependency.is_empty()).map(|x| (j, x.dependency()))
            })
            .collect();
        if waiting.is_empty() {
            return vec![];
        }
        // Built only when some job asks for singleton: one pass over the queue.
        let placed: HashSet<String> = if waiting.iter().any(|(_, d)| d.items.iter().any(is_singleton)) {
            self.jobs().values().filter(|j| j.is_placed()).map(singleton_key).collect()
        } else {
            HashSet::new()
        };
        let arrays = self.array_targets(waiting.iter().flat_map(|(_, d)| d.jobs()));
        let lookup = |id: u64| {
            arrays
                .get(&id)
                .copied()
                .or_else(|| self.jobs().get(&id).map(target))
                .or_else(|| self.fates.get(&id).copied())
        };
        (waiting.into_iter())
            .map(|(j, d)| {
                let key = || {
                    let k = singleton_key(j);
                    let running = placed.contains(&k);
                    (k, running)
                };
                let corr = self.corr(j);
                let seen = |id: u64| match corr.as_ref().filter(|c| c.targets.contains(&id)) {
                    Some(c) => Some(c.as_target()),
                    None => lookup(id),
                };
                let ready = corr.as_ref().map(|c| c.ready.len() as u64);
                (j.id, gate(&d, now, seen, key), ready)
            })
            .collect()
    }

    /// Arrays among `named`, each as one target over its tasks: active while
    /// any task is, and ended ok only when every task completed with 0, as
    /// Slurm reads a dependency on an array's id. One scan of the queue.
    fn array_targets(&self, named: impl Iterator<Item = u64>) -> HashMap<u64, Target> {
        let ids: HashSet<u64> =
            named.filter(|id| self.jobs().get(id).is_some_and(|j| j.array_id() == Some(*id))).collect();
        let mut out: HashMap<u64, Target> = HashMap::new();
        let Some(&lo) = ids.iter().min() else { return out };
        for j in self.jobs().range(lo..).map(|(_, j)| j) {
            let Some(a) = j.array_id().filter(|a| ids.contains(a)) else { continue };
            let t = target(j);
            let ok = |t: &Target| t.state == JobState::Completed && t.exit_code == 0;
            out.entry(a)
                .and_modify(|acc| {
                    acc.state = match (acc.state.is_active(), t.state.is_active()) {
                        // Waiting while a task waits; running while one runs.
                        (true, true) if acc.state == JobState::Pending || t.state == JobState::Pending => {
                            JobState::Pending
                        }
                        (true, _) => acc.state,
                        (false, true) => t.state,
                        (false, false) if ok(acc) && ok(&t) => JobState::Completed,
                        (false, false) if ok(acc) => t.state,
                        (false, false) => acc.state,
                    };
                    acc.exit_code = acc.exit_code.max(t.exit_code);
                    if t.start_ms > 0 && (acc.start_ms == 0 || t.start_ms < acc.start_ms) {
                        acc.start_ms = t.start_ms;
                    }
                })
                .or_insert(t);
        }
        out
    }

    /// Called as `purged` leave memory: keeps the fate of each one a pending
    /// job still names, and drops fates no pending job names any more.
    pub fn keep_fates(&mut self, purged: &[JobRecord]) {
        let named: HashSet<u64> = (self.jobs().values())
            .filter(|j| j.state == JobState::Pending)
            .filter_map(|j| j.extra.as_ref().filter(|x| !x.dependency.is_empty()))
            .flat_map(|x| x.dependency().jobs().collect::<Vec<_>>())
            .collect();
        self.fates.retain(|id, _| named.contains(id));
        for j in purged.iter().filter(|j| named.contains(&j.id)) {
            self.fates.insert(j.id, target(j));
        }
    }
}

fn is_singleton(i: &spur_vocab::depend::DepItem) -> bool {
    i.kind == spur_vocab::depend::DepKind::Singleton
}
