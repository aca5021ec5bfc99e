//! The plain job data the scheduler reads, and the two views of a job's ask
//! that limits and placement need: its TRES totals and its per-node shape.

use super::depend::DepGate;
use spur_vocab::constraint::Constraint;
use spur_vocab::licenses::LicenseAlloc;
use std::fmt;

pub type JobId = u64;

/// Who holds a job back (Slurm keeps the two apart because only an operator
/// may release an admin hold): the vocabulary's one definition.
pub use spur_vocab::Hold;

/// The states the scheduler cares about. Finished jobs are not in a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum JobState {
    #[default]
    Pending,
    Running {
        nodes: Vec<String>,
        start_ms: i64,
    },
    /// Stopped by a preemptor under `suspend`: it keeps its nodes (and their
    /// memory) and resumes once `by` is no longer active.
    Suspended {
        nodes: Vec<String>,
        start_ms: i64,
        by: JobId,
    },
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Job {
    pub id: JobId,
    pub user: String,
    pub account: Option<String>,
    pub qos: Option<String>,
    pub partition: String,
    /// An explicit `--priority`; replaces the QOS-derived base.
    pub priority: Option<u64>,
    /// `--nice`: taken off the base priority.
    pub nice: i32,
    pub submit_ms: i64,
    /// `--begin`: not eligible before this time.
    pub begin_ms: Option<i64>,
    pub num_nodes: u32,
    pub ntasks: u32,
    pub cpus_per_task: u32,
    /// Per node; 0 asks for no memory.
    pub mem_mb: u64,
    /// GPUs per node.
    pub gpus: u64,
    /// Minutes; None is unbounded.
    pub time_limit: Option<u64>,
    /// Expanded hostlists.
    pub nodelist: Vec<String>,
    pub exclude: Vec<String>,
    pub exclusive: bool,
    /// `-C`: only nodes with these features.
    pub constraint: Constraint,
    /// `--tmp` and the layout options: only nodes whose facts meet them.
    pub needs: crate::model::NodeNeeds,
    /// `-O`: allocated CPUs per task once per node, as one task there would be
    /// (Slurm's overcommit; not with `--exclusive`, which takes the node anyway).
    pub overcommit: bool,
    /// `--dependency`, evaluated when the snapshot was taken.
    pub dep: DepGate,
    /// The record of a job array's pending tasks: how many it holds (each
    /// counts as a job for limits, and a pass may start several), its `%N`
    /// limit (0: none) and how many of its tasks run now.
    pub array: Option<ArrayAsk>,
    pub hold: Hold,
    /// Held by an HRES plugin (with `Hold::Admin`): its message.
    pub plugin_hold: Option<std::sync::Arc<str>>,
    /// `-L name:count`.
    pub licenses: Vec<(String, u32)>,
    /// May go back to the queue (`--requeue`); preemption in requeue mode cancels otherwise.
    pub requeueable: bool,
    /// The admin reservation the job runs in, which protects it from preemption
    /// by jobs of a tier not above its own.
    pub reservation: Option<String>,
    /// A running job's licenses and the layers it was charged on; released exactly.
    pub charged: Vec<LicenseAlloc>,
    pub state: JobState,
    /// A running job whose run idle-fill lent: it counts in no quota aggregate.
    pub borrowed: bool,
    /// How many times idle-fill reclaimed the job: its exempt window doubles with each.
    pub reclaims: u32,
    /// `--annotation`s, which provisioner definitions match and policies read.
    pub annotations: Vec<(String, String)>,
    /// The workflow `exclusive: workflow` nodes are shared within: the
    /// `workflow` annotation, else the array the job belongs to (`array_id`).
    pub workflow: Option<String>,
    /// The array a task or an array's pending record belongs to.
    pub array_id: Option<JobId>,
    /// `--mail-user`: a policy's `request.owner.email`.
    pub email: String,
}

/// What a pass needs of an array's pending tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArrayAsk {
    pub pending: u64,
    pub throttle: u32,
    pub running: u32,
}

impl ArrayAsk {
    /// Tasks that may start now, `started` of them already this pass.
    pub fn startable(&self, started: u32) -> u64 {
        let left = self.pending.saturating_sub(u64::from(started));
        match self.throttle {
            0 => left,
            t => left.min(u64::from(t.saturating_sub(self.running).saturating_sub(started))),
        }
    }
}

impl Job {
    /// How many jobs this one counts as for submit limits: an array's pending tasks, or one.
    pub fn weight(&self) -> u64 {
        self.array.map_or(1, |a| a.pending.max(1))
    }

    /// A one-node, one-CPU pending job; tests and benches adjust the rest.
    pub fn new(id: JobId, user: &str, partition: &str) -> Job {
        Job {
            id,
            user: user.into(),
            partition: partition.into(),
            num_nodes: 1,
            ntasks: 1,
            cpus_per_task: 1,
            ..Job::default()
        }
    }

    pub fn is_running(&self) -> bool {
        matches!(self.state, JobState::Running { .. })
    }

    pub fn is_pending(&self) -> bool {
        matches!(self.state, JobState::Pending)
    }

    /// Node count, at least one and at least the named nodes.
    pub fn nodes(&self) -> u32 {
        self.num_nodes.max(1).max(u32::try_from(self.nodelist.len()).unwrap_or(u32::MAX))
    }

    /// Tasks, at least one per node as Slurm raises `-n` to `-N`.
    fn tasks(&self) -> u32 {
        self.ntasks.max(self.nodes())
    }

    /// What one node must offer: tasks spread evenly, rounded up.
    pub fn shape(&self) -> Shape {
        let nodes = self.nodes();
        let tasks_per_node = if self.overcommit { 1 } else { self.tasks().div_ceil(nodes) };
        Shape {
            nodes,
            cpus: tasks_per_node.saturating_mul(self.cpus_per_task.max(1)),
            mem_mb: self.mem_mb,
            gpus: self.gpus,
            exclusive: self.exclusive,
            workflow: 0,
        }
    }

    /// The job's TRES ask, indexed by [`Dim`]: CPUs are tasks × cpus-per-task
    /// (what was asked, as Slurm's limits count it; with `-O`, nodes ×
    /// cpus-per-task), memory and GPUs per node × nodes.
    pub fn tres(&self) -> Tres {
        let n = u64::from(self.nodes());
        // With -O the CPUs allocated are what is counted, as Slurm counts them.
        let tasks = if self.overcommit { self.nodes() } else { self.tasks() };
        let cpus = u64::from(tasks) * u64::from(self.cpus_per_task.max(1));
        [cpus, self.mem_mb.saturating_mul(n), self.gpus.saturating_mul(n), n]
    }

    /// When the job would end if it started at `start_ms`; unbounded is `i64::MAX`.
    pub fn end_ms(&self, start_ms: i64) -> i64 {
        match self.time_limit {
            Some(m) => start_ms.saturating_add(i64::try_from(m).unwrap_or(i64::MAX).saturating_mul(60_000)),
            None => i64::MAX,
        }
    }
}

/// A TRES amount per [`Dim`].
pub type Tres = [u64; 4];

/// The TRES dimensions the scheduler enforces, in [`Tres`] order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    Cpu,
    Mem,
    Gpu,
    Node,
}

impl Dim {
    pub const ALL: [Dim; 4] = [Dim::Cpu, Dim::Mem, Dim::Gpu, Dim::Node];

    /// The id in `spur_vocab::tres::TRES` (checked by a test).
    pub fn tres_id(self) -> u32 {
        match self {
            Dim::Cpu => 1,
            Dim::Mem => 2,
            Dim::Gpu => 1001,
            Dim::Node => 4,
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// What each of a job's nodes must offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    pub nodes: u32,
    pub cpus: u32,
    pub mem_mb: u64,
    pub gpus: u64,
    pub exclusive: bool,
    /// The job's workflow, for nodes of an `exclusive: workflow` definition
    /// (0: none; set by the pass only where such nodes are in play).
    pub workflow: u64,
}

impl Shape {
    /// Whether every node of `self` asks at least what `other` does, so that
    /// if `other` found no room, neither can `self`.
    pub fn covers(&self, other: &Shape) -> bool {
        self.nodes >= other.nodes
            && self.cpus >= other.cpus
            && self.mem_mb >= other.mem_mb
            && self.gpus >= other.gpus
            && (self.exclusive || !other.exclusive)
            && self.workflow == other.workflow
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = if self.nodes == 1 { "" } else { "s" };
        write!(f, "{} node{plural} × {} CPUs", self.nodes, self.cpus)?;
        if self.mem_mb > 0 {
            write!(f, ", {} MB", self.mem_mb)?;
        }
        if self.gpus > 0 {
            write!(f, ", {} GPUs", self.gpus)?;
        }
        if self.exclusive {
            write!(f, ", exclusive")?;
        }
        Ok(())
    }
}
