//! How jobs end or go back to the queue: scancel, an agent's report, the
//! controller's own ends (time limit, lost node) and requeue. Each is a
//! transition of the queue returning its effects; the processes are
//! signalled only after the store took the change (the executor's order),
//! through the agent to the job's whole process group, with Slurm's
//! KillWait before SIGKILL.

use super::JobService;
use super::effect::{Effect, Effects};
use super::queue::{Queue, owns};
use super::record::{JobRecord, Usage};
use crate::accounting::Caller;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::store::now_ms;
use spur_proto::v1 as pb;
use spur_vocab::JobState;
use spur_vocab::reason::ReasonCode;
use spur_vocab::signal::WarnSignal;
use std::collections::HashSet;

/// How many jobs one write of a bulk cancel carries: memory follows the
/// chunk, not the request.
const CANCEL_CHUNK: usize = 256;

/// `j` ended in `state` at `now`, for `reason` (none for an end of its own
/// or a cancel); the detail holds the words of a failure that has them.
pub(crate) fn ended(
    j: &JobRecord,
    state: JobState,
    exit_code: i32,
    reason: Option<ReasonCode>,
    now: i64,
) -> JobRecord {
    let mut n = j.clone();
    n.state = state;
    n.end_ms = now;
    n.exit_code = exit_code;
    n.exit_signal = 0;
    n.reason = reason;
    n.reason_detail.clear();
    // Ended before it was launched (still CONFIGURING): nothing of a borrowed node was used.
    if j.state == JobState::Configuring {
        n.charge.clear();
    }
    // Its steps end with it (their tasks are stopped by the install).
    n.close_steps(state, now);
    n
}

/// `j` back in the queue at `now` with its spec intact, its run forgotten
/// but for what it cost on borrowed nodes.
pub(crate) fn requeued(j: &JobRecord, now: i64) -> JobRecord {
    let mut n = j.clone();
    for (d, c) in j.run_cost(now).filter(|(_, c)| *c > 0.0) {
        match n.spent.iter_mut().find(|(s, _)| s == d) {
            Some((_, sum)) => *sum += c,
            None => n.spent.push((d.to_string(), c)),
        }
    }
    n.state = JobState::Pending;
    n.nodes.clear();
    n.licenses_alloc.clear();
    n.start_ms = 0;
    n.usage = None;
    // The next run is lent, or not, afresh, and charged for its own nodes.
    n.borrowed = false;
    n.charge.clear();
    n.hres = None;
    n.forget_steps();
    n.restarts = j.restarts.saturating_add(1);
    n
}

/// What an agent's report means: the job `j` ended at `now`, with its
/// state, reason, exit code and signal, and a launch failure's words.
fn reported(j: &JobRecord, r: &pb::JobReport, now: i64) -> JobRecord {
    let (state, reason, words) = match (r.state.as_str(), r.exit_code, r.signal) {
        ("failed", ..) => {
            (JobState::Failed, Some(ReasonCode::JobLaunchFailure), format!("launch failed: {}", r.message))
        }
        (_, 0, 0) => (JobState::Completed, None, String::new()),
        (_, _, 0) => (JobState::Failed, Some(ReasonCode::NonZeroExitCode), String::new()),
        _ => (JobState::Failed, Some(ReasonCode::RaisedSignal), String::new()),
    };
    let mut n = ended(j, state, r.exit_code, reason, now);
    n.exit_signal = r.signal;
    n.reason_detail = words;
    n
}

/// What a report says the run used; None for a launch that failed, which ran nothing.
fn usage(r: &pb::JobReport) -> Option<Usage> {
    let u = Usage { user_cpu_us: r.user_cpu_us, sys_cpu_us: r.sys_cpu_us, max_rss_kb: r.max_rss_kb };
    (r.state != "failed").then_some(u)
}

/// The report of a run the controller ended itself (scancel, the time
/// limit, a lost node) arrives after that end: the job keeps its end and
/// takes what its agent measured, once. Anything else is no news.
fn late_usage(agent_nodes: &[String], j: &JobRecord, r: &pb::JobReport) -> Effects {
    let from_its_node = j.nodes.first().is_some_and(|n| agent_nodes.contains(n));
    match usage(r) {
        Some(u) if !j.is_active() && j.start_ms > 0 && j.usage.is_none() && from_its_node => {
            Effect::Persist(JobRecord { usage: Some(u), ..j.clone() }).into()
        }
        _ => Effects::default(),
    }
}

impl Queue {
    /// Every id exists and is the caller's to act on: checked for all before
    /// any changes, so one unknown or foreign job changes nothing.
    pub fn may_act(&self, role: Role, caller: &Caller, ids: &[u64]) -> Result<()> {
        ids.iter().try_for_each(|id| owns(role, caller, self.get(*id)?))
    }

    /// scancel of `ids` at `now`. With a signal, running jobs get it and keep
    /// running; the others, and all without one, are cancelled (as in
    /// Slurm), and what ran of them is terminated.
    pub fn cancel(&self, ids: &[u64], signal: i32, now: i64) -> Effects {
        let mut fx = Effects::default();
        let mut seen = HashSet::new();
        for j in ids.iter().filter(|id| seen.insert(**id)).filter_map(|id| self.jobs().get(id)) {
            if signal != 0 && j.state == JobState::Running && !j.nodes.is_empty() {
                fx.signal(j, signal, 0);
                // Its steps' tasks on its other nodes too (the first node's agent signals its own).
                let stepped =
                    |n: &&String| j.steps.as_ref().is_some_and(|l| l.running().any(|s| s.nodes.contains(n)));
                for node in j.nodes.iter().skip(1).filter(stepped) {
                    let cmd = super::steps::live::signal_step(j.id, None, signal, 0);
                    fx.push(Effect::Command { job: j.id, node: node.clone(), cmd });
                }
            } else if j.is_active() {
                fx.persist(ended(j, JobState::Cancelled, 0, None, now));
                fx.terminate(j, self.kill_wait);
            }
        }
        fx
    }

    /// An agent's report that job `r.job_id` ended. Only the agent hosting
    /// the job's first node (where it was launched) may end it.
    pub fn report(&self, agent_nodes: &[String], r: &pb::JobReport, now: i64) -> Result<Effects> {
        let id = r.job_id;
        let job = self.jobs().get(&id);
        let current = job.map(|j| j.run_id.as_str()).filter(|c| !c.is_empty());
        let stale = self.stale_reports.contains(&id);
        let mut fx = Effects::default();
        match ((!r.run_id.is_empty()).then_some(r.run_id.as_str()), current) {
            // The end of another run (an earlier one, or another controller's
            // job of this id) says nothing of this one.
            (Some(run), Some(cur)) if run != cur => {
                tracing::warn!(job = id, run, current = cur, "a report of another run of the job; ignored");
                return Ok(fx);
            }
            // The running run's own end: a stale mark set for an earlier run does not apply.
            (Some(_), Some(_)) if stale && job.is_some_and(JobRecord::is_placed) => {
                fx.push(Effect::ReportIgnored(id))
            }
            // The end of a run the controller took back says nothing of the next run.
            _ if stale => return Ok(Effect::ReportIgnored(id).into()),
            _ => {}
        }
        let Some(j) = job else { return Ok(fx) };
        if !j.is_placed() {
            return Ok(late_usage(agent_nodes, j, r));
        }
        let first = j.nodes.first().cloned().unwrap_or_default();
        // An HRES plugin's job prolog failed on one of the job's nodes.
        if r.hres_phase == "prolog" && j.nodes.iter().any(|n| agent_nodes.contains(n)) {
            fx.0.extend(self.prolog_failed(j, agent_nodes.contains(&first), &r.hres_message, now).0);
            return Ok(fx);
        }
        if !agent_nodes.contains(&first) {
            return Err(Error::PermissionDenied(format!(
                "job {id} runs on {first}, which this agent does not host; its report is refused"
            )));
        }
        let mut n = reported(j, r, now);
        n.usage = usage(r);
        fx.push(Effect::Persist(n));
        Ok(fx)
    }

    /// A job prolog failed: on the batch node (`batch`) the script never ran
    /// and the run is over; on a step node the run goes on and is stopped. A
    /// batch job goes back to the queue; an allocation cannot, so it is cancelled.
    fn prolog_failed(&self, j: &JobRecord, batch: bool, message: &str, now: i64) -> Effects {
        let info = serde_json::json!({ "reason": message, "by": "hres plugin", "when": "job prolog" });
        if !batch {
            return self.requeue_or_cancel(j.id, true, info, now);
        }
        let (n, action) = match j.is_allocation() {
            true => {
                let mut n = ended(j, JobState::Cancelled, 0, Some(ReasonCode::Prolog), now);
                n.reason_detail = message.to_string();
                (n, "cancel")
            }
            false => (requeued(j, now), "requeue"),
        };
        let mut fx: Effects = Effect::Persist(n).into();
        fx.push(Effect::Audit { job: j.id, action, info });
        fx
    }

    /// The time-limit watchdog: `id` ends in TIMEOUT if it is still running
    /// past its limit at `now`, and its run is terminated.
    pub fn time_out(&self, id: u64, now: i64) -> Effects {
        let mut fx = Effects::default();
        let due = |j: &&JobRecord| j.state == JobState::Running && j.deadline_ms().is_some_and(|d| now >= d);
        if let Some(j) = self.jobs().get(&id).filter(due) {
            fx.persist(ended(j, JobState::Timeout, 0, Some(ReasonCode::TimeLimit), now));
            fx.terminate(j, self.kill_wait);
        }
        fx
    }

    /// sbatch's `--signal`: once a run, `secs` before the time limit, the
    /// job's steps on every node get the signal (with `B:`, its batch
    /// shell alone). The mark is persisted first, so a restart never sends
    /// it twice. Nothing for a job without a limit or a warning, or not yet due.
    pub fn warn(&self, id: u64, now: i64) -> Effects {
        let mut fx = Effects::default();
        let Some((j, w)) = self.jobs().get(&id).and_then(|j| Some((j, j.warning_due(now)?))) else {
            return fx;
        };
        let mut n = j.clone();
        if let Some(x) = n.extra.as_deref_mut() {
            x.signalled_run_ms = j.start_ms;
        }
        fx.persist(n);
        if w.batch_only {
            let shell =
                pb::SignalJob { job_id: id, signal: w.signal, batch_shell_only: true, ..Default::default() };
            let cmd = pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::Signal(shell)) };
            if let Some(node) = j.nodes.first() {
                fx.push(Effect::Command { job: id, node: node.clone(), cmd });
            }
        } else {
            for node in &j.nodes {
                let cmd = super::steps::live::signal_step(id, None, w.signal, 0);
                fx.push(Effect::Command { job: id, node: node.clone(), cmd });
            }
        }
        fx
    }

    /// A running job whose node is lost: requeued when it may be, else
    /// NODE_FAIL with `reason`. `kill`: something of its run may still go
    /// on (its node was marked down), so that is stopped and its end ignored.
    pub fn lost(&self, id: u64, reason: ReasonCode, kill: bool, now: i64) -> Effects {
        match self.jobs().get(&id).filter(|j| j.state == JobState::Running) {
            Some(j) if j.requeue => self.requeue(id, kill, now),
            Some(j) => Effect::Persist(ended(j, JobState::NodeFail, 0, Some(reason), now)).into(),
            None => Effects::default(),
        }
    }

    /// Puts a placed job back in the queue. `kill`: its run is stopped, and
    /// the end it reports ignored; without, its agent no longer has it.
    pub fn requeue(&self, id: u64, kill: bool, now: i64) -> Effects {
        let mut fx = Effects::default();
        if let Some(j) = self.jobs().get(&id).filter(|j| j.is_placed()) {
            fx.persist(requeued(j, now));
            if kill {
                fx.push(Effect::IgnoreReport(id));
                fx.terminate(j, self.kill_wait);
            }
        }
        fx
    }
}

impl JobRecord {
    /// The `--signal` warning this job's run is owed at `now`: running, with
    /// a time limit, due, and not yet sent to this run.
    pub(crate) fn warning_due(&self, now: i64) -> Option<WarnSignal> {
        let x = self.extra.as_deref().filter(|x| !x.signal.is_empty() && self.state == JobState::Running)?;
        let w = WarnSignal::parse(&x.signal).ok()?;
        (x.signalled_run_ms != self.start_ms && now >= w.due_ms(self.deadline_ms()?)).then_some(w)
    }
}

impl JobService {
    /// scancel; returns the jobs acted on. `last` sees them all before the
    /// last chunk is written, so the request's audit row can commit with it.
    pub async fn cancel(
        &self,
        role: Role,
        caller: &Caller,
        (ids, signal): (&[u64], i32),
        last: impl Fn(&[u64]),
    ) -> Result<Vec<u64>> {
        self.lock().may_act(role, caller, ids)?;
        let mut done = vec![];
        let n = ids.len().div_ceil(CANCEL_CHUNK);
        for (i, chunk) in ids.chunks(CANCEL_CHUNK).enumerate() {
            let mut acted = vec![];
            self.transit(chunk, |q| {
                let fx = q.cancel(chunk, signal, now_ms());
                let hit: HashSet<u64> = fx.jobs().into_iter().collect();
                acted = chunk.iter().copied().filter(|id| hit.contains(id)).collect();
                if i + 1 == n {
                    last(&[&done[..], &acted[..]].concat());
                }
                Ok(fx)
            })
            .await?;
            done.extend(acted);
        }
        Ok(done)
    }

    /// An agent's report that a job ended; durable before the call returns,
    /// so the agent keeps it until then.
    pub async fn report(&self, agent_nodes: &[String], r: pb::JobReport) -> Result<()> {
        // The reporting agent's node of the job: where a failed node job function ran.
        let ours = |n: &&String| agent_nodes.contains(n) && (r.hres_node.is_empty() || **n == r.hres_node);
        let node = self.lock().jobs().get(&r.job_id).and_then(|j| j.nodes.iter().find(ours).cloned());
        self.transit(&[r.job_id], |q| q.report(agent_nodes, &r, now_ms())).await?;
        // A failed node job function drains the node, unless the service was only unavailable.
        if let Some(node) = node.filter(|_| !r.hres_phase.is_empty() && !r.hres_remote) {
            let reason = format!("HRES plugin job {} failed: {}", r.hres_phase, r.hres_message);
            if let Err(e) = self.nodes.drain_for(&node, &reason).await {
                tracing::error!(node, error = %e, "could not drain the node after a failed HRES {}", r.hres_phase);
            }
        }
        Ok(())
    }

    /// Requeues a job whose agent never had it or no longer runs it.
    pub(crate) async fn requeue_lost(&self, id: u64) -> Result<()> {
        self.transit(&[id], |q| Ok(q.requeue(id, false, crate::store::now_ms()))).await?;
        Ok(())
    }
}
