//! How jobs end or go back to the queue: scancel, an agent's report, the
//! controller's own ends (time limit, lost node, preemption) and requeue.
//! Each is a transition (persisted, then installed); the processes are
//! signalled only after the store took the change, and through the agent
//! to the job's whole process group, with Slurm's KillWait before SIGKILL.

use super::JobService;
use super::record::JobRecord;
use super::transition::Changed;
use crate::accounting::Caller;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::store::now_ms;
use spur_proto::v1 as pb;
use spur_vocab::JobState;
use std::collections::HashSet;

/// How many jobs one write of a bulk cancel carries: memory follows the
/// chunk, not the request.
const CANCEL_CHUNK: usize = 256;
const SIGKILL: i32 = 9;
const SIGTERM: i32 = 15;

/// `j` ended in `state`.
pub(crate) fn ended(j: &JobRecord, state: JobState, exit_code: i32, reason: &str) -> JobRecord {
    let mut n = j.clone();
    n.state = state;
    n.end_ms = now_ms();
    n.exit_code = exit_code;
    n.reason = reason.into();
    n.reason_detail.clear();
    n
}

/// The final state and reason an agent's report means.
fn reported(r: &pb::JobReport) -> (JobState, String) {
    match (r.state.as_str(), r.exit_code, r.signal) {
        ("failed", ..) => (JobState::Failed, format!("launch failed: {}", r.message)),
        (_, 0, 0) => (JobState::Completed, String::new()),
        (_, _, 0) => (JobState::Failed, "NonZeroExitCode".to_string()),
        _ => (JobState::Failed, format!("killed by signal {}", r.signal)),
    }
}

impl JobService {
    /// Checks the caller may act on a job: its owner, or Operator and above.
    pub(crate) fn owns(&self, role: Role, caller: &Caller, j: &JobRecord) -> Result<()> {
        if role >= Role::Operator || j.user == caller.user {
            Ok(())
        } else {
            Err(Error::PermissionDenied(format!(
                "job {} belongs to '{}'; only its owner or an Operator may change it",
                j.id, j.user
            )))
        }
    }

    /// scancel. With a signal, running jobs get it and keep running (pending
    /// ones are cancelled, as in Slurm). Every id is checked first, so one
    /// unknown or foreign job changes nothing. Returns the jobs acted on.
    pub async fn cancel(&self, role: Role, caller: &Caller, ids: &[u64], signal: i32) -> Result<Vec<u64>> {
        {
            let q = self.lock();
            for id in ids {
                let j = q.jobs.get(id).ok_or_else(|| Error::NotFound(format!("job {id} does not exist")))?;
                self.owns(role, caller, j)?;
            }
        }
        let mut done = vec![];
        for chunk in ids.chunks(CANCEL_CHUNK) {
            let signalled: Vec<(u64, String)> = if signal == 0 {
                vec![]
            } else {
                let q = self.lock();
                (chunk.iter().filter_map(|id| q.jobs.get(id)))
                    .filter(|j| j.state == JobState::Running)
                    .filter_map(|j| Some((j.id, j.nodes.first()?.clone())))
                    .collect()
            };
            for (id, node) in &signalled {
                self.signal_on(node, *id, signal, 0).await;
            }
            let sent: HashSet<u64> = signalled.iter().map(|(id, _)| *id).collect();
            let rest: Vec<u64> = chunk.iter().copied().filter(|id| !sent.contains(id)).collect();
            let changed = self
                .transition(&rest, |j| Ok(j.is_active().then(|| ended(j, JobState::Cancelled, 0, ""))))
                .await?;
            let cancelled: HashSet<u64> = changed.iter().map(|c| c.new.id).collect();
            for c in &changed {
                self.terminate(&c.old).await;
            }
            done.extend(chunk.iter().filter(|id| sent.contains(id) || cancelled.contains(id)));
        }
        Ok(done)
    }

    /// Ends an active job in `state`; what it was before, when it changed.
    pub(crate) async fn finish(
        &self,
        id: u64,
        state: JobState,
        exit_code: i32,
        reason: &str,
    ) -> Result<Option<Changed>> {
        self.transition_one(id, |j| Ok(j.is_active().then(|| ended(j, state, exit_code, reason)))).await
    }

    /// Ends a job and then stops what runs of it.
    pub(crate) async fn end_and_terminate(&self, id: u64, state: JobState, reason: &str) -> Result<()> {
        if let Some(c) = self.finish(id, state, 0, reason).await? {
            self.terminate(&c.old).await;
        }
        Ok(())
    }

    /// An agent's report that a job ended. Only the agent hosting the job's
    /// first node (where it was launched) may end it; the end is durable
    /// before the call returns, so the agent keeps it until then.
    pub async fn report(&self, agent_nodes: &[String], r: pb::JobReport) -> Result<()> {
        let id = r.job_id;
        let _held = self.stripes.lock([id]).await;
        {
            let mut q = self.lock();
            // The end of a run the controller took back (requeue) says nothing of the next run.
            if q.stale_reports.remove(&id) {
                return Ok(());
            }
            let Some(j) = q.jobs.get(&id).filter(|j| j.is_placed()) else { return Ok(()) };
            let first = j.nodes.first().cloned().unwrap_or_default();
            if !agent_nodes.contains(&first) {
                return Err(Error::PermissionDenied(format!(
                    "job {id} runs on {first}, which this agent does not host; its report is refused"
                )));
            }
        }
        let (state, reason) = reported(&r);
        let next = |j: &JobRecord| Ok(j.is_placed().then(|| ended(j, state, r.exit_code, &reason)));
        self.apply_locked(&[id], next).await?;
        Ok(())
    }

    /// Puts a running job back in the queue with its spec intact, ending its run.
    pub(crate) async fn requeue(&self, id: u64) -> Result<()> {
        self.requeue_run(id, true).await
    }

    /// Requeues a job whose agent no longer runs it: there is nothing to kill
    /// and no end will be reported.
    pub(crate) async fn requeue_lost(&self, id: u64) -> Result<()> {
        self.requeue_run(id, false).await
    }

    async fn requeue_run(&self, id: u64, kill: bool) -> Result<()> {
        let changed = {
            let _held = self.stripes.lock([id]).await;
            let back = |j: &JobRecord| {
                Ok(j.is_placed().then(|| {
                    let mut n = j.clone();
                    n.state = JobState::Pending;
                    n.nodes.clear();
                    n.licenses_alloc.clear();
                    n.start_ms = 0;
                    n
                }))
            };
            let Some(c) = self.apply_locked(&[id], back).await?.pop() else { return Ok(()) };
            if kill {
                // Under the job's lock, so its run's end cannot slip in first.
                self.lock().stale_reports.insert(id);
            }
            c
        };
        if kill {
            self.terminate(&changed.old).await;
        }
        Ok(())
    }

    /// Stops what runs of a job that ended: SIGTERM to its process group,
    /// SIGKILL after `kill_wait_secs`.
    pub(crate) async fn terminate(&self, was: &JobRecord) {
        if let Some(first) = was.nodes.first().filter(|_| was.is_placed()) {
            self.signal_on(first, was.id, SIGTERM, self.kill_wait_secs).await;
        }
    }

    /// Kills a run the controller does not want (a stray after a restart) at once.
    pub(crate) async fn kill_on(&self, node: &str, id: u64) {
        self.signal_on(node, id, SIGKILL, 0).await;
    }

    pub(crate) async fn signal(&self, j: &JobRecord, signal: i32) {
        if let Some(first) = j.nodes.first() {
            self.signal_on(first, j.id, signal, 0).await;
        }
    }

    /// Sends `signal` to job `id`'s process group through the agent of `node`.
    pub(crate) async fn signal_on(&self, node: &str, id: u64, signal: i32, kill_wait_secs: u32) {
        let cmd = pb::AgentCommand {
            cmd: Some(pb::agent_command::Cmd::Signal(pb::SignalJob { job_id: id, signal, kill_wait_secs })),
        };
        if let Err(e) = self.nodes.send(node, cmd).await {
            tracing::warn!(job = id, node, signal, error = %e, "could not signal the job");
        }
    }
}
