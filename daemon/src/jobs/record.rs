//! A job as the controller keeps and persists it: what was asked (the spec,
//! script included), what resolution filled in, and where it stands.

use super::env::Env;
use super::parts::Extras;
use crate::sched::{self, JobState as SchedState};
use serde::{Deserialize, Serialize};
use spur_vocab::licenses::{self, LicenseAlloc};
use spur_vocab::reason::ReasonCode;
use spur_vocab::{Hold, JobState};

/// The id of the run of job `id` started at `start_ms`: the job id and the
/// start in ms. A controller never starts one job twice in one millisecond
/// (a requeued job waits for a later pass), and another controller's job of
/// the same id (a fresh store) started at another moment.
pub fn run_id(id: u64, start_ms: i64) -> String {
    format!("{id}.{start_ms}")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct JobRecord {
    pub id: u64,
    pub name: String,
    pub user: String,
    /// The current run's cluster-unique id (Slurm's sluid, the HRES page's
    /// `job.sluid`): minted at each start ([`run_id`]), sent with the launch,
    /// named by the agent in its reports and registrations, so the end of
    /// another run of this id (before a requeue, or another controller's
    /// job 1) is never taken for this one's.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub run_id: String,
    /// Who the job runs as: the uid and gid MUNGE vouched for at submit (or
    /// an Operator's --uid/--gid). None: the node agent's own (plugins none, jwt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gid: Option<u32>,
    /// The gid's name on the controller, kept so listings look nothing up.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub group: String,
    pub account: Option<String>,
    pub qos: Option<String>,
    pub partition: String,
    pub priority: Option<u64>,
    pub submit_ms: i64,
    pub num_nodes: u32,
    pub ntasks: u32,
    pub cpus_per_task: u32,
    pub mem_mb: u64,
    pub gpus: u64,
    /// Minutes; None is unbounded.
    pub time_limit: Option<u64>,
    pub nodelist: Vec<String>,
    pub exclude: Vec<String>,
    pub exclusive: bool,
    /// Stored as "", "user" or "admin".
    pub hold: Hold,
    pub requeue: bool,
    /// The `-L` request as given (plugin arguments included).
    pub licenses: String,
    /// What a running job took, layer by layer; released exactly, across restarts.
    pub licenses_alloc: Vec<LicenseAlloc>,
    pub stdout_path: String,
    pub stderr_path: String,
    pub comment: String,
    pub script: String,
    pub env: Env,
    pub workdir: String,
    /// The options few jobs set (`--dependency`, `-C`, `--begin`, mail, ...); None when none are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<Box<Extras>>,
    /// A job array's record: its pending tasks, or the task it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array: Option<Box<super::parts::ArrayInfo>>,
    /// Stored by its long name: "PENDING", "RUNNING", "NODE_FAIL", ...
    pub state: JobState,
    /// Why it waits or ended, stored by Slurm's spelling ("" for none); a row
    /// written when reasons were text reads its code back (`stored_reason`).
    #[serde(with = "super::stored_reason")]
    pub reason: Option<ReasonCode>,
    /// The reason's facts as a sentence, or the words of a failure (a launch
    /// error, a plugin's message) beside its code.
    pub reason_detail: String,
    pub eff_priority: f64,
    /// base, fair share, age factor, tier: the terms of `eff_priority`.
    pub factors: (f64, f64, f64, u32),
    /// provisioners.yaml's `scheduler.priority` from the last pass, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prio_ordered: Option<f64>,
    pub nodes: Vec<String>,
    pub start_ms: i64,
    pub end_ms: i64,
    pub exit_code: i32,
    /// The signal that ended its batch script (ExitCode `-1:N`); 0 when none did.
    #[serde(skip_serializing_if = "super::parts::is_zero_i32")]
    pub exit_signal: i32,
    /// What each allocated node gave: CPUs, memory, GPUs.
    pub alloc: (u32, u64, u64),
    /// The job whose start preempted this one (cancel, requeue or suspend).
    pub preempted_by: Option<u64>,
    /// While SUSPENDED: since when. Suspended time does not count against the time limit.
    pub suspend_ms: i64,
    pub suspended_total_ms: i64,
    /// What the run's processes used, from its agent's report; None until it
    /// ended (left out of the stored row then, so rows without it read as before).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The run's steps (srun), and whether the job is an allocation srun made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Box<super::parts::StepLog>>,
    /// Idle-fill lent this run its nodes (stamped at start, kept after its
    /// end for sacct, cleared by a requeue): it counts in no quota aggregate.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub borrowed: bool,
    /// What this run is charged per hour on borrowed nodes, by slurm
    /// definition (stamped at start, kept after its end for sacct and the
    /// per-account cost, cleared by a requeue).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub charge: Vec<(String, f64)>,
    /// What its earlier runs cost on borrowed nodes, by definition (folded in
    /// at each requeue, so a requeued run's cost is kept).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub spent: Vec<(String, f64)>,
    /// How many times idle-fill reclaimed its runs: the exempt window doubles with each.
    #[serde(skip_serializing_if = "is_zero")]
    pub reclaims: u32,
    /// How many times it went back to the queue, for any cause (Slurm's
    /// `Restarts=` and `SLURM_RESTART_COUNT`).
    #[serde(skip_serializing_if = "is_zero")]
    pub restarts: u32,
    /// Runs a preemption, a reclaim or a failed boot requeued, oldest first (at most `MAX_PAST_RUNS`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub past_runs: Vec<super::parts::PastRun>,
    /// What this run's HRES plugins received (fixed at its start); None without plugins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hres: Option<Box<crate::hres_lua::HresRun>>,
    /// Held by an HRES plugin: its message, the job's reason until released.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin_hold: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A run's CPU time and peak memory, for sacct.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Usage {
    pub user_cpu_us: u64,
    pub sys_cpu_us: u64,
    /// The largest resident set of one of its processes, in KiB.
    pub max_rss_kb: u64,
}

impl JobRecord {
    /// A job as the store keeps it (`name` is its id), the error naming it.
    pub fn from_stored(name: &str, doc: &str) -> crate::error::Result<JobRecord> {
        let mut j: JobRecord = serde_json::from_str(doc)
            .map_err(|e| crate::error::Error::Store(format!("stored job {name} does not decode: {e}")))?;
        j.orphan_steps();
        Ok(j)
    }

    pub fn is_active(&self) -> bool {
        self.state.is_active()
    }

    /// Holds nodes: running or suspended.
    pub fn is_placed(&self) -> bool {
        self.state.is_placed()
    }

    /// Held by its user, an operator or an HRES plugin: it starts only once released.
    pub fn is_held(&self) -> bool {
        self.hold != Hold::None || self.plugin_hold.is_some()
    }

    /// What the job holds on each of its nodes now: a suspended job gave its CPUs and GPUs back.
    pub fn held(&self) -> (u32, u64, u64) {
        match self.state {
            JobState::Running | JobState::Configuring => self.alloc,
            JobState::Suspended => (0, self.alloc.1, 0),
            _ => (0, 0, 0),
        }
    }

    /// Keeps an earlier run, at most `MAX_PAST_RUNS` (the newest).
    pub fn push_past_run(&mut self, run: super::parts::PastRun) {
        self.past_runs.push(run);
        let over = self.past_runs.len().saturating_sub(super::parts::MAX_PAST_RUNS);
        self.past_runs.drain(..over);
    }

    /// What the job has cost by `now` on borrowed nodes, by definition: its
    /// earlier runs' (`spent`), then this run's.
    pub fn cost(&self, now: i64) -> impl Iterator<Item = (&str, f64)> {
        self.spent.iter().map(|(d, c)| (d.as_str(), *c)).chain(self.run_cost(now))
    }

    /// This run's cost by `now`: its charge per hour times the hours from its
    /// launch to its end (or `now`). Nothing while it waits CONFIGURING for
    /// its nodes to boot.
    pub fn run_cost(&self, now: i64) -> impl Iterator<Item = (&str, f64)> {
        let end = if self.end_ms > 0 { self.end_ms } else { now };
        let ran = self.start_ms > 0 && self.state != JobState::Configuring;
        let hours = if ran { end.saturating_sub(self.start_ms).max(0) as f64 / 3_600_000.0 } else { 0.0 };
        self.charge.iter().map(move |(d, rate)| (d.as_str(), rate * hours))
    }

    /// When the time limit runs out, suspended time excluded. Saturating: a
    /// limit past any real end (one stored before limits were capped) never
    /// wraps round into the past.
    pub fn deadline_ms(&self) -> Option<i64> {
        let limit_ms = |m: u64| i64::try_from(m).unwrap_or(i64::MAX).saturating_mul(60_000);
        self.time_limit
            .map(|m| self.start_ms.saturating_add(self.suspended_total_ms).saturating_add(limit_ms(m)))
    }

    /// The licenses asked, by name and count. Checked at submit, so a request
    /// that no longer parses asks for nothing rather than failing a pass.
    pub fn license_asks(&self) -> Vec<(String, u32)> {
        licenses::parse_request(&self.licenses)
            .map(|r| r.into_iter().map(|r| (r.name, r.count)).collect())
            .unwrap_or_default()
    }

    /// The scheduler's view of the job.
    pub fn sched_job(&self) -> sched::Job {
        sched::Job {
            id: self.id,
            user: self.user.clone(),
            account: self.account.clone(),
            qos: self.qos.clone(),
            partition: self.partition.clone(),
            priority: self.priority,
            nice: self.extra.as_ref().map_or(0, |x| x.nice),
            submit_ms: self.submit_ms,
            begin_ms: self.extra.as_ref().map(|x| x.begin_ms).filter(|b| *b > 0),
            num_nodes: self.num_nodes,
            ntasks: self.ntasks,
            cpus_per_task: self.cpus_per_task,
            mem_mb: self.mem_mb,
            gpus: self.gpus,
            time_limit: self.time_limit,
            nodelist: self.nodelist.clone(),
            exclude: self.exclude.clone(),
            exclusive: self.exclusive,
            constraint: self.extra.as_ref().map(|x| x.constraint()).unwrap_or_default(),
            needs: (self.extra.as_ref())
                .map(|x| x.needs(self.ntasks.max(self.num_nodes).div_ceil(self.num_nodes.max(1))))
                .unwrap_or_default(),
            overcommit: self.extra.as_ref().is_some_and(|x| x.overcommit),
            // Evaluated against the queue where the snapshot is taken.
            dep: sched::depend::DepGate::Clear,
            // Its running tasks are counted where the snapshot is taken.
            array: self.array.as_deref().filter(|a| a.task.is_none()).map(|a| sched::job::ArrayAsk {
                pending: a.pending.len(),
                throttle: a.throttle,
                running: 0,
            }),
            hold: self.hold,
            plugin_hold: self.plugin_hold.as_deref().map(std::sync::Arc::from),
            licenses: self.license_asks(),
            charged: self.licenses_alloc.clone(),
            borrowed: self.borrowed && self.state == JobState::Running,
            reclaims: self.reclaims,
            requeueable: self.requeue,
            reservation: self.extra.as_ref().map(|x| x.reservation.clone()).filter(|r| !r.is_empty()),
            annotations: self.extra.as_ref().map(|x| x.annotations.clone()).unwrap_or_default(),
            workflow: self.extra.as_ref().and_then(|x| x.workflow()).map(str::to_string),
            array_id: self.array_id(),
            email: self.extra.as_ref().map(|x| x.mail_user.clone()).unwrap_or_default(),
            state: match self.state {
                JobState::Running | JobState::Configuring => {
                    SchedState::Running { nodes: self.nodes.clone(), start_ms: self.start_ms }
                }
                JobState::Suspended => SchedState::Suspended {
                    nodes: self.nodes.clone(),
                    start_ms: self.start_ms,
                    by: self.preempted_by.unwrap_or(0),
                },
                _ => SchedState::Pending,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_saturate_instead_of_wrapping_into_the_past() {
        let at = |limit| JobRecord {
            start_ms: 1_700_000_000_000,
            time_limit: Some(limit),
            ..JobRecord::default()
        };
        assert_eq!(at(1).deadline_ms(), Some(1_700_000_060_000));
        for huge in [u64::MAX, u64::MAX / 60_000, i64::MAX as u64 / 60_000 + 1] {
            assert_eq!(at(huge).deadline_ms(), Some(i64::MAX), "{huge}");
        }
        let max = at(spur_vocab::time::MAX_TIME_LIMIT_MINUTES).deadline_ms().unwrap();
        assert!(max > 1_700_000_000_000 && max < i64::MAX);
    }

    /// A row as stores written it when state and hold were strings: it must
    /// load unchanged, and write back the same spellings.
    #[test]
    fn records_stored_with_string_states_load_and_round_trip() {
        let old = serde_json::json!({
            "id": 12, "user": "alice", "partition": "batch", "state": "NODE_FAIL", "hold": "admin",
            "reason": "NodeDown", "nodes": ["n1"], "alloc": [4, 1024, 0], "factors": [1.0, 0.5, 0.1, 2],
        });
        let j: JobRecord = serde_json::from_value(old).unwrap();
        assert_eq!(
            (j.state, j.hold, j.reason),
            (JobState::NodeFail, Hold::Admin, Some(ReasonCode::NodeDown))
        );
        let back = serde_json::to_value(&j).unwrap();
        assert_eq!((back["state"].as_str(), back["hold"].as_str()), (Some("NODE_FAIL"), Some("admin")));
        for (state, hold, want) in [
            ("PENDING", "", (JobState::Pending, Hold::None)),
            ("RUNNING", "user", (JobState::Running, Hold::None)),
            ("SUSPENDED", "", (JobState::Suspended, Hold::None)),
            ("COMPLETED", "", (JobState::Completed, Hold::None)),
            ("CANCELLED", "", (JobState::Cancelled, Hold::None)),
            ("FAILED", "", (JobState::Failed, Hold::None)),
            ("TIMEOUT", "", (JobState::Timeout, Hold::None)),
        ] {
            let j: JobRecord =
                serde_json::from_value(serde_json::json!({ "state": state, "hold": hold })).unwrap();
            let want = if hold == "user" { (want.0, Hold::User) } else { want };
            assert_eq!((j.state, j.hold), want, "{state}");
        }
        // Fields missing from an old row take their defaults.
        let bare: JobRecord = serde_json::from_value(serde_json::json!({ "id": 3 })).unwrap();
        assert_eq!((bare.state, bare.hold), (JobState::Pending, Hold::None));
    }
}
