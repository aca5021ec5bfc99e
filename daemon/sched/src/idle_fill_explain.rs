//! Idle-fill's part of `scontrol explain job`, from the same code as the
//! pass: for a job held by its QOS node cap, whether it may borrow (the
//! placement re-run with that cap lifted, so a second breach is named with
//! its facts); for a job blocked on room, the opportunistic runs reclaim
//! weighed, each with its checks, and the set chosen or why none serves.

use super::job::Job;
use super::loan::ReclaimChecks;
pub use super::loan::{Borrow, IdleFillVerdict};
use super::pass_state::Pass;
use super::reason::{Reason, ReasonCode as C};
use super::verdict::LISTED;

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
            match self.try_loan(job, sc, Some(pi as u32)) {
                Ok(_) => Borrow::Fits,
                Err(r) if r.code == C::Resources || r.code == C::Priority => Borrow::NoIdleNode,
                Err(r) => Borrow::AlsoBreaches(r),
            }
        };
        let eligible = matches!(why, Borrow::Fits | Borrow::NoIdleNode);
        IdleFillVerdict::Borrow { eligible, why }
    }
}
