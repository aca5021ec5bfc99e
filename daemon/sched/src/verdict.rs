//! Preemption verdicts as typed values: both sides of the priority formula,
//! the 2× gap, each guard in the spec's order with its inputs, and for a
//! chosen set of victims why that set is enough. `scontrol explain` and the
//! console's Preemption pane render these sentences; nothing recomputes them.

use super::job::{JobId, Shape};
use super::priority::PriorityFactors;
use spur_vocab::hostlist;
use spur_vocab::names::PreemptMode;
use spur_vocab::time::format_seconds;
use std::fmt;

/// How many candidates a verdict keeps, best first.
pub const LISTED: usize = 16;

/// One job as a side of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    pub job: JobId,
    pub user: String,
    pub qos: Option<String>,
    pub partition: String,
    pub factors: PriorityFactors,
}

/// `candidate < pending / 2` (strict), and the absolute delta when `preemption_gap` is set.
#[derive(Debug, Clone, PartialEq)]
pub struct GapCheck {
    pub pending: f64,
    pub candidate: f64,
    pub min_delta: Option<f64>,
}

impl GapCheck {
    pub fn twice(&self) -> bool {
        self.candidate < self.pending / 2.0
    }

    pub fn delta_ok(&self) -> bool {
        self.min_delta.is_none_or(|g| self.pending - self.candidate >= g)
    }

    pub fn holds(&self) -> bool {
        self.twice() && self.delta_ok()
    }
}

/// Where an effective setting came from, most specific first.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    Qos(String),
    Partition(String),
    Global,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Qos(q) => write!(f, "QOS '{q}'"),
            Source::Partition(p) => write!(f, "partition '{p}'"),
            Source::Global => write!(f, "scheduler.preempt_exempt_time"),
        }
    }
}

/// One guard with the inputs it was decided on, in the order they are checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Guard {
    /// The pending job's own partition `preempt_mode` (no QOS override).
    PartitionMode {
        partition: String,
        mode: PreemptMode,
    },
    /// Under `preempt_type = "qos_priority"` only; `enforced` false otherwise.
    QosAllowList {
        enforced: bool,
        pending_qos: Option<String>,
        allows: Vec<String>,
        candidate_qos: Option<String>,
    },
    /// The candidate's effective mode: its QOS's if set, else its partition's.
    CandidateMode {
        mode: PreemptMode,
        from: Source,
    },
    ExemptTime {
        exempt_s: u64,
        from: Source,
        ran_s: u64,
    },
    MinRuntime {
        min_s: u64,
        ran_s: u64,
    },
    Reservation {
        reservation: Option<String>,
        pending_tier: u32,
        candidate_tier: u32,
    },
    /// Nodes the candidate holds that the pending job could use.
    NodeOverlap {
        shared: Vec<String>,
    },
    /// Mode 3 preemption frees a resource, not nodes: only cancel or requeue can.
    HresMode {
        resource: String,
        mode: PreemptMode,
    },
    /// Layers of the Mode 3 resource the candidate was charged on that are
    /// over nodes the pending job could use (it needs no node in common).
    LayerOverlap {
        resource: String,
        shared: Vec<String>,
    },
}

impl Guard {
    pub fn name(&self) -> &'static str {
        match self {
            Guard::PartitionMode { .. } => "partition mode",
            Guard::QosAllowList { .. } => "qos allow-list",
            Guard::CandidateMode { .. } => "preempt mode",
            Guard::ExemptTime { .. } => "exempt time",
            Guard::MinRuntime { .. } => "min runtime",
            Guard::Reservation { .. } => "reservation",
            Guard::NodeOverlap { .. } => "node overlap",
            Guard::HresMode { .. } => "hres mode",
            Guard::LayerOverlap { .. } => "layer overlap",
        }
    }

    pub fn passes(&self) -> bool {
        match self {
            Guard::PartitionMode { mode, .. } | Guard::CandidateMode { mode, .. } => {
                *mode != PreemptMode::Off
            }
            Guard::QosAllowList { enforced, allows, candidate_qos, .. } => {
                !enforced || candidate_qos.as_ref().is_some_and(|c| allows.contains(c))
            }
            Guard::ExemptTime { exempt_s, ran_s, .. } => ran_s >= exempt_s,
            Guard::MinRuntime { min_s, ran_s } => ran_s >= min_s,
            Guard::Reservation { reservation, pending_tier, candidate_tier } => {
                reservation.is_none() || pending_tier > candidate_tier
            }
            Guard::NodeOverlap { shared } | Guard::LayerOverlap { shared, .. } => !shared.is_empty(),
            Guard::HresMode { mode, .. } => matches!(mode, PreemptMode::Cancel | PreemptMode::Requeue),
        }
    }

    fn facts(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = |q: &Option<String>| q.clone().unwrap_or_else(|| "(none)".into());
        match self {
            Guard::PartitionMode { partition, mode } => {
                write!(f, "partition '{partition}' preempt_mode={}", mode.as_str())
            }
            Guard::QosAllowList { enforced: false, .. } => {
                write!(f, "not enforced (preempt_type = \"none\")")
            }
            Guard::QosAllowList { pending_qos, allows, candidate_qos, .. } => {
                let verb = if self.passes() { "lists" } else { "does not list" };
                write!(f, "QOS '{}' {verb} '{}'", q(pending_qos), q(candidate_qos))?;
                if allows.is_empty() { write!(f, " (its preempt list is empty)") } else { Ok(()) }
            }
            Guard::CandidateMode { mode, from } => write!(f, "{from} sets preemptmode={}", mode.as_str()),
            Guard::ExemptTime { exempt_s, from, ran_s } => {
                write!(f, "ran {}, exempt for {} ({from})", format_seconds(*ran_s), format_seconds(*exempt_s))
            }
            Guard::MinRuntime { min_s, ran_s } => write!(
                f,
                "ran {}, scheduler.min_preemption_runtime is {}",
                format_seconds(*ran_s),
                format_seconds(*min_s)
            ),
            Guard::Reservation { reservation: None, .. } => write!(f, "not in an active reservation"),
            Guard::Reservation { reservation: Some(r), pending_tier, candidate_tier } => write!(
                f,
                "in reservation '{r}'; pending tier {pending_tier} vs running tier {candidate_tier}"
            ),
            Guard::NodeOverlap { shared } if shared.is_empty() => {
                write!(f, "holds no node the pending job could use")
            }
            Guard::NodeOverlap { shared } => {
                write!(f, "holds {} that the pending job could use", hostlist::compress(shared))
            }
            Guard::HresMode { resource, mode } => write!(
                f,
                "preemption for Mode 3 resource '{resource}' uses cancel or requeue; the candidate's mode is {}",
                mode.as_str()
            ),
            Guard::LayerOverlap { resource, shared } if shared.is_empty() => {
                write!(f, "holds no layer of '{resource}' over the nodes the pending job could use")
            }
            Guard::LayerOverlap { resource, shared } => {
                write!(f, "holds '{resource}' on {} over the pending job's nodes", shared.join(","))
            }
        }
    }
}

impl fmt::Display for Guard {
    /// `guard qos allow-list: QOS 'normal' does not list 'reserved' → blocks`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "guard {}: ", self.name())?;
        self.facts(f)?;
        write!(f, " → {}", if self.passes() { "passes" } else { "blocks" })
    }
}

impl fmt::Display for GapCheck {
    /// `gap: 100.0 < 1000.0/2 = 500.0 → holds`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (p, c) = (self.pending, self.candidate);
        write!(
            f,
            "gap: {c:.1} < {p:.1}/2 = {:.1} → {}",
            p / 2.0,
            if self.twice() { "holds" } else { "fails" }
        )?;
        if let Some(g) = self.min_delta {
            let verdict = if self.delta_ok() { "holds" } else { "fails" };
            write!(f, "; delta {:.1} ≥ preemption_gap {g:.1} → {verdict}", p - c)?;
        }
        Ok(())
    }
}

/// One (pending, running) pair.
#[derive(Debug, Clone, PartialEq)]
pub struct PairVerdict {
    pub pending: Side,
    pub candidate: Side,
    pub gap: GapCheck,
    /// Every guard, in order; the first that blocks decides.
    pub guards: Vec<Guard>,
    /// What would happen to the candidate: its effective mode, with requeue
    /// turned into cancel for a job that may not be requeued.
    pub action: PreemptMode,
}

impl PairVerdict {
    pub fn eligible(&self) -> bool {
        self.gap.holds() && self.guards.iter().all(Guard::passes)
    }

    /// The first failing check: the gap, else the first blocking guard.
    pub fn decided_by(&self) -> Option<String> {
        if !self.gap.holds() {
            return Some("gap".into());
        }
        self.guards.iter().find(|g| !g.passes()).map(|g| g.name().to_string())
    }

    /// The verdict as sentences: the formula on both sides, the gap, each guard, the outcome.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![side_line("pending", &self.pending), side_line("running", &self.candidate)];
        out.push(self.gap.to_string());
        out.extend(self.guards.iter().map(ToString::to_string));
        out.push(match self.decided_by() {
            None => format!(
                "verdict: job {} may preempt job {} ({})",
                self.pending.job,
                self.candidate.job,
                self.action.as_str()
            ),
            Some(by) => format!(
                "verdict: job {} may not preempt job {}; decided by {by}",
                self.pending.job, self.candidate.job
            ),
        });
        out
    }
}

fn side_line(label: &str, s: &Side) -> String {
    let f = &s.factors;
    format!(
        "{label} job {}: {:.1} × min({:.2}, 10) × {:.3} × max({}, 1) = {:.1}",
        s.job, f.base, f.fair_share, f.age, f.tier, f.effective
    )
}

/// A check made once per blocked job, before any candidate.
#[derive(Debug, Clone, PartialEq)]
pub enum JobCheck {
    Enabled(bool),
    PartitionMode {
        partition: String,
        mode: PreemptMode,
    },
    /// An earlier eviction for this job is still freeing its capacity.
    Drain {
        evicted_s_ago: u64,
        timeout_s: u64,
    },
    EvictionCap {
        used: u32,
        max: u32,
    },
    /// Pool utilization over the nodes the job could run on, in the dimension it uses most.
    Threshold {
        used_pct: f64,
        dim: &'static str,
        threshold: f64,
    },
    /// A dynamic definition that admits the job and could still provision
    /// for it: preemption waits for its nodes (spec: `preemptionThreshold`).
    Dynamic(super::demand::Headroom),
}

impl JobCheck {
    pub fn name(&self) -> &'static str {
        match self {
            JobCheck::Enabled(_) => "enabled",
            JobCheck::PartitionMode { .. } => "partition mode",
            JobCheck::Drain { .. } => "drain timeout",
            JobCheck::EvictionCap { .. } => "eviction cap",
            JobCheck::Threshold { .. } => "pool threshold",
            JobCheck::Dynamic(_) => "dynamic definition",
        }
    }

    pub fn passes(&self) -> bool {
        match self {
            JobCheck::Enabled(on) => *on,
            JobCheck::PartitionMode { mode, .. } => *mode != PreemptMode::Off,
            JobCheck::Drain { evicted_s_ago, timeout_s } => evicted_s_ago >= timeout_s,
            JobCheck::EvictionCap { used, max } => used < max,
            JobCheck::Threshold { used_pct, threshold, .. } => used_pct >= threshold,
            JobCheck::Dynamic(h) => !h.can_provision(),
        }
    }
}

impl fmt::Display for JobCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobCheck::Enabled(on) => write!(f, "scheduler.preemption_enabled = {on}"),
            JobCheck::PartitionMode { partition, mode } => {
                write!(f, "partition '{partition}' preempt_mode={}", mode.as_str())
            }
            JobCheck::Drain { evicted_s_ago, timeout_s } => write!(
                f,
                "last eviction for this job {} ago; scheduler.preemption_drain_timeout is {}",
                format_seconds(*evicted_s_ago),
                format_seconds(*timeout_s)
            ),
            JobCheck::EvictionCap { used, max } => {
                write!(f, "{used} evictions this pass; scheduler.max_evictions_per_tick is {max}")
            }
            JobCheck::Threshold { used_pct, dim, threshold } => write!(
                f,
                "pool {dim} utilization {used_pct:.0}% vs scheduler.preemption_threshold {threshold:.0}%"
            ),
            JobCheck::Dynamic(h) if h.unavailable => {
                write!(f, "provisioner definition {} admits the job but is unavailable", h.definition)
            }
            JobCheck::Dynamic(h) => write!(
                f,
                "provisioner definition {} admits the job and holds {} of maxNodes {}",
                h.definition, h.held, h.max_nodes
            ),
        }?;
        write!(f, " → {}", if self.passes() { "passes" } else { "blocks" })
    }
}

/// What came of considering preemption for one pending job.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Preemption helps only a job blocked on resources.
    NotBlocked {
        reason: String,
    },
    /// A job-level check blocked before any candidate.
    Checks,
    NoCandidate,
    /// Eligible candidates exist, but no allowed set frees enough.
    NotEnough {
        eligible: usize,
        multi_victim: bool,
    },
    /// A set that makes room exists but is larger than this pass may still evict.
    OverCap {
        needed: usize,
        left: u32,
    },
    Evict {
        victims: Vec<JobId>,
        nodes: Vec<String>,
        ask: Shape,
    },
}

/// Everything the scheduler concluded about preempting for one pending job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobVerdict {
    pub job: JobId,
    pub checks: Vec<JobCheck>,
    /// Best first: eligible candidates by lowest priority, then the rest; at most
    /// [`LISTED`] of the `considered`.
    pub candidates: Vec<PairVerdict>,
    pub considered: usize,
    pub outcome: Outcome,
    /// Idle-fill's part, on demand only (`scontrol explain`); None in a pass
    /// or with idle-fill off.
    pub idle_fill: Option<super::loan::IdleFillVerdict>,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::NotBlocked { reason } => {
                write!(f, "not considered: the job pends for {reason}, which preempting cannot fix")
            }
            Outcome::Checks => write!(f, "no preemption: a check above blocks it"),
            Outcome::NoCandidate => write!(f, "no preemption: no running job passes the gap and every guard"),
            Outcome::NotEnough { eligible, multi_victim: false } => write!(
                f,
                "no preemption: none of the {eligible} eligible job(s) alone frees enough room \
                 (scheduler.preemption_multi_victim_enabled is off)"
            ),
            Outcome::NotEnough { eligible, .. } => {
                write!(
                    f,
                    "no preemption: even all {eligible} eligible job(s) together do not free enough room"
                )
            }
            Outcome::OverCap { needed, left } => write!(
                f,
                "no preemption this pass: room needs {needed} eviction(s), {left} left under \
                 scheduler.max_evictions_per_tick"
            ),
            Outcome::Evict { victims, nodes, ask } => {
                let ids: Vec<String> = victims.iter().map(u64::to_string).collect();
                write!(
                    f,
                    "evict job(s) {}: without them the job's {ask} fits on {}",
                    ids.join(", "),
                    hostlist::compress(nodes)
                )
            }
        }
    }
}
