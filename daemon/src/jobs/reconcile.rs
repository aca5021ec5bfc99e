//! An agent's registration against the queue. After a controller restart or
//! an agent reconnect, the two may disagree: the agent says which jobs it
//! runs and which ended while the controller was away, and the controller's
//! record gives way where the agent knows better (a job it does not run is
//! lost) and stands where it knows better (a job it ended or never had is
//! killed on the node).

use super::JobService;
use super::record::JobRecord;
use spur_proto::v1 as pb;
use spur_vocab::JobState;
use std::collections::HashSet;

/// Why a job the controller had running was ended without its agent's word.
pub const LOST_REASON: &str = "JobLostOnNode";

/// What a registration changed, for the log and for tests.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reconciled {
    /// Running here per the controller, unknown to the agent: requeued or NODE_FAIL.
    pub lost: Vec<u64>,
    /// Run by the agent, not by the controller's record: killed.
    pub stray: Vec<u64>,
}

impl JobService {
    /// Settles `ended`, then compares the agent's `running` jobs with the
    /// jobs the controller has running on `nodes` (by their first node, where
    /// the agent launched them). A job on both lists keeps running untouched.
    pub async fn reconcile(
        &self,
        nodes: &[String],
        running: &[pb::RunningJob],
        ended: Vec<pb::JobReport>,
    ) -> crate::error::Result<Reconciled> {
        for r in ended {
            match self.report(nodes, r).await {
                // Not this agent's job (any more): nothing of ours to settle.
                Err(crate::error::Error::PermissionDenied(m)) => tracing::warn!("{m}"),
                other => other?,
            }
        }
        let reported: HashSet<u64> = running.iter().map(|r| r.job_id).collect();
        let hosted = |j: &JobRecord| j.nodes.first().is_some_and(|n| nodes.contains(n));
        let (lost, stray) = {
            let mut q = self.lock();
            let lost: Vec<(u64, bool)> = q
                .jobs
                .values()
                // A launch still on its way is not in the agent's list yet.
                .filter(|j| j.state == JobState::Running && hosted(j) && !reported.contains(&j.id))
                .filter(|j| !q.launching.contains(&j.id))
                .map(|j| (j.id, j.requeue))
                .collect();
            let mut stray = vec![];
            for r in running {
                let ours = q.jobs.get(&r.job_id);
                if ours.is_some_and(|j| j.state == JobState::Running && j.nodes.first() == Some(&r.node)) {
                    continue;
                }
                // The end of the killed run says nothing of the job's current one.
                if ours.is_some_and(JobRecord::is_active) {
                    q.stale_reports.insert(r.job_id);
                }
                stray.push((r.job_id, r.node.clone()));
            }
            (lost, stray)
        };
        let mut done = Reconciled::default();
        for (id, requeue) in lost {
            if requeue {
                tracing::warn!(job = id, "the job's agent does not run it; requeueing");
                let _ = self.requeue_lost(id).await;
            } else {
                tracing::warn!(job = id, "the job's agent does not run it; NODE_FAIL");
                let _ = self.finish(id, JobState::NodeFail, 0, LOST_REASON).await;
            }
            done.lost.push(id);
        }
        for (id, node) in stray {
            tracing::warn!(job = id, node, "an agent runs a job the controller does not; killing it");
            self.kill_on(&node, id).await;
            done.stray.push(id);
        }
        Ok(done)
    }
}
