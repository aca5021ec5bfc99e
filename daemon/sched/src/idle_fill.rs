//! Idle-fill's lending half (spur-idle-fill.md): a pending job whose QOS
//! group node cap is the sole limit it breaches may run on capacity no job
//! with a claim wants. Candidates are placed after every other job of the
//! pass has started or reserved, with the QOS node cap lifted and the full
//! limit check run again (so a second breach keeps the job waiting), never
//! on a reservation's nodes and without a reservation of their own; each
//! loan is checked against the per-QOS ceilings. A lent run is stamped
//! `borrowed` and counts in no quota aggregate.

use super::job::Dim;
use super::job::Job;
use super::pass_state::Pass;
use super::priority::PriorityFactors;
use super::reason::{Reason, ReasonCode as C};
use super::{Pending, Plan};
use crate::model::Qos;

/// A job that waits only on its QOS group node cap, kept for the lending round.
pub(super) struct Borrower<'a> {
    pub job: &'a Job,
    pub scope: u32,
    pub part: Option<u32>,
    pub priority: PriorityFactors,
    /// Why it waits, as a job with a claim: kept when no loan is made.
    pub reason: Reason,
}

/// What idle-fill did in a pass, for `/metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoanStats {
    pub admitted: u32,
    /// Refused by `idle_fill_max_borrow_factor`.
    pub refused_factor: u32,
    /// Refused by `idle_fill_max_cluster_fraction`.
    pub refused_fraction: u32,
    /// Opportunistic runs the pass chose to reclaim.
    pub reclaims: u32,
    /// Nodes borrowed runs hold after the pass (its loans included).
    pub on_loan: u64,
}

/// Which ceiling bounds a QOS's loans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ceiling {
    Factor(u64),
    Fraction(u64),
}

impl Ceiling {
    fn nodes(self) -> u64 {
        match self {
            Ceiling::Factor(n) | Ceiling::Fraction(n) => n,
        }
    }
}

/// The tighter of the two ceilings on what `qos` may hold on loan, each
/// floored; None when neither is set. `registered` is the cluster's node count.
fn ceiling(qos: Option<&Qos>, factor: f64, fraction: f64, registered: usize) -> Option<Ceiling> {
    let cap = qos.and_then(|q| super::limits::tres_cap(&q.grp_tres, Dim::Node));
    let by_factor = (factor > 0.0).then(|| cap.map(|c| Ceiling::Factor((c as f64 * factor).floor() as u64)));
    let by_fraction =
        (fraction > 0.0).then(|| Ceiling::Fraction((registered as f64 * fraction).floor() as u64));
    match (by_factor.flatten(), by_fraction) {
        (Some(a), Some(b)) => Some(if b.nodes() < a.nodes() { b } else { a }),
        (a, b) => a.or(b),
    }
}

impl<'a> Pass<'a> {
    /// Whether `job`, refused with `reason`, is a borrow candidate: idle-fill
    /// is on, the refusal is its QOS group node cap, and it is none of the
    /// kinds never lent (no time limit, licenses or HRES).
    pub(super) fn may_borrow(&self, job: &Job, reason: &Reason) -> bool {
        self.snap.config.idle_fill.enabled
            && reason.code == C::QOSGrpNodeLimit
            && job.time_limit.is_some()
            && job.licenses.is_empty()
    }

    /// Placement as a loan: the QOS node cap lifted, reserved nodes off
    /// limits, and a failure reserving nothing.
    pub(super) fn try_loan(
        &mut self,
        job: &'a Job,
        sc: u32,
        part: Option<u32>,
    ) -> Result<super::pass::Picked, Reason> {
        self.lending = true;
        let placed = self.try_job(job, sc, part);
        self.lending = false;
        placed
    }

    /// The lending round: each candidate, in priority order, is offered what
    /// is left. One that cannot be lent keeps its reason as a job with a claim.
    pub(super) fn lend(&mut self, borrowers: Vec<Borrower<'a>>) {
        self.lend_each(borrowers);
        self.plan.idle_fill.on_loan = self.loans.values().sum();
    }

    fn lend_each(&mut self, borrowers: Vec<Borrower<'a>>) {
        let cfg = self.snap.config.idle_fill.clone();
        for b in borrowers {
            let Borrower { job, scope, part, priority, reason } = b;
            let (picked, lic) = match self.try_loan(job, scope, part) {
                Ok(p) => p,
                Err(r) => {
                    // No idle node: a borrower may displace strictly cheaper opportunistic
                    // work (an idlefillpreemptable QOS below its own); it starts on a later pass.
                    if let (C::Resources, Some(pi)) = (r.code, part) {
                        let own = self.scopes.list[scope as usize].qos.map_or(0, |q| q.priority);
                        self.reclaim_as(job, pi as usize, Some(own));
                    }
                    self.plan.pending.push(Pending { job: job.id, reason, priority });
                    continue;
                }
            };
            let qos = job.qos.as_deref().unwrap_or("");
            let held = self.loans.get(qos).copied().unwrap_or(0);
            let q = self.scopes.list[scope as usize].qos;
            let limit = ceiling(q, cfg.max_borrow_factor, cfg.max_cluster_fraction, self.snap.nodes.len());
            match limit.filter(|c| held.saturating_add(picked.len() as u64) > c.nodes()) {
                Some(Ceiling::Factor(_)) => self.plan.idle_fill.refused_factor += 1,
                Some(Ceiling::Fraction(_)) => self.plan.idle_fill.refused_fraction += 1,
                None => {
                    self.plan.idle_fill.admitted += 1;
                    self.start(job, scope, picked, lic, priority, true);
                    continue;
                }
            }
            self.plan.pending.push(Pending { job: job.id, reason, priority });
        }
    }
}

impl Plan {
    /// The jobs this pass lent nodes to.
    pub fn borrowed(&self) -> impl Iterator<Item = &super::Start> {
        self.starts.iter().filter(|s| s.borrowed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qos(nodes: Option<u64>) -> Qos {
        let mut q = Qos { name: "team".into(), ..Qos::default() };
        if let Some(n) = nodes {
            q.grp_tres = spur_vocab::tres::parse_map(&format!("node={n}")).unwrap();
        }
        q
    }

    #[test]
    fn ceilings_floor_and_the_tighter_wins() {
        // "2.0 against a cap of node=4 allows 8 borrowed nodes."
        assert_eq!(ceiling(Some(&qos(Some(4))), 2.0, 0.0, 100), Some(Ceiling::Factor(8)));
        // "fractions floor, so a ceiling never overshoots": 0.25 of 10 nodes is 2.
        assert_eq!(ceiling(Some(&qos(Some(4))), 0.0, 0.25, 10), Some(Ceiling::Fraction(2)));
        assert_eq!(ceiling(Some(&qos(Some(3))), 1.5, 0.0, 10), Some(Ceiling::Factor(4)), "4.5 floors");
        // "When both are set the tighter wins."
        assert_eq!(ceiling(Some(&qos(Some(4))), 2.0, 0.25, 10), Some(Ceiling::Fraction(2)));
        assert_eq!(ceiling(Some(&qos(Some(1))), 2.0, 0.5, 10), Some(Ceiling::Factor(2)));
        // "Both default to 0.0, meaning unbounded."
        assert_eq!(ceiling(Some(&qos(Some(4))), 0.0, 0.0, 10), None);
        assert_eq!(ceiling(Some(&qos(None)), 2.0, 0.0, 10), None, "no cap, no multiple of it");
    }
}
