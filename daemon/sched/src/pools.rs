//! Provisioner pools in a pass. A job may use the nodes of its candidate
//! definitions, and nodes in no definition when it has no annotation to
//! match. Jobs with the same candidates in one partition share a class: its
//! nodes in placement order (cheapest definition first) with their own skip
//! list and no-room memory, so a queue of such jobs costs what one
//! partition's would.

use super::job::{Job, Shape};
use super::memo::RoomFailures;
use super::nodes::{NodeState, PartNodes};
use super::pass_state::Pass;
use super::pool_state::Class;
use super::provision::{self, Admit, Exclusive, Owner, Refusal, Why};
use super::reason::{Facts, Reason, ReasonCode as C};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A node's definitions allow a job's verdict.
fn allows(admit: &Admit, defs: &[u16]) -> bool {
    match defs.is_empty() {
        true => !admit.needs_definition,
        false => defs.iter().any(|d| admit.candidates.binary_search(d).is_ok()),
    }
}

impl Pass<'_> {
    /// Costs and sharing of the nodes' definitions, before partitions order them.
    pub(super) fn mark_pools(snap: &crate::Snapshot, nodes: &mut [NodeState]) {
        let Some(p) = &snap.provision else { return };
        for (n, s) in nodes.iter_mut().zip(&snap.nodes) {
            n.cost = p.node_cost(&s.definitions);
            n.pool_excl = p.node_exclusive(&s.definitions);
        }
    }

    /// The job's shape on nodes `on`: with its workflow when one of them is
    /// `exclusive: workflow`, so the node remembers whose it is.
    pub(super) fn shape_on(nodes: &[NodeState], on: &[u32], job: &Job) -> Shape {
        let mut shape = job.shape();
        if on.iter().any(|n| nodes[*n as usize].pool_excl == Exclusive::Workflow) {
            shape.workflow = Self::workflow_of(job);
        }
        shape
    }

    /// A workflow's number, so `exclusive: workflow` nodes can tell jobs apart.
    fn workflow_of(job: &Job) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // Tagged, so a workflow named "12" and array 12 stay apart.
        match (&job.workflow, job.array_id) {
            (Some(w), _) => (0u8, w).hash(&mut h),
            (None, Some(a)) => (1u8, a).hash(&mut h),
            (None, None) => (2u8, job.id).hash(&mut h),
        }
        h.finish() | 1
    }

    /// The job's verdicts: the snapshot's, else judged now (and kept for the pass).
    pub(super) fn admit_of(&mut self, job: &Job) -> Option<Arc<Admit>> {
        let p = self.snap.provision.as_ref()?;
        if let Some(a) = self.known_admit(job) {
            return Some(a.clone());
        }
        let snap = self.snap;
        let sizes = self.pools.sizes.get_or_insert_with(|| provision::pool_sizes(p, snap));
        let owner = Owner { organization: provision::organization(&snap.catalog, job), cluster: &p.cluster };
        let a = Arc::new(provision::admit(p, job, &owner, sizes, self.now));
        self.pools.inline.insert(job.id, a.clone());
        Some(a)
    }

    fn known_admit(&self, job: &Job) -> Option<&Arc<Admit>> {
        self.snap.admits.get(&job.id).or_else(|| self.pools.inline.get(&job.id))
    }

    /// The job's class in partition `pi`; None without definitions. A job
    /// whose class has no usable node pends with `NoProvisionerDefinition`.
    pub(super) fn pool_class(&mut self, job: &Job, pi: usize) -> Result<Option<u32>, Reason> {
        let Some(admit) = self.admit_of(job) else { return Ok(None) };
        // By the verdict's address first: jobs sharing a cached verdict skip building the key.
        let ptr = (pi, Arc::as_ptr(&admit) as usize);
        let c = match self.pools.by_admit.get(&ptr) {
            Some(c) => *c,
            None => {
                let c = self.class_for(pi, &admit);
                self.pools.by_admit.insert(ptr, c);
                c
            }
        };
        let class = &self.pools.classes[c as usize];
        if class.nodes.order.iter().any(|i| self.nodes[*i as usize].up) {
            return Ok(Some(c));
        }
        Err(self.no_definition(&admit, pi))
    }

    /// The class of jobs with `admit`'s candidates in partition `pi`, made on first use.
    fn class_for(&mut self, pi: usize, admit: &Admit) -> u32 {
        let key = (pi, admit.candidates.clone(), admit.needs_definition);
        if let Some(c) = self.pools.by_key.get(&key) {
            return *c;
        }
        let c = self.new_class(pi, admit);
        self.pools.by_key.insert(key, c);
        c
    }

    fn new_class(&mut self, pi: usize, admit: &Admit) -> u32 {
        let defs = |i: u32| self.snap.nodes[i as usize].definitions.as_slice();
        let members: Vec<u32> =
            self.parts[pi].nodes.order.iter().copied().filter(|i| allows(admit, defs(*i))).collect();
        let workflow = members.iter().any(|i| self.nodes[*i as usize].pool_excl == Exclusive::Workflow);
        let nodes = PartNodes::new(members, &self.nodes);
        self.pools.classes.push(Class { nodes, failures: RoomFailures::default(), workflow });
        (self.pools.classes.len() - 1) as u32
    }

    /// Every definition's refusal, and for candidates, that their pool has no usable node here.
    fn no_definition(&self, admit: &Admit, pi: usize) -> Reason {
        let p = self.snap.provision.as_ref().expect("a class needs definitions");
        let mut refusals: Vec<Refusal> = admit.refusals.clone();
        for &d in &admit.candidates {
            let why = Why::NoUsableNodes;
            refusals.push(Refusal { definition: p.defs[d as usize].id.clone(), why });
        }
        refusals.sort_by_key(|r| p.index(&r.definition));
        let unpooled = !admit.needs_definition
            && self.parts[pi].nodes.order.iter().any(|i| self.snap.nodes[*i as usize].definitions.is_empty());
        let facts = Facts::NoDefinition {
            partition: self.parts[pi].p.name.clone(),
            refusals: Arc::new(refusals),
            annotated: admit.needs_definition,
            unpooled,
        };
        Reason::new(C::NoProvisionerDefinition, facts)
    }

    /// The job's shape in a class: with its workflow where nodes are shared per workflow.
    pub(super) fn class_shape(&self, job: &Job, class: Option<u32>) -> Shape {
        let mut s = job.shape();
        if class.is_some_and(|c| self.pools.classes[c as usize].workflow) {
            s.workflow = Self::workflow_of(job);
        }
        s
    }

    pub(super) fn part_nodes(&self, pi: usize, class: Option<u32>) -> &PartNodes {
        class.map_or(&self.parts[pi].nodes, |c| &self.pools.classes[c as usize].nodes)
    }

    pub(super) fn failures(&mut self, pi: usize, class: Option<u32>) -> &mut RoomFailures {
        match class {
            Some(c) => &mut self.pools.classes[c as usize].failures,
            None => &mut self.parts[pi].failures,
        }
    }

    /// Whether node `i` serves the job (for preemption's pool), after `pool_class` judged it.
    pub(super) fn serves(&self, job: &Job, i: u32) -> bool {
        self.known_admit(job).is_none_or(|a| allows(a, &self.snap.nodes[i as usize].definitions))
    }
}
