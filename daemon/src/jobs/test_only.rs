//! `sbatch --test-only`: the submit's checks (partition, nodes, licenses,
//! dependencies, the accounting gate, MaxJobCount), then one pass of the
//! pure scheduler over the queue as it is with the job added, which says
//! where it would start now, or when backfill would reserve its start.
//! Nothing is stored, no id is taken and no audit row is written.

use super::JobService;
use crate::accounting::Caller;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::sched;
use crate::store::now_ms;
use spur_proto::v1 as pb;
use std::sync::atomic::Ordering;

impl JobService {
    pub fn test_submit(
        &self,
        role: Role,
        caller: &Caller,
        spec: pb::JobSpec,
    ) -> Result<pb::TestSubmitResponse> {
        let (rec, partition) = self.resolve(role, caller, spec)?;
        let catalog = self.acct.catalog();
        // The id the next submit would take; peeked, never taken.
        let id = self.next_id.load(Ordering::Relaxed);
        let fx = self.lock().submit(rec, &partition, &catalog, &self.policy, |q| {
            // MaxJobCount is checked as a submit would; the slot is given back at once.
            drop(self.job_slot(q)?);
            Ok(id)
        })?;
        let rec = fx
            .records()
            .next()
            .cloned()
            .ok_or_else(|| Error::FailedPrecondition("the submit's checks made no job".into()))?;
        // What a start would allocate (run.rs's `started`): the shape on each node.
        let shape = rec.sched_job().shape();
        let cpus = shape.cpus.saturating_mul(shape.nodes);
        let mut out = pb::TestSubmitResponse {
            job_id: id,
            cpus,
            partition: rec.partition.clone(),
            ..Default::default()
        };
        // A dependency is not weighed here: its job's start is not known.
        if rec.extra.as_ref().is_some_and(|x| !x.dependency.is_empty()) {
            return Ok(out);
        }
        let now = now_ms();
        let nodes = self.nodes.nodes();
        let mut snap = self.snapshot(now, &nodes);
        snap.jobs.push(rec.sched_job());
        let plan = sched::schedule(&snap, now);
        if let Some(s) = plan.start_of(id) {
            (out.start_ms, out.nodes) = (now, s.nodes.clone());
        } else if let Some(r) = plan.reservations.iter().find(|r| r.job == id) {
            (out.start_ms, out.nodes) = (r.start_ms, r.nodes.clone());
        }
        if shape.exclusive && !out.nodes.is_empty() {
            let whole = |n: &String| nodes.iter().find(|m| &m.name == n).map_or(0, |m| m.cpus);
            out.cpus = out.nodes.iter().map(whole).sum();
        }
        Ok(out)
    }
}
