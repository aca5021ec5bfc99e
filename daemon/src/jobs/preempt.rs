//! Applying the scheduler's preemptions and resumes, and answering
//! `scontrol explain`: the scheduler's own evaluation (the same code as a
//! pass) on a snapshot taken now, with the last pass's reason and, where
//! that pass decided for the job, its checks and outcome.

use super::JobService;
use super::record::JobRecord;
use crate::config::SchedulerConfig;
use crate::error::{Error, Result};
use crate::sched::{self, JobVerdict, PairVerdict, Plan, PreemptConfig, Reason};
use crate::store::{TxnRow, now_ms};
use spur_vocab::JobState;
use spur_vocab::names::PreemptMode;
use std::sync::Arc;

const SIGCONT: i32 = 18;
const SIGSTOP: i32 = 19;

/// What the last pass decided.
#[derive(Debug)]
pub struct LastPass {
    pub plan: Plan,
    pub now_ms: i64,
}

/// `[scheduler]` preemption knobs as the pure scheduler takes them (validated at load).
pub fn preempt_config(c: &SchedulerConfig) -> PreemptConfig {
    PreemptConfig {
        enabled: c.preemption_enabled,
        qos_allow_list: c.preempt_type == crate::config::PreemptType::QosPriority,
        exempt_secs: c.preempt_exempt_time,
        threshold_pct: c.threshold(),
        min_gap: c.preemption_gap,
        min_runtime_secs: c.min_preemption_runtime.secs().unwrap_or(60),
        multi_victim: c.preemption_multi_victim_enabled,
        max_evictions: c.max_evictions_per_tick,
        drain_timeout_secs: c.preemption_drain_timeout.secs().unwrap_or(30),
    }
}

/// An explanation of one pending job: its reason (from the last pass) and the preemption verdict.
#[derive(Debug, Clone)]
pub struct JobExplanation {
    pub reason: Option<Reason>,
    pub verdict: JobVerdict,
}

impl JobService {
    pub(crate) fn remember(&self, last: LastPass) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(last));
    }

    fn last_pass(&self) -> Result<Arc<LastPass>> {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner()).clone();
        last.ok_or_else(|| Error::Unavailable("the scheduler has not run a pass yet".into()))
    }

    /// When the last pass ran; 0 before the first.
    pub fn last_pass_ms(&self) -> i64 {
        self.last.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map_or(0, |l| l.now_ms)
    }

    pub fn explain_job(&self, id: u64) -> Result<JobExplanation> {
        self.job(id).ok_or_else(|| Error::NotFound(format!("job {id} does not exist")))?;
        let last = self.last_pass()?;
        let now = now_ms();
        let snap = self.snapshot(now, &self.nodes.nodes());
        let verdict =
            sched::explain_job(&snap, Some(&last.plan), now, id).map_err(Error::FailedPrecondition)?;
        Ok(JobExplanation { reason: last.plan.reason_of(id).cloned(), verdict })
    }

    pub fn explain_pair(&self, pending: u64, running: u64) -> Result<PairVerdict> {
        for id in [pending, running] {
            self.job(id).ok_or_else(|| Error::NotFound(format!("job {id} does not exist")))?;
        }
        let now = now_ms();
        let snap = self.snapshot(now, &self.nodes.nodes());
        sched::explain_pair(&snap, now, pending, running).map_err(Error::FailedPrecondition)
    }

    /// Evicts the plan's victims and resumes suspended jobs whose preemptor is gone.
    pub(crate) async fn apply_preemption(&self, plan: &Plan, now: i64) {
        let mut rows = vec![];
        for p in &plan.preemptions {
            let Some(j) = self.job(p.victim).filter(|j| j.state == JobState::Running) else { continue };
            self.evicted_for.lock().unwrap_or_else(|e| e.into_inner()).insert(p.by, now);
            tracing::info!(victim = p.victim, by = p.by, mode = p.mode.as_str(), "preempting");
            self.set_preempted_by(p.victim, p.by);
            let done = match p.mode {
                PreemptMode::Requeue => self.requeue(p.victim).await,
                PreemptMode::Suspend => self.suspend(&j, now).await,
                _ => self.end_and_terminate(p.victim, JobState::Cancelled, "Preempted").await,
            };
            match done {
                Ok(()) => rows.push(TxnRow::system(
                    "job",
                    &p.victim.to_string(),
                    "preempt",
                    serde_json::json!({ "by": p.by, "mode": p.mode.as_str() }),
                )),
                Err(e) => tracing::error!(job = p.victim, error = %e, "could not preempt"),
            }
        }
        for id in &plan.resumes {
            match self.resume(*id, now).await {
                Ok(true) => {
                    rows.push(TxnRow::system("job", &id.to_string(), "resume", serde_json::json!({})))
                }
                Ok(false) => {}
                Err(e) => tracing::error!(job = id, error = %e, "could not resume"),
            }
        }
        if !rows.is_empty() {
            self.nodes.hub().record_all(rows).await;
        }
    }

    fn set_preempted_by(&self, victim: u64, by: u64) {
        let mut q = self.lock();
        if let Some(j) = q.jobs.get_mut(&victim) {
            j.preempted_by = Some(by);
            q.mark(victim);
        }
    }

    /// Stops the job where it runs; its CPUs and GPUs go back, its memory stays.
    async fn suspend(&self, j: &JobRecord, now: i64) -> Result<()> {
        if self.set_suspended(j.id, true, now).await?.is_some() {
            self.signal(j, SIGSTOP).await;
        }
        Ok(())
    }

    async fn resume(&self, id: u64, now: i64) -> Result<bool> {
        let Some(rec) = self.set_suspended(id, false, now).await? else { return Ok(false) };
        self.signal(&rec, SIGCONT).await;
        Ok(true)
    }

    /// Moves a job between RUNNING and SUSPENDED (its CPUs and GPUs go back,
    /// or are taken again, while its memory stays: see the transition's
    /// node settling), keeping the time suspended off its limit. None when
    /// the job was not in the state to leave.
    async fn set_suspended(&self, id: u64, suspend: bool, now: i64) -> Result<Option<JobRecord>> {
        let (from, to) = if suspend {
            (JobState::Running, JobState::Suspended)
        } else {
            (JobState::Suspended, JobState::Running)
        };
        let next = |j: &JobRecord| {
            Ok((j.state == from).then(|| {
                let mut n = j.clone();
                n.state = to;
                if suspend {
                    n.suspend_ms = now;
                } else {
                    n.suspended_total_ms += now.saturating_sub(j.suspend_ms);
                    n.suspend_ms = 0;
                }
                n
            }))
        };
        Ok(self.transition_one(id, next).await?.map(|c| c.new))
    }

    /// Drain timeouts of preemptors that are no longer pending are forgotten.
    pub(crate) fn evicted_for(&self) -> std::collections::HashMap<u64, i64> {
        let mut m = self.evicted_for.lock().unwrap_or_else(|e| e.into_inner());
        let q = self.lock();
        m.retain(|id, _| q.jobs.get(id).is_some_and(|j| j.state == JobState::Pending));
        m.clone()
    }
}
