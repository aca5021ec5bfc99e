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

/// The nodes slurm definitions could lend `job` in `partition`, when
/// dynamic nodes join it (`nodes = "ALL"` or `controller.dynamic_partitions`):
/// each definition's shape up to its `maxNodes`, and all of them up to
/// `controller.max_dynamic_nodes`, named for the refusal's sake only.
fn lendable(c: &crate::nodes::Cluster, partition: &str, job: &crate::sched::Job) -> Vec<(String, u32, u64)> {
    let (Some(cfg), Some(p)) = (c.cfg.as_ref(), c.provision.as_ref()) else { return vec![] };
    let joins = cfg.partitions.iter().any(|pc| pc.name == partition && cfg.dynamic_joins(pc));
    if !joins {
        return vec![];
    }
    let cap = cfg.controller.max_dynamic_nodes as usize;
    (crate::sched::demand::lendable(p, job).into_iter())
        .flat_map(|(cpus, mem_mb, count)| (0..count).map(move |i| (format!("(borrowed {i})"), cpus, mem_mb)))
        .take(cap)
        .collect()
}

/// [`JobService::admissible`] on the cluster `c`: its nodes in `partition`,
/// and the nodes slurm definitions could lend there.
fn admissible_in(c: &crate::nodes::Cluster, job: &crate::sched::Job, partition: &str) -> Result<()> {
    // Each node lists its partitions: one pass over the nodes, no lookups by name.
    let members = c.nodes.values().filter(|n| n.partitions.iter().any(|p| p == partition));
    let lent = lendable(c, partition, job);
    let borrowed = lent.iter().map(|(name, cpus, mem_mb)| Capacity {
        name,
        cpus: *cpus,
        mem_mb: *mem_mb,
        gpus: 0,
        features: &[],
        facts: None,
    });
    feasible::check(job, partition, members.map(Capacity::of).chain(borrowed))
        .map_err(|r| Error::InvalidArgument(r.to_string()))
}

impl JobService {
    /// Refuses a request no node set of `partition` could ever run, a count
    /// that overflows, or a time limit past the largest (InvalidArgument).
    pub(crate) fn admissible(&self, rec: &JobRecord, partition: &Partition) -> Result<()> {
        admissible_in(&self.nodes.read(), &rec.sched_job(), &partition.name)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::Job;
    use std::sync::Arc;

    const CONF: &str = "[controller]\nmax_dynamic_nodes = 4\ndynamic_partitions = [\"burst\"]\n\
        [[nodes]]\nname = \"n1\"\ncpus = 1\n[[partitions]]\nname = \"burst\"\nnodes = \"n1\"\n\
        [[partitions]]\nname = \"static\"\nnodes = \"n1\"\n";

    const YAML: &str = "definitions:\n- id: big\n  provisioner: slurm\n  ttl: 3600\n  \
        provisionerSpec: {cpu: 16, memory: 32GiB, partition: compute}\n";

    async fn service(driven: bool) -> crate::nodes::NodeService {
        let mut cfg = crate::config::Config::parse(CONF, "spur.conf", "/etc/spur".into()).unwrap();
        let mut p = crate::sched::provision::parse(YAML, 1).unwrap();
        if driven {
            p.drivers = vec![crate::sched::provision::Backend::Slurm];
        }
        cfg.provision = Some(Arc::new(p));
        let hub = Arc::new(crate::audit::Hub::new(None));
        let admission = Arc::new(crate::admission::Admission::load(cfg.admission.mode, None).await.unwrap());
        crate::nodes::NodeService::new(&cfg, None, hub, admission).await.unwrap()
    }

    fn asking(cpus: u32, minutes: u64) -> Job {
        Job { cpus_per_task: cpus, ntasks: 1, time_limit: Some(minutes), ..Job::default() }
    }

    #[tokio::test]
    async fn a_job_only_a_borrowed_node_could_hold_is_accepted_where_dynamic_nodes_join() {
        let (driven, undriven) = (service(true).await, service(false).await);
        let c = driven.read();
        admissible_in(&c, &asking(8, 30), "burst").unwrap();
        let refused = |r: Result<()>| r.unwrap_err().to_string();
        // Bigger than the definition's shape, longer than its ttl, or where dynamic nodes do not join: refused.
        assert!(
            refused(admissible_in(&c, &asking(32, 30), "burst"))
                .contains("largest node of partition 'burst' has 16")
        );
        assert!(refused(admissible_in(&c, &asking(8, 120), "burst")).contains("has 1"));
        assert!(refused(admissible_in(&c, &asking(8, 30), "static")).contains("has 1"));
        // maxNodes (16) is capped by max_dynamic_nodes (4).
        let wide = Job { num_nodes: 5, ..asking(8, 30) };
        assert!(
            refused(admissible_in(&c, &wide, "burst")).contains("partition 'burst' has 4 such"),
            "4 borrowed nodes hold 8 CPUs; n1 has 1"
        );
        // Without a driver, nothing is lent.
        assert!(refused(admissible_in(&undriven.read(), &asking(8, 30), "burst")).contains("has 1"));
    }
}
