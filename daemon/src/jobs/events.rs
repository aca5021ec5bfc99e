//! Job changes for `Cluster.Watch`, in numbered batches. Every mutation
//! marks the jobs it touched (under the queue lock, with the change itself);
//! a flusher publishes the marked ids a few milliseconds after the first
//! mark, so a scheduling pass over 100,000 jobs, or a burst of submits, is
//! one batch rather than an event per job. Watchers turn ids into jobs when
//! they send, so a batch always carries each job as it is at that moment.
//!
//! Priority alone does not mark a job: the age factor moves every pending
//! job's priority on every pass, which would make every pass a full batch.

use super::JobService;
use super::queue::Queue;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// How long the flusher gathers after the first change of a batch.
const GATHER: Duration = Duration::from_millis(5);
/// Batches a slow watcher may fall behind before it is told to re-read.
pub(crate) const BACKLOG: usize = 256;

/// The ids of the jobs changed since the previous batch.
#[derive(Debug, Clone)]
pub struct JobBatch {
    pub seq: u64,
    pub ids: Arc<[u64]>,
}

impl Queue {
    /// Notes that job `id` changed; the caller then calls [`JobService::changed`].
    pub(crate) fn mark(&mut self, id: u64) {
        self.changed.insert(id);
    }
}

impl JobService {
    /// Wakes the flusher after marks were made (and the lock released).
    pub(crate) fn changed(&self) {
        self.dirty.notify_one();
    }

    pub fn subscribe(&self) -> broadcast::Receiver<JobBatch> {
        self.events.subscribe()
    }

    /// The number of the last batch published: a listing read under the same
    /// lock reflects every batch up to it.
    pub fn seq(&self) -> u64 {
        self.lock().seq
    }

    pub(crate) fn spawn_flusher(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let me = self.clone();
        tokio::spawn(async move {
            loop {
                me.dirty.notified().await;
                tokio::time::sleep(GATHER).await;
                me.flush();
            }
        })
    }

    /// Publishes the marked jobs as the next batch, if any.
    pub(crate) fn flush(&self) {
        let batch = {
            let mut q = self.lock();
            if q.changed.is_empty() {
                return;
            }
            q.seq += 1;
            let mut ids: Vec<u64> = q.changed.drain().collect();
            ids.sort_unstable();
            JobBatch { seq: q.seq, ids: ids.into() }
        };
        // No watcher is not an error.
        let _ = self.events.send(batch);
    }
}
