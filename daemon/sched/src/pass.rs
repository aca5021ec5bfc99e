//! One scheduling pass: order the pending jobs, run the cheap checks on each,
//! place what fits, and give every other job its reason. EASY backfill: the
//! highest job without room in a partition reserves the nodes it fits on
//! earliest, and later jobs may not use those nodes unless they end first.

mod place;

use super::depend::DepGate;
use super::hres::Counters;
use super::idle_fill::Borrower;
use super::job::{Hold, Job, JobId, JobState, Shape};
use super::limits::{self, ASSOC_PER_JOB, GroupKind, QOS_PER_JOB};
use super::memo::{Blocker, NodeCapFailures, RoomFailures};
use super::nodes::{Alloc, Marks, NodeState, PartNodes, Pick, Want, earliest_start};
use super::pass_state::{Part, Pass, Running, scoped_priority, secs};
use super::preempt::{Short, hold_for_preemptor};
use super::priority::PriorityFactors;
use super::reason::{Facts, LimitFacts, LimitKind, Reason, ReasonCode as C, Scope, Unit};
use super::scope::Scopes;
use super::scratch::Scratch;
use super::soon::soon_nodes;
use super::windows::Windows;
use super::{Pending, Plan, Reservation, Snapshot, Start};
use crate::model::Partition;
use spur_vocab::licenses::LicenseAlloc;
use std::collections::HashMap;

/// An array at its `%N` limit, `started` of its tasks begun this pass.
fn throttled(a: super::job::ArrayAsk, started: u32) -> Reason {
    let facts = Facts::ArrayThrottle { limit: a.throttle, running: a.running.saturating_add(started) };
    Reason::new(C::JobArrayTaskLimit, facts)
}

/// Placements tried for a job whose Mode 3 sum overflowed a layer.
const HRES_TRIES: usize = 3;

/// Jobs that never fit (e.g. behind unbounded jobs) may not use up a partition's reservation.
const RESERVE_TRIES: u32 = 8;

/// Nodes picked, and the licenses they take.
pub(super) type Picked = (Vec<u32>, Vec<LicenseAlloc>);

/// A pending job in the order: its sort key inline, so sorting a large queue
/// does not chase pointers into the job list.
pub(crate) struct Entry {
    key: (f64, i64, JobId),
    job: u32,
    scope: u32,
    part: Option<u32>,
    /// Into the priorities [`Pass::order`] returns beside the order: the
    /// sort moves 40 bytes a job, not the factors too.
    priority: u32,
}

pub(crate) fn run(snap: &Snapshot, now_ms: i64, scratch: &mut Scratch) -> Plan {
    let mut pass = Pass::reusing(snap, now_ms, std::mem::take(&mut scratch.nodes));
    pass.resume_suspended();
    let (mut order, priorities) =
        pass.order(std::mem::take(&mut scratch.order), std::mem::take(&mut scratch.priorities));
    // Every pending job gets one entry; reserved once, not grown by copies.
    pass.plan.pending.reserve(order.len());
    let mut borrowers = vec![];
    for Entry { job, scope, part, priority, .. } in order.drain(..) {
        let (job, priority) = (&snap.jobs[job as usize], priorities[priority as usize]);
        // An array's pending tasks start one after another while they fit
        // (each a job for limits and placement); the rest keep one reason.
        let mut started = 0u32;
        let outcome = loop {
            match pass.try_job(job, scope, part) {
                Ok((picked, lic)) => {
                    pass.start(job, scope, picked, lic, priority, false);
                    started += 1;
                    match job.array {
                        Some(a) if a.startable(started) > 0 => continue,
                        Some(a) if a.pending > u64::from(started) => break Err(throttled(a, started)),
                        _ => break Ok(()),
                    }
                }
                Err(reason) => break Err(reason),
            }
        };
        match outcome {
            Ok(()) => {}
            Err(reason) if started == 0 && pass.may_borrow(job, &reason) => {
                borrowers.push(Borrower { job, scope, part, priority, reason })
            }
            Err(reason) => {
                let room = reason.code == C::Resources;
                // Lent capacity comes back before anyone with a claim is preempted.
                let reclaimed =
                    room && part.is_some_and(|pi| pass.reclaim(job, scope, pi as usize).is_some());
                if let (false, Some(pi), Some(short)) =
                    (reclaimed, part, Short::of(reason.code, &pass.licenses, job))
                {
                    let v = pass.consider_preemption(job, scope, pi as usize, &priority, false, short);
                    pass.plan.verdicts.push(v);
                }
                pass.plan.pending.push(Pending { job: job.id, reason, priority })
            }
        }
    }
    // Last, on what every job with a claim left: idle-fill's loans.
    pass.lend(borrowers);
    let (admits, inline) = (&snap.admits, &pass.pools.inline);
    let requests = super::demand::requests(
        snap,
        &mut pass.plan,
        |id| admits.get(&id).or_else(|| inline.get(&id)),
        now_ms,
    );
    pass.plan.provision = requests;
    // Cleared, not freed: the next pass reuses them (see `Scratch`).
    (scratch.order, scratch.priorities, scratch.nodes) = (order, priorities, std::mem::take(&mut pass.nodes));
    scratch.priorities.clear();
    scratch.nodes.clear();
    pass.plan
}

impl<'a> Pass<'a> {
    pub fn new(snap: &'a Snapshot, now: i64) -> Pass<'a> {
        Pass::reusing(snap, now, Vec::new())
    }

    /// As [`Pass::new`], filling `nodes` (emptied, its capacity kept from a last pass).
    fn reusing(snap: &'a Snapshot, now: i64, mut nodes: Vec<NodeState>) -> Pass<'a> {
        nodes.clear();
        nodes.extend(snap.nodes.iter().map(NodeState::new));
        Pass::mark_pools(snap, &mut nodes);
        let node_idx: HashMap<&str, u32> =
            snap.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i as u32)).collect();
        let mut listed: HashMap<&str, Vec<u32>> = HashMap::new();
        for (i, n) in snap.nodes.iter().enumerate() {
            n.partitions.iter().for_each(|p| listed.entry(p.as_str()).or_default().push(i as u32));
        }
        let (mut parts, mut part_idx) = (Vec::new(), HashMap::new());
        for p in &snap.partitions {
            let mut members: Vec<u32> =
                p.nodes.iter().filter_map(|n| node_idx.get(n.as_str()).copied()).collect();
            members.extend(listed.get(p.name.as_str()).into_iter().flatten());
            part_idx.entry(p.name.as_str()).or_insert(parts.len() as u32);
            let nodes = PartNodes::new(members, &nodes);
            let closed = match spur_vocab::PartitionState::parse(&p.state) {
                Ok(spur_vocab::PartitionState::Down) => Some(C::PartitionDown),
                Ok(spur_vocab::PartitionState::Inactive) => Some(C::PartitionInactive),
                _ => None,
            };
            parts.push(Part {
                p,
                closed,
                soon: None,
                nodes,
                failures: RoomFailures::default(),
                reserved: false,
                reserve_tries: 0,
                blocked_by: None,
            });
        }
        let mut scopes = Scopes::new(&snap.catalog, snap.config.accounting_enabled, &snap.usage);
        let mut allocs = Vec::new();
        let mut running = Vec::new();
        let mut loans: HashMap<&str, u64> = HashMap::new();
        let mut held = false;
        for (j, job) in snap.jobs.iter().enumerate() {
            if let JobState::Suspended { nodes: names, by, .. } = &job.state {
                hold_for_preemptor(&mut nodes, &node_idx, names, *by, job.id, &snap.jobs);
                held = true;
            }
            let JobState::Running { nodes: names, start_ms } = &job.state else { continue };
            let idx: Vec<u32> = names.iter().filter_map(|n| node_idx.get(n.as_str()).copied()).collect();
            let shape = Pass::shape_on(&nodes, &idx, job);
            for &n in &idx {
                let node = &mut nodes[n as usize];
                if node.jobs == 0 {
                    node.workflow = shape.workflow;
                }
                node.jobs += 1;
                node.exclusive |= shape.exclusive;
            }
            // A running job's priority is recomputed at check time, with the pending side's formula.
            let part = part_idx.get(job.partition.as_str()).copied();
            let (sc, priority) = scoped_priority(&mut scopes, &parts, job, part, now);
            let ask = job.tres();
            if job.borrowed {
                // Outside every quota aggregate; only the loan ceilings count it.
                *loans.entry(job.qos.as_deref().unwrap_or("")).or_insert(0) += idx.len() as u64;
            } else {
                for &g in &scopes.list[sc as usize].groups {
                    scopes.groups[g as usize].add(&ask, &idx);
                }
            }
            running.push(Running { job: j, alloc: allocs.len(), scope: sc, part, priority, evicted: false });
            allocs.push(Alloc { nodes: idx, shape, end_ms: job.end_ms(*start_ms).max(now) });
        }
        // A suspended job keeps its licenses, as it keeps its nodes.
        let holders = snap.jobs.iter().filter(|j| !j.is_pending());
        let licenses = Counters::new(&snap.licenses, &snap.hres, &node_idx, snap.nodes.len(), holders);
        let members = snap.jobs.iter().filter(|j| !j.is_pending());
        let members = members.filter_map(|j| Some((j.reservation.as_deref()?, j.licenses.as_slice())));
        let mut windows = Windows::new(&snap.resvs, &node_idx, snap.nodes.len(), now, members);
        if windows.any() && !snap.hres.is_empty() {
            let members = snap.jobs.iter().filter(|j| !j.is_pending());
            windows.hold_hres(
                &snap.hres,
                members.filter_map(|j| Some((j.reservation.as_deref()?, j.charged.as_slice()))),
            );
        }
        for (i, _) in windows.walled(now) {
            nodes[i as usize].walled = true;
        }
        if windows.any() {
            parts.iter_mut().for_each(|part| part.soon = soon_nodes(&part.nodes, &nodes, &windows));
        }
        Pass {
            walled_fit: Default::default(),
            soon_fit: Default::default(),
            member_fail: Default::default(),
            windows,
            snap,
            now,
            marks: Marks::new(nodes.len()),
            nodes,
            node_idx,
            parts,
            part_idx,
            scopes,
            allocs,
            running,
            evictions: 0,
            held,
            licenses,
            resv: HashMap::new(),
            node_fail: NodeCapFailures::default(),
            behind_reservation: false,
            attempts: 0,
            screens: Default::default(),
            singletons: Default::default(),
            loans,
            lending: false,
            any_opportunistic: None,
            reclaim_failed: Vec::new(),
            reclaim_tiers: HashMap::new(),
            plan: Plan::default(),
            pools: Default::default(),
        }
    }

    /// Pending jobs by effective priority, then submit time, then id.
    /// `out` and `priorities` are emptied and filled (their capacity kept from a last pass).
    fn order(
        &mut self,
        mut out: Vec<Entry>,
        mut priorities: Vec<PriorityFactors>,
    ) -> (Vec<Entry>, Vec<PriorityFactors>) {
        let jobs = &self.snap.jobs;
        out.clear();
        priorities.clear();
        out.reserve(jobs.len());
        priorities.reserve(jobs.len());
        for (j, job) in jobs.iter().enumerate().filter(|(_, j)| j.is_pending()) {
            let part = self.part_idx.get(job.partition.as_str()).copied();
            let (scope, mut priority) = scoped_priority(&mut self.scopes, &self.parts, job, part, self.now);
            if let Some(p) = &self.snap.provision {
                let qos = self.scopes.list[scope as usize].qos;
                priority.ordered = p.order_value(job, qos, &self.snap.catalog, &priority, self.now);
            }
            let key = (priority.order_key(), job.submit_ms, job.id);
            out.push(Entry { key, job: j as u32, scope, part, priority: priorities.len() as u32 });
            priorities.push(priority);
        }
        out.sort_unstable_by(|a, b| {
            (b.key.0.total_cmp(&a.key.0)).then(a.key.1.cmp(&b.key.1)).then(a.key.2.cmp(&b.key.2))
        });
        (out, priorities)
    }

    pub(super) fn try_job(&mut self, job: &'a Job, sc: u32, part: Option<u32>) -> Result<Picked, Reason> {
        let member = self.checks(job, sc as usize, part)?;
        let Some(p) = part else {
            return Err(Reason::new(
                C::PartitionConfig,
                Facts::UnknownPartition { partition: job.partition.clone() },
            ));
        };
        self.place_with_holds(job, sc, p, member)
    }

    /// Placement, then the licenses on the nodes picked. Mode 3 sums over the
    /// picked nodes: a layer that would overflow takes no more of them than it
    /// has room for, and placement tries again.
    pub(super) fn place_fit(
        &mut self,
        job: &'a Job,
        sc: u32,
        p: u32,
        member: Option<u16>,
    ) -> Result<Picked, Reason> {
        let (mut keep_off, mut tries) = (vec![], 0);
        loop {
            let picked = self.place(job, sc as usize, p as usize, &keep_off, member)?;
            match self.licenses.fit(job, &picked) {
                Ok(lic) => return Ok((picked, lic)),
                Err(r) if tries == HRES_TRIES || !self.licenses.narrow(job, &picked, &mut keep_off) => {
                    return Err(r);
                }
                Err(_) => tries += 1,
            }
        }
    }

    /// Everything short of placement, in the order a reader expects the blocker named.
    /// Also the reservation the job runs in, once it may (looked up once a job).
    fn checks(&self, job: &Job, sc: usize, part: Option<u32>) -> Result<Option<u16>, Reason> {
        if let Some(a) = job.array.filter(|a| a.startable(0) == 0) {
            return Err(throttled(a, 0));
        }
        if let Some(message) = job.plugin_hold.clone().filter(|_| job.hold != Hold::None) {
            return Err(Reason::new(C::HresPluginHeld, Facts::Plugin { message }));
        }
        match job.hold {
            Hold::User => return Err(Reason::new(C::JobHeldUser, Facts::None)),
            Hold::Admin => return Err(Reason::new(C::JobHeldAdmin, Facts::None)),
            Hold::None => {}
        }
        if let Some(b) = job.begin_ms.filter(|b| *b > self.now) {
            let in_s = secs(b.saturating_sub(self.now));
            return Err(Reason::new(C::BeginTime, Facts::BeginTime { begin_ms: b, in_s }));
        }
        match &job.dep {
            DepGate::Clear => {}
            DepGate::Blocked(r) => return Err(r.clone()),
            DepGate::Singleton(key) if self.singletons.contains(key.as_str()) => {
                let facts = Facts::Dependency { item: "singleton".into(), state: "starting".into() };
                return Err(Reason::new(C::Dependency, facts));
            }
            DepGate::Singleton(_) => {}
        }
        let s = &self.scopes.list[sc];
        if let Some(r) = &s.hold {
            return Err(r.clone());
        }
        let member = self.member_of(job)?;
        let Some(pi) = part else {
            return Err(Reason::new(
                C::PartitionConfig,
                Facts::UnknownPartition { partition: job.partition.clone() },
            ));
        };
        let part = &self.parts[pi as usize];
        let (p, name) = (part.p, || part.p.name.clone());
        if let Some(code) = part.closed {
            let state = p.state.trim().to_ascii_uppercase();
            return Err(Reason::new(code, Facts::PartitionState { partition: name(), state }));
        }
        if let Some(max) = p.max_time.filter(|max| job.time_limit.is_none_or(|t| t > *max)) {
            let facts = Facts::PartitionTime { partition: name(), max_time: max, time_limit: job.time_limit };
            return Err(Reason::new(C::PartitionTimeLimit, facts));
        }
        if job.nodes() as usize > part.nodes.order.len() {
            let facts = Facts::PartitionNodes {
                partition: name(),
                nodes: part.nodes.order.len() as u64,
                asks: u64::from(job.nodes()),
            };
            return Err(Reason::new(C::PartitionNodeLimit, facts));
        }
        let ask = job.tres();
        let user = job.user.as_str();
        // Per-job caps: rejected at submit under DenyOnLimit, pending otherwise
        // (or when the limit was lowered after the job was queued).
        if let (Some(a), Some(acct)) = (s.assoc, job.account.as_deref()) {
            let scope = || Scope::Assoc { user: user.into(), account: acct.into() };
            limits::wall(job.time_limit, a.max_wall, C::AssocMaxWallDurationPerJobLimit, scope)
                .map_or(Ok(()), Err)?;
            limits::per_job(&ask, &a.max_tres_per_job, &ASSOC_PER_JOB, scope).map_or(Ok(()), Err)?;
        }
        if let Some(q) = s.qos {
            let qname = job.qos.as_deref().unwrap_or(&q.name);
            let scope = || Scope::Qos(qname.into());
            limits::wall(job.time_limit, q.max_wall, C::QOSMaxWallDurationPerJobLimit, scope)
                .map_or(Ok(()), Err)?;
            limits::per_job(&ask, &q.max_tres_per_job, &QOS_PER_JOB, scope).map_or(Ok(()), Err)?;
            // grpwall needs a consumption figure; until one is read no budget applies.
            if let (Some(cap), Some(spent)) = (q.grp_wall, &self.snap.grp_wall_used) {
                let used = spent.get(qname).copied().unwrap_or(0);
                if used >= cap {
                    let facts = LimitFacts {
                        kind: LimitKind::Budget,
                        scope: scope(),
                        key: "grpwall",
                        unit: Unit::Minutes,
                        cap,
                        used,
                        asks: job.time_limit,
                    };
                    return Err(Reason::limit(C::QOSGrpWallLimit, facts));
                }
            }
        }
        for &g in &s.groups {
            self.scopes.groups[g as usize].check(&ask).map_or(Ok(()), Err)?;
        }
        self.licenses.check(job)?;
        self.held_licenses(job, member)?;
        Ok(member)
    }

    /// The reservation a job asks for, once it may run there: refused
    /// (gone, or not the job's to use) or not yet started is its reason.
    pub(super) fn member_of(&self, job: &Job) -> Result<Option<u16>, Reason> {
        let Some(name) = job.reservation.as_deref() else { return Ok(None) };
        let refused = |why| Reason::new(C::ReservationInvalid, Facts::ResvRefused { name: name.into(), why });
        let Some((k, r)) = self.windows.named(name) else {
            // Submit refuses a name no reservation has: it was deleted, or it ended.
            let facts = Facts::ResvRefused {
                name: name.into(),
                why: "deleted, or ended; update the job's Reservation= or cancel it",
            };
            return Err(Reason::new(C::ReservationDeleted, facts));
        };
        if !r.admits(&job.user, job.account.as_deref()) {
            return Err(refused("the job's user and account are not among its Users and Accounts"));
        }
        if r.start_ms > self.now {
            return Err(Reason::new(C::Reservation, self.window_facts(k)));
        }
        Ok(Some(k))
    }

    fn window_facts(&self, k: u16) -> Facts {
        let r = &self.windows.list[k as usize];
        Facts::Window {
            name: r.name.clone(),
            maint: r.maint(),
            start_ms: r.start_ms,
            end_ms: r.end_ms,
            starts_in_s: secs(r.start_ms.saturating_sub(self.now)),
            ends_in_s: secs(r.end_ms.saturating_sub(self.now)),
        }
    }

    /// Kept off nodes by reservation `k`'s window: "Reserved for maintenance" for MAINT.
    fn window_reason(&self, k: u16) -> Reason {
        let code = if self.windows.list[k as usize].maint() { C::ReqNodeNotAvailMaint } else { C::Resources };
        Reason::new(code, self.window_facts(k))
    }
}
