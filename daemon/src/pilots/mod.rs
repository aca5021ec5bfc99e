//! The `slurm` provisioner's driver: the I/O at the edge of the pure
//! scheduler's demand (`spur_sched::demand`). Each node a pass asks for
//! becomes a dynamic node record (CLOUD, with its definition and expiry),
//! persisted first, then a pilot job upstream that runs `spurd --dynamic`
//! for that one node; the upstream job id is recorded when sbatch answers.
//! Each second the upkeep gives back what is no longer needed, in Slurm's
//! words: a pilot whose agent has not registered within
//! `boot_timeout_secs`, and a registered node idle for `idle_timeout_secs`
//! (`scancel` upstream, then the node is deleted here). A borrowed node
//! drains itself [`DRAIN_MARGIN_MS`] before its pilot's time limit ends,
//! with a reason naming the definition's ttl.

pub mod upstream;

use crate::admission::{Admission, TokenSpec};
use crate::config::AdmissionMode;
use crate::error::{Error, Result};
use crate::nodes::NodeService;
use crate::nodes::pilots::{Pilot, PilotNode};
use spur_sched::demand::{NodeRequest, Provisioned, Unavailable};
use spur_sched::provision::{Definition, allocation_ttl};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use upstream::{PilotJob, Upstream};

/// The jobs on a node, which keep it from being given back.
pub type Holding = Box<dyn Fn(&str) -> Vec<u64> + Send + Sync>;

pub struct Pilots {
    nodes: Arc<NodeService>,
    admission: Arc<Admission>,
    up: Upstream,
    holding: Holding,
    /// Nodes a pass asked for that have no record yet, by definition, so the
    /// next pass does not ask again while the driver works.
    queued: Mutex<HashMap<String, u32>>,
    tx: mpsc::UnboundedSender<NodeRequest>,
    rx: Mutex<Option<mpsc::UnboundedReceiver<NodeRequest>>>,
    /// When each registered borrowed node was first seen idle.
    idle_since: Mutex<HashMap<String, i64>>,
    /// Each definition's last failure upstream, and how long it backs off.
    failures: Mutex<HashMap<String, Failure>>,
}

struct Failure {
    error: Arc<str>,
    until_ms: i64,
    /// Failures in a row: the backoff doubles with each.
    count: u32,
}

/// How long before its expiry a borrowed node drains itself: one minute,
/// the shortest time limit a job can ask for, so no job placed later could
/// end before the upstream ends the pilot anyway.
pub const DRAIN_MARGIN_MS: i64 = 60_000;

/// The reason a borrowed node drains with before its expiry.
pub fn expiry_reason(definition: &str, expires_ms: i64) -> String {
    format!("ttl of slurm definition {definition} ends at {}", spur_vocab::txn::format_time(expires_ms))
}

/// Why a pilot is given back (and its node marked DOWN while jobs wait on it) when it does not boot.
pub const BOOT_TIMEOUT: &str = "its agent did not register within upstream.slurm.boot_timeout_secs";

/// The longest backoff after failures in a row.
const MAX_BACKOFF_SECS: u64 = 600;

/// `call_timeout_secs` doubled for each failure in a row after the first, to at most ten minutes.
fn backoff_ms(call_timeout_secs: u64, count: u32) -> i64 {
    let secs = call_timeout_secs.saturating_mul(1 << count.saturating_sub(1).min(16)).min(MAX_BACKOFF_SECS);
    secs_ms(secs)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Pilots {
    pub fn new(nodes: Arc<NodeService>, admission: Arc<Admission>, up: Upstream, holding: Holding) -> Pilots {
        let (tx, rx) = mpsc::unbounded_channel();
        Pilots {
            nodes,
            admission,
            up,
            holding,
            queued: Mutex::default(),
            tx,
            rx: Mutex::new(Some(rx)),
            idle_since: Mutex::default(),
            failures: Mutex::default(),
        }
    }

    /// What a pass's snapshot counts at `now`: the borrowed nodes, the
    /// requests not yet recorded, and the definitions backing off.
    pub fn provisioned(&self, now: i64) -> HashMap<String, Provisioned> {
        let mut out = self.nodes.provisioned();
        for (d, n) in lock(&self.queued).iter().filter(|(_, n)| **n > 0) {
            out.entry(d.clone()).or_default().queued += n;
        }
        for (d, f) in lock(&self.failures).iter().filter(|(_, f)| f.until_ms > now) {
            let u = Unavailable { error: f.error.clone(), until_ms: f.until_ms };
            out.entry(d.clone()).or_default().unavailable = Some(u);
        }
        out
    }

    /// Marks the slurm definitions backing off at `now` in a `scontrol show
    /// provisioner` answer: state `unavailable`, the error and the retry.
    pub fn mark_unavailable(&self, out: &mut spur_proto::v1::ListProvisionersResponse, now: i64) {
        let failures = lock(&self.failures);
        for p in out.provisioners.iter_mut() {
            if let Some(f) = failures.get(&p.id).filter(|f| f.until_ms > now) {
                p.state = "unavailable".into();
                p.unavailable_error = f.error.to_string();
                p.retry_at_ms = f.until_ms;
            }
        }
    }

    /// Whether `definition` is backing off at `now`.
    fn backing_off(&self, definition: &str, now: i64) -> bool {
        lock(&self.failures).get(definition).is_some_and(|f| f.until_ms > now)
    }

    fn failed(&self, definition: &str, error: &Error, now: i64) {
        let mut all = lock(&self.failures);
        let count = all.get(definition).map_or(0, |f| f.count).saturating_add(1);
        let until_ms = now.saturating_add(backoff_ms(self.up.cfg.call_timeout_secs, count));
        all.insert(definition.to_string(), Failure { error: error.to_string().into(), until_ms, count });
    }

    /// Takes a pass's requests; the driver's task carries them out.
    pub fn request(&self, reqs: &[NodeRequest]) {
        for r in reqs {
            *lock(&self.queued).entry(r.definition.clone()).or_default() += r.count;
            let _ = self.tx.send(r.clone());
        }
    }

    fn unqueue(&self, definition: &str, n: u32) {
        if let Some(q) = lock(&self.queued).get_mut(definition) {
            *q = q.saturating_sub(n);
        }
    }

    /// The driver's task: requests as they come, the upkeep each second.
    pub fn spawn(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let me = self.clone();
        let rx = lock(&self.rx).take();
        tokio::spawn(async move {
            let Some(mut rx) = rx else { return };
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tokio::select! {
                    r = rx.recv() => match r {
                        Some(r) => me.provision(&r).await,
                        None => return,
                    },
                    _ = tick.tick() => me.upkeep(crate::store::now_ms()).await,
                }
            }
        })
    }

    async fn provision(&self, r: &NodeRequest) {
        let def = self.nodes.provision().and_then(|p| {
            let d = p.defs.iter().position(|d| d.id == r.definition)?;
            Some((p, d))
        });
        let now = crate::store::now_ms();
        let Some((p, d)) = def.filter(|_| !self.backing_off(&r.definition, now)) else {
            self.unqueue(&r.definition, r.count);
            return;
        };
        for i in 0..r.count {
            let now = crate::store::now_ms();
            if let Err(e) = self.one(&p.defs[d], now).await {
                tracing::warn!(definition = %r.definition, error = %e, "could not provision a node; backing off");
                self.failed(&r.definition, &e, now);
                // `one` took its own off the queue; the rest are not tried.
                self.unqueue(&r.definition, r.count - i - 1);
                return;
            }
            lock(&self.failures).remove(&r.definition);
        }
    }

    /// One node: its record persisted, then its pilot submitted.
    async fn one(&self, def: &Definition, now: i64) -> Result<()> {
        let shape = def.node_shape;
        let partition = def.spec.iter().find(|(k, _)| k == "partition").map(|(_, v)| v.clone());
        let (Some((cpus, memory_mb)), Some(partition)) = (shape, partition) else {
            self.unqueue(&def.id, 1);
            return Err(Error::invalid(
                "provisionerSpec",
                "a slurm definition needs cpu, memory and partition",
            ));
        };
        let time_secs = allocation_ttl(def, def.ttl, 1);
        let node = self.nodes.pilot_name(&def.id);
        let expires_ms = now.saturating_add(i64::from(time_secs) * 1000);
        let pilot = Pilot { definition: def.id.clone(), job: None, requested_ms: now, expires_ms };
        let made = self.nodes.create_pilot(&node, cpus, memory_mb, pilot).await;
        self.unqueue(&def.id, 1);
        made?;
        let token = match self.admission.mode() {
            AdmissionMode::Open => None,
            AdmissionMode::Token => {
                let ttl = self.up.cfg.boot_timeout_secs.saturating_add(self.up.cfg.call_timeout_secs);
                let spec = TokenSpec { ttl_secs: Some(ttl as i64), nodes: Some(node.clone()), once: true };
                Some(self.admission.create(spec, self.nodes.token_bounds(), now).await?.1)
            }
        };
        let job = PilotJob { node: node.clone(), partition, cpus, memory_mb, time_secs, token };
        match self.up.sbatch(&job).await {
            Ok(id) => {
                tracing::info!(node = %node, upstream_job = %id, "pilot submitted upstream");
                self.nodes.set_pilot_job(&node, &id).await
            }
            Err(e) => {
                let _ = self.nodes.delete(&node, &[]).await;
                Err(Error::Unavailable(e.0))
            }
        }
    }

    /// Gives back pilots that never registered and nodes idle too long, and
    /// drains nodes whose expiry is near.
    pub async fn upkeep(&self, now: i64) {
        let cfg = &self.up.cfg;
        for n in self.nodes.pilot_nodes() {
            if n.pilot.job.is_none() {
                self.reconcile(&n).await;
                continue;
            }
            if !n.drained && now >= n.pilot.expires_ms.saturating_sub(DRAIN_MARGIN_MS) {
                let reason = expiry_reason(&n.pilot.definition, n.pilot.expires_ms);
                match self.nodes.drain_as(&n.name, &reason, "slurm_provisioner", now).await {
                    Ok(()) => tracing::info!(node = %n.name, "borrowed node drained: {reason}"),
                    Err(e) => tracing::warn!(node = %n.name, error = %e, "could not drain a borrowed node"),
                }
            }
            let why = if !n.registered {
                let late = now.saturating_sub(n.pilot.requested_ms) >= secs_ms(cfg.boot_timeout_secs);
                if late && !n.down {
                    // DOWN first, so no pass places a job on it while it is given back;
                    // its CONFIGURING jobs go back to the queue when a pass sees it
                    // (`jobs/boot.rs`), and the node is given back once they have.
                    self.down_late(&n, now).await;
                }
                late.then_some(BOOT_TIMEOUT)
            } else if n.idle {
                let since = *lock(&self.idle_since).entry(n.name.clone()).or_insert(now);
                let idle = now.saturating_sub(since) >= secs_ms(cfg.idle_timeout_secs);
                idle.then_some("idle for upstream.slurm.idle_timeout_secs")
            } else {
                lock(&self.idle_since).remove(&n.name);
                None
            };
            if let Some(why) = why {
                self.give_back(&n, why, now).await;
            }
        }
    }

    /// Marks a borrowed node that did not boot in time DOWN, with the reason.
    async fn down_late(&self, n: &PilotNode, now: i64) {
        match self.nodes.down_as(&n.name, BOOT_TIMEOUT, "slurm_provisioner", now).await {
            Ok(()) => tracing::warn!(node = %n.name, "borrowed node down: {BOOT_TIMEOUT}"),
            Err(e) => tracing::warn!(node = %n.name, error = %e, "could not mark a borrowed node down"),
        }
    }

    /// A node whose pilot's job id was never recorded (the controller
    /// stopped between storing the node and sbatch's answer, or sbatch hung):
    /// the upstream's queue says whether the pilot exists. Found, its id is
    /// recorded (extra ones cancelled); not found, the node is deleted, and
    /// the next pass asks again if its jobs still need it. No pilot is
    /// orphaned and none is submitted twice.
    async fn reconcile(&self, n: &PilotNode) {
        let ids = match self.up.squeue_ids(&upstream::job_name(&n.name)).await {
            Ok(ids) => ids,
            Err(e) => {
                tracing::warn!(node = %n.name, error = %e, "could not look for a pilot upstream");
                return;
            }
        };
        let Some((first, extra)) = ids.split_first() else {
            match self.nodes.delete(&n.name, &(self.holding)(&n.name)).await {
                Ok(()) => tracing::info!(node = %n.name, "no pilot upstream; node deleted"),
                Err(e) => tracing::warn!(node = %n.name, error = %e, "could not delete a borrowed node"),
            }
            return;
        };
        for job in extra {
            if let Err(e) = self.up.scancel(job).await {
                tracing::warn!(node = %n.name, upstream_job = %job, error = %e, "could not cancel a second pilot");
            }
        }
        match self.nodes.set_pilot_job(&n.name, first).await {
            Ok(()) => tracing::info!(node = %n.name, upstream_job = %first, "pilot found upstream"),
            Err(e) => tracing::warn!(node = %n.name, error = %e, "could not record a pilot found upstream"),
        }
    }

    /// `scancel` upstream, then the node is deleted here; a failed scancel is tried again next time.
    async fn give_back(&self, n: &PilotNode, why: &str, now: i64) {
        if !(self.holding)(&n.name).is_empty() {
            return;
        }
        if let Some(job) = &n.pilot.job
            && let Err(e) = self.up.scancel(job).await
        {
            // A pilot that already ended upstream (its agent exited) cannot be cancelled: gone is gone.
            let ended =
                self.up.squeue_ids(&upstream::job_name(&n.name)).await.is_ok_and(|ids| ids.is_empty());
            if !ended {
                tracing::warn!(node = %n.name, upstream_job = %job, error = %e, "could not cancel a pilot");
                return;
            }
        }
        match self.nodes.delete(&n.name, &(self.holding)(&n.name)).await {
            Ok(()) => {
                self.nodes.note_given_back(&n.pilot.definition, now.saturating_sub(n.pilot.requested_ms));
                tracing::info!(node = %n.name, "borrowed node given back: {why}")
            }
            Err(e) => tracing::warn!(node = %n.name, error = %e, "could not delete a borrowed node"),
        }
        lock(&self.idle_since).remove(&n.name);
    }
}

fn secs_ms(s: u64) -> i64 {
    i64::try_from(s.saturating_mul(1000)).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests;
