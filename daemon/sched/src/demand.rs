//! Demand for dynamic definitions (spec: "Slurm Provisioner Specifications",
//! `maxNodes`): after a pass's starts, how many new nodes each definition
//! with a driver should ask its upstream for. Pure: the controller's driver
//! turns [`NodeRequest`]s into pilot jobs.
//!
//! Only jobs the pass left pending for room count (a job a static pool
//! started, or one held back by a hold, a limit or a dependency, asks for
//! nothing). A node already requested and booting is a node of the pass:
//! jobs that fit it were started on it (CONFIGURING), so what is left pends
//! for want of room there too. They are packed first-fit, in priority
//! order, onto the requests not yet recorded as nodes, then onto new nodes
//! of the definition's shape, while the definition's nodes stay under `maxNodes`.

use super::job::{Job, JobId};
use super::provision::{Admit, Definition, Exclusive, Provision};
use super::reason::{Facts, Reason, ReasonCode as C};
use super::{Plan, Snapshot};
use std::collections::HashMap;
use std::sync::Arc;

/// `maxNodes` of a dynamic definition that sets none (the spec's default).
pub const DEFAULT_MAX_NODES: u32 = 16;

/// A dynamic definition's `maxNodes`, [`DEFAULT_MAX_NODES`] when unset.
fn max_nodes(d: &Definition) -> u32 {
    d.max_nodes.unwrap_or(DEFAULT_MAX_NODES)
}

/// Whether `job`'s time limit ends within the definition's ttl (a job with
/// none never does): only such jobs are lent its nodes.
fn fits_ttl(d: &Definition, job: &Job) -> bool {
    job.time_limit.is_some_and(|m| m.saturating_mul(60) <= u64::from(d.ttl))
}

/// The nodes of one dynamic definition the controller already has.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provisioned {
    /// Requested upstream, their agents not yet registered: nodes of the
    /// snapshot, which a pass places jobs on.
    pub booting: u32,
    /// Asked for by a pass, not yet recorded as nodes: counted as empty
    /// nodes of the definition's shape, so no pass asks for them twice.
    pub queued: u32,
    /// Registered and not yet given back.
    pub active: u32,
    /// Its upstream failed: asked for nothing until the backoff ends.
    pub unavailable: Option<Unavailable>,
}

/// A dynamic definition backing off after its upstream failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// The failure, naming the command.
    pub error: Arc<str>,
    /// When it asks again.
    pub until_ms: i64,
}

/// New nodes a pass asks of one dynamic definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRequest {
    /// The definition's id.
    pub definition: String,
    pub count: u32,
}

/// Pending reasons that more nodes could lift.
fn wants_room(code: C) -> bool {
    matches!(code, C::Resources | C::Priority | C::NoProvisionerDefinition)
}

/// One definition's nodes in the packing: free CPUs and memory each.
struct Bins<'a> {
    def: &'a Definition,
    cpus: u32,
    mem_mb: u64,
    /// Requests not yet recorded: the first bins, already asked for.
    queued: u32,
    /// New nodes it may still have at once: `maxNodes` less its active and booting ones.
    cap: u32,
    free: Vec<(u32, u64)>,
}

/// Whether a node of `def` (`cpus`, `mem_mb`) could run `job` at all: no
/// GPUs, its shape per node, and a time limit within the ttl.
fn could_host(def: &Definition, (cpus, mem_mb): (u32, u64), job: &Job) -> bool {
    let shape = job.shape();
    let fits_time = fits_ttl(def, job);
    shape.gpus == 0 && shape.cpus <= cpus && shape.mem_mb <= mem_mb && fits_time
}

impl Bins<'_> {
    /// Places one job's nodes; false (and nothing changed) when it does not fit.
    fn place(&mut self, job: &Job) -> bool {
        let shape = job.shape();
        if !could_host(self.def, (self.cpus, self.mem_mb), job) {
            return false;
        }
        let whole = shape.exclusive || self.def.exclusive != Exclusive::None;
        let (cpus, mem) = if whole { (self.cpus, self.mem_mb) } else { (shape.cpus, shape.mem_mb) };
        let want = shape.nodes as usize;
        let found: Vec<usize> = (0..self.free.len())
            .filter(|i| self.free[*i].0 >= cpus && self.free[*i].1 >= mem)
            .take(want)
            .collect();
        let open = want - found.len();
        if self.free.len() + open > self.cap as usize {
            return false;
        }
        for i in found {
            self.free[i].0 -= cpus;
            self.free[i].1 -= mem;
        }
        self.free.extend(std::iter::repeat_n((self.cpus - cpus, self.mem_mb - mem), open));
        true
    }
}

/// What the driven dynamic definitions could ever lend `job`, each as
/// `(cpus, mem_mb, count)`: their node shape, `maxNodes` times, when the
/// job's time limit fits their ttl (demand asks for nothing otherwise).
/// For submit's feasibility, so a job only a borrowed node could hold is
/// not refused; their policies are the pass's to judge.
pub fn lendable(p: &Provision, job: &Job) -> Vec<(u32, u64, u32)> {
    (p.defs.iter())
        .filter(|d| p.drives(d))
        .filter(|d| fits_ttl(d, job))
        .filter_map(|d| {
            let (cpus, mem_mb) = d.node_shape?;
            Some((cpus, mem_mb, max_nodes(d)))
        })
        .collect()
}

/// What a run on borrowed nodes is charged per hour, per definition id:
/// each borrowed node's `costPerHour` times the job's share of it, the
/// whole node when the job or the definition is exclusive, else its CPUs
/// over the node's. Nodes of this cluster cost nothing. `on` gives each
/// picked node's CPUs, its definition (a borrowed node serves one) and
/// whether it is exclusive to the job.
pub fn charge(
    p: &Provision,
    shape_cpus: u32,
    on: impl Iterator<Item = (u32, Option<u16>, bool)>,
) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = vec![];
    for (cpus, def, whole) in on {
        let Some(d) = def.and_then(|i| p.defs.get(i as usize)) else { continue };
        let share = if whole || d.exclusive != Exclusive::None || cpus == 0 {
            1.0
        } else {
            (f64::from(shape_cpus) / f64::from(cpus)).min(1.0)
        };
        match out.iter_mut().find(|(id, _)| *id == d.id) {
            Some((_, rate)) => *rate += share * d.cost,
            None => out.push((d.id.clone(), share * d.cost)),
        }
    }
    out
}

/// The definitions that can grow, cheapest first.
fn dynamic_bins<'a>(p: &'a Provision, have: &HashMap<String, Provisioned>) -> Vec<(u16, Bins<'a>)> {
    let mut out: Vec<(u16, Bins<'a>)> = p
        .defs
        .iter()
        .enumerate()
        .filter(|(_, d)| p.drives(d))
        .filter_map(|(i, def)| {
            let (cpus, mem_mb) = def.node_shape?;
            let had = have.get(&def.id).cloned().unwrap_or_default();
            if had.unavailable.is_some() {
                return None;
            }
            let cap = max_nodes(def).saturating_sub(had.active.saturating_add(had.booting));
            let free = vec![(cpus, mem_mb); had.queued.min(cap) as usize];
            Some((i as u16, Bins { def, cpus, mem_mb, queued: had.queued, cap, free }))
        })
        .collect();
    out.sort_by(|a, b| a.1.def.cost.total_cmp(&b.1.def.cost).then(a.0.cmp(&b.0)));
    out
}

/// New nodes per dynamic definition after `plan`'s starts. `admit` gives a
/// pending job's verdicts (the snapshot's or the pass's own). A job with no
/// usable node whose candidate definition is backing off pends naming it.
pub(crate) fn requests<'a>(
    snap: &Snapshot,
    plan: &mut Plan,
    admit: impl Fn(JobId) -> Option<&'a Arc<Admit>>,
    now_ms: i64,
) -> Vec<NodeRequest> {
    let Some(p) = snap.provision.as_deref() else { return vec![] };
    let mut bins = dynamic_bins(p, &snap.provisioned);
    let down = unavailable(p, &snap.provisioned);
    if bins.is_empty() && down.is_empty() {
        return vec![];
    }
    let rank: HashMap<JobId, usize> = plan
        .pending
        .iter()
        .enumerate()
        .filter(|(_, w)| wants_room(w.reason.code))
        .map(|(r, w)| (w.job, r))
        .collect();
    let mut jobs: Vec<(usize, &Job)> =
        snap.jobs.iter().filter_map(|j| rank.get(&j.id).map(|r| (*r, j))).collect();
    jobs.sort_unstable_by_key(|(r, _)| *r);
    for (r, job) in jobs {
        let Some(a) = admit(job.id) else { continue };
        // Cheapest definition first, as placement orders static pools.
        let placed = bins.iter_mut().any(|(i, b)| a.candidates.binary_search(i).is_ok() && b.place(job));
        let pending = &mut plan.pending[r];
        if placed || pending.reason.code != C::NoProvisionerDefinition {
            continue;
        }
        if let Some((d, u)) = down.iter().find(|(d, _)| a.candidates.binary_search(d).is_ok()) {
            let retry_in_s = (u.until_ms.saturating_sub(now_ms).max(0) as u64).div_ceil(1000);
            let facts = Facts::ProvisionerUnavailable {
                definition: p.defs[*d as usize].id.clone(),
                error: u.error.clone(),
                retry_in_s,
            };
            pending.reason = Reason::new(C::ProvisionerUnavailable, facts);
        }
    }
    bins.into_iter()
        .filter_map(|(_, b)| {
            let count = (b.free.len() as u32).saturating_sub(b.queued);
            (count > 0).then(|| NodeRequest { definition: b.def.id.clone(), count })
        })
        .collect()
}

/// What a dynamic definition that could serve a job holds against its
/// `maxNodes`: while it can still provision, the preemption pass waits for
/// it instead of evicting (spec: `preemptionThreshold`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Headroom {
    /// The definition's id.
    pub definition: String,
    /// Its nodes asked for, booting and registered.
    pub held: u32,
    pub max_nodes: u32,
    /// Backing off after an upstream failure: it provisions nothing meanwhile.
    pub unavailable: bool,
}

impl Headroom {
    /// Whether the definition can still provision a node now.
    pub fn can_provision(&self) -> bool {
        !self.unavailable && self.held < self.max_nodes
    }
}

/// The driven dynamic definitions among `admit`'s candidates whose nodes
/// could run `job` (the shape and ttl demand asks by), in the file's order.
/// A definition whose nodes could never run the job does not hold it back,
/// since demand would never ask for one.
pub(crate) fn headroom(snap: &Snapshot, admit: &Admit, job: &Job) -> Vec<Headroom> {
    let Some(p) = snap.provision.as_deref() else { return vec![] };
    (admit.candidates.iter())
        .filter_map(|i| p.defs.get(*i as usize))
        .filter(|d| p.drives(d) && d.node_shape.is_some_and(|s| could_host(d, s, job)))
        .map(|d| {
            let had = snap.provisioned.get(&d.id).cloned().unwrap_or_default();
            Headroom {
                definition: d.id.clone(),
                held: had.booting.saturating_add(had.active).saturating_add(had.queued),
                max_nodes: max_nodes(d),
                unavailable: had.unavailable.is_some(),
            }
        })
        .collect()
}

/// The driven definitions backing off, by index.
fn unavailable<'h>(p: &Provision, have: &'h HashMap<String, Provisioned>) -> Vec<(u16, &'h Unavailable)> {
    (p.defs.iter().enumerate())
        .filter(|(_, d)| p.drives(d))
        .filter_map(|(i, d)| Some((i as u16, have.get(&d.id)?.unavailable.as_ref()?)))
        .collect()
}
