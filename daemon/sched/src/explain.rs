//! `scontrol explain`: the preemption evaluation of a pass, run on demand
//! against a snapshot with nothing started yet, weighing every running job.
//! The same code as the pass, so an explanation cannot disagree with it.

use super::job::{Job, JobId, JobState};
use super::pass_state::{Pass, scoped_priority};
use super::preempt::{Overlap, Short};
use super::priority::PriorityFactors;
use super::verdict::{JobVerdict, PairVerdict};
use super::{Plan, Snapshot};

/// The full verdict for a pending job, or why there is none. When the pass
/// that produced `plan` decided for this job, its checks and outcome (which
/// depend on what else that pass did) replace the on-demand ones.
pub fn explain_job(
    snap: &Snapshot,
    plan: Option<&Plan>,
    now_ms: i64,
    id: JobId,
) -> Result<JobVerdict, String> {
    let mut pass = Pass::new(snap, now_ms);
    let (job, sc, pi, prio) = pending(&mut pass, id)?;
    // A job the last pass left short of its Mode 3 resource is weighed against that resource's holders.
    let reason = plan.and_then(|p| p.reason_of(id));
    let short = reason.and_then(|r| Short::of(r.code, &pass.licenses, job)).unwrap_or(Short::Room);
    let mut v = pass.consider_preemption(job, sc, pi, &prio, true, short);
    // Before the pass's own verdict is copied in: reclaim would come first there too.
    v.idle_fill = reason.and_then(|r| pass.idle_fill_verdict(job, sc, pi, r));
    if let Some(decided) = plan.and_then(|p| p.verdict_of(id)) {
        v.checks.clone_from(&decided.checks);
        v.outcome = decided.outcome.clone();
    } else if let Some(r) = reason.filter(|r| r.code != super::ReasonCode::Resources) {
        v.outcome = super::Outcome::NotBlocked { reason: r.code.as_str().into() };
    }
    Ok(v)
}

/// The full verdict for one (pending, running) pair.
pub fn explain_pair(
    snap: &Snapshot,
    now_ms: i64,
    pending_id: JobId,
    running_id: JobId,
) -> Result<PairVerdict, String> {
    let mut pass = Pass::new(snap, now_ms);
    let (job, sc, pi, prio) = pending(&mut pass, pending_id)?;
    let r = (0..pass.running.len())
        .find(|r| snap.jobs[pass.running[*r].job].id == running_id)
        .ok_or_else(|| format!("job {running_id} is not running"))?;
    let pool = pass.pool(job, pi);
    let mut in_pool = vec![false; snap.nodes.len()];
    pool.iter().for_each(|i| in_pool[*i as usize] = true);
    // The pair is about a Mode 3 resource when the pending job asks one the candidate holds.
    let run = &snap.jobs[pass.running[r].job];
    let resource = pass.licenses.mode3_of(job).filter(|res| run.charged.iter().any(|a| a.name == *res));
    let layers = resource.map(|res| pass.licenses.layers_over(res, &pool)).unwrap_or_default();
    let overlap = match resource {
        Some(resource) => Overlap::Layers { resource, layers: &layers },
        None => Overlap::Nodes(&in_pool),
    };
    Ok(pass.pair(job, sc, pi, &prio, &overlap, r))
}

/// The pending job, its scope, partition and priority as the pass computes them.
fn pending<'a>(pass: &mut Pass<'a>, id: JobId) -> Result<(&'a Job, u32, usize, PriorityFactors), String> {
    let snap = pass.snap;
    let job = snap.jobs.iter().find(|j| j.id == id).ok_or_else(|| format!("job {id} is not in the queue"))?;
    if !matches!(job.state, JobState::Pending) {
        return Err(format!("job {id} is not pending"));
    }
    let pi = *pass
        .part_idx
        .get(job.partition.as_str())
        .ok_or_else(|| format!("job {id}'s partition '{}' does not exist", job.partition))?;
    let (sc, prio) = scoped_priority(&mut pass.scopes, &pass.parts, job, Some(pi), pass.now);
    Ok((job, sc, pi as usize, prio))
}
