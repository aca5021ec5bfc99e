//! Verdicts kept across passes. Two levels, so the warm path allocates
//! nothing: per job, the scalars its verdict read, compared field by field
//! each pass; behind that, verdicts by the exact request the policies see
//! (trimmed to what they name), so jobs asking alike are judged once.

use super::Provision;
use super::admit::{Admit, Owner, admit_in, trimmed_request};
use crate::job::{Job, JobId};
use expr::Context;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// A fast hasher for job ids (never for untrusted text: equal keys are compared in full).
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Pending jobs' verdicts in a snapshot, by job id.
pub type Admits = HashMap<JobId, Arc<Admit>, BuildHasherDefault<IdHasher>>;

/// What a verdict read of a job and its world, compared exactly.
#[derive(Debug, PartialEq)]
struct Read {
    generation: u64,
    pools: u64,
    user: String,
    account: Option<String>,
    org: String,
    email: String,
    time_limit: Option<u64>,
    nodes: u32,
    exclusive: bool,
    shape: (u32, u64, u64),
    array: Option<(u32, u64)>,
    /// Annotations are fixed at submit; their count guards against a reused id.
    annotations: usize,
}

impl Read {
    fn of(job: &Job, org: &str, generation: u64, pools: u64) -> Read {
        let s = job.shape();
        Read {
            generation,
            pools,
            user: job.user.clone(),
            account: job.account.clone(),
            org: org.to_string(),
            email: job.email.clone(),
            time_limit: job.time_limit,
            nodes: job.nodes(),
            exclusive: job.exclusive,
            shape: (s.cpus, s.mem_mb, s.gpus),
            array: job.array.map(|a| (a.throttle, a.pending)),
            annotations: job.annotations.len(),
        }
    }

    fn same(&self, job: &Job, org: &str, generation: u64, pools: u64) -> bool {
        let s = job.shape();
        self.generation == generation
            && self.pools == pools
            && self.user == job.user
            && self.account == job.account
            && self.org == org
            && self.email == job.email
            && self.time_limit == job.time_limit
            && self.nodes == job.nodes()
            && self.exclusive == job.exclusive
            && self.shape == (s.cpus, s.mem_mb, s.gpus)
            && self.array == job.array.map(|a| (a.throttle, a.pending))
            && self.annotations == job.annotations.len()
    }
}

struct Entry {
    read: Read,
    used: u64,
    admit: Arc<Admit>,
}

#[derive(Default)]
pub struct AdmitCache {
    jobs: HashMap<JobId, Entry, BuildHasherDefault<IdHasher>>,
    /// By the trimmed request and the job's annotations, as text.
    requests: HashMap<String, (u64, Arc<Admit>)>,
    pass: u64,
}

impl std::fmt::Debug for AdmitCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AdmitCache({} jobs, {} requests)", self.jobs.len(), self.requests.len())
    }
}

impl AdmitCache {
    /// Distinct requests judged and kept.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// Starts a pass: what the last pass did not use goes.
    pub fn begin(&mut self) {
        let last = self.pass;
        self.jobs.retain(|_, e| e.used == last);
        // A request stays while a job's entry holds its verdict, or the last pass used it.
        self.requests.retain(|_, (used, a)| *used == last || Arc::strong_count(a) > 1);
        self.pass += 1;
    }

    /// The job's verdict, judged only when what it reads changed.
    pub fn get(
        &mut self,
        p: &Provision,
        job: &Job,
        owner: &Owner<'_>,
        pools: u64,
        sizes: &[u32],
        now_ms: i64,
    ) -> Arc<Admit> {
        let pass = self.pass;
        if let Some(e) = self.jobs.get_mut(&job.id)
            && e.read.same(job, owner.organization, p.generation, pools)
        {
            e.used = pass;
            return e.admit.clone();
        }
        // Built once: the key is made from it, and a new request is judged with it.
        let ctx = trimmed_request(p, job, owner);
        let text = request_text(p, job, &ctx, pools);
        let admit = match self.requests.get_mut(&text) {
            Some((used, a)) => {
                *used = pass;
                a.clone()
            }
            None => {
                let a = Arc::new(admit_in(p, job, ctx, sizes, now_ms));
                self.requests.insert(text, (pass, a.clone()));
                a
            }
        };
        let read = Read::of(job, owner.organization, p.generation, pools);
        self.jobs.insert(job.id, Entry { read, used: pass, admit: admit.clone() });
        admit
    }
}

/// The request as the policies see it, and the annotations matching reads.
fn request_text(p: &Provision, job: &Job, ctx: &Context, pools: u64) -> String {
    format!("{}|{pools}|{:?}|{:?}", p.generation, ctx.get("request"), job.annotations)
}
