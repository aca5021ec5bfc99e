//! The scheduler: a pure, synchronous function from a [`Snapshot`] and `now`
//! to a [`Plan`]. No I/O, no clock, no locks; tests and benches call it
//! directly (DESIGN.md: "The scheduler is a pure function").
//!
//! - [`model`]: plain data: QOS, accounts, users, associations, nodes, partitions, HRES.
//! - [`catalog`]: the cached accounting records a pass reads.
//! - [`hres_spec`]: resources.yaml parsed and checked into HRES resources.
//! - [`job`]: the plain job data the scheduler reads; its TRES and per-node shape.
//! - [`reason`]: the one table of Slurm reason codes, and [`Reason`] (code + facts).
//! - [`resv`]: making and changing a reservation (`scontrol create|update reservation`), checked against the cluster.
//! - [`submit`]: account and QOS resolution, the default time limit, the submit gate.
//! - [`demand`]: new nodes each dynamic definition should ask its upstream for, after a pass.
//! - [`depend`]: whether a `--dependency` holds, from the named jobs' states.
//! - [`feasible`]: requests no node set of their partition could ever run, refused at submit.
//! - [`provision`]: provisioner definitions (provisioners.yaml): pools, policies, annotation matching.
//! - [`priority`]: effective priority and its factors; decayed usage and fair share.
//! - `hres`: plain licenses and hierarchical resources (modes 1–3) in a pass.
//! - `limits`: limit checks shared by the gate and the pass; usage groups.
//! - `scope`: a job's QOS, association, groups and accounting hold, resolved once.
//! - `memo`: what a pass remembers about jobs that found no room.
//! - `nodes`: node state in a pass, ordered scans, the backfill reservation.
//! - `pass_state`: one pass's state (nodes, partitions, scopes, running jobs), shared by
//!   `pass`, `preempt` and `explain` without their importing each other.
//! - `pool_state`: the plain data of provisioner pools in a pass (a leaf).
//! - `pools`: provisioner pools in a pass: the nodes a job's definitions allow, cheapest first.
//! - `pass`: the pass itself: order, checks, placement (`pass/place.rs`), EASY backfill.
//! - `scratch`: the pass's large buffers, kept by the caller across passes (`schedule_with`).
//! - `idle_fill`: lending idle nodes to jobs held only by their QOS group node cap.
//! - [`idle_fill_explain`]: idle-fill's part of `scontrol explain`: may a job borrow, what reclaim weighed.
//! - `preempt`: preemption for jobs blocked on resources: the gap, the guards,
//!   the pool threshold, victims that provably make room; suspend and resume.
//! - `loan`: the plain data of reclaim and idle-fill verdicts (a leaf).
//! - `reclaim`: idle-fill's reclaim of opportunistic runs for jobs with a claim, before preemption.
//! - `screen`: what a pass reuses across blocked jobs so preemption costs
//!   each job its own candidates, not a verdict per running job.
//! - `windows`: admin reservations in a pass: each node's windows, the licences they hold.
//! - `soon`, `window_fit`: idle nodes a window starting soon keeps out, counted once per shape.
//! - [`verdict`]: the typed verdicts and their sentences.
//! - `explain`: the same evaluation on demand, for `scontrol explain`.
//!
//! What a pass does, in priority order (ties by submit time): holds, begin
//! time, dependencies, accounting holds (AccountingUnavailable, InvalidQOS), partition
//! state/MaxTime/size, per-job limits, grpwall (only once a consumption
//! figure is known), running-count and TRES limits, licenses, then placement
//! (CPUs, memory, GPUs, exclusivity, nodelist/exclude; lowest weight first;
//! grptres node= counts distinct nodes and packs onto the group's nodes).
//! The highest job left without room in each partition reserves the nodes
//! it fits on earliest; a lower job then starts only if it ends before that
//! or keeps off those nodes. Every start updates free resources and usage
//! for the jobs after it; every job left pending gets a typed [`Reason`].

pub mod catalog;
pub mod demand;
pub mod depend;
mod explain;
pub mod feasible;
mod held;
pub mod hres;
mod idle_fill;
pub mod idle_fill_explain;
pub use idle_fill::LoanStats;
pub mod job;
mod limits;
mod loan;
mod memo;
mod nodes;
mod pass;
mod pass_state;
mod pool_state;
mod pools;
mod preempt;
pub mod priority;
pub mod provision;
pub mod reason;
pub mod reclaim;
pub mod resv;
mod scope;
mod scratch;
mod screen;
mod soon;
pub mod submit;
#[cfg(test)]
mod tests;
pub mod verdict;
mod window_fit;
mod windows;

pub mod hres_spec;
pub mod model;

use crate::catalog::Catalog;
use crate::model::{HresResource, Node, Partition};
use spur_vocab::licenses::LicenseAlloc;
use spur_vocab::names::PreemptMode;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub use explain::{explain_job, explain_pair};
pub use job::{Hold, Job, JobId, JobState, Shape};
pub use priority::{
    AccountShare, FairShare, PriorityFactors, UsageRecord, UsageTable, account_shares_tree, level_fs,
};
pub use reason::{Facts, LimitFacts, LimitKind, Reason, ReasonCode, Scope, Unit};
pub use scratch::Scratch;
pub use submit::{Resolved, SubmitCounts, SubmitError, SubmitPolicy};
pub use verdict::{GapCheck, Guard, JobCheck, JobVerdict, Outcome, PairVerdict, Side, Source};

/// The `scheduler.*` knobs a pass reads.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedConfig {
    /// EASY backfill; off, a job without room stops lower work on its nodes.
    pub backfill_enabled: bool,
    /// How many jobs a pass tries behind the first reservation. Jobs ahead
    /// of it are always tried; cheap checks (holds, limits) run for all.
    pub queue_depth: usize,
    /// `[accounting] database_url` is set.
    pub accounting_enabled: bool,
    pub preempt: PreemptConfig,
    pub idle_fill: IdleFillConfig,
}

/// `[scheduler] idle_fill_*`: lending idle nodes past a QOS group node cap.
#[derive(Debug, Clone, PartialEq)]
pub struct IdleFillConfig {
    pub enabled: bool,
    /// How long a borrowed run is safe from reclaim (doubling per reclaim, to an hour).
    pub exempt_secs: u64,
    /// Nodes one QOS may hold on loan, as a multiple of its group node cap; 0: unbounded.
    pub max_borrow_factor: f64,
    /// Nodes one QOS may hold on loan, as a share of the registered nodes; 0: unbounded.
    pub max_cluster_fraction: f64,
}

impl Default for IdleFillConfig {
    fn default() -> Self {
        IdleFillConfig { enabled: false, exempt_secs: 60, max_borrow_factor: 0.0, max_cluster_fraction: 0.0 }
    }
}

impl Default for SchedConfig {
    fn default() -> Self {
        SchedConfig {
            backfill_enabled: true,
            queue_depth: 64,
            accounting_enabled: false,
            preempt: PreemptConfig::default(),
            idle_fill: IdleFillConfig::default(),
        }
    }
}

/// The preemption knobs of `[scheduler]`, resolved (durations in seconds).
#[derive(Debug, Clone, PartialEq)]
pub struct PreemptConfig {
    pub enabled: bool,
    /// `preempt_type = "qos_priority"`: the QOS allow-list applies.
    pub qos_allow_list: bool,
    pub exempt_secs: u64,
    /// Percent; eviction only at or above it.
    pub threshold_pct: f64,
    /// An absolute minimum delta on top of the 2× rule.
    pub min_gap: Option<f64>,
    pub min_runtime_secs: u64,
    pub multi_victim: bool,
    pub max_evictions: u32,
    pub drain_timeout_secs: u64,
}

impl Default for PreemptConfig {
    fn default() -> Self {
        PreemptConfig {
            enabled: false,
            qos_allow_list: false,
            exempt_secs: 0,
            threshold_pct: 75.0,
            min_gap: None,
            min_runtime_secs: 60,
            multi_victim: false,
            max_evictions: 8,
            drain_timeout_secs: 30,
        }
    }
}

/// A node as the scheduler sees it: capacity, what is free now, and whether
/// it is in service (up, registered, not drained).
#[derive(Debug, Clone, PartialEq)]
pub struct SchedNode {
    pub name: String,
    pub cpus: u32,
    pub mem_mb: u64,
    pub gpus: u64,
    pub free_cpus: u32,
    pub free_mem_mb: u64,
    pub free_gpus: u64,
    pub weight: u32,
    /// Partitions that list this node, besides the partitions' own lists.
    pub partitions: Vec<String>,
    pub schedulable: bool,
    /// Slurm's node features, which `-C` matches.
    pub features: Vec<String>,
    /// The provisioner definitions whose condition holds for it (indexes into `Snapshot::provision`).
    pub definitions: Vec<u16>,
    /// What its agent reported of it, for `--tmp` and the layout options (shared, not copied).
    pub facts: Option<std::sync::Arc<model::HostFacts>>,
    /// A borrowed node's end (its pilot's time limit upstream): only jobs
    /// that end by then are placed on it.
    pub expires_ms: Option<i64>,
    /// A borrowed node still booting ([`Node::booting`]): schedulable, and
    /// a job placed on it starts CONFIGURING ([`Start::configuring`]).
    pub booting: bool,
}

impl SchedNode {
    /// An idle, schedulable node.
    pub fn idle(name: &str, cpus: u32, mem_mb: u64, gpus: u64) -> SchedNode {
        SchedNode {
            name: name.into(),
            cpus,
            mem_mb,
            gpus,
            free_cpus: cpus,
            free_mem_mb: mem_mb,
            free_gpus: gpus,
            weight: 1,
            partitions: vec![],
            schedulable: true,
            features: vec![],
            definitions: vec![],
            facts: None,
            expires_ms: None,
            booting: false,
        }
    }

    pub fn from_model(n: &Node) -> SchedNode {
        let gpus = |g: &[(String, u64)]| -> u64 {
            g.iter().filter(|(name, _)| name == "gpu" || name.starts_with("gpu:")).map(|(_, c)| c).sum()
        };
        let (total, used) = (gpus(&n.gres), gpus(&n.alloc_gres));
        let booting = n.booting();
        let up = n.in_service() || booting;
        SchedNode {
            name: n.name.clone(),
            cpus: n.cpus,
            mem_mb: n.memory_mb,
            gpus: total,
            free_cpus: n.cpus.saturating_sub(n.alloc_cpus),
            free_mem_mb: n.memory_mb.saturating_sub(n.alloc_memory_mb),
            free_gpus: total.saturating_sub(used),
            weight: n.weight,
            partitions: n.partitions.clone(),
            schedulable: up,
            features: n.features.clone(),
            definitions: vec![],
            facts: n.facts.clone(),
            expires_ms: None,
            booting,
        }
    }
}

/// Everything one pass reads. Free resources on nodes already account for
/// the running jobs, which are listed so usage, distinct nodes and end
/// times are known.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub nodes: Vec<SchedNode>,
    pub partitions: Vec<Partition>,
    /// Pending and running jobs.
    pub jobs: Vec<Job>,
    pub catalog: Arc<Catalog>,
    /// Decayed usage for fair share.
    pub usage: UsageTable,
    /// Minutes consumed per QOS over the grpwall window; None until first read,
    /// and while None no grpwall applies. A QOS missing from a read map used 0.
    pub grp_wall_used: Option<HashMap<String, u64>>,
    /// Configured count per plain license; running jobs' licenses are taken off.
    pub licenses: BTreeMap<String, u32>,
    /// When each preemptor last had victims evicted, for the drain timeout.
    pub evicted_for: HashMap<JobId, i64>,
    /// Hierarchical resources; usage comes from running jobs' `charged`.
    pub hres: Arc<Vec<HresResource>>,
    pub config: SchedConfig,
    /// provisioners.yaml, when one is loaded: jobs go only to their definitions' nodes.
    pub provision: Option<Arc<provision::Provision>>,
    /// Pending jobs' definition verdicts ([`provision::prepare`]); a job
    /// missing here is judged in the pass.
    pub admits: provision::Admits,
    /// Admin reservations not yet over (recurring ones already rolled forward).
    pub resvs: Arc<Vec<model::Resv>>,
    /// Each dynamic definition's nodes booting and active, by definition id.
    pub provisioned: HashMap<String, demand::Provisioned>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Start {
    pub job: JobId,
    pub nodes: Vec<String>,
    /// Lent by idle-fill: the run is outside every quota aggregate and reclaimable.
    pub borrowed: bool,
    /// Started behind a reservation held by a higher-priority job.
    pub backfilled: bool,
    pub priority: PriorityFactors,
    /// Licenses taken, with the layers charged.
    pub licenses: Vec<LicenseAlloc>,
    /// Placed on a node still booting: the job is CONFIGURING, launched
    /// when every node's agent has registered.
    pub configuring: bool,
    /// Its charge per hour on borrowed nodes, by definition id ([`demand::charge`]); empty on this cluster's.
    pub charge: Vec<(String, f64)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub job: JobId,
    pub reason: Reason,
    pub priority: PriorityFactors,
}

/// Nodes held for a blocked job from its expected start.
#[derive(Debug, Clone, PartialEq)]
pub struct Reservation {
    pub job: JobId,
    pub partition: String,
    pub start_ms: i64,
    pub nodes: Vec<String>,
}

/// A running job to remove so a higher-priority job can start.
#[derive(Debug, Clone, PartialEq)]
pub struct Preemption {
    pub victim: JobId,
    pub by: JobId,
    /// cancel, requeue or suspend (requeue already turned into cancel for a job that may not requeue).
    pub mode: PreemptMode,
    /// Idle-fill took back an opportunistic run: always requeue, whatever the job allows.
    pub reclaim: bool,
}

/// A pass's decisions. `pending` holds every job left pending, in priority order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    pub starts: Vec<Start>,
    pub pending: Vec<Pending>,
    pub reservations: Vec<Reservation>,
    pub preemptions: Vec<Preemption>,
    /// Suspended jobs whose preemptor is gone and whose nodes have room again.
    pub resumes: Vec<JobId>,
    /// For every job blocked on resources: what preemption concluded.
    pub verdicts: Vec<JobVerdict>,
    /// Idle-fill's loans this pass: admitted and refused by each ceiling.
    pub idle_fill: LoanStats,
    /// New nodes each dynamic definition should request ([`demand`]).
    pub provision: Vec<demand::NodeRequest>,
}

impl Plan {
    pub fn reason_of(&self, job: JobId) -> Option<&Reason> {
        self.pending.iter().find(|p| p.job == job).map(|p| &p.reason)
    }

    pub fn start_of(&self, job: JobId) -> Option<&Start> {
        self.starts.iter().find(|s| s.job == job)
    }

    pub fn verdict_of(&self, job: JobId) -> Option<&JobVerdict> {
        self.verdicts.iter().find(|v| v.job == job)
    }
}

/// One scheduling pass.
pub fn schedule(snap: &Snapshot, now_ms: i64) -> Plan {
    pass::run(snap, now_ms, &mut Scratch::default())
}

/// One scheduling pass that reuses the last pass's working buffers: what a
/// caller running pass after pass (the controller) calls, so the pass does
/// not allocate and free its largest buffers each time ([`Scratch`]).
pub fn schedule_with(snap: &Snapshot, now_ms: i64, scratch: &mut Scratch) -> Plan {
    pass::run(snap, now_ms, scratch)
}
