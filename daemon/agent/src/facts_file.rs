//! `spurd --facts FILE`: facts for some of this agent's nodes over the
//! host's, so one host can stand in for a cluster of different machines
//! when testing provisioner conditions. A YAML list of entries:
//!
//! ```yaml
//! - nodes: gpu[01-02]
//!   facts:
//!     cpuinfo.cpu_cores: 64
//!     cpuinfo.vendor_id: AuthenticAMD
//!   modaliases:
//!     - "pci:v000010DEd00002330sv000010DEsd00001626bc03sc02i00"
//! ```
//!
//! Checked whole at startup, every error naming the file, the entry and the
//! key: a typo found only when a condition fails to match costs far more.

use super::facts::keys;
use serde::Deserialize;
use serde_yaml_ng::Value;
use spur_proto::v1 as pb;
use spur_sched::model::NUMERIC_FACTS;
use spur_sched::model::{MAX_MODALIASES, MAX_OVERRIDES, MAX_TEXT};
use spur_vocab::hostlist;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    nodes: String,
    #[serde(default)]
    facts: BTreeMap<String, Value>,
    /// Absent keeps the host's list; present (even empty) replaces it.
    #[serde(default)]
    modaliases: Option<Vec<String>>,
}

/// Reads and checks the facts file for an agent hosting `hosted`.
pub fn load(path: &Path, hosted: &[String]) -> Result<Vec<pb::FactsOverride>, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    parse(&text, hosted).map_err(|e| format!("{shown}: {e}"))
}

/// The overrides of a facts file's text, in order; errors name the entry
/// (from 1) and the key, and leave the file's name to the caller.
pub fn parse(text: &str, hosted: &[String]) -> Result<Vec<pb::FactsOverride>, String> {
    // Entries one at a time, so a shape error names its entry.
    let raw: Vec<Value> = serde_yaml_ng::from_str::<Option<Vec<Value>>>(text)
        .map_err(|e| format!("not a list of entries (- nodes: ..., facts: ...): {e}"))?
        .unwrap_or_default();
    if raw.len() > MAX_OVERRIDES {
        return Err(format!("{} entries; at most {MAX_OVERRIDES}", raw.len()));
    }
    let hosts: HashSet<&str> = hosted.iter().map(String::as_str).collect();
    raw.into_iter()
        .enumerate()
        .map(|(i, v)| entry(v, &hosts, hosted).map_err(|e| format!("entry {}: {e}", i + 1)))
        .collect()
}

fn entry(v: Value, hosts: &HashSet<&str>, hosted: &[String]) -> Result<pb::FactsOverride, String> {
    let e: Entry = serde_yaml_ng::from_value(v).map_err(|e| e.to_string())?;
    let names = hostlist::expand(&e.nodes).map_err(|err| format!("nodes: {err}"))?;
    if let Some(stray) = names.iter().find(|n| !hosts.contains(n.as_str())) {
        let ours = hostlist::compress(hosted);
        return Err(format!("nodes: '{stray}' is not a node of this spurd (--nodes {ours})"));
    }
    let mut values = std::collections::HashMap::new();
    for (key, v) in e.facts {
        let at = |what: String| format!("facts: {key}: {what}");
        if !keys().any(|k| k == key) {
            let all: Vec<&str> = keys().collect();
            return Err(at(format!("not a fact spurd knows; the facts are {}", all.join(", "))));
        }
        let text = scalar(&v).map_err(at)?;
        if NUMERIC_FACTS.contains(&key.as_str()) && text.parse::<u64>().is_err() {
            return Err(at(format!("'{text}' is not a whole number")));
        }
        if text.len() > MAX_TEXT {
            return Err(at(format!("longer than {MAX_TEXT} bytes")));
        }
        values.insert(key, text);
    }
    let has_modaliases = e.modaliases.is_some();
    let modaliases = e.modaliases.unwrap_or_default();
    if modaliases.len() > MAX_MODALIASES {
        return Err(format!("modaliases: {} of them; at most {MAX_MODALIASES}", modaliases.len()));
    }
    if let Some(long) = modaliases.iter().position(|m| m.len() > MAX_TEXT) {
        return Err(format!("modaliases: item {} is longer than {MAX_TEXT} bytes", long + 1));
    }
    Ok(pb::FactsOverride { nodes: e.nodes, values, modaliases, has_modaliases })
}

/// A fact's value as text: YAML strings, numbers and booleans are all
/// scalars a condition can read, `0xf0` already an integer.
fn scalar(v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Null => Err("has no value (write '' for an empty one)".into()),
        Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => {
            Err("not a scalar (give a string or a number)".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosted() -> Vec<String> {
        hostlist::expand("gpu[01-02],mem01").unwrap()
    }

    fn err(text: &str) -> String {
        parse(text, &hosted()).unwrap_err()
    }

    #[test]
    fn the_documented_file_parses_to_overrides_in_order() {
        let text = r#"
- nodes: gpu[01-02]
  facts:
    cpuinfo.cpu_cores: 64
    cpuinfo.vendor_id: AuthenticAMD
    cpuinfo.microcode: 0xf0
  modaliases:
    - "pci:v000010DEd00002330sv000010DEsd00001626bc03sc02i00"
- nodes: mem01
  facts: {cpuinfo.cpu_cores: 128, osrelease.version_id: "9.3", uname.domainname: ''}
"#;
        let o = parse(text, &hosted()).unwrap();
        assert_eq!(o.len(), 2);
        assert_eq!(o[0].nodes, "gpu[01-02]");
        assert_eq!(o[0].values["cpuinfo.cpu_cores"], "64");
        assert_eq!(o[0].values["cpuinfo.vendor_id"], "AuthenticAMD");
        assert_eq!(o[0].values["cpuinfo.microcode"], "240", "a YAML hex integer, stored in decimal");
        assert!(o[0].has_modaliases);
        assert_eq!(o[0].modaliases, ["pci:v000010DEd00002330sv000010DEsd00001626bc03sc02i00"]);
        assert_eq!(o[1].values["cpuinfo.cpu_cores"], "128");
        assert_eq!(o[1].values["osrelease.version_id"], "9.3");
        assert_eq!(o[1].values["uname.domainname"], "");
        assert!(!o[1].has_modaliases, "absent keeps the host's");
        assert!(parse("- nodes: mem01\n  modaliases: []\n", &hosted()).unwrap()[0].has_modaliases);
        assert!(parse("", &hosted()).unwrap().is_empty());
        assert!(parse("# nothing yet\n", &hosted()).unwrap().is_empty());
    }

    #[test]
    fn errors_name_the_entry_and_the_key() {
        let e = err("- nodes: mem01\n- nodes: gpu01\n  facts: {cpuinfo.cores: 4}\n");
        assert!(e.starts_with(
            "entry 2: facts: cpuinfo.cores: not a fact spurd knows; the facts are uname.sysname,"
        ));
        let e = err("- nodes: gpu[01-\n");
        assert!(e.starts_with("entry 1: nodes: 'gpu[01-' has an unclosed '['"), "{e}");
        let e = err("- nodes: gpu[01-03]\n");
        assert_eq!(e, "entry 1: nodes: 'gpu03' is not a node of this spurd (--nodes gpu[01-02],mem01)");
        let e = err("- nodes: mem01\n  facts: {cpuinfo.vendor_id: [a, b]}\n");
        assert_eq!(e, "entry 1: facts: cpuinfo.vendor_id: not a scalar (give a string or a number)");
        let e = err("- nodes: mem01\n  facts: {uname.release: }\n");
        assert!(e.starts_with("entry 1: facts: uname.release: has no value"), "{e}");
        let e = err("- nodes: mem01\n  facts: {cpuinfo.cpu_cores: many}\n");
        assert_eq!(e, "entry 1: facts: cpuinfo.cpu_cores: 'many' is not a whole number");
        let e = err("- nodes: mem01\n  fact: {}\n");
        assert!(e.starts_with("entry 1: unknown field `fact`"), "{e}");
        let e = err("- facts: {}\n");
        assert!(e.starts_with("entry 1: missing field `nodes`"), "{e}");
        assert!(err("nodes: mem01\n").starts_with("not a list of entries"));
    }

    #[test]
    fn load_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("facts.yaml");
        std::fs::write(&path, "- nodes: mem01\n  facts: {bogus.key: 1}\n").unwrap();
        let e = load(&path, &hosted()).unwrap_err();
        assert!(e.starts_with(&format!("{}: entry 1: facts: bogus.key:", path.display())), "{e}");
        let e = load(&dir.path().join("absent.yaml"), &hosted()).unwrap_err();
        assert!(e.contains("absent.yaml: No such file"), "{e}");
    }
}
