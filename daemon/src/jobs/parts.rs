//! The plain data a job record holds besides its core fields: the
//! options few jobs set ([`Extras`]), an array's tasks ([`ArrayInfo`]) and
//! the steps of a run ([`StepLog`]). A leaf: it imports nothing of `jobs`,
//! so the record and the files that work on these parts (`extras.rs`,
//! `array.rs`, `steps/`) do not import each other in a circle.

use serde::{Deserialize, Serialize};
use spur_vocab::JobState;
use spur_vocab::array::TaskSet;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Extras {
    pub ntasks_per_node: u32,
    pub mem_per_cpu_mb: u64,
    /// `-C`, canonical (`a&b|c`).
    pub constraint: String,
    pub mail_type: String,
    pub mail_user: String,
    /// `--signal`, as given.
    pub signal: String,
    /// The run (its start, epoch ms) that was sent the `--signal` warning:
    /// once a run, and a requeued job's next run gets its own.
    pub signalled_run_ms: i64,
    /// Unix ms; 0 is none.
    pub begin_ms: i64,
    pub deadline_ms: i64,
    pub time_min: Option<u64>,
    pub nice: i32,
    /// "append" or "" (truncate, Slurm's default).
    pub open_mode: String,
    pub wckey: String,
    /// `--dependency`, canonical; kept after it is satisfied, as `scontrol show job` shows it.
    pub dependency: String,
    pub kill_on_invalid_dep: bool,
    /// `--annotation KEY=VALUE`, in order: provisioner definitions match them.
    pub annotations: Vec<(String, String)>,
    /// `--mem-per-gpu` (MB), `--cpus-per-gpu`, `--mincpus` as asked; the
    /// record's memory and CPUs per task are resolved from them at submit.
    pub mem_per_gpu_mb: u64,
    pub cpus_per_gpu: u32,
    pub mincpus: u32,
    /// `--reservation`: the admin reservation the job runs in (checked at submit).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reservation: String,
    /// `--tmp` (MB), `--sockets-per-node`, `--cores-per-socket`,
    /// `--threads-per-core`: what a node's facts must have.
    pub tmp_mb: u64,
    pub sockets_per_node: u32,
    pub cores_per_socket: u32,
    pub threads_per_core: u32,
    /// `-O`: CPUs per task once per node, whatever the tasks there.
    pub overcommit: bool,
    /// `--ntasks-per-gpu`, `--gpus-per-socket` as asked (resolved at submit).
    pub ntasks_per_gpu: u32,
    pub gpus_per_socket: u32,
    /// `-s`, `-k` as asked (no effect; shown with the request).
    pub oversubscribe: bool,
    pub no_kill: bool,
    /// `--ntasks-per-core`, `--ntasks-per-socket`: the most tasks a core or socket runs.
    pub ntasks_per_core: u32,
    pub ntasks_per_socket: u32,
    /// `-i/--input`: the batch script's standard input, a path pattern as given.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub input: String,
    /// sbatch's script arguments, the script's `$1`, `$2`, ... ([`super::extras::script_args`]'s bounds);
    /// sent to the agent only, never in listings (up to 1 MiB a job): `Command=` is the path alone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub script_args: Vec<String>,
    /// The script's absolute path as sbatch read it (Slurm's `Command=`); empty for `--wrap` and stdin.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub command: String,
    /// `-m/--distribution`, canonical: the batch script's sruns read it from SLURM_DISTRIBUTION.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub distribution: String,
    /// Slurm's `SubmitLine`: the submitting command line, its first [`super::extras::MAX_SUBMIT_LINE`] bytes.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub submit_line: String,
}

/// What a record of an array knows of it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ArrayInfo {
    /// The array's id: its first record's.
    pub job_id: u64,
    /// This record's task; None for the record of the pending tasks.
    pub task: Option<u32>,
    /// The record of the pending tasks: their indexes (empty on a task).
    pub pending: TaskSet,
    /// `%N`: at most this many tasks running at once; 0 is no limit.
    pub throttle: u32,
    /// The whole array, for SLURM_ARRAY_TASK_COUNT/_MIN/_MAX.
    pub count: u64,
    pub min: u32,
    pub max: u32,
}

/// Slurm's MaxStepCount default: the most steps one run of a job may start.
pub const MAX_STEPS: u32 = 40_000;

/// A job's steps, and whether the job is an allocation srun made.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StepLog {
    /// An allocation srun made: no batch script (sacct shows no `.batch`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub allocation: bool,
    /// An allocation `salloc --no-shell` made: nobody holds it, so the
    /// watch over unheld allocations leaves it to scancel or its time limit.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub detached: bool,
    /// The next step's id.
    pub next: u32,
    /// In id order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<StepRecord>,
}

/// One step as the job record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StepRecord {
    pub id: u32,
    pub name: String,
    /// RUNNING, then COMPLETED, FAILED, CANCELLED or NODE_FAIL.
    pub state: JobState,
    pub nodes: Vec<String>,
    /// Tasks on each of `nodes`, in order (block-wise: tasks 0.. on the first).
    pub tasks: Vec<u32>,
    /// The task ids on each of `nodes` when `-m` laid them out otherwise than
    /// block-wise; empty (and not stored) for block.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ids: Vec<Vec<u32>>,
    pub cpus_per_task: u32,
    #[serde(skip_serializing_if = "is_zero")]
    pub mem_mb: u64,
    pub start_ms: i64,
    pub end_ms: i64,
    pub exit_code: i32,
    /// The signal that killed one of its tasks, or 0.
    #[serde(skip_serializing_if = "is_zero_i32")]
    pub signal: i32,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

pub(super) fn is_zero_i32(v: &i32) -> bool {
    *v == 0
}

impl StepRecord {
    pub fn ntasks(&self) -> u32 {
        self.tasks.iter().sum()
    }

    pub fn is_running(&self) -> bool {
        self.state == JobState::Running
    }
}

impl StepLog {
    pub fn get(&self, id: u32) -> Option<&StepRecord> {
        self.list.iter().find(|s| s.id == id)
    }

    pub fn running(&self) -> impl Iterator<Item = &StepRecord> {
        self.list.iter().filter(|s| s.is_running())
    }
}

/// The most earlier runs a job keeps: the newest, enough for sacct -D to
/// show a reclaim or preemption story without a job's record growing with it.
pub const MAX_PAST_RUNS: usize = 16;

/// A run of the job that a preemption, an idle-fill reclaim or a failed boot requeued.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PastRun {
    pub start_ms: i64,
    pub end_ms: i64,
    pub nodes: Vec<String>,
    pub preempted_by: u64,
    pub borrowed: bool,
    pub reclaim: bool,
}
