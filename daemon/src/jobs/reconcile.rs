//! An agent's registration against the queue. After a controller restart or
//! an agent reconnect, the two may disagree: the agent says which jobs it
//! runs and which ended while the controller was away, and the controller's
//! record gives way where the agent knows better (a job it does not run is
//! lost) and stands where it knows better (a job it ended or never had is
//! killed on the node).

use super::JobService;
use super::effect::{Effect, Effects, SIGKILL};
use super::queue::Queue;
use super::record::JobRecord;
use crate::store::now_ms;
use spur_proto::v1 as pb;
use spur_vocab::JobState;
use std::collections::HashSet;

/// Why a job the controller had running was ended without its agent's word.
pub const LOST_REASON: spur_vocab::reason::ReasonCode = spur_vocab::reason::ReasonCode::JobLostOnNode;
/// Ignored entries of one registration logged one by one; the rest are counted.
const IGNORED_LOGGED: usize = 16;

/// What a registration changed, for the log and for tests.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reconciled {
    /// Running here per the controller, unknown to the agent: requeued or NODE_FAIL.
    pub lost: Vec<u64>,
    /// Run by the agent, not by the controller's record: killed.
    pub stray: Vec<u64>,
}

/// An agent's `running` list split into the entries on its `nodes` and the
/// others, which it has no say about: a run it claims on another agent's
/// node must neither keep a job there nor have it killed or its end ignored.
pub fn on_nodes<'a>(
    nodes: &[String],
    running: &'a [pb::RunningJob],
) -> (Vec<pb::RunningJob>, Vec<&'a pb::RunningJob>) {
    let nodes: HashSet<&str> = nodes.iter().map(String::as_str).collect();
    let (mine, others): (Vec<_>, Vec<_>) = running.iter().partition(|r| nodes.contains(r.node.as_str()));
    (mine.into_iter().cloned().collect(), others)
}

impl Queue {
    /// Whether an agent's entry is the job's current run: its run id is the
    /// record's (an entry or a record without one, from before run ids, is
    /// taken by the job id alone).
    fn is_current(&self, r: &pb::RunningJob) -> bool {
        let current = self.jobs().get(&r.job_id).map_or("", |j| j.run_id.as_str());
        r.run_id.is_empty() || current.is_empty() || r.run_id == current
    }

    /// The jobs the controller has running on `nodes` (by their first node,
    /// where the agent launched them) that the agent's `running` lacks.
    pub fn lost_on(&self, nodes: &[String], running: &[pb::RunningJob]) -> Vec<u64> {
        let reported: HashSet<u64> =
            running.iter().filter(|r| self.is_current(r)).map(|r| r.job_id).collect();
        let hosted = |j: &JobRecord| j.nodes.first().is_some_and(|n| nodes.contains(n));
        (self.jobs().values())
            .filter(|j| j.state == JobState::Running && hosted(j) && !reported.contains(&j.id))
            // A launch still on its way is not in the agent's list yet;
            // an allocation srun made has nothing on its agent to list.
            .filter(|j| !self.launching.contains(&j.id) && !j.is_allocation())
            .map(|j| j.id)
            .collect()
    }

    /// The runs of the agent of `nodes` that the queue does not have running
    /// there: each killed at once, and, when the job is still active, the end
    /// the killed run reports is ignored (it says nothing of the job's
    /// current run). Not when the current run is on another agent's node:
    /// that agent's report is the one that ends it, and this agent's report
    /// is refused anyway (it does not host the job's node).
    pub fn strays(&self, nodes: &[String], running: &[pb::RunningJob]) -> Effects {
        let mut fx = Effects::default();
        for r in running {
            let ours = self.jobs().get(&r.job_id);
            let here = |j: &JobRecord| j.state == JobState::Running && j.nodes.first() == Some(&r.node);
            if ours.is_some_and(here) && self.is_current(r) {
                continue;
            }
            let elsewhere =
                |j: &JobRecord| j.is_placed() && j.nodes.first().is_some_and(|f| !nodes.contains(f));
            // A run named by its id reports as that run, which is told apart
            // from the job's current one by the id; an agent before run ids
            // has its next report of the job ignored instead.
            if r.run_id.is_empty() && ours.is_some_and(|j| j.is_active() && !elsewhere(j)) {
                fx.push(Effect::IgnoreReport(r.job_id));
            }
            fx.push(Effect::Signal { job: r.job_id, node: r.node.clone(), signal: SIGKILL, kill_wait: 0 });
        }
        fx
    }
}

impl JobService {
    /// Settles `ended`, then compares the agent's `running` jobs with the
    /// jobs the controller has running on `nodes`. A job on both lists keeps
    /// running untouched. Like its ends, an agent's running jobs count only
    /// on the nodes it registers: any other entry is ignored, and logged.
    pub async fn reconcile(
        &self,
        nodes: &[String],
        running: &[pb::RunningJob],
        ended: Vec<pb::JobReport>,
    ) -> crate::error::Result<Reconciled> {
        let (running, others) = on_nodes(nodes, running);
        for r in others.iter().take(IGNORED_LOGGED) {
            tracing::warn!(job = r.job_id, node = ?r.node, "an agent lists a run on a node it does not register; ignored");
        }
        if let Some(more) = others.len().checked_sub(IGNORED_LOGGED).filter(|m| *m > 0) {
            tracing::warn!(more, "more runs on nodes the agent does not register; ignored");
        }
        let running = &running[..];
        for r in ended {
            match self.report(nodes, r).await {
                // Not this agent's job (any more): nothing of ours to settle.
                Err(crate::error::Error::PermissionDenied(m)) => tracing::warn!("{m}"),
                other => other?,
            }
        }
        let mut done = Reconciled::default();
        let lost = self.lock().lost_on(nodes, running);
        for id in lost {
            if self.job(id).is_some_and(|j| j.requeue) {
                tracing::warn!(job = id, "the job's agent does not run it; requeueing");
            } else {
                tracing::warn!(job = id, "the job's agent does not run it; NODE_FAIL");
            }
            // The agent has nothing of it: nothing to kill, no end to ignore.
            let _ = self.transit(&[id], |q| Ok(q.lost(id, LOST_REASON, false, now_ms()))).await;
            done.lost.push(id);
        }
        let ids: Vec<u64> = running.iter().map(|r| r.job_id).collect();
        let killed = self.transit(&ids, |q| Ok(q.strays(nodes, running))).await?;
        for id in killed.jobs {
            tracing::warn!(job = id, "an agent runs a job the controller does not; killing it");
            done.stray.push(id);
        }
        Ok(done)
    }
}
