//! Which definitions admit a job: each definition's policy on the job's
//! request, then scheduler annotation matching. Verdicts depend only on the
//! request and (for policies reading `definition.*`) the pools' sizes, so
//! the cache (`cache.rs`) keeps them across passes.

use super::lang::value_map;
use super::matcher::{first_mismatch, needs_match};
pub use super::refusal::{Refusal, Why};
use super::{Backend, Provision};
use crate::job::Job;
use expr::{Context, Value};

/// One job's verdicts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Admit {
    /// Definitions (indexes into [`Provision::defs`]) whose policy and annotations admit the job.
    pub candidates: Vec<u16>,
    /// The job has annotations to match, so nodes in no definition cannot serve it.
    pub needs_definition: bool,
    pub refusals: Vec<Refusal>,
}

/// What the policy environment needs beyond the job.
pub struct Owner<'a> {
    pub organization: &'a str,
    pub cluster: &'a str,
}

/// `request.*` for a job (spec: "Available Policy Variables"). Cores, memory
/// and devices are per node, as a node provisioner sees an allocation.
pub fn request_context(job: &Job, owner: &Owner<'_>) -> Context {
    let mut ctx = Context::default();
    ctx.insert("request", request_value(job, owner));
    ctx
}

fn request_value(job: &Job, owner: &Owner<'_>) -> Value {
    let s = |v: &str| Value::String(v.to_string());
    let int = |v: u64| Value::Integer(i64::try_from(v).unwrap_or(i64::MAX));
    let shape = job.shape();
    let account = job.account.as_deref().unwrap_or("");
    let owner = value_map([
        ("id".into(), s(&job.user)),
        ("organization_id".into(), s(owner.organization)),
        ("email".into(), s(&job.email)),
        ("cluster_id".into(), s(owner.cluster)),
        ("account_id".into(), s(account)),
    ]);
    let annotations = value_map(job.annotations.iter().map(|(k, v)| (k.clone(), s(v))));
    let cpu = value_map([
        ("affinity".into(), s("none")),
        ("cores".into(), int(u64::from(shape.cpus))),
        ("threads".into(), Value::Bool(false)),
        ("sockets".into(), int(0)),
    ]);
    let mem = value_map([
        ("bytes".into(), int(shape.mem_mb.saturating_mul(1 << 20))),
        ("by_core".into(), Value::Bool(false)),
    ]);
    let devices = value_map([("nvidia.com/gpu".into(), int(shape.gpus))]);
    let resource = value_map([
        ("cpu".into(), cpu),
        ("mem".into(), mem),
        ("devices".into(), devices),
        ("exclusive".into(), Value::Bool(job.exclusive)),
    ]);
    let nodes = job.nodes();
    let concurrency = job.array.map_or(0, |a| if a.throttle > 0 { u64::from(a.throttle) } else { a.pending });
    value_map([
        ("owner".into(), owner),
        ("job_kind".into(), s("job")),
        ("job_ttl".into(), int(job.time_limit.unwrap_or(0).saturating_mul(60))),
        ("job_annotations".into(), annotations),
        ("multinode_job".into(), Value::Bool(nodes > 1)),
        ("multinode_nodes".into(), int(if nodes > 1 { u64::from(nodes) } else { 0 })),
        ("task_array_job".into(), Value::Bool(job.array.is_some())),
        ("task_array_concurrency".into(), int(concurrency)),
        ("job_resource".into(), resource),
    ])
}

/// The words the policies use, when every use of `request` can be seen in
/// them: the evaluator copies a map each time an expression names it, so a
/// request trimmed to what is read costs a fraction to judge. None: keep all.
pub fn policy_words<'a>(sources: impl Iterator<Item = &'a str>) -> Option<std::collections::HashSet<String>> {
    let mut words = std::collections::HashSet::new();
    for src in sources {
        if src.contains("$env") || src.contains("request[") || src.contains("request?.[") {
            return None;
        }
        words.extend(src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map(str::to_string));
    }
    Some(words)
}

/// Drops the request's keys no policy names, at every level but the
/// annotations and devices (whose keys are the user's, not the request's).
fn prune(v: &mut Value, words: &std::collections::HashSet<String>) {
    if let Value::Map(m) = v {
        m.retain(|k, _| words.contains(k));
        for (k, child) in m.iter_mut() {
            if k != "job_annotations" && k != "devices" {
                prune(child, words);
            }
        }
    }
}

/// `request.*` with only what the policies name (all of it when that cannot be seen).
pub fn trimmed_request(p: &Provision, job: &Job, owner: &Owner<'_>) -> Context {
    let mut request = request_value(job, owner);
    if let Some(words) = &p.policy_words {
        prune(&mut request, words);
    }
    let mut ctx = Context::default();
    ctx.insert("request", request);
    ctx
}

/// Every definition's verdict on one job. `pool` is each definition's usable
/// node count (its `definition.nodes`).
pub fn admit(p: &Provision, job: &Job, owner: &Owner<'_>, pool: &[u32], now_ms: i64) -> Admit {
    admit_in(p, job, trimmed_request(p, job, owner), pool, now_ms)
}

/// [`admit`] with the job's request already built ([`trimmed_request`]).
pub fn admit_in(p: &Provision, job: &Job, mut ctx: Context, pool: &[u32], now_ms: i64) -> Admit {
    if p.reads_clock() {
        super::lang::with_now(&mut ctx, now_ms, p.utc_offset_secs);
    }
    let mut out = Admit { needs_definition: needs_match(&job.annotations, &p.ignored), ..Admit::default() };
    for (i, d) in p.defs.iter().enumerate() {
        let refuse = |why| Refusal { definition: d.id.clone(), why };
        if d.backend != Backend::Static && !p.drives(d) {
            out.refusals.push(refuse(Why::NoDriver { backend: d.backend.as_str() }));
            continue;
        }
        if let Some(policy) = &d.policy {
            let nodes = pool.get(i).copied().unwrap_or(0);
            let max = d.max_nodes.unwrap_or(u32::MAX);
            ctx.insert(
                "definition",
                value_map([
                    ("nodes".into(), Value::Integer(i64::from(nodes.min(max)))),
                    ("max_nodes".into(), Value::Integer(i64::from(max))),
                ]),
            );
            match policy.truth(&ctx) {
                Ok(true) => {}
                Ok(false) => {
                    out.refusals.push(refuse(Why::Policy { expr: policy.source.clone() }));
                    continue;
                }
                Err(error) => {
                    out.refusals.push(refuse(Why::PolicyError { expr: policy.source.clone(), error }));
                    continue;
                }
            }
        }
        if let Some((key, wanted, had, m)) = first_mismatch(&job.annotations, &d.annotations, &p.ignored) {
            let why = Why::Annotation {
                key: key.into(),
                wanted: wanted.into(),
                had: had.map(str::to_string),
                matcher: m.as_str(),
            };
            out.refusals.push(refuse(why));
            continue;
        }
        out.candidates.push(i as u16);
    }
    out
}
