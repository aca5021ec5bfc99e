//! `[[nodes]]` and `[[partitions]]`: the static shape of the cluster.

use serde::Deserialize;
use spur_vocab::hostlist;
use spur_vocab::names::PreemptMode;

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    /// A hostlist: `node[01-32]`.
    pub name: String,
    #[serde(default = "one")]
    pub cpus: u32,
    #[serde(default = "default_mem")]
    pub memory_mb: u64,
    /// `gpu:8`, or empty.
    #[serde(default)]
    pub gres: String,
    #[serde(default)]
    pub features: Vec<String>,
    #[serde(default = "one")]
    pub weight: u32,
}

/// A time in minutes (integer) or Slurm's formats (string), or "UNLIMITED".
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum TimeValue {
    Minutes(u64),
    Text(String),
}

impl TimeValue {
    /// None is unlimited.
    pub fn minutes(&self) -> Result<Option<u64>, String> {
        match self {
            TimeValue::Minutes(m) => Ok(Some(*m)),
            TimeValue::Text(t) => spur_vocab::TimeLimit::parse(t).map(spur_vocab::TimeLimit::minutes),
        }
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PartitionConfig {
    pub name: String,
    /// A hostlist, or `ALL`.
    pub nodes: String,
    #[serde(default)]
    pub default: bool,
    #[serde(default)]
    pub max_time: Option<TimeValue>,
    #[serde(default)]
    pub default_time: Option<TimeValue>,
    #[serde(default = "one")]
    pub priority_tier: u32,
    #[serde(default)]
    pub preempt_mode: PreemptMode,
    /// Seconds.
    #[serde(default)]
    pub preempt_exempt_time: Option<u64>,
    #[serde(default = "up")]
    pub state: String,
}

fn one() -> u32 {
    1
}
fn default_mem() -> u64 {
    1024
}
fn up() -> String {
    spur_vocab::PartitionState::Up.as_str().into()
}

/// Expands and checks the cluster's nodes and partitions; errors name the key.
pub fn validate(nodes: &[NodeConfig], parts: &[PartitionConfig]) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for (i, n) in nodes.iter().enumerate() {
        let names = hostlist::expand(&n.name).map_err(|e| format!("key 'nodes[{i}].name': {e}"))?;
        for name in names {
            if !seen.insert(name.clone()) {
                return Err(format!("key 'nodes[{i}].name': node '{name}' is defined twice"));
            }
        }
        if n.cpus == 0 {
            return Err(format!("key 'nodes[{i}].cpus': must be at least 1"));
        }
        parse_gres(&n.gres).map_err(|e| format!("key 'nodes[{i}].gres': {e}"))?;
    }
    let mut names = std::collections::HashSet::new();
    for (i, p) in parts.iter().enumerate() {
        if !names.insert(p.name.clone()) {
            return Err(format!("key 'partitions[{i}].name': partition '{}' is defined twice", p.name));
        }
        if !p.nodes.eq_ignore_ascii_case("all") {
            for n in hostlist::expand(&p.nodes).map_err(|e| format!("key 'partitions[{i}].nodes': {e}"))? {
                if !seen.contains(&n) {
                    return Err(format!(
                        "key 'partitions[{i}].nodes': node '{n}' is not defined in [[nodes]]"
                    ));
                }
            }
        }
        for (key, v) in [("max_time", &p.max_time), ("default_time", &p.default_time)] {
            if let Some(v) = v {
                v.minutes().map_err(|e| format!("key 'partitions[{i}].{key}': {e}"))?;
            }
        }
        if spur_vocab::PartitionState::parse(&p.state).is_err() {
            return Err(format!(
                "key 'partitions[{i}].state': '{}' is not UP, DOWN, DRAIN or INACTIVE",
                p.state
            ));
        }
    }
    if parts.iter().filter(|p| p.default).count() > 1 {
        return Err("key 'partitions': more than one partition has default = true".into());
    }
    Ok(())
}

/// `controller.dynamic_partitions` names partitions of `[[partitions]]`, each once.
pub fn validate_dynamic(names: &[String], parts: &[PartitionConfig]) -> Result<(), String> {
    for (i, name) in names.iter().enumerate() {
        if !parts.iter().any(|p| &p.name == name) {
            return Err(format!(
                "key 'controller.dynamic_partitions[{i}]': partition '{name}' is not defined in [[partitions]]"
            ));
        }
        if names[..i].contains(name) {
            return Err(format!("key 'controller.dynamic_partitions[{i}]': '{name}' is given twice"));
        }
    }
    Ok(())
}

pub use spur_vocab::dynamic::parse_gres;

#[cfg(test)]
mod tests {
    use super::*;

    fn part(name: &str) -> PartitionConfig {
        let text = format!("name = \"{name}\"\nnodes = \"ALL\"\n");
        toml::from_str(&text).unwrap()
    }

    #[test]
    fn dynamic_partitions_name_configured_partitions_once() {
        let parts = [part("batch"), part("gpu")];
        assert_eq!(validate_dynamic(&["gpu".into(), "batch".into()], &parts), Ok(()));
        let e = validate_dynamic(&["batch".into(), "nope".into()], &parts).unwrap_err();
        assert!(e.starts_with("key 'controller.dynamic_partitions[1]'") && e.contains("nope"), "{e}");
        let e = validate_dynamic(&["gpu".into(), "gpu".into()], &parts).unwrap_err();
        assert!(e.contains("given twice"), "{e}");
    }
}
