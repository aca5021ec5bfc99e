//! Limit checks shared by the submit gate and the scheduling pass, and the
//! usage groups (a QOS, a user under a QOS, an association, an account) whose
//! running counts and TRES sums the pass keeps as it starts jobs.

use super::job::{Dim, Tres};
use super::reason::{LimitFacts, LimitKind, Reason, ReasonCode as C, Scope, Unit};
use spur_vocab::tres::TresMap;
use std::collections::HashMap;

/// The unit of each [`Dim`], in order.
pub const UNITS: [Unit; 4] = [Unit::Cpus, Unit::MemMb, Unit::Gpus, Unit::Nodes];

/// QOS `maxtresperjob` codes, in [`Dim`] order.
pub const QOS_PER_JOB: [C; 4] =
    [C::QOSMaxCpuPerJobLimit, C::QOSMaxMemoryPerJob, C::QOSMaxGRESPerJob, C::QOSMaxNodePerJobLimit];
/// Association `maxtresperjob` codes, in [`Dim`] order.
pub const ASSOC_PER_JOB: [C; 4] =
    [C::AssocMaxCpuPerJobLimit, C::AssocMaxMemoryPerJob, C::AssocMaxGRESPerJob, C::AssocMaxNodePerJobLimit];

/// A TRES cap in one dimension. The spec's rule lives here, once: a dimension
/// capped at 0 is ignored rather than blocking everything.
pub fn tres_cap(map: &TresMap, dim: Dim) -> Option<u64> {
    map.get(&dim.tres_id()).copied().filter(|v| *v > 0)
}

/// A per-job TRES cap (`maxtresperjob`): the job's own ask against the cap.
pub fn per_job(ask: &Tres, caps: &TresMap, codes: &[C; 4], scope: impl FnOnce() -> Scope) -> Option<Reason> {
    let d = Dim::ALL.into_iter().find(|d| tres_cap(caps, *d).is_some_and(|cap| ask[d.index()] > cap))?;
    let cap = tres_cap(caps, d).unwrap_or(0);
    Some(Reason::limit(
        codes[d.index()],
        LimitFacts {
            kind: LimitKind::PerJob,
            scope: scope(),
            key: "maxtresperjob",
            unit: UNITS[d.index()],
            cap,
            used: 0,
            asks: Some(ask[d.index()]),
        },
    ))
}

/// A `maxwall` cap. A literal 0 blocks every job, and an unbounded job breaches any cap.
pub fn wall(limit: Option<u64>, cap: Option<u64>, code: C, scope: impl FnOnce() -> Scope) -> Option<Reason> {
    let cap = cap?;
    let breach = cap == 0 || limit.is_none_or(|t| t > cap);
    breach.then(|| {
        Reason::limit(
            code,
            LimitFacts {
                kind: LimitKind::Wall,
                scope: scope(),
                key: "maxwall",
                unit: Unit::Minutes,
                cap,
                used: 0,
                asks: limit,
            },
        )
    })
}

/// A job-count cap: one more job must still fit under it.
pub fn count(
    cap: Option<u64>,
    used: u64,
    code: C,
    key: &'static str,
    unit: Unit,
    scope: impl FnOnce() -> Scope,
) -> Option<Reason> {
    count_of(cap, used, 1, code, key, unit, scope)
}

/// [`count`] for a request of `asks` jobs at once (an array's tasks at submit).
pub fn count_of(
    cap: Option<u64>,
    used: u64,
    asks: u64,
    code: C,
    key: &'static str,
    unit: Unit,
    scope: impl FnOnce() -> Scope,
) -> Option<Reason> {
    let cap = cap?;
    (used.saturating_add(asks) > cap).then(|| {
        Reason::limit(
            code,
            LimitFacts { kind: LimitKind::Aggregate, scope: scope(), key, unit, cap, used, asks: Some(asks) },
        )
    })
}

/// Which kind of entity a group's usage belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupKind {
    /// A QOS's `grptres`, over all its jobs.
    Qos,
    /// A user's `maxjobsperuser` / `maxtresperuser` under a QOS.
    QosUser,
    /// An association's `maxjobs` / `grptres`.
    Assoc,
    /// An account's `maxrunningjobs` / `grptres`, over its subtree.
    Account,
}

impl GroupKind {
    /// The running-count code and key, the TRES key, and the TRES codes in [`Dim`] order.
    fn codes(self) -> (Option<(C, &'static str)>, &'static str, [C; 4]) {
        const ASSOC: [C; 4] =
            [C::AssocGrpCpuLimit, C::AssocGrpMemLimit, C::AssocGrpGRES, C::AssocGrpNodeLimit];
        match self {
            GroupKind::Qos => {
                (None, "grptres", [C::QOSGrpCpuLimit, C::QOSGrpMemLimit, C::QOSGrpGRES, C::QOSGrpNodeLimit])
            }
            GroupKind::QosUser => (
                Some((C::QOSMaxJobsPerUserLimit, "maxjobsperuser")),
                "maxtresperuser",
                [
                    C::QOSMaxCpuPerUserLimit,
                    C::QOSMaxMemoryPerUser,
                    C::QOSMaxGRESPerUser,
                    C::QOSMaxNodePerUserLimit,
                ],
            ),
            GroupKind::Assoc => (Some((C::AssocMaxJobsLimit, "maxjobs")), "grptres", ASSOC),
            GroupKind::Account => (Some((C::AssocGrpJobsLimit, "maxrunningjobs")), "grptres", ASSOC),
        }
    }

    /// `grptres=node=N` counts distinct nodes; `maxtresperuser`'s node= sums
    /// each job's requested node count (spec: GrpTRES node= counts distinct nodes).
    fn distinct_nodes(self) -> bool {
        self != GroupKind::QosUser
    }
}

/// One entity's caps and what its running jobs use.
#[derive(Debug, Clone)]
pub struct Group {
    pub kind: GroupKind,
    pub scope: Scope,
    pub running: u64,
    pub max_running: Option<u64>,
    pub used: Tres,
    pub caps: [Option<u64>; 4],
    /// Nodes the group occupies and how many of its jobs sit on each. Kept
    /// only when node= is a distinct-node cap, the one place it matters.
    pub occupied: HashMap<u32, u32>,
}

impl Group {
    pub fn new(kind: GroupKind, scope: Scope, max_running: Option<u64>, caps: &TresMap) -> Group {
        let max_running = if kind.codes().0.is_some() { max_running } else { None };
        Group {
            kind,
            scope,
            running: 0,
            max_running,
            used: [0; 4],
            caps: Dim::ALL.map(|d| tres_cap(caps, d)),
            occupied: HashMap::new(),
        }
    }

    fn node_cap(&self) -> Option<u64> {
        if self.kind.distinct_nodes() { self.caps[Dim::Node.index()] } else { None }
    }

    /// Running count and summed TRES. Distinct-node caps are placement's to check.
    pub fn check(&self, ask: &Tres) -> Option<Reason> {
        let (running, key, codes) = self.kind.codes();
        if let Some((code, rkey)) = running
            && let Some(r) =
                count(self.max_running, self.running, code, rkey, Unit::RunningJobs, || self.scope.clone())
        {
            return Some(r);
        }
        for d in Dim::ALL {
            if d == Dim::Node && self.kind.distinct_nodes() {
                continue;
            }
            let i = d.index();
            if let Some(cap) = self.caps[i]
                && self.used[i].saturating_add(ask[i]) > cap
            {
                let facts = LimitFacts {
                    kind: LimitKind::Aggregate,
                    scope: self.scope.clone(),
                    key,
                    unit: UNITS[i],
                    cap,
                    used: self.used[i],
                    asks: Some(ask[i]),
                };
                return Some(Reason::limit(codes[i], facts));
            }
        }
        None
    }

    /// How many nodes the group does not yet occupy it may still take, when capped.
    pub fn node_allowance(&self) -> Option<u64> {
        self.node_cap().map(|cap| cap.saturating_sub(self.occupied.len() as u64))
    }

    pub fn occupies(&self, node: u32) -> bool {
        self.occupied.contains_key(&node)
    }

    /// The distinct-node cap blocks: `asks` is how many new nodes the job would add.
    pub fn node_reason(&self, asks: u64) -> Reason {
        let facts = LimitFacts {
            kind: LimitKind::Aggregate,
            scope: self.scope.clone(),
            key: self.kind.codes().1,
            unit: Unit::Nodes,
            cap: self.node_cap().unwrap_or(0),
            used: self.occupied.len() as u64,
            asks: Some(asks),
        };
        Reason::limit(self.kind.codes().2[Dim::Node.index()], facts)
    }

    /// Charges a started (or already running) job to the group.
    pub fn add(&mut self, ask: &Tres, nodes: &[u32]) {
        self.running += 1;
        for (u, a) in self.used.iter_mut().zip(ask) {
            *u = u.saturating_add(*a);
        }
        if self.node_cap().is_some() {
            for n in nodes {
                *self.occupied.entry(*n).or_insert(0) += 1;
            }
            self.used[Dim::Node.index()] = self.occupied.len() as u64;
        }
    }
}
