//! provisioners.yaml (Fuzzball's central config) parsed and checked: every
//! error names the definition and the key; the caller adds the file name.

use super::lang::Compiled;
use super::{Backend, Definition, Exclusive, Provision, SchedulerBlock};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};

/// A YAML scalar kept as text: annotations may be written `count: 4`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum Scalar {
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    pub fn text(&self) -> String {
        match self {
            Scalar::Text(t) => t.clone(),
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawFile {
    #[serde(default)]
    node_annotations: BTreeMap<String, Scalar>,
    #[serde(default)]
    software_tokens: BTreeMap<String, u32>,
    #[serde(default)]
    scheduler: SchedulerBlock,
    #[serde(default)]
    definitions: Vec<RawDefinition>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawDefinition {
    id: Option<String>,
    #[serde(default)]
    annotations: BTreeMap<String, Scalar>,
    provisioner: Option<String>,
    policy: Option<String>,
    ttl: Option<i64>,
    ttl_buffer: Option<i64>,
    exclusive: Option<String>,
    max_nodes: Option<i64>,
    provisioner_spec: Option<BTreeMap<String, serde_yaml_ng::Value>>,
}

/// The provisionerSpec keys of each backend: (key, required).
fn spec_keys(b: Backend) -> &'static [(&'static str, bool)] {
    match b {
        Backend::Static => &[("condition", true), ("costPerHour", false)],
        Backend::Aws => &[("instanceType", true), ("spot", false)],
        Backend::Slurm => &[("costPerHour", false), ("cpu", true), ("memory", true), ("partition", true)],
        Backend::Pbs => {
            &[("cpu", true), ("memory", true), ("gpus", false), ("queue", true), ("costPerHour", false)]
        }
        Backend::Coreweave => &[("instanceType", true), ("costPerHour", false)],
    }
}

/// The one placeholder a definition id may hold (aws wildcards expand into it).
const INSTANCE_TYPE: &str = "${spec.instanceType}";

/// Parses and checks provisioners.yaml. `generation` tells passes a reload from the last one.
pub fn parse(text: &str, generation: u64) -> Result<Provision, String> {
    let raw: RawFile = match serde_yaml_ng::from_str::<Option<RawFile>>(text) {
        Ok(Some(r)) => r,
        Ok(None) => RawFile {
            node_annotations: BTreeMap::new(),
            software_tokens: BTreeMap::new(),
            scheduler: SchedulerBlock::default(),
            definitions: vec![],
        },
        Err(e) => return Err(e.to_string()),
    };
    let ignored: BTreeSet<String> = raw.scheduler.ignored_annotations.iter().cloned().collect();
    let priority = match raw.scheduler.priority.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) => Some(Compiled::new(p).map_err(|e| format!("key 'scheduler.priority': {e}"))?),
        None => None,
    };
    let mut defs = Vec::with_capacity(raw.definitions.len());
    let mut seen = BTreeSet::new();
    for (i, d) in raw.definitions.into_iter().enumerate() {
        let def = definition(d).map_err(|e| format!("definition {} {e}", i + 1))?;
        if !seen.insert(def.id.clone()) {
            return Err(format!(
                "definition {} ('{}'): key 'id': '{}' is defined twice",
                i + 1,
                def.id,
                def.id
            ));
        }
        defs.push(def);
    }
    if defs.len() > super::MAX_DEFINITIONS {
        return Err(format!(
            "key 'definitions': {} definitions; at most {}",
            defs.len(),
            super::MAX_DEFINITIONS
        ));
    }
    let policy_words =
        super::admit::policy_words(defs.iter().filter_map(|d| d.policy.as_ref()).map(|c| c.source.as_str()));
    let node_annotations = raw.node_annotations.iter().map(|(k, v)| (k.clone(), v.text())).collect();
    Ok(Provision {
        defs,
        node_annotations,
        software_tokens: raw.software_tokens,
        scheduler: raw.scheduler,
        ignored,
        generation,
        cluster: String::new(),
        utc_offset_secs: 0,
        priority,
        policy_words,
        drivers: vec![],
    })
}

fn definition(d: RawDefinition) -> Result<Definition, String> {
    let id = d.id.filter(|s| !s.trim().is_empty()).ok_or("key 'id': required")?;
    let at = |key: &str, msg: String| format!("('{id}'): key '{key}': {msg}");
    let backend = match d.provisioner.as_deref() {
        None => return Err(at("provisioner", "required (static, aws, slurm, pbs, coreweave)".into())),
        Some(p) => Backend::parse(p).ok_or_else(|| {
            at("provisioner", format!("'{p}' is not one of static, aws, slurm, pbs, coreweave"))
        })?,
    };
    let u32_key = |key: &str, v: Option<i64>| -> Result<u32, String> {
        let v = v.unwrap_or(0);
        u32::try_from(v).map_err(|_| at(key, format!("{v} is not from 0 to {}", u32::MAX)))
    };
    let ttl = u32_key("ttl", d.ttl)?;
    let ttl_buffer = u32_key("ttlBuffer", d.ttl_buffer)?;
    match backend {
        Backend::Slurm | Backend::Pbs if ttl == 0 => {
            return Err(at("ttl", format!("required and above 0 for a {} definition", backend.as_str())));
        }
        Backend::Static if ttl != 0 => {
            return Err(at("ttl", "must be 0 or absent for a static definition".into()));
        }
        Backend::Static if ttl_buffer != 0 => {
            return Err(at("ttlBuffer", "must be 0 or absent for a static definition".into()));
        }
        _ => {}
    }
    let exclusive = match d.exclusive.as_deref().map(str::trim) {
        None | Some("") | Some("none") => Exclusive::None,
        Some("job") => Exclusive::Job,
        Some("workflow") => Exclusive::Workflow,
        Some(o) => return Err(at("exclusive", format!("'{o}' is not one of none, job, workflow"))),
    };
    let max_nodes = match d.max_nodes {
        None => None,
        Some(n) => Some(
            u32::try_from(n)
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| at("maxNodes", format!("{n} is not above 0")))?,
        ),
    };
    let policy = match d.policy.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
        None => None,
        Some(p) => Some(Compiled::new(p).map_err(|e| at("policy", e))?),
    };
    let spec = d.provisioner_spec.ok_or_else(|| at("provisionerSpec", "required".into()))?;
    let keys = spec_keys(backend);
    for k in spec.keys() {
        if !keys.iter().any(|(name, _)| name == k) {
            let known: Vec<&str> = keys.iter().map(|k| k.0).collect();
            return Err(at(
                &format!("provisionerSpec.{k}"),
                format!("not a {} key (use {})", backend.as_str(), known.join(", ")),
            ));
        }
    }
    for (k, required) in keys {
        if *required && !spec.contains_key(*k) {
            return Err(at(
                &format!("provisionerSpec.{k}"),
                format!("required for a {} definition", backend.as_str()),
            ));
        }
    }
    let key = |k: &str| format!("provisionerSpec.{k}");
    let text = |k: &str| -> Result<Option<String>, String> {
        match spec.get(k) {
            None => Ok(None),
            Some(serde_yaml_ng::Value::String(s)) => Ok(Some(s.clone())),
            Some(serde_yaml_ng::Value::Number(n)) => Ok(Some(n.to_string())),
            Some(serde_yaml_ng::Value::Bool(b)) => Ok(Some(b.to_string())),
            Some(_) => Err(at(&key(k), "must be a single value".into())),
        }
    };
    let cost = match text("costPerHour")? {
        None => 0.0,
        Some(c) => c
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|c| c.is_finite() && *c >= 0.0)
            .ok_or_else(|| at(&key("costPerHour"), format!("'{c}' is not a number of 0 or more")))?,
    };
    let cpus = match text("cpu")? {
        None => None,
        Some(c) => Some(
            c.trim()
                .parse::<u32>()
                .ok()
                .filter(|c| *c > 0)
                .ok_or_else(|| at(&key("cpu"), format!("'{c}' is not above 0")))?,
        ),
    };
    if let Some(g) = text("gpus")? {
        g.trim().parse::<u32>().map_err(|_| at(&key("gpus"), format!("'{g}' is not 0 or more")))?;
    }
    let mem_mb = match text("memory")? {
        None => None,
        Some(m) => Some(parse_memory(&m).map_err(|e| at(&key("memory"), e))? >> 20),
    };
    if let Some(s) = text("spot")? {
        s.parse::<bool>().map_err(|_| at(&key("spot"), format!("'{s}' is not true or false")))?;
    }
    for k in ["partition", "queue", "instanceType"] {
        if text(k)?.is_some_and(|v| v.trim().is_empty()) {
            return Err(at(&key(k), "must not be empty".into()));
        }
    }
    let condition = match text("condition")? {
        None => None,
        Some(c) => Some(Compiled::new(&c).map_err(|e| at(&key("condition"), e))?),
    };
    let id = resolve_id(&id, backend, text("instanceType")?.as_deref()).map_err(|e| at("id", e))?;
    let annotations = d.annotations.iter().map(|(k, v)| (k.clone(), v.text())).collect();
    let spec = (spec.keys().filter(|k| !matches!(k.as_str(), "condition" | "costPerHour")))
        .map(|k| Ok((k.clone(), text(k)?.unwrap_or_default())))
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Definition {
        id,
        backend,
        annotations,
        policy,
        condition,
        ttl,
        ttl_buffer,
        exclusive,
        cost,
        max_nodes,
        spec,
        node_shape: cpus.zip(mem_mb),
    })
}

/// `${spec.instanceType}` is the only placeholder, for aws and coreweave; a
/// concrete instance type replaces it, a wildcard (`t3.*`) keeps it (this
/// build has no aws catalog to expand it with).
fn resolve_id(id: &str, backend: Backend, instance: Option<&str>) -> Result<String, String> {
    if let Some(start) = id.find("${") {
        let rest = &id[start..];
        if !rest.starts_with(INSTANCE_TYPE) {
            let end = rest.find('}').map_or(rest.len(), |e| e + 1);
            return Err(format!("unknown placeholder '{}' (only {INSTANCE_TYPE})", &rest[..end]));
        }
        if !matches!(backend, Backend::Aws | Backend::Coreweave) {
            return Err(format!("{INSTANCE_TYPE} is for aws and coreweave definitions"));
        }
        if let Some(t) = instance.filter(|t| !t.contains('*')) {
            return Ok(id.replace(INSTANCE_TYPE, t));
        }
        if id[start + INSTANCE_TYPE.len()..].contains("${") {
            return Err(format!("{INSTANCE_TYPE} may appear once"));
        }
    }
    Ok(id.to_string())
}

/// `32GiB`, `512MiB`, `64G`, `1000000` (bytes) into bytes.
pub fn parse_memory(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("'{text}' is not a size like 32GiB"))?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "KB" => 1000,
        "M" | "MB" => 1000u64.pow(2),
        "G" | "GB" => 1000u64.pow(3),
        "T" | "TB" => 1000u64.pow(4),
        "Ki" | "KiB" => 1 << 10,
        "Mi" | "MiB" => 1 << 20,
        "Gi" | "GiB" => 1 << 30,
        "Ti" | "TiB" => 1 << 40,
        u => return Err(format!("'{text}': unknown unit '{u}' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)")),
    };
    if n == 0 {
        return Err(format!("'{text}' must be above 0"));
    }
    n.checked_mul(mult).ok_or_else(|| format!("'{text}' is too large"))
}

/// The TTL a dynamic definition's allocation asks for: `ttl + ttlBuffer × nodes`,
/// saturating at `u32::MAX` rather than wrapping (the spec's rule). Static
/// definitions, a zero TTL or a zero buffer leave the TTL as it is.
pub fn allocation_ttl(def: &Definition, ttl: u32, nodes: u32) -> u32 {
    if def.backend == Backend::Static || ttl == 0 || def.ttl_buffer == 0 {
        return ttl;
    }
    ttl.saturating_add(def.ttl_buffer.saturating_mul(nodes))
}
