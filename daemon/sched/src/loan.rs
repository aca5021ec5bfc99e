//! The plain data of idle-fill's reclaim and explanations: what makes a
//! running job reclaimable ([`ReclaimChecks`], the one definition the pass
//! and `scontrol explain` share), a claimant tier's reclaimable runs
//! ([`ReclaimTier`]), and the verdicts explain returns. A leaf: it imports
//! none of the pass's modules, so `reclaim`, `idle_fill_explain`,
//! `pass_state` and `verdict` do not import each other in a circle.

use super::job::JobId;
use super::nodes::NodeState;
use super::reason::Reason;
use std::fmt;

/// The exempt window never grows past this (spec: "up to one hour").
pub const EXEMPT_CAP_SECS: u64 = 3600;

/// The window guarding a run reclaimed `reclaims` times before.
pub fn exempt_window(base_secs: u64, reclaims: u32) -> u64 {
    base_secs.saturating_mul(1u64.checked_shl(reclaims).unwrap_or(u64::MAX)).min(EXEMPT_CAP_SECS)
}

/// The runs reclaimable for one claimant tier (the pool aside), cheapest
/// first, and each node as it would be with all of them gone.
pub(crate) struct ReclaimTier {
    pub list: Vec<(i64, JobId, usize)>,
    pub released: Vec<Option<NodeState>>,
}

/// What reclaim weighs of one running job for a claimant: typed, so the pass
/// decides with [`ReclaimChecks::eligible`] and `scontrol explain` prints
/// the same facts ([`ReclaimChecks::marks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReclaimChecks {
    pub job: JobId,
    pub qos: Option<String>,
    /// Its standing in the opportunistic tier: its QOS's priority.
    pub qos_priority: i64,
    pub borrowed: bool,
    pub preemptable_qos: bool,
    pub ran_s: u64,
    /// The exempt window now, doubled per earlier reclaim.
    pub window_s: u64,
    pub reclaims: u32,
    /// An opportunistic claimant's QOS priority: only strictly cheaper runs.
    pub below: Option<i64>,
    /// It sits on a node of the claimant's pool.
    pub in_pool: bool,
    /// A node of it also holds a job that is not reclaimable.
    pub mixed: bool,
}

impl ReclaimChecks {
    pub fn opportunistic(&self) -> bool {
        self.borrowed || self.preemptable_qos
    }

    fn window_passes(&self) -> bool {
        self.ran_s >= self.window_s
    }

    fn tier_passes(&self) -> bool {
        self.below.is_none_or(|p| self.qos_priority < p)
    }

    /// Reclaimable on its own (the node rule aside).
    pub(crate) fn alone(&self) -> bool {
        self.opportunistic() && self.window_passes() && self.tier_passes()
    }

    pub fn eligible(&self) -> bool {
        self.alone() && self.in_pool && !self.mixed
    }

    /// (name, passes, sentence) of each check, in the order they are made.
    pub fn marks(&self) -> Vec<(&'static str, bool, String)> {
        let what = match (self.borrowed, self.preemptable_qos) {
            (true, _) => "a borrowed run".to_string(),
            (false, true) => format!("in idlefillpreemptable QOS {}", self.qos.as_deref().unwrap_or("")),
            (false, false) => "holds a claim (not borrowed, QOS not idlefillpreemptable)".to_string(),
        };
        let window = format!(
            "ran {}s of its {}s exempt window (idle_fill_exempt_secs doubled {} time(s), at most {}s)",
            self.ran_s, self.window_s, self.reclaims, EXEMPT_CAP_SECS
        );
        let tier = match self.below {
            None => "the claimant holds a claim: any opportunistic run".to_string(),
            Some(p) => format!("QOS priority {} must be below the claimant's {p}", self.qos_priority),
        };
        let nodes = match self.mixed {
            false => "every job on its nodes is reclaimable".to_string(),
            true => "a node of it holds a job that is not reclaimable".to_string(),
        };
        vec![
            ("opportunistic", self.opportunistic(), what),
            ("exempt window", self.window_passes(), window),
            ("tier", self.tier_passes(), tier),
            ("pool", self.in_pool, "on a node the claimant could use".to_string()),
            ("nodes", !self.mixed, nodes),
        ]
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum IdleFillVerdict {
    /// Held by its QOS group node cap: may it borrow?
    Borrow { eligible: bool, why: Borrow },
    /// Blocked on room: what reclaim weighed (eligible ones first, cheapest
    /// first; at most [`LISTED`](crate::verdict::LISTED) of `considered`) and what came of it.
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
