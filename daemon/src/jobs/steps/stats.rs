//! sstat: the running steps' use now. The controller sends a `SampleSteps`
//! command to the agent of each node the steps run on, and waits, at most
//! [`SAMPLE_DEADLINE`], for their `ReportUse` answers, matched to the request
//! by its id; a node whose agent does not answer in time is named in the
//! answer (`missing`) and its tasks left out. Nothing is stored.

use crate::accounting::Caller;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::jobs::JobService;
use spur_proto::v1 as pb;
use spur_vocab::JobState;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long sstat waits for the nodes' answers.
pub const SAMPLE_DEADLINE: Duration = Duration::from_secs(5);

/// Requests waiting for their nodes' answers (sstat's samples, sbcast's
/// copies): by request id, where the answers go.
#[derive(Debug)]
pub struct Waiting<T> {
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, mpsc::UnboundedSender<T>>>,
}

impl<T> Default for Waiting<T> {
    fn default() -> Self {
        Waiting { next: AtomicU64::new(0), waiting: Mutex::new(HashMap::new()) }
    }
}

impl<T> Waiting<T> {
    pub(crate) fn open(&self) -> (u64, mpsc::UnboundedReceiver<T>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = mpsc::unbounded_channel();
        self.lock().insert(id, tx);
        (id, rx)
    }

    pub(crate) fn close(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Hands an answer to the request waiting for it; one nobody waits for (past its deadline) is dropped.
    pub(crate) fn answer(&self, id: u64, t: T) {
        if let Some(tx) = self.lock().get(&id) {
            let _ = tx.send(t);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, mpsc::UnboundedSender<T>>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The running steps of `j` that `step` names (all of them when None), with their nodes.
fn running_steps(j: &crate::jobs::record::JobRecord, step: Option<u32>) -> Vec<(u32, Vec<String>)> {
    let list = j.steps.as_ref().map(|s| s.list.as_slice()).unwrap_or_default();
    list.iter()
        .filter(|s| s.state == JobState::Running && step.is_none_or(|want| want == s.id))
        .map(|s| (s.id, s.nodes.clone()))
        .collect()
}

impl JobService {
    /// The use of job `job`'s running step `step` (every running step when None), per task.
    pub async fn step_stats(
        &self,
        role: Role,
        caller: &Caller,
        job: u64,
        step: Option<u32>,
    ) -> Result<pb::StepStatsResponse> {
        let steps = {
            let q = self.lock();
            let j = q.get(job)?;
            crate::jobs::queue::owns(role, caller, j)?;
            running_steps(j, step)
        };
        if steps.is_empty() {
            let what = step.map_or_else(
                || format!("job {job} has no running step"),
                |s| format!("step {job}.{s} is not running"),
            );
            return Err(Error::NotFound(what));
        }
        let nodes: HashSet<String> = steps.iter().flat_map(|(_, n)| n.iter().cloned()).collect();
        let (id, mut rx) = self.samples.open();
        let mut asked = HashSet::new();
        for node in &nodes {
            let cmd = pb::SampleSteps { request_id: id, job_id: job, step_id: step, node: node.clone() };
            let cmd = pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::SampleSteps(cmd)) };
            // A node whose agent is gone is one that does not answer.
            if self.link.send(node, cmd).await.is_ok() {
                asked.insert(node.clone());
            }
        }
        let mut tasks = vec![];
        let mut answered = HashSet::new();
        let deadline = tokio::time::Instant::now() + SAMPLE_DEADLINE;
        while answered.len() < asked.len() {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(r)) if asked.contains(&r.node) && answered.insert(r.node.clone()) => {
                    let ours = r.tasks.into_iter().filter(|t| t.job_id == job && t.node == r.node);
                    tasks.extend(ours.filter(|t| steps.iter().any(|(s, _)| *s == t.step_id)));
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        self.samples.close(id);
        tasks.sort_by_key(|t| (t.step_id, t.task));
        let mut missing: Vec<String> = nodes.into_iter().filter(|n| !answered.contains(n)).collect();
        missing.sort();
        let steps = steps.iter().map(|(s, _)| format!("{job}.{s}")).collect();
        Ok(pb::StepStatsResponse { tasks, steps, missing })
    }

    /// An agent's answer to a `SampleSteps`; `nodes` are the nodes it hosts.
    /// An answer nobody waits for any more (past its deadline) is dropped.
    pub fn use_reported(&self, nodes: &[String], r: pb::UseReport) -> Result<()> {
        if !nodes.contains(&r.node) {
            return Err(Error::PermissionDenied(format!("this agent does not host node '{}'", r.node)));
        }
        self.samples.answer(r.request_id, r);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::record::JobRecord;
    use crate::jobs::steps::{StepLog, StepRecord};

    #[test]
    fn only_running_steps_are_asked_about() {
        let step = |id, state| StepRecord { id, state, nodes: vec![format!("n{id}")], ..Default::default() };
        let list = vec![step(0, JobState::Completed), step(1, JobState::Running), step(2, JobState::Running)];
        let j =
            JobRecord { steps: Some(Box::new(StepLog { list, ..Default::default() })), ..Default::default() };
        assert_eq!(running_steps(&j, None), [(1, vec!["n1".to_string()]), (2, vec!["n2".to_string()])]);
        assert_eq!(running_steps(&j, Some(2)).len(), 1);
        assert!(running_steps(&j, Some(0)).is_empty());
        assert!(running_steps(&JobRecord::default(), None).is_empty());
    }

    #[test]
    fn an_answer_goes_to_its_request_and_a_late_one_is_dropped() {
        let s = Waiting::<pb::UseReport>::default();
        let (id, mut rx) = s.open();
        s.answer(id, pb::UseReport { request_id: id, node: "n1".into(), ..Default::default() });
        assert_eq!(rx.try_recv().unwrap().node, "n1");
        s.close(id);
        s.answer(id, pb::UseReport::default());
        assert!(rx.try_recv().is_err());
    }
}
