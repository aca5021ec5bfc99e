//! What `scontrol update job` is held to beyond its keys, as Slurm holds it:
//! no user raises their own time limit or sets one past the limits that
//! apply, and a pending job's new QOS, account or partition passes what a
//! submit passes (`sched::submit`, the one resolution and gate). Pure: the
//! caller reads the partitions and the catalog before the transition.

use super::record::JobRecord;
use crate::accounting::Catalog;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::model::Partition;
use crate::sched::submit::{self, SubmitCounts, SubmitPolicy};
use spur_vocab::JobState;
use spur_vocab::time::format_limit;

/// Slurm's ESLURM_INVALID_TIME_LIMIT sentence.
const INVALID_TIME_LIMIT: &str = "Requested time limit is invalid (missing or exceeds some limit)";

/// What an update is checked against, read by `JobService::update`.
pub(crate) struct Bounds<'a> {
    /// Every partition, with its MaxTime.
    pub partitions: &'a [Partition],
    /// QOS and association limits and allow-lists.
    pub catalog: &'a Catalog,
    pub policy: &'a SubmitPolicy,
}

impl Bounds<'_> {
    fn partition(&self, name: &str) -> Option<&Partition> {
        self.partitions.iter().find(|p| p.name == name)
    }
}

/// The new QOS, account or partition of a pending job, resolved and gated
/// as its submit was, against the live jobs without this one; `next` takes
/// what the resolution fills in. Nothing to do when none of them changed.
pub(crate) fn resubmit(
    old: &JobRecord,
    next: &mut JobRecord,
    b: &Bounds,
    counts: &SubmitCounts,
) -> Result<()> {
    if (&next.qos, &next.account, &next.partition) == (&old.qos, &old.account, &old.partition) {
        return Ok(());
    }
    let partition = b.partition(&next.partition).ok_or_else(|| {
        Error::invalid("Partition", format!("partition '{}' does not exist", next.partition))
    })?;
    // The job counts once already: checked as if it were not there yet.
    let mut counts = counts.clone();
    counts.remove(&old.sched_job());
    let resolved = submit::submit(&next.sched_job(), Some(partition), b.catalog, b.policy, &counts)
        .map_err(super::refusal)?;
    next.account = resolved.account;
    next.qos = resolved.qos;
    next.time_limit = resolved.time_limit;
    Ok(())
}

/// Below Operator a time limit only comes down, and never to more than the
/// partition's MaxTime or the association's and QOS's MaxWall. Operators
/// and Administrators set any limit (as Slurm lets them exceed partition limits).
pub(crate) fn time_limit(old: &JobRecord, next: &JobRecord, role: Role, b: &Bounds) -> Result<()> {
    if role >= Role::Operator || next.time_limit == old.time_limit {
        return Ok(());
    }
    // None is UNLIMITED: above every limit.
    let raised = match (old.time_limit, next.time_limit) {
        (Some(was), Some(now)) => now > was,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if raised {
        return Err(Error::PermissionDenied(format!(
            "Access/permission denied: TimeLimit: only an Operator or Administrator may raise the time \
             limit of job {} (from {} to {}); you may lower it",
            old.id,
            format_limit(old.time_limit),
            format_limit(next.time_limit)
        )));
    }
    if b.policy.accounting_enabled && !b.catalog.loaded {
        return Err(Error::Unavailable(
            "the accounting cache has not loaded yet, so the new time limit cannot be checked against the \
             QOS and association limits; retry shortly"
                .into(),
        ));
    }
    submit::time_caps(&next.sched_job(), b.partition(&next.partition), b.catalog)
        .map_err(|r| Error::invalid("TimeLimit", format!("{INVALID_TIME_LIMIT}: {r}")))
}

/// A QOS, account or partition changes only while the job pends (Slurm's
/// ESLURM_JOB_NOT_PENDING), whoever asks.
pub(crate) fn only_pending(old: &JobRecord, next: &JobRecord) -> Result<()> {
    if old.state == JobState::Pending {
        return Ok(());
    }
    let changed = [
        ("QOS", next.qos != old.qos),
        ("Account", next.account != old.account),
        ("Partition", next.partition != old.partition),
    ];
    match changed.iter().find(|(_, c)| *c) {
        Some((key, _)) => Err(Error::FailedPrecondition(format!(
            "Job is no longer pending execution: {key}: job {} is {}, and its QOS, Account and Partition \
             change only while it is PENDING",
            old.id, old.state
        ))),
        None => Ok(()),
    }
}
