//! Applying the scheduler's preemptions and resumes, and answering
//! `scontrol explain`: the scheduler's own evaluation (the same code as a
//! pass) on a snapshot taken now, with the last pass's reason and, where
//! that pass decided for the job, its checks and outcome.

use super::JobService;
use super::effect::{Effect, Effects, SIGCONT, SIGSTOP};
use super::ending::{ended, requeued};
use super::parts::PastRun;
use super::queue::Queue;
use super::record::JobRecord;
use crate::config::SchedulerConfig;
use crate::error::{Error, Result};
use crate::sched::{self, JobVerdict, PairVerdict, Plan, PreemptConfig, Reason};
use crate::store::now_ms;
use spur_vocab::JobState;
use spur_vocab::names::PreemptMode;
use std::collections::HashSet;
use std::sync::Arc;

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
    /// Each provisioner definition, with its refusal (None: it admits the job).
    pub definitions: Vec<(String, Option<sched::provision::Refusal>)>,
    /// `scheduler.priority`'s value in the last pass, and its inputs now.
    pub ordered: Option<f64>,
    pub inputs: Vec<(String, String)>,
}

impl JobService {
    pub(crate) fn remember(&self, last: LastPass) -> Arc<LastPass> {
        let last = Arc::new(last);
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(last.clone());
        last
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
        // Every definition either admits the job or refused it.
        let definitions = match (&snap.provision, snap.admits.get(&id)) {
            (Some(p), Some(a)) => (p.defs.iter())
                .map(|d| (d.id.clone(), a.refusals.iter().find(|r| r.definition == d.id).cloned()))
                .collect(),
            _ => vec![],
        };
        let pending = last.plan.pending.iter().find(|p| p.job == id);
        let ordered = pending.and_then(|p| p.priority.ordered);
        let inputs = match (&snap.provision, pending, snap.jobs.iter().find(|j| j.id == id)) {
            (Some(p), Some(pend), Some(job)) if p.priority.is_some() => {
                let qos = job.qos.as_deref().and_then(|q| snap.catalog.qos.get(q));
                let ctx = sched::provision::priority_context(job, qos, &snap.catalog, &pend.priority, now);
                sched::provision::flatten(&ctx)
            }
            _ => vec![],
        };
        Ok(JobExplanation { reason: last.plan.reason_of(id).cloned(), verdict, definitions, ordered, inputs })
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
        if plan.preemptions.is_empty() && plan.resumes.is_empty() {
            return;
        }
        let evicting: Vec<(u64, u64, PreemptMode)> = {
            let q = self.lock();
            (plan.preemptions.iter())
                .filter(|p| q.jobs().get(&p.victim).is_some_and(|j| j.state == JobState::Running))
                .map(|p| (p.victim, p.by, p.mode))
                .collect()
        };
        for (victim, by, mode) in &evicting {
            self.evicted_for.lock().unwrap_or_else(|e| e.into_inner()).insert(*by, now);
            tracing::info!(victim, by, mode = mode.as_str(), "preempting");
        }
        let ids: Vec<u64> = evicting.iter().map(|v| v.0).chain(plan.resumes.iter().copied()).collect();
        if let Err(e) = self.transit(&ids, |q| Ok(q.preempt(plan, now))).await {
            tracing::error!(jobs = ?ids, error = %e, "could not preempt or resume");
        }
    }
}

/// `j` stopped where it runs at `now`: its CPUs and GPUs go back (see the
/// executor's node settling), its memory stays, and the time suspended is
/// kept off its limit.
fn suspended(j: &JobRecord, now: i64) -> JobRecord {
    let mut n = j.clone();
    n.state = JobState::Suspended;
    n.suspend_ms = now;
    n
}

/// `j` running again at `now`, its CPUs and GPUs taken back.
fn resumed(j: &JobRecord, now: i64) -> JobRecord {
    let mut n = j.clone();
    n.state = JobState::Running;
    n.suspended_total_ms += now.saturating_sub(j.suspend_ms);
    n.suspend_ms = 0;
    n
}

impl Queue {
    /// The plan's evictions and resumes at `now`. Each victim still running
    /// is requeued, suspended or cancelled as its mode says, remembering who
    /// preempted it; each job the plan resumes that is still suspended runs
    /// again. Every eviction and resume is audited.
    pub fn preempt(&self, plan: &Plan, now: i64) -> Effects {
        let mut fx = Effects::default();
        let mut seen = HashSet::new();
        for p in &plan.preemptions {
            let Some(j) = self.jobs().get(&p.victim).filter(|j| j.state == JobState::Running) else {
                continue;
            };
            if !seen.insert(j.id) {
                continue;
            }
            let mut victim = JobRecord { preempted_by: Some(p.by), ..j.clone() };
            // A reclaim is counted on the job: its next loan is guarded twice as long.
            victim.reclaims += u32::from(p.reclaim);
            match p.mode {
                PreemptMode::Requeue => {
                    let mut next = requeued(&victim, now);
                    let run = PastRun {
                        start_ms: j.start_ms,
                        end_ms: now,
                        nodes: j.nodes.clone(),
                        preempted_by: p.by,
                        borrowed: j.borrowed,
                        reclaim: p.reclaim,
                    };
                    next.push_past_run(run);
                    fx.persist(next);
                    fx.push(Effect::IgnoreReport(j.id));
                    fx.terminate(j, self.kill_wait);
                }
                PreemptMode::Suspend => {
                    fx.persist(suspended(&victim, now));
                    fx.signal(j, SIGSTOP, 0);
                }
                _ => {
                    fx.persist(ended(
                        &victim,
                        JobState::Cancelled,
                        0,
                        Some(spur_vocab::reason::ReasonCode::Preempted),
                        now,
                    ));
                    fx.terminate(j, self.kill_wait);
                }
            }
            let info = match p.reclaim {
                true => serde_json::json!({ "by": p.by, "mode": "requeue", "reason": "idle-fill reclaim" }),
                false => serde_json::json!({ "by": p.by, "mode": p.mode.as_str() }),
            };
            fx.push(Effect::Audit { job: j.id, action: "preempt", info });
        }
        for id in &plan.resumes {
            let Some(j) = self.jobs().get(id).filter(|j| j.state == JobState::Suspended) else { continue };
            fx.persist(resumed(j, now));
            fx.signal(j, SIGCONT, 0);
            fx.push(Effect::Audit { job: j.id, action: "resume", info: serde_json::json!({}) });
        }
        fx
    }
}

impl JobService {
    /// Drain timeouts of preemptors that are no longer pending are forgotten.
    pub(crate) fn evicted_for(&self) -> std::collections::HashMap<u64, i64> {
        let mut m = self.evicted_for.lock().unwrap_or_else(|e| e.into_inner());
        let q = self.lock();
        m.retain(|id, _| q.jobs().get(id).is_some_and(|j| j.state == JobState::Pending));
        m.clone()
    }
}
