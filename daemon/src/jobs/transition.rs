//! The one way an existing job changes. A transition holds the job's
//! transition lock from reading its record to installing the next one, so
//! two transitions of one job never interleave (an update racing a cancel
//! reads the cancelled record, never a stale copy); it persists the next
//! record before installing it, so memory never shows what the store did
//! not take, and a write the store refuses changes nothing; and installing
//! derives every side effect on the queue (limit counts, node allocations,
//! licences, the change batch) from the old and new records, in one place.

use super::JobService;
use super::record::JobRecord;
use crate::error::Result;
use spur_vocab::JobState;
use tokio::sync::{Mutex, MutexGuard};

/// Transition locks: a job's is `id % STRIPES`, so the locks cost the same
/// for ten jobs or a million, and jobs in different stripes change at once.
const STRIPES: usize = 64;

pub(crate) struct Stripes(Vec<Mutex<()>>);

impl Default for Stripes {
    fn default() -> Self {
        Stripes((0..STRIPES).map(|_| Mutex::new(())).collect())
    }
}

/// The transition locks of some jobs, held until dropped.
pub(crate) struct Held<'a>(#[allow(dead_code)] Vec<MutexGuard<'a, ()>>);

impl Stripes {
    /// Locks the stripes of `ids` in stripe order, so two callers never deadlock.
    pub(crate) async fn lock(&self, ids: impl IntoIterator<Item = u64>) -> Held<'_> {
        let mut idx: Vec<usize> = ids.into_iter().map(|id| (id % STRIPES as u64) as usize).collect();
        idx.sort_unstable();
        idx.dedup();
        let mut held = Vec::with_capacity(idx.len());
        for i in idx {
            held.push(self.0[i].lock().await);
        }
        Held(held)
    }
}

/// A job before and after a transition.
#[derive(Debug, Clone)]
pub(crate) struct Changed {
    pub old: JobRecord,
    pub new: JobRecord,
}

impl JobService {
    /// Runs `next` on the current record of each of `ids` under their
    /// transition locks: it returns the record to become (None: no change),
    /// or an error that stops the whole transition before anything is
    /// written. The records become durable in one write, then are installed.
    pub(crate) async fn transition<F>(&self, ids: &[u64], next: F) -> Result<Vec<Changed>>
    where
        F: FnMut(&JobRecord) -> Result<Option<JobRecord>>,
    {
        let _held = self.stripes.lock(ids.iter().copied()).await;
        self.apply_locked(ids, next).await
    }

    /// [`Self::transition`], for a caller that holds the locks of `ids`.
    pub(crate) async fn apply_locked<F>(&self, ids: &[u64], mut next: F) -> Result<Vec<Changed>>
    where
        F: FnMut(&JobRecord) -> Result<Option<JobRecord>>,
    {
        let nexts = {
            let q = self.lock();
            let mut v = Vec::new();
            for id in ids {
                if let Some(j) = q.jobs.get(id)
                    && let Some(n) = next(j)?
                {
                    v.push(n);
                }
            }
            v
        };
        if nexts.is_empty() {
            return Ok(vec![]);
        }
        self.persist(&nexts).await?;
        Ok(self.install(nexts))
    }

    /// [`Self::transition`] of one job; its before and after when it changed.
    pub(crate) async fn transition_one<F>(&self, id: u64, next: F) -> Result<Option<Changed>>
    where
        F: FnOnce(&JobRecord) -> Result<Option<JobRecord>>,
    {
        let mut next = Some(next);
        let mut changed = self.transition(&[id], |j| next.take().map_or(Ok(None), |f| f(j))).await?;
        Ok(changed.pop())
    }

    /// Puts persisted records in place, with what follows from each change.
    fn install(&self, nexts: Vec<JobRecord>) -> Vec<Changed> {
        let mut out = Vec::with_capacity(nexts.len());
        {
            let mut q = self.lock();
            for new in nexts {
                let Some(old) = q.jobs.insert(new.id, new.clone()) else { continue };
                if old.is_active() {
                    q.counts.remove(&old.sched_job());
                }
                if new.is_active() {
                    q.counts.add(&new.sched_job());
                }
                self.settle_nodes(&old, &new);
                if old.state == JobState::Pending && new.state == JobState::Running {
                    // Started: a registration meanwhile must not call it lost.
                    q.launching.insert(new.id);
                }
                q.mark(new.id);
                out.push(Changed { old, new });
            }
        }
        if out.iter().any(|c| c.old.licenses_alloc != c.new.licenses_alloc) {
            self.licenses.notify("");
        }
        self.changed();
        self.kick.notify_one();
        out
    }

    /// Moves the job's footprint on its nodes from what `old` held to what `new` holds.
    fn settle_nodes(&self, old: &JobRecord, new: &JobRecord) {
        let stays = old.is_placed() && new.is_placed() && old.nodes == new.nodes;
        if !stays {
            if old.is_placed() {
                self.nodes.allocate(&old.nodes, old.held(), true);
            }
            if new.is_placed() {
                self.nodes.allocate(&new.nodes, new.held(), false);
            }
        } else if old.held() != new.held() {
            // Suspend or resume: CPUs and GPUs move, memory and the job's place stay.
            let (cpus, _, gpus) = new.alloc;
            self.nodes.adjust(&new.nodes, (cpus, 0, gpus), new.state == JobState::Suspended, false);
        }
    }
}
