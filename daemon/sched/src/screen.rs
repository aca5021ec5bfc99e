//! What a pass reuses across the blocked jobs it weighs for preemption, so a
//! full cluster costs each pending job what its own eligible candidates cost
//! rather than a verdict per running job (issue 15: 10,000 × 1,000 built ten
//! million verdicts a pass).
//!
//! - The guards before the overlap depend on the pending job only through its
//!   partition and QOS: each running job is screened once per (partition,
//!   QOS) with the same `class_guards` that `pair` uses, and the survivors are
//!   kept by priority, lowest first.
//! - The gap holds for a prefix of that list (a lower candidate passes
//!   whenever a higher one does), so a job walks only the candidates it could
//!   evict.
//! - A job that names and excludes no nodes shares its partition's pool and,
//!   until the next start, its utilization.
//! - A job that found no set of victims making room tells later jobs of the
//!   same partition and QOS, no higher in priority and asking no less, that
//!   they will not find one either: within a pass free room only shrinks and
//!   candidates are only taken.

use super::job::{Job, Shape};
use super::pass_state::Pass;
use super::preempt::{Overlap, Short};
use super::priority::PriorityFactors;
use super::verdict::JobCheck;
use spur_vocab::names::PreemptMode;
use std::collections::HashMap;
use std::rc::Rc;

/// Entries kept of jobs that found no room by preempting.
const NO_ROOM_MEMORY: usize = 64;

/// The in-service nodes a job could use, in placement order, and membership by node index.
pub(super) struct Pool {
    pub order: Vec<u32>,
    pub member: Vec<bool>,
}

impl Pool {
    fn new(order: Vec<u32>, nodes: usize) -> Pool {
        let mut member = vec![false; nodes];
        order.iter().for_each(|i| member[*i as usize] = true);
        Pool { order, member }
    }
}

/// A running job whose class guards pass for one (partition, QOS).
struct Screened {
    r: u32,
    action: PreemptMode,
    priority: f64,
}

type Class<'a> = (usize, Option<&'a str>);

/// A blocked job for which no allowed victims made room.
struct NoRoom<'a> {
    class: Class<'a>,
    shape: Shape,
    priority: f64,
}

#[derive(Default)]
pub(super) struct Screens<'a> {
    classes: HashMap<Class<'a>, Rc<[Screened]>>,
    pools: HashMap<usize, Rc<Pool>>,
    /// Per (partition, asks memory, asks GPUs): the check and the start count it was taken at.
    thresholds: HashMap<(usize, bool, bool), (usize, JobCheck)>,
    no_room: Vec<NoRoom<'a>>,
}

impl<'a> Pass<'a> {
    /// A job whose pool is its whole partition's: with provisioner
    /// definitions a job's pool is its definitions' nodes, so none is.
    /// So is a job a reservation window would keep off some nodes, or one
    /// that runs in a reservation (only on its nodes).
    fn plain(&self, job: &Job) -> bool {
        job.nodelist.is_empty()
            && job.exclude.is_empty()
            && self.snap.provision.is_none()
            && job.reservation.is_none()
            && !self.windows.any_before(None, job.end_ms(self.now))
    }

    /// The job's pool: its partition's, shared, unless it names or excludes nodes.
    pub(super) fn pool_of(&mut self, job: &Job, pi: usize) -> Rc<Pool> {
        if !self.plain(job) {
            return Rc::new(Pool::new(self.pool(job, pi), self.nodes.len()));
        }
        if let Some(p) = self.screens.pools.get(&pi) {
            return p.clone();
        }
        let pool = Rc::new(Pool::new(self.pool(job, pi), self.nodes.len()));
        self.screens.pools.insert(pi, pool.clone());
        pool
    }

    /// The pool threshold check; for a shared pool, reused until a job starts.
    pub(super) fn threshold_of(&mut self, job: &Job, pi: usize, pool: &Pool) -> JobCheck {
        let shape = job.shape();
        if !self.plain(job) {
            return self.threshold(&pool.order, &shape);
        }
        let (key, starts) = ((pi, shape.mem_mb > 0, shape.gpus > 0), self.plan.starts.len());
        if let Some((at, check)) = self.screens.thresholds.get(&key)
            && *at == starts
        {
            return check.clone();
        }
        let check = self.threshold(&pool.order, &shape);
        self.screens.thresholds.insert(key, (starts, check.clone()));
        check
    }

    fn screened(&mut self, job: &'a Job, sc: u32, pi: usize) -> Rc<[Screened]> {
        let class = (pi, job.qos.as_deref());
        if let Some(list) = self.screens.classes.get(&class) {
            return list.clone();
        }
        let mut list: Vec<Screened> = (0..self.running.len())
            .filter_map(|r| {
                let (guards, mode) = self.class_guards(job, sc, pi, r);
                let priority = self.running[r].priority.effective;
                let action = self.action(r, mode);
                guards.iter().all(|g| g.passes()).then_some(Screened { r: r as u32, action, priority })
            })
            .collect();
        list.sort_by(|a, b| a.priority.total_cmp(&b.priority).then(a.r.cmp(&b.r)));
        let list: Rc<[Screened]> = list.into();
        self.screens.classes.insert(class, list.clone());
        list
    }

    /// In a pass: the job's eligible candidates, lowest priority first, and
    /// how many passed the gap and the class guards.
    pub(super) fn eligible(
        &mut self,
        job: &'a Job,
        sc: u32,
        pi: usize,
        priority: &PriorityFactors,
        overlap: &Overlap<'_>,
    ) -> (Vec<(usize, PreemptMode)>, usize) {
        let list = self.screened(job, sc, pi);
        let passing = list.iter().take_while(|s| self.gap(priority.effective, s.r as usize).holds());
        let (mut out, mut considered) = (Vec::new(), 0);
        for s in passing.filter(|s| !self.running[s.r as usize].evicted) {
            considered += 1;
            let r = s.r as usize;
            let overlaps = match overlap {
                Overlap::Nodes(in_pool) => self.shared_nodes(r, in_pool).next().is_some(),
                Overlap::Layers { resource, .. } => {
                    let holds =
                        self.snap.jobs[self.running[r].job].charged.iter().any(|a| a.name == *resource);
                    holds && self.pair(job, sc, pi, priority, overlap, r).eligible()
                }
            };
            if overlaps {
                out.push((r, s.action));
            }
        }
        (out, considered)
    }

    /// Whether an earlier job of the same class, no lower in priority and
    /// asking no more, found no room by preempting.
    pub(super) fn recalls_no_room(&self, job: &'a Job, pi: usize, priority: f64, short: Short<'_>) -> bool {
        let class = (pi, job.qos.as_deref());
        let shape = job.shape();
        self.memo_applies(job, short)
            && (self.screens.no_room.iter())
                .any(|m| m.class == class && priority <= m.priority && shape.covers(&m.shape))
    }

    pub(super) fn remember_no_room(&mut self, job: &'a Job, pi: usize, priority: f64, short: Short<'_>) {
        if !self.memo_applies(job, short) {
            return;
        }
        let list = &mut self.screens.no_room;
        if list.len() >= NO_ROOM_MEMORY {
            list.remove(0);
        }
        list.push(NoRoom { class: (pi, job.qos.as_deref()), shape: job.shape(), priority });
    }

    /// Room for nodes only, on a shared pool, with no node held for one job.
    fn memo_applies(&self, job: &Job, short: Short<'_>) -> bool {
        short == Short::Room && self.plain(job) && !self.held
    }
}
