//! The async side of scheduling: build a snapshot, run the pure scheduler,
//! apply its plan (allocate, launch on the first node's agent), record every
//! pending job's reason, and handle reports, time limits and failed nodes.

use super::JobService;
use super::effect::{Effect, Effects};
use super::queue::Queue;
use super::record::JobRecord;
use crate::model::BaseState;
use crate::sched::{self, SchedNode, Snapshot};
use crate::store::now_ms;
use spur_vocab::JobState;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::broadcast::error::TryRecvError;

/// The least time between two passes.
const MIN_GAP: Duration = Duration::from_millis(100);

/// Scheduler passes and their durations (what `sdiag`'s main-schedule block reports).
#[derive(Debug, Default)]
pub struct PassStats {
    count: AtomicU64,
    last_us: AtomicU64,
    max_us: AtomicU64,
    total_us: AtomicU64,
    /// Idle-fill: loans admitted, refused by the factor and by the fraction, nodes on loan now, reclaims.
    loans: [AtomicU64; 5],
}

impl PassStats {
    pub fn note(&self, took_us: u64) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.last_us.store(took_us, Ordering::Relaxed);
        self.max_us.fetch_max(took_us, Ordering::Relaxed);
        self.total_us.fetch_add(took_us, Ordering::Relaxed);
    }

    /// A pass's idle-fill figures.
    pub fn note_loans(&self, l: &sched::LoanStats) {
        let [admitted, factor, fraction, now, reclaims] = &self.loans;
        reclaims.fetch_add(u64::from(l.reclaims), Ordering::Relaxed);
        admitted.fetch_add(u64::from(l.admitted), Ordering::Relaxed);
        factor.fetch_add(u64::from(l.refused_factor), Ordering::Relaxed);
        fraction.fetch_add(u64::from(l.refused_fraction), Ordering::Relaxed);
        now.store(l.on_loan, Ordering::Relaxed);
    }

    /// The figures in Prometheus text format.
    pub fn render(&self) -> String {
        let [admitted, factor, fraction, now, reclaims] =
            self.loans.each_ref().map(|a| a.load(Ordering::Relaxed));
        let loans = format!(
            "# HELP spur_idle_fill_loans_total Idle-fill loans admitted.\n\
             # TYPE spur_idle_fill_loans_total counter\n\
             spur_idle_fill_loans_total {admitted}\n\
             # HELP spur_idle_fill_refused_total Idle-fill loans refused, by the ceiling that refused them.\n\
             # TYPE spur_idle_fill_refused_total counter\n\
             spur_idle_fill_refused_total{{ceiling=\"max_borrow_factor\"}} {factor}\n\
             spur_idle_fill_refused_total{{ceiling=\"max_cluster_fraction\"}} {fraction}\n\
             # HELP spur_idle_fill_nodes_on_loan Nodes held by borrowed runs after the last pass.\n\
             # TYPE spur_idle_fill_nodes_on_loan gauge\n\
             spur_idle_fill_nodes_on_loan {now}\n\
             # HELP spur_idle_fill_reclaims_total Borrowed or idlefillpreemptable runs requeued by a reclaim.\n\
             # TYPE spur_idle_fill_reclaims_total counter\n\
             spur_idle_fill_reclaims_total {reclaims}\n"
        );
        self.render_passes() + &loans
    }

    fn render_passes(&self) -> String {
        let secs = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64 / 1e6;
        format!(
            "# HELP spur_sched_passes_total Scheduler passes run.\n\
             # TYPE spur_sched_passes_total counter\n\
             spur_sched_passes_total {}\n\
             # HELP spur_sched_pass_seconds_total Time spent in scheduler passes.\n\
             # TYPE spur_sched_pass_seconds_total counter\n\
             spur_sched_pass_seconds_total {}\n\
             # HELP spur_sched_last_pass_seconds Duration of the last scheduler pass.\n\
             # TYPE spur_sched_last_pass_seconds gauge\n\
             spur_sched_last_pass_seconds {}\n\
             # HELP spur_sched_max_pass_seconds Longest scheduler pass since start.\n\
             # TYPE spur_sched_max_pass_seconds gauge\n\
             spur_sched_max_pass_seconds {}\n",
            self.count.load(Ordering::Relaxed),
            secs(&self.total_us),
            secs(&self.last_us),
            secs(&self.max_us),
        )
    }
}

impl JobService {
    /// Runs a pass every `interval` and whenever something changes.
    pub fn spawn(self: &Arc<Self>, interval: Duration) -> Vec<tokio::task::JoinHandle<()>> {
        let me = self.clone();
        let passes = tokio::spawn(async move {
            let mut nodes_rx = me.nodes.subscribe();
            loop {
                me.pass().await;
                me.start_asyncs();
                // Events arriving in a burst (a wave of submits) share one pass,
                // so the queue lock is not held pass after pass under load.
                tokio::time::sleep(MIN_GAP).await;
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = me.kick.notified() => {}
                    _ = nodes_rx.recv() => {}
                }
                // One pass covers every node change so far: a burst of node
                // updates queued while the last pass ran is not a pass each.
                while !matches!(nodes_rx.try_recv(), Err(TryRecvError::Empty | TryRecvError::Closed)) {}
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
        let provision = self.nodes.provision();
        let expiries = self.nodes.pilot_expiries();
        let mut snap = Snapshot {
            nodes: (nodes.iter())
                .map(|n| SchedNode {
                    expires_ms: expiries.get(&n.name).copied(),
                    ..sched_node(n, provision.as_deref())
                })
                .collect(),
            partitions: self.nodes.partitions(),
            jobs: self.active_jobs(now),
            catalog,
            usage: figures.usage,
            grp_wall_used: figures.grp_wall_used,
            evicted_for,
            licenses: self.licenses.plain(),
            hres: self.licenses.hres(),
            config: self.sched.clone(),
            provision,
            admits: Default::default(),
            resvs: self.resvs.list(),
            provisioned: self.pilots.get().map(|p| p.provisioned(now)).unwrap_or_default(),
        };
        let mut cache = self.admits.lock().unwrap_or_else(|p| p.into_inner());
        sched::provision::prepare(&mut snap, &mut cache, now);
        snap
    }

    /// The scheduler's view of every active job, in a list sized once (a
    /// list grown by doubling moved every job it held at each step).
    fn active_jobs(&self, now: i64) -> Vec<sched::Job> {
        let q = self.lock();
        let mut out = Vec::with_capacity(q.jobs().values().filter(|j| j.is_active()).count());
        out.extend(q.jobs().values().filter(|j| j.is_active()).map(JobRecord::sched_job));
        // The running tasks of throttled arrays, counted once.
        if out.iter().any(|j| j.array.is_some_and(|a| a.throttle > 0)) {
            let mut running: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
            // A borrowed task is outside the array's concurrency too (spur-idle-fill.md, Quota accounting).
            for a in q.jobs().values().filter(|j| j.is_placed() && !j.borrowed).filter_map(|j| j.array_id()) {
                *running.entry(a).or_default() += 1;
            }
            for j in out.iter_mut() {
                if let Some(a) = j.array.as_mut() {
                    a.running = running.get(&j.id).copied().unwrap_or(0);
                }
            }
        }
        let gates = q.dependency_gates(now);
        if !gates.is_empty() {
            // Both lists are in id order (the queue is a BTreeMap): one merge.
            let mut gates = gates.into_iter().peekable();
            for j in out.iter_mut() {
                if gates.peek().is_some_and(|(id, _, _)| *id == j.id) {
                    let (_, gate, ready) = gates.next().unwrap_or_default();
                    j.dep = gate;
                    // aftercorr: only the tasks whose corresponding tasks completed may
                    // start. With none ready the gate itself blocks, with its reason.
                    if let (Some(a), Some(n)) = (j.array.as_mut(), ready.filter(|n| *n > 0)) {
                        a.pending = a.pending.min(n);
                    }
                }
            }
        }
        out
    }

    /// One scheduling pass.
    pub async fn pass(&self) {
        let now = now_ms();
        self.enforce(now).await;
        self.boots().await;
        self.resvs.upkeep(self.nodes.hub(), now).await;
        let nodes = self.nodes.nodes();
        let snap = self.snapshot(now, &nodes);
        let began = std::time::Instant::now();
        // A pass fills its buffers afresh: one that panicked mid-pass left nothing stale.
        let plan = {
            let mut scratch = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
            sched::schedule_with(&snap, now, &mut scratch)
        };
        let took_us = u64::try_from(began.elapsed().as_micros()).unwrap_or(u64::MAX);
        drop(snap);
        self.pass_stats.note(took_us);
        let depth = (plan.starts.len() + plan.pending.len()) as u64;
        let backfilled = plan.starts.iter().filter(|s| s.backfilled).count() as u64;
        self.diag.note_pass(took_us, depth, backfilled, now);
        self.diag.sample(now, || self.pending_running());
        // The pass counted them: no second walk of the queue for the metrics.
        self.pass_stats.note_loans(&plan.idle_fill);
        self.apply_preemption(&plan, now).await;
        self.lock().note_pending(&plan);
        if let Some(p) = self.pilots.get() {
            p.request(&plan.provision);
        }
        let evicted = !plan.preemptions.is_empty();
        let last = self.remember(super::preempt::LastPass { plan, now_ms: now });
        if evicted {
            // The victims' room is free now; place their preemptors without waiting a full interval.
            self.kick.notify_one();
        }
        // Pre-runs happen before the start is persisted; a refused one is not started.
        let pre = self.prerun_starts(&last.plan.starts, now);
        let (starts, mut runs): (Vec<sched::Start>, Vec<_>) = pre.starts.into_iter().unzip();
        let ids: Vec<u64> = starts.iter().map(|s| s.job).collect();
        let mut new_id = || self.next_id.fetch_add(1, Ordering::Relaxed);
        match self.transit(&ids, |q| Ok(q.start(&starts, &nodes, now, &mut new_id, &mut runs))).await {
            // The agent never had these: nothing to kill, and no end will be reported.
            Ok(done) => {
                for id in done.unlaunched {
                    let _ = self.requeue_lost(id).await;
                }
                // Started CONFIGURING: their asynchronous pre-runs begin after the pass.
                let q = self.lock();
                let configuring = |id: &&u64| {
                    q.jobs().get(id).is_some_and(|j| {
                        j.state == JobState::Configuring && j.hres.as_ref().is_some_and(|r| r.async_running)
                    })
                };
                let asyncs: Vec<u64> = done.jobs.iter().filter(configuring).copied().collect();
                drop(q);
                self.lock_asyncs().extend(asyncs);
            }
            Err(e) => {
                self.revoke_unstarted(&runs);
                tracing::error!(error = %e, "could not persist started jobs; they stay pending");
                // The pending reasons are one batch all the same.
                self.flush();
            }
        }
        self.settle_preruns(&pre.held, &pre.remote, now).await;
        self.cancel_invalid_dependencies(&last.plan, now).await;
    }

    /// `--kill-on-invalid-dep=yes`: a job whose dependency can never be
    /// satisfied is cancelled, as Slurm's kill_invalid_depend does.
    async fn cancel_invalid_dependencies(&self, plan: &sched::Plan, now: i64) {
        let doomed: Vec<u64> = {
            let q = self.lock();
            (plan.pending.iter())
                .filter(|p| p.reason.code == sched::reason::ReasonCode::DependencyNeverSatisfied)
                .filter(|p| {
                    q.jobs().get(&p.job).and_then(|j| j.extra.as_ref()).is_some_and(|x| x.kill_on_invalid_dep)
                })
                .map(|p| p.job)
                .collect()
        };
        if !doomed.is_empty() {
            let _ = self
                .transit(&doomed, |q| {
                    let mut fx = q.cancel(&doomed, 0, now);
                    for &job in &doomed {
                        let info = serde_json::json!({ "reason": "DependencyNeverSatisfied" });
                        fx.push(Effect::Audit { job, action: "cancel", info });
                    }
                    Ok(fx)
                })
                .await;
        }
    }

    /// The time-limit watchdog, and jobs whose nodes went down.
    async fn enforce(&self, now: i64) {
        let running: Vec<(u64, bool, bool, bool, Vec<String>)> = (self.lock().jobs().values())
            .filter(|j| j.state == JobState::Running)
            .map(|j| {
                let late = j.deadline_ms().is_some_and(|d| now >= d);
                (j.id, late, j.warning_due(now).is_some(), j.requeue, j.nodes.clone())
            })
            .collect();
        for (id, late, warn, requeue, nodes) in running {
            if late {
                let _ = self.transit(&[id], |q| Ok(q.time_out(id, now))).await;
                continue;
            }
            if warn {
                let _ = self.transit(&[id], |q| Ok(q.warn(id, now))).await;
            }
            let down = |n: &String| self.nodes.node(n).is_none_or(|n| n.base_state() == BaseState::Down);
            if nodes.iter().any(down) {
                if requeue {
                    tracing::warn!(job = id, "a node of the job went down; requeueing");
                }
                // Its agent may still run it: a requeue stops that run first.
                let _ = self
                    .transit(&[id], |q| Ok(q.lost(id, sched::reason::ReasonCode::NodeDown, true, now)))
                    .await;
            }
        }
    }
}

impl Queue {
    /// The pass's starts at `now`: each job still pending runs where its
    /// start placed it, the batch is published, and each launch goes to the
    /// agent once the start is durable (a start the store refuses leaves the
    /// job pending, not running nowhere).
    ///
    /// A start of an array's pending tasks splits its lowest task off, under
    /// an id from `new_id` (the last task keeps the array's record); the
    /// record of what is still pending is written once, after its starts.
    pub fn start(
        &self,
        starts: &[sched::Start],
        nodes: &[crate::model::Node],
        now: i64,
        new_id: &mut dyn FnMut() -> u64,
        runs: &mut [Option<crate::hres_lua::HresRun>],
    ) -> Effects {
        let mut fx = Effects::default();
        let mut launches = vec![];
        let mut arrays: std::collections::BTreeMap<u64, Option<JobRecord>> = Default::default();
        for (i, s) in starts.iter().enumerate() {
            let current = match arrays.get(&s.job) {
                Some(left) => left.as_ref(),
                None => self.jobs().get(&s.job),
            };
            let Some(j) = current.filter(|j| j.state == JobState::Pending) else { continue };
            let task = if j.is_array_pending() {
                // Under aftercorr the lowest ready task, else the lowest pending one.
                let split = match self.corr(j) {
                    Some(c) => c.ready.first().and_then(|&t| super::array::split_task(j, t, &mut *new_id)),
                    None => super::array::split_first(j, &mut *new_id),
                };
                let Some((task, rest)) = split else { continue };
                arrays.insert(s.job, rest);
                task
            } else {
                j.clone()
            };
            let mut n = started(&task, s, nodes, now);
            // What its plugins were told; a task split off an array is told its own id.
            n.hres = runs.get_mut(i).and_then(Option::take).map(|mut r| {
                if r.job.job_id != n.id {
                    r.job.job_id = n.id;
                    r.job.sluid = n.run_id.clone();
                }
                Box::new(r)
            });
            if s.configuring {
                // Launched once its nodes' agents register (`Queue::booted`).
                n.state = JobState::Configuring;
            } else if n.hres.as_ref().is_some_and(|r| r.async_running) {
                // Launched once its asynchronous pre-run ends (`Queue::configured`).
                n.state = JobState::Configuring;
            } else {
                launches
                    .push(Effect::Launch { job: n.id, node: n.nodes.first().cloned().unwrap_or_default() });
            }
            if n.id == s.job {
                // The array's last task took its record: nothing is left to write.
                arrays.remove(&s.job);
            }
            fx.persist(n);
        }
        for rest in arrays.into_values().flatten() {
            fx.persist(rest);
        }
        // The pass is one batch: published now rather than after the gather delay.
        fx.push(Effect::Flush);
        fx.0.extend(launches);
        fx
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
    n.borrowed = s.borrowed;
    n.charge = s.charge.clone();
    n.nodes = s.nodes.clone();
    n.licenses_alloc = s.licenses.clone();
    n.start_ms = now;
    n.run_id = super::record::run_id(n.id, now);
    n.reason = None;
    n.reason_detail.clear();
    n.eff_priority = s.priority.value() as f64;
    n.factors = super::queue::factors(&s.priority);
    n.prio_ordered = None;
    n
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
    /// Fair share per (account, user), every account's line, and the
    /// cluster's total usage, from the same usage figures.
    pub fn shares(&self) -> (sched::FairShare, Vec<sched::AccountShare>, f64) {
        let catalog = self.acct.catalog();
        let f = self.figures(now_ms(), &catalog);
        let (accounts, total) = sched::account_shares_tree(&catalog, &f.usage);
        (sched::FairShare::compute(&catalog, &f.usage), accounts, total)
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

/// A node as a pass sees it, with its definitions as indexes into the config's.
fn sched_node(n: &crate::model::Node, p: Option<&sched::provision::Provision>) -> SchedNode {
    let mut s = SchedNode::from_model(n);
    if let Some(p) = p {
        s.definitions = n.definitions.iter().filter_map(|d| p.index(d)).collect();
    }
    s
}
