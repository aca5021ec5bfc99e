//! Node provisioner definitions (spec: fuzzball-provisioners.md): the
//! central config, static pools matched by conditions on nodes' facts, and
//! which definitions admit a job (policy, annotations).
//!
//! - `spec`: provisioners.yaml parsed and checked; memory sizes; the saturating allocation TTL.
//! - `lang`: conditions and policies compiled once (expr-lang) and their environments.
//! - [`refusal`]: why a definition refused a job (plain data, a leaf).
//! - `matcher`: scheduler annotation matching and its built-in matchers.
//! - `admit`: a job's verdict per definition, with the request trimmed to what policies name.
//! - `cache`: verdicts kept across passes, judged again only when what they read changed.
//!
//! The pass (`pass.rs`) places a job only on nodes of its candidate
//! definitions, cheapest first; nodes in no definition serve jobs with no
//! annotation to match.

mod admit;
mod cache;
mod lang;
mod matcher;
pub mod refusal;
mod spec;

pub use admit::{Admit, Owner, Refusal, Why, admit, policy_words, request_context, trimmed_request};
pub use cache::{AdmitCache, Admits, IdHasher};
pub use lang::{Compiled, facts_context, with_now};
pub use matcher::{Matcher, PLATFORM_KEYS, first_mismatch};
pub use spec::{allocation_ttl, parse, parse_memory};

use crate::Snapshot;
use crate::model::HostFacts;
use serde::Deserialize;
use spur_vocab::time::Seconds;
use std::collections::{BTreeMap, BTreeSet};

/// A pool is a node's membership set as indexes; more definitions than this is a config error.
pub const MAX_DEFINITIONS: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Static,
    Aws,
    Slurm,
    Pbs,
    Coreweave,
}

impl Backend {
    pub fn parse(s: &str) -> Option<Backend> {
        Some(match s.trim() {
            "static" => Backend::Static,
            "aws" => Backend::Aws,
            "slurm" => Backend::Slurm,
            "pbs" => Backend::Pbs,
            "coreweave" => Backend::Coreweave,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Static => "static",
            Backend::Aws => "aws",
            Backend::Slurm => "slurm",
            Backend::Pbs => "pbs",
            Backend::Coreweave => "coreweave",
        }
    }
}

/// How a definition's nodes are shared; a node in several takes the strictest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Exclusive {
    #[default]
    None,
    Workflow,
    Job,
}

impl Exclusive {
    pub fn as_str(self) -> &'static str {
        match self {
            Exclusive::None => "none",
            Exclusive::Job => "job",
            Exclusive::Workflow => "workflow",
        }
    }
}

#[derive(Debug, PartialEq)]
pub struct Definition {
    pub id: String,
    pub backend: Backend,
    pub annotations: Vec<(String, String)>,
    pub policy: Option<Compiled>,
    /// Static only (required there).
    pub condition: Option<Compiled>,
    pub ttl: u32,
    pub ttl_buffer: u32,
    pub exclusive: Exclusive,
    pub cost: f64,
    pub max_nodes: Option<u32>,
    /// provisionerSpec's other keys, as written.
    pub spec: Vec<(String, String)>,
    /// `cpu` and `memory` (in MB), parsed at load: the node a dynamic
    /// definition asks for (required for `slurm`).
    pub node_shape: Option<(u32, u64)>,
}

impl Definition {
    /// Whether a static definition's condition holds for a node.
    pub fn holds(&self, node: &str, facts: &HostFacts) -> Result<bool, String> {
        match (&self.condition, self.backend) {
            (Some(c), Backend::Static) => c.truth(&facts_context(node, facts)),
            _ => Ok(false),
        }
    }
}

/// provisioners.yaml's `scheduler` block; `[scheduler]` takes what it sets.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SchedulerBlock {
    pub queue_depth: Option<u64>,
    pub interval: Option<Seconds>,
    pub priority: Option<String>,
    pub preemption_enabled: Option<bool>,
    pub preemption_threshold: Option<f64>,
    pub preemption_gap: Option<f64>,
    pub min_preemption_runtime: Option<Seconds>,
    pub preemption_multi_victim_enabled: Option<bool>,
    pub max_evictions_per_tick: Option<u32>,
    pub preemption_drain_timeout: Option<Seconds>,
    pub backfill_enabled: Option<bool>,
    /// Accepted and unused: Spur has no internal jobs.
    pub internal_job_release_estimate: Option<Seconds>,
    #[serde(default)]
    pub ignored_annotations: Vec<String>,
}

/// The loaded central config.
#[derive(Debug, PartialEq, Default)]
pub struct Provision {
    pub defs: Vec<Definition>,
    pub node_annotations: Vec<(String, String)>,
    pub software_tokens: BTreeMap<String, u32>,
    pub scheduler: SchedulerBlock,
    pub ignored: BTreeSet<String>,
    /// Changes with every load, so cached verdicts of the last config are not reused.
    pub generation: u64,
    /// The cluster's name (`request.owner.cluster_id`), set by the controller.
    pub cluster: String,
    /// The controller's offset from UTC in seconds, for `time.Now()`.
    pub utc_offset_secs: i32,
    /// `scheduler.priority`, compiled.
    pub priority: Option<Compiled>,
    /// The words the policies use ([`admit::policy_words`]); None keeps the whole request.
    pub policy_words: Option<std::collections::HashSet<String>>,
    /// Dynamic backends the controller has a driver for (`slurm` with
    /// `[upstream.slurm]`); the others' definitions refuse with `NoDriver`.
    pub drivers: Vec<Backend>,
}

impl Provision {
    pub fn index(&self, id: &str) -> Option<u16> {
        self.defs.iter().position(|d| d.id == id).map(|i| i as u16)
    }

    /// Whether `d` admits jobs: static, or a dynamic backend with a driver.
    pub fn drives(&self, d: &Definition) -> bool {
        d.backend != Backend::Static && self.drivers.contains(&d.backend)
    }

    /// A node's cost: the lowest `costPerHour` of its definitions (0 with none).
    pub fn node_cost(&self, defs: &[u16]) -> f64 {
        defs.iter().filter_map(|d| self.defs.get(*d as usize)).map(|d| d.cost).reduce(f64::min).unwrap_or(0.0)
    }

    /// The strictest sharing of a node's definitions.
    pub fn node_exclusive(&self, defs: &[u16]) -> Exclusive {
        defs.iter().filter_map(|d| self.defs.get(*d as usize)).map(|d| d.exclusive).max().unwrap_or_default()
    }

    /// `scheduler.priority` for a pending job, None when unset or when it
    /// fails to evaluate (the job then keeps its multifactor value).
    pub fn order_value(
        &self,
        job: &crate::job::Job,
        qos: Option<&crate::model::Qos>,
        catalog: &crate::catalog::Catalog,
        f: &crate::priority::PriorityFactors,
        now_ms: i64,
    ) -> Option<f64> {
        let expr = self.priority.as_ref()?;
        let ctx = priority_context(job, qos, catalog, f, now_ms);
        match expr.value(&ctx).ok()? {
            expr::Value::Integer(i) => Some(i as f64),
            expr::Value::Float(x) if x.is_finite() => Some(x),
            _ => None,
        }
    }

    pub(crate) fn reads_clock(&self) -> bool {
        self.defs.iter().any(|d| d.policy.as_ref().is_some_and(|c| c.reads_clock))
    }
}

/// The organization of a job's account (`request.owner.organization_id`), empty when none.
pub fn organization<'c>(catalog: &'c crate::catalog::Catalog, job: &crate::job::Job) -> &'c str {
    job.account.as_deref().and_then(|a| catalog.accounts.get(a)).map_or("", |a| a.organization.as_str())
}

/// Each definition's usable nodes (up, in service), its `definition.nodes`.
pub fn pool_sizes(p: &Provision, snap: &Snapshot) -> Vec<u32> {
    let mut sizes = vec![0u32; p.defs.len()];
    for n in snap.nodes.iter().filter(|n| n.schedulable) {
        for d in &n.definitions {
            if let Some(s) = sizes.get_mut(*d as usize) {
                *s += 1;
            }
        }
    }
    sizes
}

/// Fills `snap.admits` for every pending job from the cache, evaluating only
/// what changed. A pass works without it (it evaluates inline), but slower.
pub fn prepare(snap: &mut Snapshot, cache: &mut AdmitCache, now_ms: i64) {
    snap.admits.clear();
    let Some(p) = snap.provision.clone() else { return };
    cache.begin();
    let sizes = pool_sizes(&p, snap);
    let mut pools = pools_key(&p, &sizes);
    if p.reads_clock() {
        // A clock-reading policy is evaluated again each minute.
        pools ^= (now_ms / 60_000) as u64;
    }
    let catalog = snap.catalog.clone();
    let reads_org = p.policy_words.as_ref().is_none_or(|w| w.contains("organization_id"));
    for job in snap.jobs.iter().filter(|j| j.is_pending()) {
        let org = if reads_org { organization(&catalog, job) } else { "" };
        let owner = Owner { organization: org, cluster: &p.cluster };
        let a = cache.get(&p, job, &owner, pools, &sizes, now_ms);
        snap.admits.insert(job.id, a);
    }
}

/// The part of a verdict's key the pools give: their sizes, when a policy reads `definition.*`.
pub fn pools_key(p: &Provision, pool: &[u32]) -> u64 {
    let mut h = IdHasher::default();
    for (d, n) in p.defs.iter().zip(pool) {
        if d.policy.as_ref().is_some_and(|c| c.reads_definition) {
            std::hash::Hasher::write_u64(&mut h, u64::from(*n));
        }
    }
    std::hash::Hasher::finish(&h)
}

/// `scheduler.priority`'s inputs (docs/src/admin/provisioners.md).
/// Spur keeps no organization, account or user priority: those are 0;
/// `workflow.priority` is `-nice`, as the spec's workflow priority is signed and at most 0.
pub fn priority_context(
    job: &crate::job::Job,
    qos: Option<&crate::model::Qos>,
    catalog: &crate::catalog::Catalog,
    f: &crate::priority::PriorityFactors,
    now_ms: i64,
) -> expr::Context {
    use expr::Value::{Float, Integer, String as Text};
    let m =
        |pairs: Vec<(&str, expr::Value)>| lang::value_map(pairs.into_iter().map(|(k, v)| (k.to_string(), v)));
    let account = job.account.as_deref().unwrap_or("");
    let org = organization(catalog, job);
    let hours = now_ms.saturating_sub(job.submit_ms).max(0) as f64 / 3_600_000.0;
    let mut ctx = expr::Context::default();
    ctx.insert("organization", m(vec![("name", Text(org.into())), ("priority", Integer(0))]));
    ctx.insert("account", m(vec![("name", Text(account.into())), ("priority", Integer(0))]));
    ctx.insert("user", m(vec![("name", Text(job.user.clone())), ("priority", Integer(0))]));
    ctx.insert("workflow", m(vec![("priority", Integer(-i64::from(job.nice)))]));
    ctx.insert(
        "qos",
        m(vec![
            ("name", Text(qos.map(|q| q.name.clone()).unwrap_or_default())),
            ("priority", Integer(qos.map_or(0, |q| q.priority))),
        ]),
    );
    let explicit = job.priority.map_or(0, |p| i64::try_from(p).unwrap_or(i64::MAX));
    ctx.insert(
        "job",
        m(vec![
            ("id", Integer(job.id as i64)),
            ("priority", Integer(explicit)),
            ("nice", Integer(job.nice.into())),
        ]),
    );
    ctx.insert("age", Float(hours));
    ctx.insert("fairshare", Float(f.fair_share));
    ctx.insert("partition", m(vec![("name", Text(job.partition.clone())), ("tier", Integer(f.tier.into()))]));
    ctx.insert("multifactor", Float(f.effective));
    ctx
}

/// The top-level names [`priority_context`] sets.
const PRIORITY_INPUTS: [&str; 10] = [
    "organization",
    "account",
    "user",
    "workflow",
    "qos",
    "job",
    "age",
    "fairshare",
    "partition",
    "multifactor",
];

/// A priority context's values as `a.b=value` pairs, sorted, for explanations.
pub fn flatten(ctx: &expr::Context) -> Vec<(String, String)> {
    fn walk(prefix: &str, v: &expr::Value, out: &mut Vec<(String, String)>) {
        match v {
            expr::Value::Map(m) => m.iter().for_each(|(k, v)| walk(&format!("{prefix}{k}."), v, out)),
            other => out.push((prefix.trim_end_matches('.').to_string(), other.to_string())),
        }
    }
    let mut out = vec![];
    for k in PRIORITY_INPUTS {
        if let Some(v) = ctx.get(k) {
            walk(&format!("{k}."), v, &mut out);
        }
    }
    out.sort();
    out
}
