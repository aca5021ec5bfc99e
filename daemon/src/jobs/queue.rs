//! The jobs the controller holds, and the bookkeeping that follows them.
//! Transitions read a `Queue` and return effects; only the executor's
//! install writes records into it, through [`Queue::install`], so the limit
//! counts, the launching set and the Watch marks cannot drift from the records.
//! The records and their counts are private to this file: besides install,
//! the only writes are the memory-only ones named here (a pass's pending
//! reasons, an HRES plugin's remote failure, a purge, the load).

use super::record::JobRecord;
use crate::accounting::Caller;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::sched::submit::SubmitCounts;
use spur_vocab::JobState;
use std::collections::{BTreeMap, HashSet};

#[derive(Default)]
pub(crate) struct Queue {
    jobs: BTreeMap<u64, JobRecord>,
    counts: SubmitCounts,
    // The bookkeeping the job module's transitions keep beside the records
    // (none of it a record): theirs to read and update.
    /// Jobs whose killed run will still report an end, to be ignored.
    pub(super) stale_reports: HashSet<u64>,
    /// Started by the current pass, their launch not yet handed to the agent.
    pub(super) launching: HashSet<u64>,
    /// Jobs changed since the last published batch, and that batch's number.
    pub(super) changed: HashSet<u64>,
    pub(super) seq: u64,
    /// Slurm's KillWait: SIGTERM, then SIGKILL this many seconds later.
    pub(super) kill_wait: u32,
    /// How purged jobs that pending jobs still depend on ended (see `depend.rs`).
    pub(super) fates: std::collections::HashMap<u64, crate::sched::depend::Target>,
}

impl Queue {
    /// The queue a controller starts with: the records the store held, their counts.
    pub fn loaded(jobs: BTreeMap<u64, JobRecord>, kill_wait: u32) -> Queue {
        let active: Vec<_> = jobs.values().filter(|j| j.is_active()).map(JobRecord::sched_job).collect();
        let counts = SubmitCounts::from_jobs(active.iter());
        Queue { jobs, counts, kill_wait, ..Queue::default() }
    }

    /// Every record, in id order.
    pub fn jobs(&self) -> &BTreeMap<u64, JobRecord> {
        &self.jobs
    }

    /// The submit limits' counts of the active records.
    pub fn counts(&self) -> &SubmitCounts {
        &self.counts
    }

    /// A purge: job `id` leaves memory (the store keeps it), with what followed it.
    pub fn forget(&mut self, id: u64) -> Option<JobRecord> {
        let gone = self.jobs.remove(&id)?;
        if gone.is_active() {
            self.counts.remove(&gone.sched_job());
        }
        self.stale_reports.remove(&id);
        self.mark(id);
        Some(gone)
    }

    /// At load, drops the ended records `keep` refuses (a restart must not
    /// bring back what was purged); active ones always stay.
    pub fn retain_ended(&mut self, mut keep: impl FnMut(&JobRecord) -> bool) {
        self.jobs.retain(|_, j| j.is_active() || keep(j));
    }

    /// Memory only, not persisted: an HRES plugin's service was unavailable
    /// at a pending job's pre-run; the next pass tries again.
    pub fn note_remote_fail(&mut self, id: u64, message: &str) {
        if let Some(j) = self.jobs.get_mut(&id).filter(|j| j.state == JobState::Pending) {
            j.reason = Some(crate::sched::reason::ReasonCode::HresRemoteFail);
            j.reason_detail = message.to_string();
            self.mark(id);
        }
    }

    /// Memory only, not persisted: every pending job's reason and priority as
    /// the pass found them; the next pass finds them again. Priority alone
    /// does not mark a job (see `events.rs`).
    pub fn note_pending(&mut self, plan: &crate::sched::Plan) {
        let mut marks = vec![];
        let mut detail = String::new();
        // In id order, so the queue is walked once rather than searched per job.
        let mut by_id: Vec<&crate::sched::Pending> = plan.pending.iter().collect();
        by_id.sort_unstable_by_key(|p| p.job);
        let first = by_id.first().map_or(0, |p| p.job);
        let mut jobs = self.jobs.range_mut(first..).peekable();
        for p in by_id {
            while jobs.next_if(|(id, _)| **id < p.job).is_some() {}
            if let Some((_, j)) = jobs.next_if(|(id, _)| **id == p.job) {
                let code = Some(p.reason.code);
                p.reason.write_sentence(&mut detail);
                if j.reason != code || j.reason_detail != detail {
                    j.reason = code;
                    j.reason_detail.clone_from(&detail);
                    marks.push(j.id);
                }
                j.eff_priority = p.priority.value() as f64;
                j.factors = factors(&p.priority);
                j.prio_ordered = p.priority.ordered;
            }
        }
        for id in marks {
            self.mark(id);
        }
    }

    /// Tests set records up directly, as a store's load would.
    #[cfg(test)]
    pub fn jobs_mut(&mut self) -> &mut BTreeMap<u64, JobRecord> {
        &mut self.jobs
    }

    /// Job `id`, or NotFound.
    pub fn get(&self, id: u64) -> Result<&JobRecord> {
        self.jobs.get(&id).ok_or_else(|| Error::NotFound(format!("job {id} does not exist")))
    }

    /// Puts a persisted record in place; returns the one it replaced.
    pub fn install(&mut self, new: JobRecord) -> Option<JobRecord> {
        let id = new.id;
        if new.is_active() {
            self.counts.add(&new.sched_job());
        }
        let started = new.state == JobState::Running;
        let old = self.jobs.insert(id, new);
        if let Some(old) = &old {
            if old.is_active() {
                self.counts.remove(&old.sched_job());
            }
            if started && matches!(old.state, JobState::Pending | JobState::Configuring) {
                // A registration before the launch reaches the agent must not call it lost.
                self.launching.insert(id);
            }
        } else if started
            && self.jobs.get(&id).is_some_and(|j| j.array.as_ref().is_some_and(|a| a.task.is_some()))
        {
            // An array task split off as it starts: new, and launching all the same.
            self.launching.insert(id);
        }
        self.mark(id);
        old
    }
}

/// A priority's terms as a record keeps them: base, fair share, age, tier.
pub(super) fn factors(p: &crate::sched::PriorityFactors) -> (f64, f64, f64, u32) {
    (p.base, p.fair_share, p.age, p.tier)
}

/// Checks the caller may act on a job: its owner, or Operator and above.
pub(crate) fn owns(role: Role, caller: &Caller, j: &JobRecord) -> Result<()> {
    if role >= Role::Operator || j.user == caller.user {
        Ok(())
    } else {
        Err(Error::PermissionDenied(format!(
            "job {} belongs to '{}'; only its owner or an Operator may change it",
            j.id, j.user
        )))
    }
}
