//! Job steps (srun): a step is a set of tasks started in a running job, on
//! some of its nodes, through their agents; its output streams back to the
//! srun that asked for it, through the controller. Steps are kept on the job
//! record (persisted with it), so sacct shows `ID.0`, `ID.1` ... after the
//! job has left memory. They are never audited (the spec excludes step
//! create and complete).
//!
//! - [`layout`]: a step's shape: its nodes, tasks per node (block-wise), CPUs; srun's exit code.
//! - [`env`](mod@env): Slurm's step environment, and each task's own variables.
//! - [`transit`]: the step transitions of the queue: start, end, release an allocation.
//! - [`live`]: what only memory holds: each running step's srun stream, the
//!   tasks still out, and the sruns attached to the allocations they made.
//! - [`service`]: srun's RunStep and the agents' StepIo, driven end to end.
//! - [`attach`]: sattach: another reader of a running step's output.
//! - [`bcast`]: sbcast: a file streamed on to each node of a running job, written as its user.
//! - [`stats`]: sstat: the running steps' use, sampled by their nodes' agents on request.
//!
//! An allocation srun made (`srun CMD` outside a job: [`StepLog::allocation`])
//! has no batch script: the controller starts it and launches nothing; it
//! ends when its srun's step ends, when that srun's stream goes away, and
//! (an srun killed before it attached, a controller restart) when no srun
//! has been attached to it for [`live::DETACHED_GRACE`].

pub mod attach;
pub mod bcast;
pub mod env;
pub mod layout;
pub mod live;
pub mod service;
pub mod stats;
pub mod stdin;
pub mod transit;

use spur_vocab::JobState;

pub use super::parts::{MAX_STEPS, StepLog, StepRecord};

/// What a job ending in `state` makes of the steps still running: the
/// node's failure is theirs too; any other end cancels them.
pub fn closed_state(job: JobState) -> JobState {
    if job == JobState::NodeFail { JobState::NodeFail } else { JobState::Cancelled }
}

impl super::record::JobRecord {
    /// An allocation srun made (no batch script).
    pub fn is_allocation(&self) -> bool {
        self.steps.as_ref().is_some_and(|s| s.allocation)
    }

    /// An allocation no srun or salloc holds (`salloc --no-shell`).
    pub fn is_detached(&self) -> bool {
        self.steps.as_ref().is_some_and(|s| s.allocation && s.detached)
    }

    /// The step `id`, if the job has it.
    pub fn step(&self, id: u32) -> Option<&StepRecord> {
        self.steps.as_ref().and_then(|s| s.get(id))
    }

    /// Ends the steps still running as the job ends in `state` at `now`.
    pub fn close_steps(&mut self, state: JobState, now: i64) {
        if let Some(log) = self.steps.as_mut() {
            for s in log.list.iter_mut().filter(|s| s.is_running()) {
                s.state = closed_state(state);
                s.end_ms = now;
            }
        }
    }

    /// A requeued job's next run starts its steps afresh (ids from 0, as Slurm).
    pub fn forget_steps(&mut self) {
        if let Some(log) = self.steps.as_mut() {
            log.list.clear();
            log.next = 0;
        }
        if self.steps.as_ref().is_some_and(|s| **s == StepLog::default()) {
            self.steps = None;
        }
    }

    /// A step left RUNNING in a stored record outlived the controller that
    /// relayed it: its agents killed its tasks when their stream broke.
    /// It is shown CANCELLED, its end unknown.
    pub fn orphan_steps(&mut self) {
        if let Some(log) = self.steps.as_mut() {
            for s in log.list.iter_mut().filter(|s| s.is_running()) {
                s.state = JobState::Cancelled;
            }
        }
    }
}

/// Marks a submit from srun outside an allocation: no script, never requeued
/// (Slurm does not requeue an interactive allocation).
pub fn mark_allocation(rec: &mut super::record::JobRecord, spec: &spur_proto::v1::JobSpec) {
    if spec.allocation {
        let detached = spec.detached;
        rec.steps = Some(Box::new(StepLog { allocation: true, detached, ..StepLog::default() }));
        rec.requeue = false;
        rec.script.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::record::JobRecord;

    fn step(id: u32, state: JobState) -> StepRecord {
        StepRecord { id, state, nodes: vec!["n1".into()], tasks: vec![2], ..StepRecord::default() }
    }

    #[test]
    fn a_job_s_end_closes_its_running_steps() {
        let log = StepLog {
            allocation: false,
            detached: false,
            next: 2,
            list: vec![step(0, JobState::Completed), step(1, JobState::Running)],
        };
        let mut j = JobRecord { steps: Some(Box::new(log)), ..JobRecord::default() };
        j.close_steps(JobState::NodeFail, 5);
        let s = j.step(1).unwrap();
        assert_eq!((s.state, s.end_ms), (JobState::NodeFail, 5));
        assert_eq!(j.step(0).unwrap().state, JobState::Completed, "an ended step keeps its end");
        j.steps.as_mut().unwrap().list[1].state = JobState::Running;
        j.close_steps(JobState::Timeout, 6);
        assert_eq!(j.step(1).unwrap().state, JobState::Cancelled);
        j.forget_steps();
        assert!(j.steps.is_none(), "a plain job's steps go with its run");
    }

    #[test]
    fn a_no_shell_allocation_is_detached_and_stays_so_when_stored() {
        use spur_proto::v1::JobSpec;
        let mut j = JobRecord { requeue: true, script: "x".into(), ..JobRecord::default() };
        mark_allocation(&mut j, &JobSpec { allocation: true, detached: true, ..JobSpec::default() });
        assert!(j.is_allocation() && j.is_detached() && !j.requeue && j.script.is_empty());
        let back: JobRecord = serde_json::from_str(&serde_json::to_string(&j).unwrap()).unwrap();
        assert!(back.is_detached());
        let mut held = JobRecord::default();
        mark_allocation(&mut held, &JobSpec { allocation: true, ..JobSpec::default() });
        assert!(held.is_allocation() && !held.is_detached(), "srun's and salloc's held allocations");
    }

    #[test]
    fn steps_round_trip_and_old_rows_have_none() {
        let log = StepLog {
            allocation: true,
            next: 1,
            list: vec![step(0, JobState::Running)],
            ..StepLog::default()
        };
        let j = JobRecord { id: 3, steps: Some(Box::new(log)), ..JobRecord::default() };
        let text = serde_json::to_string(&j).unwrap();
        let back = JobRecord::from_stored("3", &text).unwrap();
        assert!(back.is_allocation());
        assert_eq!(back.step(0).unwrap().state, JobState::Cancelled, "a loaded step's relay is gone");
        let old: JobRecord = serde_json::from_str(r#"{"id":4}"#).unwrap();
        assert!(old.steps.is_none() && !old.is_allocation());
        let plain = serde_json::to_value(JobRecord::default()).unwrap();
        assert!(plain.get("steps").is_none(), "a job without steps stores no field");
    }
}
