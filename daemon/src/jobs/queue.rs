//! The jobs the controller holds, and the bookkeeping that follows them.
//! Transitions read a `Queue` and return effects; only the executor's
//! install writes records into it, through [`Queue::install`], so the limit
//! counts, the launching set and the Watch marks cannot drift from the records.

use super::record::JobRecord;
use crate::accounting::Caller;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::sched::submit::SubmitCounts;
use spur_vocab::JobState;
use std::collections::{BTreeMap, HashSet};

#[derive(Default)]
pub(crate) struct Queue {
    pub jobs: BTreeMap<u64, JobRecord>,
    pub counts: SubmitCounts,
    /// Jobs whose killed run will still report an end, to be ignored.
    pub stale_reports: HashSet<u64>,
    /// Started by the current pass, their launch not yet handed to the agent.
    pub launching: HashSet<u64>,
    /// Jobs changed since the last published batch, and that batch's number.
    pub changed: HashSet<u64>,
    pub seq: u64,
    /// Slurm's KillWait: SIGTERM, then SIGKILL this many seconds later.
    pub kill_wait: u32,
    /// How purged jobs that pending jobs still depend on ended (see `depend.rs`).
    pub fates: std::collections::HashMap<u64, crate::sched::depend::Target>,
}

impl Queue {
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
