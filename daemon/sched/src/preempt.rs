//! Preemption inside a pass, for a job left pending on `Resources`: the
//! job-level checks (enabled, partition mode, drain timeout, eviction cap,
//! pool threshold), then every running job that holds a node it could use,
//! through the 2× gap and the guards in the spec's order. Victims are evicted
//! only when releasing them provably makes the job placeable; otherwise none.
//! Suspended victims keep their nodes: the capacity they gave up is held for
//! their preemptor, and they resume once it is gone.

use super::Preemption;
use super::hres::Counters;
use super::job::{Job, JobId, JobState, Shape};
use super::nodes::NodeState;
use super::pass_state::{Pass, secs};
use super::priority::PriorityFactors;
use super::reason::ReasonCode;
use super::verdict::{GapCheck, Guard, JobCheck, JobVerdict, LISTED, Outcome, PairVerdict, Side, Source};
use spur_vocab::names::PreemptMode;
use std::collections::HashMap;

/// What a blocked job is short of: room on nodes, or a Mode 3 resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Short<'s> {
    Room,
    Hres(&'s str),
}

impl<'s> Short<'s> {
    /// What a job left pending with `code` is short of: room for Resources,
    /// the resource for Licenses on a Mode 3 one; None where eviction cannot help.
    pub fn of(code: ReasonCode, licenses: &Counters<'s>, job: &Job) -> Option<Short<'s>> {
        match code {
            ReasonCode::Resources => Some(Short::Room),
            ReasonCode::Licenses => licenses.mode3_of(job).map(Short::Hres),
            _ => None,
        }
    }
}

/// How a candidate overlaps the pending job: nodes it could use, or (Mode 3)
/// layers over those nodes, which need no node in common.
pub(super) enum Overlap<'x> {
    Nodes(&'x [bool]),
    Layers { resource: &'x str, layers: &'x [String] },
}

/// Marks a suspended job's nodes as held for its preemptor while that is
/// still active, else for the job itself so nothing takes its room first.
pub(super) fn hold_for_preemptor(
    nodes: &mut [NodeState],
    node_idx: &HashMap<&str, u32>,
    names: &[String],
    by: JobId,
    me: JobId,
    jobs: &[Job],
) {
    let active = jobs.iter().any(|j| j.id == by && !matches!(j.state, JobState::Suspended { .. }));
    let holder = if active { by } else { me };
    for i in names.iter().filter_map(|n| node_idx.get(n.as_str())) {
        nodes[*i as usize].held_for.get_or_insert(holder);
    }
}

/// Gives back what a victim holds on a node: all of it, or for a suspended
/// victim its CPUs and GPUs only, since its memory stays allocated.
fn give_back(n: &mut NodeState, s: &Shape, mode: PreemptMode) {
    if mode != PreemptMode::Suspend {
        return n.release(s);
    }
    if s.exclusive {
        n.exclusive = false;
        (n.free_cpus, n.free_gpus) = (n.cpus, n.gpus);
    } else {
        n.free_cpus = n.free_cpus.saturating_add(s.cpus).min(n.cpus);
        n.free_gpus = n.free_gpus.saturating_add(s.gpus).min(n.gpus);
    }
}

impl<'a> Pass<'a> {
    /// Suspended jobs whose preemptor is gone take their CPUs back, ahead of any pending job.
    pub fn resume_suspended(&mut self) {
        for job in &self.snap.jobs {
            let JobState::Suspended { nodes, .. } = &job.state else { continue };
            let idx = self.indexes(nodes);
            if idx.iter().any(|i| self.nodes[*i as usize].held_for != Some(job.id)) {
                continue;
            }
            let shape = Shape { mem_mb: 0, exclusive: false, ..job.shape() };
            let room = |n: &NodeState| n.up && n.free_cpus >= shape.cpus && n.free_gpus >= shape.gpus;
            if idx.iter().all(|i| room(&self.nodes[*i as usize])) {
                for &i in &idx {
                    let n = &mut self.nodes[i as usize];
                    n.held_for = None;
                    n.take(&shape);
                }
                self.plan.resumes.push(job.id);
            }
        }
        // A resume frees its held nodes: the memo may serve again when none are left.
        if !self.plan.resumes.is_empty() {
            self.held = self.nodes.iter().any(|n| n.held_for.is_some());
        }
    }

    /// The partition's in-service nodes the job could use, in placement order:
    /// only its named nodes when they are all it asks for; never a node a
    /// reservation window keeps it off (its run would reach the window), and
    /// for a job in a reservation only that reservation's nodes. So no job is
    /// evicted from a node its preemptor could not then run on.
    pub(super) fn pool(&self, job: &Job, pi: usize) -> Vec<u32> {
        // Resolved once, not per node of the partition.
        let (excluded, named) = (self.indexes(&job.exclude), self.indexes(&job.nodelist));
        let only_named = !job.nodelist.is_empty() && job.nodes() as usize <= job.nodelist.len();
        let member = self.member_of(job).ok().flatten();
        let end = job.end_ms(self.now);
        let windowed = self.windows.any();
        (self.parts[pi].nodes.order.iter().copied())
            .filter(|i| {
                self.nodes[*i as usize].up
                    && !excluded.contains(i)
                    && (!only_named || named.contains(i))
                    && self.serves(job, *i)
                    && (!windowed
                        || (self.windows.blocks(*i, member, end).is_none()
                            && member.is_none_or(|k| self.windows.holds(*i, k))))
            })
            .collect()
    }

    /// Utilization of the pool in the busiest dimension the job asks for.
    pub(super) fn threshold(&self, pool: &[u32], shape: &Shape) -> JobCheck {
        let (mut cap, mut used) = ([0u64; 3], [0u64; 3]);
        for n in pool.iter().map(|i| &self.nodes[*i as usize]) {
            let (c, f) =
                ([u64::from(n.cpus), n.mem, n.gpus], [u64::from(n.free_cpus), n.free_mem, n.free_gpus]);
            for d in 0..3 {
                cap[d] += c[d];
                used[d] += c[d].saturating_sub(f[d]);
            }
        }
        let asks = [true, shape.mem_mb > 0, shape.gpus > 0];
        let names = ["cpu", "mem", "gpu"];
        let (mut used_pct, mut dim) = (0.0, "cpu");
        for d in (0..3).filter(|d| asks[*d] && cap[*d] > 0) {
            let pct = used[d] as f64 * 100.0 / cap[d] as f64;
            if pct > used_pct {
                (used_pct, dim) = (pct, names[d]);
            }
        }
        JobCheck::Threshold { used_pct, dim, threshold: self.snap.config.preempt.threshold_pct }
    }

    fn side(&self, job: &Job, priority: &PriorityFactors) -> Side {
        Side {
            job: job.id,
            user: job.user.clone(),
            qos: job.qos.clone(),
            partition: job.partition.clone(),
            factors: *priority,
        }
    }

    /// The guards that depend on the pending job only through its partition
    /// and QOS, in the spec's order, and the candidate's effective mode. A
    /// pass screens each running job once per (partition, QOS) with them.
    pub(super) fn class_guards(&self, job: &Job, sc: u32, pi: usize, r: usize) -> (Vec<Guard>, PreemptMode) {
        let cfg = &self.snap.config.preempt;
        let run = &self.snap.jobs[self.running[r].job];
        let rs = &self.scopes.list[self.running[r].scope as usize];
        let rpart = self.running[r].part.map(|p| self.parts[p as usize].p);
        let rpname = || run.partition.clone();
        let mine = self.parts[pi].p;
        let mut guards = vec![Guard::PartitionMode { partition: mine.name.clone(), mode: mine.preempt_mode }];
        let pq = self.scopes.list[sc as usize].qos;
        guards.push(Guard::QosAllowList {
            enforced: cfg.qos_allow_list,
            pending_qos: job.qos.clone(),
            allows: pq.map(|q| q.preempt.clone()).unwrap_or_default(),
            candidate_qos: run.qos.clone(),
        });
        let qname = || run.qos.clone().unwrap_or_default();
        let (mode, from) = match rs.qos.map(|q| q.preempt_mode).filter(|m| *m != PreemptMode::Off) {
            Some(m) => (m, Source::Qos(qname())),
            None => (rpart.map_or(PreemptMode::Off, |p| p.preempt_mode), Source::Partition(rpname())),
        };
        guards.push(Guard::CandidateMode { mode, from });
        let ran_s = match &run.state {
            JobState::Running { start_ms, .. } => secs(self.now.saturating_sub(*start_ms)),
            _ => 0,
        };
        let (exempt_s, from) =
            match (rs.qos.and_then(|q| q.preempt_exempt_time), rpart.and_then(|p| p.preempt_exempt_time)) {
                (Some(t), _) => (t, Source::Qos(qname())),
                (None, Some(t)) => (t, Source::Partition(rpname())),
                (None, None) => (cfg.exempt_secs, Source::Global),
            };
        guards.push(Guard::ExemptTime { exempt_s, from, ran_s });
        guards.push(Guard::MinRuntime { min_s: cfg.min_runtime_secs, ran_s });
        // Only a reservation in its window protects the job it runs.
        let active = run
            .reservation
            .as_deref()
            .and_then(|n| self.windows.named(n))
            .filter(|(_, r)| r.active(self.now));
        guards.push(Guard::Reservation {
            reservation: active.map(|(_, r)| r.name.clone()),
            pending_tier: mine.priority_tier,
            candidate_tier: rpart.map_or(1, |p| p.priority_tier),
        });
        (guards, mode)
    }

    /// What eviction would do to the candidate: its mode, with requeue turned
    /// into cancel for a job that may not be requeued.
    pub(super) fn action(&self, r: usize, mode: PreemptMode) -> PreemptMode {
        let requeueable = self.snap.jobs[self.running[r].job].requeueable;
        if mode == PreemptMode::Requeue && !requeueable { PreemptMode::Cancel } else { mode }
    }

    /// The 2× gap (and `preemption_gap`) between a pending priority and a candidate's.
    pub(super) fn gap(&self, pending: f64, r: usize) -> GapCheck {
        let candidate = self.running[r].priority.effective;
        GapCheck { pending, candidate, min_delta: self.snap.config.preempt.min_gap }
    }

    /// The candidate's nodes among those the pending job could use.
    pub(super) fn shared_nodes<'s>(
        &'s self,
        r: usize,
        in_pool: &'s [bool],
    ) -> impl Iterator<Item = u32> + 's {
        let alloc = &self.allocs[self.running[r].alloc];
        alloc.nodes.iter().copied().filter(|n| in_pool[*n as usize])
    }

    /// The full verdict for one (pending, running) pair.
    pub fn pair(
        &self,
        job: &Job,
        sc: u32,
        pi: usize,
        priority: &PriorityFactors,
        overlap: &Overlap<'_>,
        r: usize,
    ) -> PairVerdict {
        let run = &self.snap.jobs[self.running[r].job];
        let (mut guards, mode) = self.class_guards(job, sc, pi, r);
        match overlap {
            Overlap::Nodes(in_pool) => {
                let names = self.shared_nodes(r, in_pool);
                let shared = names.map(|n| self.snap.nodes[n as usize].name.clone()).collect();
                guards.push(Guard::NodeOverlap { shared });
            }
            Overlap::Layers { resource, layers } => {
                guards.push(Guard::HresMode { resource: resource.to_string(), mode });
                let shared = (run.charged.iter().filter(|a| a.name == *resource))
                    .flat_map(|a| a.layers.iter().map(|(l, _)| l))
                    .filter(|l| layers.contains(l))
                    .cloned()
                    .collect();
                guards.push(Guard::LayerOverlap { resource: resource.to_string(), shared });
            }
        }
        PairVerdict {
            pending: self.side(job, priority),
            candidate: self.side(run, &self.running[r].priority),
            gap: self.gap(priority.effective, r),
            guards,
            action: self.action(r, mode),
        }
    }

    /// Whether the job fits once `victims` (indexes into `running`) are gone; the nodes it would get.
    pub(super) fn fits_without(
        &self,
        job: &Job,
        pool: &[u32],
        victims: &[(usize, PreemptMode)],
    ) -> Option<Vec<u32>> {
        let shape = job.shape();
        let mut sim: HashMap<u32, NodeState> = HashMap::new();
        for &(r, mode) in victims {
            let a = &self.allocs[self.running[r].alloc];
            for &n in &a.nodes {
                let node = sim.entry(n).or_insert_with(|| self.nodes[n as usize].clone());
                give_back(node, &a.shape, mode);
            }
        }
        let ok = |i: u32| {
            let n = sim.get(&i).unwrap_or(&self.nodes[i as usize]);
            n.held_for.is_none_or(|h| h == job.id) && n.fits(&shape)
        };
        let required = self.indexes(&job.nodelist);
        if required.len() < job.nodelist.len() || !required.iter().all(|i| pool.contains(i) && ok(*i)) {
            return None;
        }
        let mut out = required.clone();
        for &i in pool {
            if out.len() >= shape.nodes as usize {
                break;
            }
            if !required.contains(&i) && ok(i) {
                out.push(i);
            }
        }
        (out.len() >= shape.nodes as usize).then_some(out)
    }

    /// Room for the job once `victims` are gone: nodes, and for a Mode 3
    /// shortage the resource too, with the victims' charges given back.
    fn room_without(
        &mut self,
        job: &Job,
        pool: &[u32],
        victims: &[(usize, PreemptMode)],
        short: Short<'_>,
    ) -> Option<Vec<u32>> {
        if short == Short::Room {
            return self.fits_without(job, pool, victims);
        }
        let charged: Vec<_> = (victims.iter())
            .flat_map(|(r, _)| self.snap.jobs[self.running[*r].job].charged.iter().cloned())
            .collect();
        self.licenses.release(&charged);
        let got = self.hres_room(job, pool, victims);
        self.licenses.take(&charged);
        got
    }

    fn hres_room(&self, job: &Job, pool: &[u32], victims: &[(usize, PreemptMode)]) -> Option<Vec<u32>> {
        self.licenses.check(job).ok()?;
        let required = self.indexes(&job.nodelist);
        let mut excluded = Vec::new();
        self.licenses.exclude(job, pool, &required, &mut excluded, job.nodes() as usize).ok()?;
        let served: Vec<u32> = pool.iter().copied().filter(|n| excluded.binary_search(n).is_err()).collect();
        let picked = self.fits_without(job, &served, victims)?;
        self.licenses.fit(job, &picked).ok()?;
        Some(picked)
    }

    /// What preemption concludes for a job blocked on resources. In the pass
    /// (`full` false) it stops at the first failing job-level check and only
    /// weighs jobs on the pool's nodes; `scontrol explain` weighs everything.
    pub fn consider_preemption(
        &mut self,
        job: &'a Job,
        sc: u32,
        pi: usize,
        priority: &PriorityFactors,
        full: bool,
        short: Short<'a>,
    ) -> JobVerdict {
        let cfg = self.snap.config.preempt.clone();
        let p = self.parts[pi].p;
        let mut checks = vec![
            JobCheck::Enabled(cfg.enabled),
            JobCheck::PartitionMode { partition: p.name.clone(), mode: p.preempt_mode },
        ];
        if let Some(t) = self.snap.evicted_for.get(&job.id) {
            let evicted_s_ago = secs(self.now.saturating_sub(*t));
            checks.push(JobCheck::Drain { evicted_s_ago, timeout_s: cfg.drain_timeout_secs });
        }
        checks.push(JobCheck::EvictionCap { used: self.evictions, max: cfg.max_evictions });
        // While a dynamic definition can still grow for the job, it waits for those nodes.
        if let Some(a) = self.admit_of(job) {
            let dynamic = super::demand::headroom(self.snap, &a, job);
            checks.extend(dynamic.into_iter().map(JobCheck::Dynamic));
        }
        let verdict = |checks, candidates, considered, outcome| JobVerdict {
            job: job.id,
            checks,
            candidates,
            considered,
            outcome,
            idle_fill: None,
        };
        if !full && checks.iter().any(|c| !c.passes()) {
            return verdict(checks, vec![], 0, Outcome::Checks);
        }
        // `explain` runs on a pass of its own, so the shared pool is as fresh as a computed one.
        let pool = self.pool_of(job, pi);
        // Pool utilization is about nodes; a Mode 3 shortage is about its layers.
        if short == Short::Room {
            checks.push(self.threshold_of(job, pi, &pool));
        }
        let blocked = checks.iter().any(|c| !c.passes());
        if !full && blocked {
            return verdict(checks, vec![], 0, Outcome::Checks);
        }
        let layers = match short {
            Short::Hres(resource) => self.licenses.layers_over(resource, &pool.order),
            Short::Room => vec![],
        };
        let overlap = match short {
            Short::Room => Overlap::Nodes(&pool.member),
            Short::Hres(resource) => Overlap::Layers { resource, layers: &layers },
        };
        let (eligible, considered, pairs) = if full {
            let pairs = self.all_pairs(job, sc, pi, priority, &overlap);
            let eligible = pairs.iter().filter(|(_, v)| v.eligible()).map(|(r, v)| (*r, v.action)).collect();
            (eligible, pairs.len(), pairs)
        } else {
            let (eligible, considered) = self.eligible(job, sc, pi, priority, &overlap);
            (eligible, considered, Vec::new())
        };
        let multi = cfg.multi_victim;
        let outcome = if blocked {
            Outcome::Checks
        } else if eligible.is_empty() {
            Outcome::NoCandidate
        } else if !full && self.recalls_no_room(job, pi, priority.effective, short) {
            Outcome::NotEnough { eligible: eligible.len(), multi_victim: multi }
        } else {
            self.choose(job, &pool.order, &eligible, (multi, cfg.max_evictions), short)
        };
        if matches!(outcome, Outcome::NotEnough { .. }) && !full {
            self.remember_no_room(job, pi, priority.effective, short);
        }
        if let Outcome::Evict { victims, .. } = &outcome
            && !full
        {
            let chosen: Vec<(usize, PreemptMode)> = (eligible.iter().copied())
                .filter(|(r, _)| victims.contains(&self.snap.jobs[self.running[*r].job].id))
                .collect();
            for (r, mode) in chosen {
                self.running[r].evicted = true;
                self.evictions += 1;
                let victim = self.snap.jobs[self.running[r].job].id;
                self.plan.preemptions.push(Preemption { victim, by: job.id, mode, reclaim: false });
            }
        }
        // A pass keeps only the checks and the outcome of each blocked job:
        // storing its candidates would keep pending × running pairs alive
        // between passes. `explain_job` lists them on demand (`full`).
        let candidates =
            if full { pairs.into_iter().take(LISTED).map(|(_, v)| v).collect() } else { Vec::new() };
        verdict(checks, candidates, considered, outcome)
    }

    /// Every candidate's full verdict, best first: eligible ones by lowest
    /// priority, then those that pass the gap, then the rest. For `explain`.
    fn all_pairs(
        &self,
        job: &Job,
        sc: u32,
        pi: usize,
        priority: &PriorityFactors,
        overlap: &Overlap<'_>,
    ) -> Vec<(usize, PairVerdict)> {
        let live = (0..self.running.len()).filter(|r| !self.running[*r].evicted);
        let mut pairs: Vec<(usize, PairVerdict)> =
            live.map(|r| (r, self.pair(job, sc, pi, priority, overlap, r))).collect();
        pairs.sort_by(|(_, a), (_, b)| {
            (b.eligible().cmp(&a.eligible()))
                .then(b.gap.holds().cmp(&a.gap.holds()))
                .then(a.candidate.factors.effective.total_cmp(&b.candidate.factors.effective))
        });
        pairs
    }

    /// The victims: the lowest-priority eligible job that alone makes room, or
    /// with multi-victim on, the smallest prefix that does, pruned of any member
    /// the rest can do without.
    fn choose(
        &mut self,
        job: &Job,
        pool: &[u32],
        eligible: &[(usize, PreemptMode)],
        (multi, max): (bool, u32),
        short: Short<'_>,
    ) -> Outcome {
        let not_enough = Outcome::NotEnough { eligible: eligible.len(), multi_victim: multi };
        let mut set: Vec<(usize, PreemptMode)> = Vec::new();
        let mut nodes = None;
        if multi {
            for e in eligible {
                set.push(*e);
                if let Some(n) = self.room_without(job, pool, &set, short) {
                    nodes = Some(n);
                    break;
                }
            }
            let Some(mut got) = nodes else { return not_enough };
            for k in (0..set.len()).rev() {
                let mut fewer = set.clone();
                fewer.remove(k);
                if let Some(n) = self.room_without(job, pool, &fewer, short) {
                    (set, got) = (fewer, n);
                }
            }
            nodes = Some(got);
        } else if let Some((e, n)) =
            eligible.iter().find_map(|e| self.room_without(job, pool, &[*e], short).map(|n| (*e, n)))
        {
            set.push(e);
            nodes = Some(n);
        }
        let Some(nodes) = nodes else { return not_enough };
        let left = max.saturating_sub(self.evictions);
        if set.len() > left as usize {
            return Outcome::OverCap { needed: set.len(), left };
        }
        Outcome::Evict {
            victims: set.iter().map(|(r, _)| self.snap.jobs[self.running[*r].job].id).collect(),
            nodes: nodes.iter().map(|n| self.snap.nodes[*n as usize].name.clone()).collect(),
            ask: job.shape(),
        }
    }
}
