//! Idle-fill's part of `scontrol explain job`, from the same code as the
//! pass: for a job held by its QOS node cap, whether it may borrow (the
//! placement re-run with that cap lifted, so a second breach is named with
//! its facts); for a job blocked on room, the opportunistic runs reclaim
//! weighed, each with its checks, and the set chosen or why none serves.

use super::job::{Job, JobId};
use super::pass_state::Pass;
use super::reason::{Reason, ReasonCode as C};
use super::reclaim::ReclaimChecks;
use super::verdict::LISTED;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum IdleFillVerdict {
    /// Held by its QOS group node cap: may it borrow?
    Borrow { eligible: bool, why: Borrow },
    /// Blocked on room: what reclaim weighed (eligible ones first, cheapest
    /// first; at most [`LISTED`] of `considered`) and what came of it.
    Reclaim { candidates: Vec<ReclaimChecks>, considered: usize, chosen: Vec<JobId> },
}

/// Why a job held by its node cap may or may not borrow.
#[derive(Debug, Clone, PartialEq)]
pub enum Borrow {
    /// With the cap lifted it fits now, on nodes no reservation holds.
    Fits,
    /// It may borrow, but no idle node fits it now.
    NoIdleNode,
    NoTimeLimit,
    Licenses,
    /// Another limit holds it too (the re-run check's first breach).
    AlsoBreaches(Reason),
}

impl fmt::Display for Borrow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Borrow::Fits => write!(f, "eligible: with its QOS node cap lifted it fits on idle nodes now"),
            Borrow::NoIdleNode => write!(f, "eligible, but no idle node outside a reservation fits it now"),
            Borrow::NoTimeLimit => write!(f, "never lent: it has no time limit"),
            Borrow::Licenses => write!(f, "never lent: it asks for licenses or HRES"),
            Borrow::AlsoBreaches(r) => write!(f, "not eligible: its node cap is not its only breach: {r}"),
        }
    }
}

impl IdleFillVerdict {
    /// The verdict as one sentence.
    pub fn sentence(&self) -> String {
        match self {
            IdleFillVerdict::Borrow { why, .. } => format!("idle-fill borrow: {why}"),
            IdleFillVerdict::Reclaim { chosen, considered, .. } if chosen.is_empty() => format!(
                "idle-fill reclaim: no set of the {considered} opportunistic run(s) weighed makes room; nothing is evicted"
            ),
            IdleFillVerdict::Reclaim { chosen, .. } => {
                let ids: Vec<String> = chosen.iter().map(JobId::to_string).collect();
                format!("idle-fill reclaim: requeue {} (cheapest first, no more than needed)", ids.join(", "))
            }
        }
    }
}

impl<'a> Pass<'a> {
    /// Idle-fill's verdict for `job`, left pending with `reason`; None with
    /// idle-fill off or for a reason it has nothing to do with.
    pub(super) fn idle_fill_verdict(
        &mut self,
        job: &'a Job,
        sc: u32,
        pi: usize,
        reason: &Reason,
    ) -> Option<IdleFillVerdict> {
        if !self.snap.config.idle_fill.enabled {
            return None;
        }
        match reason.code {
            C::QOSGrpNodeLimit => Some(self.borrow_verdict(job, sc, pi)),
            C::Resources => {
                let pool = self.pool(job, pi);
                let mut all: Vec<ReclaimChecks> = self
                    .reclaim_checks(self.claimant_tier(sc), &pool)
                    .into_iter()
                    .map(|(_, c)| c)
                    .filter(|c| c.in_pool)
                    .collect();
                all.sort_by_key(|c| (!c.eligible(), c.qos_priority, c.job));
                let considered = all.len();
                all.truncate(LISTED);
                let chosen = self.reclaim(job, sc, pi).unwrap_or_default();
                Some(IdleFillVerdict::Reclaim { candidates: all, considered, chosen })
            }
            _ => None,
        }
    }

    fn borrow_verdict(&mut self, job: &'a Job, sc: u32, pi: usize) -> IdleFillVerdict {
        let why = if job.time_limit.is_none() {
            Borrow::NoTimeLimit
        } else if !job.licenses.is_empty() {
            Borrow::Licenses
        } else {
            self.lending = true;
            let placed = self.try_job(job, sc, Some(pi as u32));
            self.lending = false;
            match placed {
                Ok(_) => Borrow::Fits,
                Err(r) if r.code == C::Resources || r.code == C::Priority => Borrow::NoIdleNode,
                Err(r) => Borrow::AlsoBreaches(r),
            }
        };
        let eligible = matches!(why, Borrow::Fits | Borrow::NoIdleNode);
        IdleFillVerdict::Borrow { eligible, why }
    }
}
