//! Jobs: submit (resolution and the gate), the queue, every job
//! transition, and the loop that runs the pure scheduler and applies its plan.
//!
//! A transition is a synchronous `Queue` method that returns its effects as
//! data; the executor applies them (persist, install, act). See ARCHITECTURE.md.
//!
//! - `queue`: the jobs held, and the install that keeps counts and marks with them.
//! - `effect`: what a transition asks for: persist, signal, launch, audit, flush.
//! - `transition`: the executor, under the 64 transition locks.
//! - [`ending`]: cancel, agents' reports, requeue, time limits, lost nodes.
//! - [`update`]: scontrol update / hold / release / requeue.
//! - `bounds`: what an update is held to: time limits by role, a new QOS, account or partition as at submit.
//! - [`preempt`]: the scheduler's evictions and resumes; `scontrol explain`.
//! - [`record`]: the persisted job, its state and hold typed.
//! - [`env`](mod@env): a job's exported environment, held as one block.
//! - [`parts`]: the plain data of a record's parts (extras, array, steps), a leaf.
//! - [`extras`]: the options few jobs set, and how per-node and per-task asks resolve.
//! - [`run`]: the scheduling loop, the pass's starts, launches, the time-limit watchdog.
//! - `launch`: a started job's launch: Slurm's environment, `-o/-e` patterns.
//! - `owner`: who a new job belongs to and runs as (MUNGE's uid and gid, or an Operator's --uid/--gid).
//! - [`reserved`]: admin reservations at submit (`--reservation`) and the cluster a reservation request is checked against.
//! - [`reconcile`]: an agent's running jobs at registration against the queue.
//! - [`events`]: job changes in numbered batches, for `Cluster.Watch`.
//! - `admit`: submits no node set could run, and MaxJobCount.
//! - [`array`](mod@array): job arrays: the record of the pending tasks, tasks split off as they start.
//! - `depend`: dependencies known at submit, evaluated each pass, fates kept past a purge.
//! - [`purge`]: MinJobAge: ended jobs leave memory for the store.
//! - `configure`: HRES asynchronous pre-runs: the job CONFIGURING until its result, then launched.
//! - `maintain`: HRES plugin maintenance on its cycle: layers disabled, downed layers' jobs requeued.
//! - `plugin`: HRES plugins in a job's life: pre-runs of starts, holds, arguments checked again, epilog.
//! - `stored_reason`: a record's reason code as the store spells it, old free-text rows included.
//! - `link`: where the executor's commands to agents go (the agents, or a test's recording).
//! - [`output`]: spur tail: a job's stdout or stderr read by its batch node's agent, relayed to the caller.
//! - [`steps`]: job steps (srun): their records, layout, environment, and the live relays.

pub(crate) mod admit;
pub mod array;
pub mod boot;
pub(crate) mod bounds;
pub(crate) mod configure;
pub mod corr;
pub mod cost;
pub(crate) mod depend;
pub mod diag;
pub(crate) mod effect;
pub mod ending;
pub mod env;
pub mod events;
pub mod extras;
pub mod history;
pub(crate) mod launch;
pub(crate) mod link;
pub mod mail;
pub(crate) mod maintain;
pub mod output;
pub(crate) mod owner;
pub mod parts;
pub(crate) mod plugin;
pub mod preempt;
pub mod pulse;
pub mod purge;
pub(crate) mod queue;
pub mod reconcile;
pub mod record;
pub mod reserved;
pub mod run;
pub mod steps;
pub(crate) mod stored_reason;
pub mod test_only;
pub(crate) mod transition;
pub mod update;
pub mod usage;

#[cfg(test)]
mod tests;

use crate::accounting::{AcctService, Caller, Catalog};
use crate::audit::claim;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::licenses::LicenseService;
use crate::model::Partition;
use crate::nodes::NodeService;
use crate::sched::SchedConfig;
use crate::sched::submit::{self, SubmitError, SubmitPolicy};
use crate::store::{Action, BatchWriter, Store, now_ms};
use effect::{Effect, Effects};
use env::Env;
use preempt::preempt_config;
use queue::Queue;
use record::JobRecord;
use spur_proto::v1 as pb;
use spur_vocab::{Hold, JobState, hostlist, licenses};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;
use transition::Held;

pub const KIND_JOB: &str = "job";

pub struct JobService {
    queue: Mutex<Queue>,
    next_id: AtomicU64,
    /// Job writes share transactions (group commit); None without a store.
    writer: Option<BatchWriter>,
    pub(crate) acct: Arc<AcctService>,
    pub(crate) nodes: Arc<NodeService>,
    /// Where commands to agents go: `nodes` itself, or a test's recording.
    link: Arc<dyn link::AgentLink>,
    pub(crate) licenses: Arc<LicenseService>,
    /// Admin reservations: the windows every pass reads.
    pub(crate) resvs: Arc<crate::resv::ResvService>,
    policy: SubmitPolicy,
    pub(crate) sched: SchedConfig,
    /// Usage and GrpWall figures, recomputed every `refresh_ms`.
    pub(crate) figures: Mutex<Option<run::Figures>>,
    pub(crate) refresh_ms: i64,
    pub(crate) halflife_days: f64,
    pub(crate) grp_wall_window_days: u64,
    pub(crate) kick: Notify,
    /// Provisioner definitions' verdicts on pending jobs, kept across passes.
    pub(crate) admits: Mutex<crate::sched::provision::AdmitCache>,
    /// The last pass's snapshot and plan, for `scontrol explain`.
    pub(crate) last: Mutex<Option<Arc<preempt::LastPass>>>,
    /// Pass counts and durations, for `/metrics`.
    pub(crate) pass_stats: run::PassStats,
    /// The pass's working buffers, kept from one pass to the next (`sched::Scratch`).
    pub(crate) scratch: Mutex<crate::sched::Scratch>,
    /// sstat requests waiting for their nodes' answers.
    pub(crate) samples: steps::stats::Waiting<spur_proto::v1::UseReport>,
    /// sbcast copies waiting for their nodes' answers.
    pub(crate) bcasts: steps::stats::Waiting<spur_proto::v1::BcastReport>,
    /// spur tail's open tails and the agents' pieces on their way to them.
    pub(crate) tails: Arc<output::Tails>,
    /// sdiag's counters, which `sdiag --reset` zeroes.
    pub diag: diag::Diag,
    /// When each preemptor last had victims evicted (drain timeout).
    pub(crate) evicted_for: Mutex<std::collections::HashMap<u64, i64>>,
    /// Serialises the transitions of each job.
    pub(crate) stripes: transition::Stripes,
    /// Wakes the flusher of job change batches.
    pub(crate) dirty: Notify,
    pub(crate) events: tokio::sync::broadcast::Sender<events::JobBatch>,
    pub(crate) retention: purge::Retention,
    /// The running steps' sruns and tasks, and the sruns attached to allocations.
    pub(crate) live: steps::live::Live,
    /// `[mail] program`, for `--mail-type`.
    pub(crate) mailer: mail::Mailer,
    /// Jobs whose asynchronous HRES pre-run is running; not started again until it ends.
    pub(crate) configuring: std::sync::Mutex<std::collections::HashSet<u64>>,
    /// Jobs started CONFIGURING by the last pass, whose asynchronous pre-runs are to begin.
    pub(crate) async_due: std::sync::Mutex<Vec<u64>>,
    /// The `slurm` provisioner's driver, when `[upstream.slurm]` is set: it
    /// says what is borrowed for each pass and takes the pass's requests.
    pub(crate) pilots: std::sync::OnceLock<Arc<crate::pilots::Pilots>>,
}

impl Queue {
    /// sbatch's last step, on a record already resolved against the
    /// partitions and nodes: the accounting gate against the queue's limit
    /// counts, then MaxJobCount and the job's id from `admit`; the job is to
    /// be persisted, then queued.
    pub fn submit(
        &self,
        mut rec: JobRecord,
        partition: &Partition,
        catalog: &Catalog,
        policy: &SubmitPolicy,
        admit: impl FnOnce(&Queue) -> Result<u64>,
    ) -> Result<Effects> {
        let resolved = submit::submit(&rec.sched_job(), Some(partition), catalog, policy, self.counts())
            .map_err(refusal)?;
        for w in &resolved.warnings {
            tracing::warn!(user = %rec.user, "{w}");
        }
        rec.account = resolved.account;
        rec.qos = resolved.qos;
        rec.time_limit = resolved.time_limit;
        rec.id = admit(self)?;
        if let Some(a) = rec.array.as_mut() {
            a.job_id = rec.id;
        }
        Ok(Effect::Persist(rec).into())
    }
}

/// The accounting gate's refusal as the gRPC error a submit (or an update
/// of a pending job's QOS, account or partition) returns.
pub(crate) fn refusal(e: SubmitError) -> Error {
    match e {
        SubmitError::Unavailable(m) => Error::Unavailable(m),
        SubmitError::Invalid { code, message } => {
            Error::InvalidArgument(format!("{}: {message}", code.as_str()))
        }
        SubmitError::Misconfigured(m) => Error::FailedPrecondition(m),
        SubmitError::Denied(r) => Error::FailedPrecondition(r.to_string()),
    }
}

impl JobService {
    pub async fn new(
        cfg: &crate::config::Config,
        store: Option<Arc<dyn Store>>,
        acct: Arc<AcctService>,
        nodes: Arc<NodeService>,
        licenses: Arc<LicenseService>,
    ) -> Result<JobService> {
        let now = now_ms();
        let (mut jobs, mut purged, mut max_id) =
            (std::collections::BTreeMap::new(), purge::Purged::default(), 0);
        if let Some(s) = &store {
            (jobs, purged, max_id) = purge::load(s.as_ref(), now, &cfg.scheduler).await?;
        }
        let mut queue = Queue::loaded(jobs, cfg.scheduler.kill_wait_secs);
        // Running jobs keep their nodes until their agent says otherwise.
        for j in queue.jobs().values().filter(|j| j.is_placed()) {
            nodes.allocate(&j.nodes, j.held(), false);
        }
        // Of every stored job, purged ones too: ids are never reused.
        let next = max_id + 1;
        let purged = purge::at_load(&mut queue, now, &cfg.scheduler, purged);
        let accounting = !cfg.accounting.database_url.is_empty();
        let resvs = Arc::new(crate::resv::ResvService::load(store.clone()).await?);
        Ok(JobService {
            resvs,
            queue: Mutex::new(queue),
            next_id: AtomicU64::new(next),
            retention: purge::Retention::new(&cfg.scheduler, store.clone(), purged),
            writer: store.map(|s| BatchWriter::spawn(s, KIND_JOB)),
            acct,
            link: nodes.clone(),
            nodes,
            licenses,
            policy: SubmitPolicy {
                accounting_enabled: accounting,
                default_qos: cfg.accounting.default_qos.clone(),
                require_qos: cfg.accounting.require_qos,
                require_association: cfg.accounting.require_association,
                default_time_limit: None,
            },
            sched: SchedConfig {
                accounting_enabled: accounting,
                backfill_enabled: cfg.scheduler.backfill_enabled,
                queue_depth: cfg.scheduler.queue_depth,
                preempt: preempt_config(&cfg.scheduler),
                idle_fill: crate::sched::IdleFillConfig {
                    enabled: cfg.scheduler.idle_fill_enabled,
                    exempt_secs: cfg.scheduler.idle_fill_exempt_secs,
                    max_borrow_factor: cfg.scheduler.idle_fill_max_borrow_factor,
                    max_cluster_fraction: cfg.scheduler.idle_fill_max_cluster_fraction,
                },
            },
            kick: Notify::new(),
            stripes: Default::default(),
            admits: Mutex::new(Default::default()),
            last: Mutex::new(None),
            pass_stats: run::PassStats::default(),
            scratch: Mutex::new(Default::default()),
            diag: diag::Diag::new(now_ms()),
            samples: Default::default(),
            bcasts: Default::default(),
            tails: Default::default(),
            evicted_for: Mutex::new(Default::default()),
            dirty: Notify::new(),
            events: tokio::sync::broadcast::channel(events::BACKLOG).0,
            figures: Mutex::new(None),
            refresh_ms: i64::try_from(cfg.accounting.fairshare_refresh_secs.max(10).saturating_mul(1000))
                .unwrap_or(i64::MAX),
            halflife_days: cfg.scheduler.fairshare_halflife_days,
            grp_wall_window_days: cfg.accounting.grp_wall_window_days,
            live: Default::default(),
            mailer: mail::Mailer::new(cfg.mail.resolved(&cfg.base_dir)),
            configuring: Default::default(),
            async_due: Default::default(),
            pilots: Default::default(),
        })
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes the records, with the request's audit row when its core took
    /// one (`audit::claim`), in one durable commit.
    pub(crate) async fn persist(&self, jobs: &[&JobRecord]) -> Result<()> {
        let Some(w) = &self.writer else { return Ok(()) };
        let docs = jobs
            .iter()
            .map(|j| Ok((j.id.to_string(), Some(serde_json::to_string(j)?))))
            .collect::<Result<Vec<_>>>()?;
        claim::carry(|rows| w.commit(docs, rows)).await
    }

    /// Maps the jobs `f` keeps, under one lock and without cloning records
    /// (scripts and environments stay put): the path behind squeue. With
    /// `ids`, only those jobs are looked at.
    pub fn select<T>(&self, ids: Option<&[u64]>, f: impl FnMut(&JobRecord) -> Option<T>) -> Vec<T> {
        self.select_at(ids, f).0
    }

    /// [`Self::select`], with the number of the last change batch it reflects.
    pub fn select_at<T>(
        &self,
        ids: Option<&[u64]>,
        mut f: impl FnMut(&JobRecord) -> Option<T>,
    ) -> (Vec<T>, u64) {
        // Sized up front: a proto Job is some 600 bytes, and growing a vector
        // of 100,000 of them by doubling copies each several times.
        let mut items = Vec::with_capacity(ids.map_or_else(|| self.count(), <[u64]>::len));
        let seq = self.visit(ids, |j| items.extend(f(j)));
        (items, seq)
    }

    /// How many jobs the controller holds, finished ones included.
    pub fn count(&self) -> usize {
        self.lock().jobs().len()
    }

    /// Calls `f` on each job (or each of `ids` that exists) under one lock;
    /// returns the number of the last change batch the calls reflect.
    pub fn visit(&self, ids: Option<&[u64]>, mut f: impl FnMut(&JobRecord)) -> u64 {
        let q = self.lock();
        match ids {
            Some(ids) => ids.iter().filter_map(|id| q.jobs().get(id)).for_each(&mut f),
            None => q.jobs().values().for_each(&mut f),
        }
        q.seq
    }

    pub fn jobs(&self) -> Vec<JobRecord> {
        self.lock().jobs().values().cloned().collect()
    }

    pub fn job(&self, id: u64) -> Option<JobRecord> {
        self.lock().jobs().get(&id).cloned()
    }

    /// sbatch: resolve the account, QOS and time limit, gate, persist, queue.
    pub async fn submit(&self, ctx_role: Role, caller: &Caller, spec: pb::JobSpec) -> Result<u64> {
        let (rec, partition) = self.resolve(ctx_role, caller, spec)?;
        let catalog = self.acct.catalog();
        self.check_reservation(&rec, &catalog)?;
        let mut slot = None;
        let fx = self.lock().submit(rec, &partition, &catalog, &self.policy, |q| {
            slot = Some(self.job_slot(q)?);
            Ok(self.next_id.fetch_add(1, Ordering::Relaxed))
        })?;
        let id = fx.records().next().map_or(0, |j| j.id);
        let slot = slot.expect("a submit that passed took a slot");
        // The request's row (the Note jobs_api returns) commits with the job.
        claim::take(&id.to_string(), Action::Create, serde_json::json!({}));
        self.apply(fx, Held::none(), |q| slot.fill(q)).await?;
        Ok(id)
    }

    /// A submit's record, built and checked against the partitions, nodes,
    /// licenses and the jobs its dependency names (not yet the accounting gate).
    fn resolve(&self, ctx_role: Role, caller: &Caller, spec: pb::JobSpec) -> Result<(JobRecord, Partition)> {
        let parts = self.nodes.partitions();
        let partition = if spec.partition.is_empty() {
            parts.iter().find(|p| p.is_default).or(parts.first())
        } else {
            parts.iter().find(|p| p.name == spec.partition)
        }
        .ok_or_else(|| match spec.partition.as_str() {
            "" => {
                Error::FailedPrecondition("no partition given and no default partition is configured".into())
            }
            p => Error::invalid("partition", format!("partition '{p}' does not exist")),
        })?
        .clone();
        if spec.priority.is_some() && ctx_role < Role::Operator {
            return Err(Error::PermissionDenied("--priority needs the Operator role".into()));
        }
        if spec.nice < 0 && ctx_role < Role::Operator {
            return Err(Error::PermissionDenied("a negative --nice needs the Operator role".into()));
        }
        let expand = |key: &str, v: &str| -> Result<Vec<String>> {
            if v.is_empty() {
                Ok(vec![])
            } else {
                hostlist::expand_bounded(v, self.nodes.count(), self.nodes.longest_name())
                    .map_err(|e| Error::invalid(key, e))
            }
        };
        let name = |v: &str| (!v.is_empty()).then(|| v.to_ascii_lowercase());
        let asks = licenses::parse_request(&spec.licenses).map_err(|e| Error::invalid("licenses", e))?;
        self.licenses.check_request(&asks)?;
        let extra = extras::Extras::from_spec(&spec)?;
        let array = self.array_of(&spec.array)?;
        let who = owner::owner(caller, ctx_role, &spec.as_user, &spec.as_group)?;
        let mut rec = JobRecord {
            id: 0,
            name: if spec.name.is_empty() { "sbatch".into() } else { spec.name.clone() },
            user: who.user,
            uid: who.uid,
            gid: who.gid,
            group: who.group,
            account: name(&spec.account),
            qos: name(&spec.qos),
            partition: partition.name.clone(),
            priority: spec.priority.map(|p| p.max(0) as u64),
            submit_ms: now_ms(),
            num_nodes: spec.num_nodes.max(1),
            ntasks: spec.ntasks.max(1),
            cpus_per_task: spec.cpus_per_task.max(1),
            mem_mb: spec.mem_mb,
            gpus: u64::from(spec.gpus_per_node),
            time_limit: spec.time_limit_minutes,
            nodelist: expand("nodelist", &spec.nodelist)?,
            exclude: expand("exclude", &spec.exclude)?,
            exclusive: spec.exclusive,
            hold: if spec.hold { Hold::User } else { Hold::None },
            // Known before the first pass, so squeue shows it at once.
            reason: match (spec.hold, spec.dependency.trim().is_empty()) {
                (true, _) => Some(spur_vocab::reason::ReasonCode::JobHeldUser),
                (false, false) => Some(spur_vocab::reason::ReasonCode::Dependency),
                (false, true) => None,
            },
            requeue: spec.requeue.unwrap_or(true),
            licenses: asks.iter().map(ToString::to_string).collect::<Vec<_>>().join(","),
            stdout_path: spec.stdout_path.clone(),
            stderr_path: spec.stderr_path.clone(),
            comment: spec.comment.clone(),
            script: spec.script.clone(),
            env: Env::from_pairs(spec.env.iter().map(|kv| (kv.key.as_str(), kv.value.as_str())))
                .map_err(Error::InvalidArgument)?,
            workdir: spec.workdir.clone(),
            extra,
            array,
            state: JobState::Pending,
            ..JobRecord::default()
        };
        steps::mark_allocation(&mut rec, &spec);
        extras::resolve_shape(&mut rec, &spec)?;
        if let Some(bad) = rec.nodelist.iter().find(|n| self.nodes.node(n).is_none()) {
            return Err(Error::invalid("nodelist", format!("unknown node '{bad}'")));
        }
        self.paths_fit(&rec)?;
        self.admissible(&rec, &partition)?;
        if let Some(x) = &rec.extra {
            self.lock().dependencies_known(&x.dependency())?;
        }
        Ok((rec, partition))
    }

    /// Refuses `-o`/`-e` patterns whose expansion could pass PATH_MAX: each
    /// is expanded once with the longest values its codes can take (any job
    /// or array id, the longest node name), stopping at the cap, so the
    /// launch never builds more than a path's worth.
    fn paths_fit(&self, rec: &JobRecord) -> Result<()> {
        use spur_vocab::jobs::{PathVars, expand_path_within};
        let node = "n".repeat(self.nodes.longest_name());
        let vars = PathVars {
            job_id: u64::MAX,
            user: &rec.user,
            name: &rec.name,
            node: &node,
            array: Some((u64::MAX, u32::MAX)),
        };
        let max = crate::server::limits::MAX_PATH;
        for (key, p) in [("stdout_path", &rec.stdout_path), ("stderr_path", &rec.stderr_path)] {
            if expand_path_within(p, &vars, max).is_err() {
                return Err(Error::invalid(
                    key,
                    format!(
                        "'{}…' expands to more than {max} bytes (PATH_MAX)",
                        p.chars().take(32).collect::<String>()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Running jobs and what each was charged, for `show license`.
    pub fn license_holders(&self) -> Vec<(u64, Vec<spur_vocab::licenses::LicenseAlloc>)> {
        (self.lock().jobs().values())
            .filter(|j| {
                matches!(j.state, JobState::Running | JobState::Configuring) && !j.licenses_alloc.is_empty()
            })
            .map(|j| (j.id, j.licenses_alloc.clone()))
            .collect()
    }

    /// The jobs on `node` that have not let it go (running, suspended,
    /// completing, configuring): what refuses the node's delete.
    pub fn jobs_on(&self, node: &str) -> Vec<u64> {
        use JobState::*;
        (self.lock().jobs().values())
            .filter(|j| matches!(j.state, Running | Suspended | Completing | Configuring))
            .filter(|j| j.nodes.iter().any(|n| n == node))
            .map(|j| j.id)
            .collect()
    }
}
