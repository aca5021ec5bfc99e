//! The state of one pass, shared by placement (`pass`), preemption
//! (`preempt`) and `explain`: the pass's nodes, partitions, scopes and
//! running jobs. Its own module so those three read it without importing
//! each other.

use super::Plan;
use super::Snapshot;
use super::hres::Counters;
use super::job::{Job, JobId};
use super::memo::{NodeCapFailures, RoomFailures};
use super::nodes::{Alloc, Marks, NodeState, PartNodes};
use super::priority::PriorityFactors;
use super::scope::Scopes;
use super::screen::Screens;
use super::windows::Windows;
use crate::model::Partition;
use rustc_hash::FxHashMap as FxMap;
use std::collections::HashMap;

pub(super) struct Part<'a> {
    pub p: &'a Partition,
    /// Down or inactive: the code every job asking for it pends with (parsed once per pass).
    pub closed: Option<crate::reason::ReasonCode>,
    pub nodes: PartNodes,
    /// Nodes with reservation windows still to come, when it has some.
    pub soon: Option<super::soon::Soon>,
    pub failures: RoomFailures,
    pub reserved: bool,
    pub reserve_tries: u32,
    /// Backfill off: the job whose wait stops lower work here this pass.
    pub blocked_by: Option<JobId>,
}

/// A job's scope and effective priority, with its partition's tier (1 when
/// the partition is unknown): one formula for pending jobs, running ones and
/// explanations.
pub(super) fn scoped_priority<'a>(
    scopes: &mut Scopes<'a>,
    parts: &[Part<'a>],
    job: &'a Job,
    part: Option<u32>,
    now: i64,
) -> (u32, PriorityFactors) {
    let sc = scopes.of(job);
    let tier = part.map_or(1, |p| parts[p as usize].p.priority_tier);
    let s = &scopes.list[sc as usize];
    (sc, PriorityFactors::for_job(job, s.qos, s.fair_share, tier, now))
}

/// A partition, a pool class in it, and a shape.
pub(super) type WalledKey = (usize, Option<u32>, super::job::Shape);

pub(super) struct Pass<'a> {
    pub snap: &'a Snapshot,
    pub now: i64,
    pub nodes: Vec<NodeState>,
    pub node_idx: HashMap<&'a str, u32>,
    pub parts: Vec<Part<'a>>,
    pub part_idx: HashMap<&'a str, u32>,
    pub scopes: Scopes<'a>,
    pub allocs: Vec<Alloc>,
    /// Running jobs, for preemption: where they sit and what they weigh now.
    pub running: Vec<Running>,
    /// Victims chosen this pass, so no two blocked jobs count on the same one.
    pub evictions: u32,
    /// Some node is held for one job (a suspended job's room): no-room memos would be wrong.
    pub held: bool,
    pub licenses: Counters<'a>,
    /// Admin reservations: each node's windows, and the licences they hold out.
    pub windows: Windows<'a>,
    /// Per (partition, pool class, shape): how many nodes in a window now
    /// would take the shape, and the first window: what scans that skip
    /// those nodes say instead. Cleared when a job starts in a window.
    pub walled_fit: FxMap<WalledKey, (usize, Option<u16>)>,
    /// Per (partition, shape): what a scan would count of the nodes with a
    /// window still to come, for a job they all keep out. Cleared as `walled_fit`.
    pub soon_fit: FxMap<(usize, super::job::Shape), super::soon::SoonFit>,
    /// A reservation's jobs that found no room in it this pass, by shape, and why.
    pub member_fail: FxMap<(u16, super::job::Shape), crate::reason::Reason>,
    pub marks: Marks,
    /// Reservation holders: expected start and partition.
    pub resv: HashMap<JobId, (Option<i64>, &'a str)>,
    pub node_fail: NodeCapFailures,
    pub behind_reservation: bool,
    pub attempts: usize,
    /// What preemption reuses across blocked jobs.
    pub screens: Screens<'a>,
    /// `singleton` keys (user and name) of jobs started this pass.
    pub singletons: std::collections::HashSet<&'a str>,
    /// Idle-fill: nodes each QOS holds on loan (its borrowed runs' nodes).
    pub loans: HashMap<&'a str, u64>,
    /// Placing borrow candidates: the QOS group node cap is lifted, reserved
    /// nodes are off limits and a failure reserves nothing.
    pub lending: bool,
    /// Reclaim: whether any running job is opportunistic (found once a pass,
    /// so a queue with none pays nothing), and the (partition, claimant's
    /// tier ceiling, shape) of plain jobs a reclaim could not serve.
    pub any_opportunistic: Option<bool>,
    pub reclaim_failed: Vec<(usize, Option<i64>, super::job::Shape)>,
    /// Reclaimable runs by claimant tier, cheapest first (`reclaim::reclaim_tier`).
    pub reclaim_tiers: HashMap<Option<i64>, std::rc::Rc<super::loan::ReclaimTier>>,
    pub plan: Plan,
    /// Provisioner pools: classes of jobs with the same definitions.
    pub pools: super::pool_state::Pools,
}

/// A running job as preemption sees it.
pub(super) struct Running {
    pub job: usize,
    pub alloc: usize,
    pub scope: u32,
    pub part: Option<u32>,
    pub priority: PriorityFactors,
    pub evicted: bool,
}

pub(super) fn secs(ms: i64) -> u64 {
    u64::try_from(ms.max(0) / 1000).unwrap_or(0)
}
