//! The async side of scheduling: build a snapshot, run the pure scheduler,
//! apply its plan (allocate, launch on the first node's agent), record every
//! pending job's reason, and handle reports, time limits and failed nodes.

use super::JobService;
use super::record::JobRecord;
use crate::model::BaseState;
use crate::sched::{self, SchedNode, Snapshot};
use crate::store::now_ms;
use spur_proto::v1 as pb;
use spur_vocab::JobState;
use spur_vocab::hostlist;
use std::sync::Arc;
use std::time::Duration;

/// The least time between two passes.
const MIN_GAP: Duration = Duration::from_millis(100);

impl JobService {
    /// Runs a pass every `interval` and whenever something changes.
    pub fn spawn(self: &Arc<Self>, interval: Duration) -> Vec<tokio::task::JoinHandle<()>> {
        let me = self.clone();
        let passes = tokio::spawn(async move {
            let mut nodes_rx = me.nodes.subscribe();
            loop {
                me.pass().await;
                // Events arriving in a burst (a wave of submits) share one pass,
                // so the queue lock is not held pass after pass under load.
                tokio::time::sleep(MIN_GAP).await;
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = me.kick.notified() => {}
                    _ = nodes_rx.recv() => {}
                }
            }
        });
        vec![passes, self.spawn_flusher()]
    }

    /// What a pass reads, as of `now`.
    pub(crate) fn snapshot(&self, now: i64, nodes: &[crate::model::Node]) -> Snapshot {
        let catalog = self.acct.catalog();
        let figures = self.figures(now, &catalog);
        // Read before the snapshot: its job list holds the queue lock to the end of the statement.
        let evicted_for = self.evicted_for();
        Snapshot {
            nodes: nodes.iter().map(SchedNode::from_model).collect(),
            partitions: self.nodes.partitions(),
            jobs: self.lock().jobs.values().filter(|j| j.is_active()).map(JobRecord::sched_job).collect(),
            catalog,
            usage: figures.usage,
            grp_wall_used: figures.grp_wall_used,
            evicted_for,
            licenses: self.licenses.plain(),
            hres: self.licenses.hres(),
            config: self.sched.clone(),
        }
    }

    /// One scheduling pass.
    pub async fn pass(&self) {
        let now = now_ms();
        self.enforce(now).await;
        let nodes = self.nodes.nodes();
        let snap = self.snapshot(now, &nodes);
        let plan = sched::schedule(&snap, now);
        self.apply_preemption(&plan, now).await;
        {
            let mut q = self.lock();
            let mut marks = vec![];
            for p in &plan.pending {
                if let Some(j) = q.jobs.get_mut(&p.job) {
                    let (code, detail) = (p.reason.code.as_str(), p.reason.sentence());
                    if j.reason != code || j.reason_detail != detail {
                        j.reason = code.into();
                        j.reason_detail = detail;
                        marks.push(j.id);
                    }
                    j.eff_priority = p.priority.value() as f64;
                    j.factors = factors(&p.priority);
                }
            }
            for id in marks {
                q.mark(id);
            }
        }
        let starts: std::collections::HashMap<u64, &sched::Start> =
            plan.starts.iter().map(|s| (s.job, s)).collect();
        let ids: Vec<u64> = plan.starts.iter().map(|s| s.job).collect();
        // A start is durable before it is shown or launched: one the store
        // refuses leaves the job pending, not running nowhere.
        let started = self
            .transition(&ids, |j| {
                let Some(s) = starts.get(&j.id).filter(|_| j.state == JobState::Pending) else {
                    return Ok(None);
                };
                Ok(Some(started(j, s, &nodes, now)))
            })
            .await;
        let evicted = !plan.preemptions.is_empty();
        self.remember(super::preempt::LastPass { plan, now_ms: now });
        if evicted {
            // The victims' room is free now; place their preemptors without waiting a full interval.
            self.kick.notify_one();
        }
        // The pass is one batch: flushed now rather than after the gather delay.
        self.flush();
        let started = match started {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, "could not persist started jobs; they stay pending");
                return;
            }
        };
        for c in started {
            let (node, cmd, id) = launch(&c.new);
            let sent = self.nodes.send(&node, cmd).await;
            self.lock().launching.remove(&id);
            if let Err(e) = sent {
                tracing::warn!(job = id, node, error = %e, "launch failed; requeueing");
                // The agent never had it: nothing to kill, and no end will be reported.
                let _ = self.requeue_lost(id).await;
            }
        }
    }

    /// The time-limit watchdog, and jobs whose nodes went down.
    async fn enforce(&self, now: i64) {
        let running: Vec<JobRecord> =
            self.lock().jobs.values().filter(|j| j.state == JobState::Running).cloned().collect();
        for j in running {
            if j.deadline_ms().is_some_and(|d| now >= d) {
                let _ = self.end_and_terminate(j.id, JobState::Timeout, "TimeLimit").await;
                continue;
            }
            let lost =
                j.nodes.iter().any(|n| self.nodes.node(n).is_none_or(|n| n.base_state() == BaseState::Down));
            if lost {
                if j.requeue {
                    tracing::warn!(job = j.id, "a node of the job went down; requeueing");
                    let _ = self.requeue(j.id).await;
                } else {
                    let _ = self.finish(j.id, JobState::NodeFail, 0, "NodeDown").await;
                }
            }
        }
    }
}

/// `j` started by the pass at `now` where `s` placed it.
fn started(j: &JobRecord, s: &sched::Start, nodes: &[crate::model::Node], now: i64) -> JobRecord {
    let mut n = j.clone();
    let shape = j.sched_job().shape();
    let first = nodes.iter().find(|n| Some(&n.name) == s.nodes.first());
    n.alloc = match first {
        Some(node) if shape.exclusive => (node.cpus, node.memory_mb, shape.gpus),
        _ => (shape.cpus, shape.mem_mb, shape.gpus),
    };
    n.state = JobState::Running;
    n.nodes = s.nodes.clone();
    n.licenses_alloc = s.licenses.clone();
    n.start_ms = now;
    n.reason.clear();
    n.reason_detail.clear();
    n.eff_priority = s.priority.value() as f64;
    n.factors = factors(&s.priority);
    n
}

fn factors(p: &sched::PriorityFactors) -> (f64, f64, f64, u32) {
    (p.base, p.fair_share, p.age, p.tier)
}

/// Figures read from job history: decayed usage for fair share, and each
/// QOS's wall-clock minutes over the GrpWall window.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub at_ms: i64,
    pub usage: sched::UsageTable,
    pub grp_wall_used: Option<std::collections::HashMap<String, u64>>,
}

impl JobService {
    /// Fair share per (account, user), from the current usage figures.
    pub fn shares(&self) -> sched::FairShare {
        let catalog = self.acct.catalog();
        let f = self.figures(now_ms(), &catalog);
        sched::FairShare::compute(&catalog, &f.usage)
    }

    /// The figures, recomputed when older than the refresh interval (the
    /// spec's `fairshare_refresh_secs`), so a budget can overshoot between reads.
    fn figures(&self, now: i64, catalog: &crate::accounting::Catalog) -> Figures {
        if let Some(f) = self.figures.lock().unwrap_or_else(|p| p.into_inner()).as_ref()
            && now - f.at_ms < self.refresh_ms
        {
            return f.clone();
        }
        let jobs: Vec<JobRecord> = self.usage_jobs();
        let records: Vec<sched::UsageRecord> = jobs
            .iter()
            .map(|j| sched::UsageRecord {
                user: j.user.clone(),
                account: j.account.clone().unwrap_or_default(),
                qos: j.qos.clone(),
                cpus: u64::from(j.alloc.0) * j.nodes.len().max(1) as u64,
                start_ms: j.start_ms,
                end_ms: (j.end_ms > 0).then_some(j.end_ms),
            })
            .collect();
        let usage = sched::priority::decayed_usage(records.iter(), catalog, now, self.halflife_days);
        let window_ms =
            i64::try_from(self.grp_wall_window_days.saturating_mul(86_400_000)).unwrap_or(i64::MAX);
        let window_start = now.saturating_sub(window_ms);
        let mut wall: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
        for j in &jobs {
            let (Some(q), end) = (&j.qos, if j.end_ms > 0 { j.end_ms } else { now }) else { continue };
            let from = j.start_ms.max(window_start);
            if end > from {
                *wall.entry(q.clone()).or_default() += ((end - from) / 60_000) as u64;
            }
        }
        let f = Figures { at_ms: now, usage, grp_wall_used: Some(wall) };
        *self.figures.lock().unwrap_or_else(|p| p.into_inner()) = Some(f.clone());
        f
    }
}

/// The launch command for a started job, with Slurm's environment.
fn launch(j: &JobRecord) -> (String, pb::AgentCommand, u64) {
    let nodelist = hostlist::compress(&j.nodes);
    let mut env: Vec<(String, String)> = vec![
        ("SPUR_JOB_ID".into(), j.id.to_string()),
        ("SLURM_JOB_ID".into(), j.id.to_string()),
        ("SLURM_JOBID".into(), j.id.to_string()),
        ("SLURM_JOB_NAME".into(), j.name.clone()),
        ("SLURM_JOB_NODELIST".into(), nodelist.clone()),
        ("SLURM_NODELIST".into(), nodelist),
        ("SLURM_JOB_NUM_NODES".into(), j.nodes.len().to_string()),
        ("SLURM_NNODES".into(), j.nodes.len().to_string()),
        ("SLURM_NTASKS".into(), j.ntasks.max(j.num_nodes).to_string()),
        ("SLURM_CPUS_PER_TASK".into(), j.cpus_per_task.to_string()),
        ("SLURM_JOB_PARTITION".into(), j.partition.clone()),
        ("SLURM_JOB_ACCOUNT".into(), j.account.clone().unwrap_or_default()),
        ("SLURM_JOB_QOS".into(), j.qos.clone().unwrap_or_default()),
        ("SLURM_JOB_USER".into(), j.user.clone()),
        ("SLURM_SUBMIT_DIR".into(), j.workdir.clone()),
    ];
    env.extend(j.env.iter().cloned());
    let path = |p: &str| {
        let p = if p.is_empty() { "slurm-%j.out" } else { p };
        let p = p.replace("%j", &j.id.to_string()).replace("%u", &j.user).replace("%x", &j.name);
        if p.starts_with('/') || j.workdir.is_empty() { p } else { format!("{}/{p}", j.workdir) }
    };
    let stdout = path(&j.stdout_path);
    let stderr = if j.stderr_path.is_empty() { stdout.clone() } else { path(&j.stderr_path) };
    let first = j.nodes.first().cloned().unwrap_or_default();
    let cmd = pb::AgentCommand {
        cmd: Some(pb::agent_command::Cmd::Launch(pb::Launch {
            job_id: j.id,
            node: first.clone(),
            script: j.script.clone(),
            env: env.into_iter().map(|(key, value)| pb::KeyValue { key, value }).collect(),
            stdout_path: stdout,
            stderr_path: stderr,
            workdir: j.workdir.clone(),
        })),
    };
    (first, cmd, j.id)
}
