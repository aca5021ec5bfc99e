//! What a submit must pass before the accounting gate: a request some node
//! set of its partition could ever run ([`crate::sched::feasible`]), and
//! Slurm's MaxJobCount, counted over the jobs held in memory (pending,
//! running, and ended but not yet purged) plus the submits under way.

use super::JobService;
use super::queue::Queue;
use super::record::JobRecord;
use crate::error::{Error, Result};
use crate::model::Partition;
use crate::sched::feasible::{self, Capacity};
use std::sync::atomic::Ordering;

/// The sentence of Slurm's EAGAIN, which sbatch reports when slurmctld is at MaxJobCount.
pub const JOB_LIMIT: &str = "Resource temporarily unavailable";

/// A place under MaxJobCount, held from the check until the job is queued
/// (or the submit fails), so concurrent submits cannot pass it together.
pub(crate) struct Slot<'a> {
    jobs: Option<&'a JobService>,
}

impl Slot<'_> {
    /// The job is in `q` now and counts there.
    pub fn fill(mut self, _q: &mut Queue) {
        if let Some(s) = self.jobs.take() {
            s.retention.admitting.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        // The job never came: a check sees it neither queued nor admitting.
        if let Some(s) = self.jobs.take() {
            s.retention.admitting.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl JobService {
    /// Refuses a request no node set of `partition` could ever run, a count
    /// that overflows, or a time limit past the largest (InvalidArgument).
    pub(crate) fn admissible(&self, rec: &JobRecord, partition: &Partition) -> Result<()> {
        let cluster = self.nodes.read();
        // Each node lists its partitions: one pass over the nodes, no lookups by name.
        let members = cluster.nodes.values().filter(|n| n.partitions.contains(&partition.name));
        let job = rec.sched_job();
        feasible::check(&job, &partition.name, members.map(Capacity::of))
            .map_err(|r| Error::InvalidArgument(r.to_string()))
    }

    /// A place for one more job under MaxJobCount, or Slurm's EAGAIN as Unavailable.
    pub(crate) fn job_slot(&self, q: &Queue) -> Result<Slot<'_>> {
        let admitting = self.retention.admitting.load(Ordering::Relaxed);
        let held = q.jobs().len().saturating_add(admitting);
        let max = self.retention.max_jobs;
        if held >= max {
            return Err(Error::Unavailable(format!(
                "{JOB_LIMIT}: the controller holds {held} jobs, its MaxJobCount ([scheduler] max_job_count = \
                 {max}); ended jobs leave it min_job_age_secs after they end, so retry later"
            )));
        }
        self.retention.admitting.fetch_add(1, Ordering::Relaxed);
        Ok(Slot { jobs: Some(self) })
    }
}
