//! resources.yaml: the hierarchical resources (HRES), parsed into
//! [`HresResource`]s and validated so that every error names the file, the
//! resource and the layer; the scheduler may then trust the shape (unique
//! layers, Mode 3 a rooted tree of uniform depth with nodes on leaves only).

use crate::model::{HresLayer, HresMode, HresPlugin, HresResource, INFINITE};
use serde::Deserialize;
use spur_vocab::hostlist;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResource {
    resource: String,
    mode: String,
    #[serde(default)]
    topology: Option<String>,
    #[serde(default)]
    variables: Vec<NameValue>,
    #[serde(default)]
    disable_hres: bool,
    #[serde(default)]
    plugin: Option<RawPlugin>,
    #[serde(default)]
    layers: Vec<RawLayer>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlugin {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    config: Vec<RawConfig>,
    #[serde(default)]
    maintenance_cycle: Option<i64>,
    #[serde(default)]
    maintenance_timeout: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    name: String,
    value: serde_yaml_ng::Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLayer {
    layer_name: String,
    #[serde(default)]
    parent_name: Option<String>,
    #[serde(default)]
    nodes: Vec<String>,
    #[serde(default)]
    count: i64,
    #[serde(default)]
    base: Vec<NameValue>,
    #[serde(default)]
    disable_layer: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NameValue {
    name: String,
    value: i64,
}

/// Parses and validates resources.yaml. `licenses` are the plain license
/// names (a resource may not reuse one); `cluster` the configured nodes, when
/// the cluster lists them. Errors do not repeat the file name; the caller adds it.
pub fn parse(
    text: &str,
    licenses: &BTreeMap<String, u32>,
    cluster: Option<&BTreeSet<String>>,
) -> Result<Vec<HresResource>, String> {
    let raw: Vec<RawResource> = match serde_yaml_ng::from_str::<Option<Vec<RawResource>>>(text) {
        Ok(r) => r.unwrap_or_default(),
        Err(e) => return Err(e.to_string()),
    };
    let mut out: Vec<HresResource> = vec![];
    for (i, r) in raw.into_iter().enumerate() {
        let name = r.resource.trim().to_string();
        let at = format!("resource '{name}'");
        if name.is_empty() || name.contains([':', ',', '(', '[']) || name.contains(char::is_whitespace) {
            return Err(format!("resource #{}: name '{name}' is empty or has : , ( [ or spaces", i + 1));
        }
        if out.iter().any(|o| o.name == name) {
            return Err(format!("{at}: defined twice"));
        }
        if licenses.contains_key(&name) {
            return Err(format!("{at}: clashes with the license of the same name in spur.conf [licenses]"));
        }
        let mode = HresMode::parse(r.mode.trim())
            .ok_or_else(|| format!("{at}: mode '{}' is not MODE_1, MODE_2 or MODE_3", r.mode))?;
        if r.layers.is_empty() {
            return Err(format!("{at}: has no layers"));
        }
        let mut layers: Vec<HresLayer> = vec![];
        for l in r.layers {
            let lname = l.layer_name.trim().to_string();
            let lat = format!("{at}, layer '{lname}'");
            if lname.is_empty() || lname.contains([':', ',', '(', ')', '*']) {
                return Err(format!("{at}: layer name '{lname}' is empty or has : , ( ) or *"));
            }
            if layers.iter().any(|o| o.name == lname) {
                return Err(format!("{lat}: layer name used twice"));
            }
            if l.count < INFINITE {
                return Err(format!("{lat}: count {} is neither -1 (infinite) nor 0 or more", l.count));
            }
            if mode != HresMode::Three && l.parent_name.is_some() {
                return Err(format!("{lat}: parent_name is only for MODE_3"));
            }
            let mut nodes = vec![];
            for h in &l.nodes {
                // Against a known cluster, no list may name more hosts, or longer names, than it has.
                let names = match cluster {
                    Some(c) => {
                        hostlist::expand_bounded(h, c.len(), c.iter().map(String::len).max().unwrap_or(0))
                    }
                    None => hostlist::expand(h),
                };
                nodes.extend(names.map_err(|e| format!("{lat}: nodes '{h}': {e}"))?);
            }
            nodes.sort();
            nodes.dedup();
            if let Some(bad) = cluster.and_then(|c| nodes.iter().find(|n| !c.contains(*n))) {
                return Err(format!("{lat}: node '{bad}' is not a node of the cluster"));
            }
            let mut base = vec![];
            for b in l.base {
                let v =
                    u64::try_from(b.value).map_err(|_| format!("{lat}: base '{}' is negative", b.name))?;
                if base.iter().any(|(n, _): &(String, u64)| *n == b.name) {
                    return Err(format!("{lat}: base '{}' given twice", b.name));
                }
                base.push((b.name, v));
            }
            layers.push(HresLayer {
                name: lname,
                parent: l.parent_name.map(|p| p.trim().to_string()),
                nodes,
                count: l.count,
                base,
                base_usage: 0,
                disabled: l.disable_layer,
            });
        }
        let variables = r.variables.into_iter().map(|v| (v.name, v.value)).collect();
        let plugin = r.plugin.map(|p| plugin(&at, p)).transpose()?;
        let mut res = HresResource {
            name,
            mode,
            topology: r.topology,
            variables,
            disabled: r.disable_hres,
            layers,
            plugin,
        };
        if mode == HresMode::Three {
            check_tree(&res)?;
        }
        res.derive();
        for l in &res.layers {
            if l.count != INFINITE && l.base_usage > l.count as u64 {
                return Err(format!(
                    "resource '{}', layer '{}': base usage {} is above count {}",
                    res.name, l.name, l.base_usage, l.count
                ));
            }
        }
        out.push(res);
    }
    Ok(out)
}

/// The plugin section: its type, a `path` for hres/lua, config names given
/// once, and whole seconds for the maintenance cycle and timeout.
fn plugin(at: &str, p: RawPlugin) -> Result<HresPlugin, String> {
    let kind = p.kind.trim().to_string();
    if kind != "hres/lua" {
        return Err(format!("{at}: plugin type '{kind}' is not hres/lua (the only plugin)"));
    }
    let mut config: Vec<(String, String)> = vec![];
    for c in p.config {
        let name = c.name.trim().to_string();
        let value = match c.value {
            serde_yaml_ng::Value::String(s) => s,
            serde_yaml_ng::Value::Number(n) => n.to_string(),
            serde_yaml_ng::Value::Bool(b) => b.to_string(),
            _ => {
                return Err(format!(
                    "{at}: plugin config '{name}': value is not a string, number or boolean"
                ));
            }
        };
        if name.is_empty() {
            return Err(format!("{at}: plugin config has an entry without a name"));
        }
        if config.iter().any(|(n, _)| *n == name) {
            return Err(format!("{at}: plugin config '{name}' given twice"));
        }
        config.push((name, value));
    }
    let secs = |key: &str, v: Option<i64>| {
        u64::try_from(v.unwrap_or(0)).map_err(|_| format!("{at}: plugin {key} is negative"))
    };
    let out = HresPlugin {
        kind,
        config,
        maintenance_cycle: secs("maintenance_cycle", p.maintenance_cycle)?,
        maintenance_timeout: secs("maintenance_timeout", p.maintenance_timeout)?,
    };
    match out.path() {
        Some(path) if !path.trim().is_empty() => Ok(out),
        _ => Err(format!("{at}: plugin hres/lua needs config 'path' (the script)")),
    }
}

/// Mode 3: one root, parents that exist, no cycle, all leaves at one depth,
/// nodes only on leaves, and each node under one leaf.
fn check_tree(r: &HresResource) -> Result<(), String> {
    let at = |l: &HresLayer| format!("resource '{}', layer '{}'", r.name, l.name);
    let roots: Vec<&HresLayer> = r.layers.iter().filter(|l| l.parent.is_none()).collect();
    match roots.as_slice() {
        [_] => {}
        [] => return Err(format!("resource '{}': MODE_3 needs one root layer (no parent_name)", r.name)),
        many => {
            let names: Vec<&str> = many.iter().map(|l| l.name.as_str()).collect();
            return Err(format!(
                "resource '{}': MODE_3 needs one root layer, found {}",
                r.name,
                names.join(", ")
            ));
        }
    }
    for (i, l) in r.layers.iter().enumerate() {
        if let Some(p) = &l.parent {
            if r.layer(p).is_none() {
                return Err(format!("{}: parent_name '{p}' is not a layer of the resource", at(l)));
            }
            if r.depth(i) >= r.layers.len() {
                return Err(format!("{}: parent_name forms a cycle", at(l)));
            }
        }
    }
    let mut leaf_depth = None;
    let mut owner: BTreeMap<&str, &str> = BTreeMap::new();
    for (i, l) in r.layers.iter().enumerate() {
        if !r.is_leaf(i) {
            if !l.nodes.is_empty() {
                return Err(format!("{}: only leaf layers list nodes; this one has children", at(l)));
            }
            continue;
        }
        let d = r.depth(i);
        match leaf_depth {
            None => leaf_depth = Some((d, &l.name)),
            Some((d0, first)) if d0 != d => {
                return Err(format!(
                    "{}: leaf at depth {d}, but leaf '{first}' is at depth {d0}; MODE_3 needs a uniform depth tree",
                    at(l)
                ));
            }
            _ => {}
        }
        for n in &l.nodes {
            if let Some(other) = owner.insert(n, &l.name) {
                return Err(format!("{}: node '{n}' is also under leaf '{other}'", at(l)));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod plugin_tests {
    use super::*;

    fn with(plugin: &str) -> Result<Vec<HresResource>, String> {
        let text = format!(
            "- resource: qpu\n  mode: MODE_1\n  plugin:\n{plugin}\n  layers:\n    - layer_name: q1\n      count: 1\n"
        );
        parse(&text, &BTreeMap::new(), None)
    }

    #[test]
    fn the_plugin_section_is_read_and_checked() {
        let ok = with("    type: hres/lua\n    config:\n      - name: path\n        value: /etc/q.lua\n      - name: shots\n        value: 10\n    maintenance_cycle: 60\n    maintenance_timeout: 10").unwrap();
        let p = ok[0].plugin.as_ref().unwrap();
        assert_eq!(p.path(), Some("/etc/q.lua"));
        assert_eq!(p.config[1], ("shots".to_string(), "10".to_string()));
        assert_eq!((p.maintenance_cycle, p.maintenance_timeout), (60, 10));
        for (plugin, needle) in [
            ("    type: hres/python", "plugin type 'hres/python' is not hres/lua"),
            ("    type: hres/lua", "needs config 'path'"),
            (
                "    type: hres/lua\n    config:\n      - name: path\n        value: a\n      - name: path\n        value: b",
                "plugin config 'path' given twice",
            ),
            (
                "    type: hres/lua\n    config:\n      - name: path\n        value: a\n    maintenance_cycle: -5",
                "maintenance_cycle is negative",
            ),
            ("    type: hres/lua\n    colour: red", "unknown field `colour`"),
        ] {
            let e = with(plugin).unwrap_err();
            assert!(e.contains(needle), "{plugin}: {e}");
            assert!(e.contains("qpu") || e.contains("colour"), "{e}");
        }
    }
}

#[cfg(test)]
mod bound_tests {
    use super::*;

    #[test]
    fn a_layer_names_no_more_hosts_than_the_cluster_has() {
        let cluster: BTreeSet<String> = (1..=32).map(|i| format!("node{i:02}")).collect();
        let layer = |nodes: &str| {
            let text = format!(
                "- resource: a\n  mode: MODE_1\n  layers:\n    - layer_name: x\n      nodes: [\"{nodes}\"]\n"
            );
            parse(&text, &BTreeMap::new(), Some(&cluster))
        };
        // A million names were built before the first was found missing.
        let e = layer("node[1-1000000]").unwrap_err();
        assert!(e.ends_with("names more than 32 hosts"), "{e}");
        let e = layer(&format!("{}[1-2]", "n".repeat(100))).unwrap_err();
        assert!(e.contains("101 bytes or more, longer than the 6"), "{e}");
        assert_eq!(layer("node[01-32]").unwrap()[0].layers[0].nodes.len(), 32);
    }
}
