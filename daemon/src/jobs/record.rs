//! A job as the controller keeps and persists it: what was asked (the spec,
//! script included), what resolution filled in, and where it stands.

use crate::sched::{self, Hold, JobState as SchedState};
use serde::{Deserialize, Serialize};
use spur_vocab::JobState;
use spur_vocab::licenses::{self, LicenseAlloc};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct JobRecord {
    pub id: u64,
    pub name: String,
    pub user: String,
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
    /// "", "user" or "admin".
    pub hold: String,
    pub requeue: bool,
    /// The `-L` request as given (plugin arguments included).
    pub licenses: String,
    /// What a running job took, layer by layer; released exactly, across restarts.
    pub licenses_alloc: Vec<LicenseAlloc>,
    pub stdout_path: String,
    pub stderr_path: String,
    pub comment: String,
    pub script: String,
    pub env: Vec<(String, String)>,
    pub workdir: String,
    /// PENDING, RUNNING, COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL, ...
    pub state: String,
    pub reason: String,
    pub reason_detail: String,
    pub eff_priority: f64,
    /// base, fair share, age factor, tier: the terms of `eff_priority`.
    pub factors: (f64, f64, f64, u32),
    pub nodes: Vec<String>,
    pub start_ms: i64,
    pub end_ms: i64,
    pub exit_code: i32,
    /// What each allocated node gave: CPUs, memory, GPUs.
    pub alloc: (u32, u64, u64),
    /// The job whose start preempted this one (cancel, requeue or suspend).
    pub preempted_by: Option<u64>,
    /// While SUSPENDED: since when. Suspended time does not count against the time limit.
    pub suspend_ms: i64,
    pub suspended_total_ms: i64,
}

pub const PENDING: &str = JobState::Pending.as_str();
pub const RUNNING: &str = JobState::Running.as_str();
pub const SUSPENDED: &str = JobState::Suspended.as_str();

impl JobRecord {
    pub fn is_active(&self) -> bool {
        self.state == PENDING || self.state == RUNNING || self.state == SUSPENDED
    }

    /// Holds nodes: running or suspended.
    pub fn is_placed(&self) -> bool {
        self.state == RUNNING || self.state == SUSPENDED
    }

    /// What the job holds on each of its nodes now: a suspended job gave its CPUs and GPUs back.
    pub fn held(&self) -> (u32, u64, u64) {
        match self.state.as_str() {
            RUNNING => self.alloc,
            SUSPENDED => (0, self.alloc.1, 0),
            _ => (0, 0, 0),
        }
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
            submit_ms: self.submit_ms,
            begin_ms: None,
            num_nodes: self.num_nodes,
            ntasks: self.ntasks,
            cpus_per_task: self.cpus_per_task,
            mem_mb: self.mem_mb,
            gpus: self.gpus,
            time_limit: self.time_limit,
            nodelist: self.nodelist.clone(),
            exclude: self.exclude.clone(),
            exclusive: self.exclusive,
            hold: Hold::from_name(&self.hold),
            licenses: self.license_asks(),
            charged: self.licenses_alloc.clone(),
            requeueable: self.requeue,
            reservation: None,
            state: match self.state.as_str() {
                RUNNING => SchedState::Running { nodes: self.nodes.clone(), start_ms: self.start_ms },
                SUSPENDED => SchedState::Suspended {
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
}
