//! resources.yaml: the hierarchical resources (HRES). Parsed into
//! [`HresResource`]s and validated so that every error names the file, the
//! resource and the layer; the scheduler may then trust the shape (unique
//! layers, Mode 3 a rooted tree of uniform depth with nodes on leaves only).

use super::{Config, ConfigError, one_line};
use crate::model::{HresLayer, HresMode, HresResource, INFINITE};
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
    /// Plugins come later; the section is accepted so a file stays valid.
    #[serde(default)]
    #[allow(dead_code)]
    plugin: Option<serde_yaml_ng::Value>,
    #[serde(default)]
    layers: Vec<RawLayer>,
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
                nodes.extend(hostlist::expand(h).map_err(|e| format!("{lat}: nodes '{h}': {e}"))?);
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
        let mut res =
            HresResource { name, mode, topology: r.topology, variables, disabled: r.disable_hres, layers };
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

impl Config {
    /// Reads `resources_file` (or `resources.yaml` beside spur.conf, when present) into `hres`.
    pub fn load_resources(&mut self) -> Result<(), ConfigError> {
        let (path, must) = match &self.resources_file {
            Some(f) => (self.base_dir.join(f), true),
            None => (self.base_dir.join("resources.yaml"), false),
        };
        let file = path.display().to_string();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if !must && e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(ConfigError::Read { file: format!("resources_file {file}"), err }),
        };
        let cluster = self.node_names().map_err(|msg| ConfigError::Invalid { file: file.clone(), msg })?;
        let cluster = (!cluster.is_empty()).then_some(&cluster);
        self.hres = parse(&text, &self.licenses, cluster)
            .map_err(|msg| ConfigError::Invalid { file, msg: one_line(&msg) })?;
        Ok(())
    }

    /// Every node `[[nodes]]` defines.
    pub fn node_names(&self) -> Result<std::collections::BTreeSet<String>, String> {
        let mut out = std::collections::BTreeSet::new();
        for n in &self.nodes {
            out.extend(spur_vocab::hostlist::expand(&n.name)?);
        }
        Ok(out)
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
mod tests {
    use super::*;

    const SPEC: &str = include_str!("../../../examples/hres/resources.yaml");

    fn cluster() -> BTreeSet<String> {
        hostlist::expand("node[01-32]").unwrap().into_iter().collect()
    }

    fn parse_ok(text: &str) -> Vec<HresResource> {
        parse(text, &BTreeMap::new(), Some(&cluster())).unwrap()
    }

    fn conf(text: &str) -> Result<Config, String> {
        Config::parse(text, "spur.conf", std::path::PathBuf::from("/etc/spur")).map_err(|e| e.to_string())
    }

    fn parse_err(text: &str) -> String {
        parse(text, &BTreeMap::new(), Some(&cluster())).unwrap_err()
    }

    #[test]
    fn the_spec_example_loads_with_inherited_nodes_and_base_usage() {
        let r = parse_ok(SPEC);
        assert_eq!(r.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["flat", "natural", "power"]);
        let power = &r[2];
        let layer = |n: &str| &power.layers[power.layer(n).unwrap()];
        assert_eq!(layer("row1").nodes.len(), 16);
        assert_eq!(layer("datacenter").nodes.len(), 32);
        assert_eq!((layer("rack1").base_usage, layer("rack1").total()), (5000, Some(35000)));
        assert_eq!(layer("row1").base_usage, 8000);
        assert_eq!(layer("datacenter").base_usage, 28000);
        assert_eq!(power.variables[0], ("full_node".into(), 1000));
        assert_eq!(r[0].layers[0].count, 24);
    }

    #[test]
    fn bad_inputs_name_resource_and_layer() {
        let lic: BTreeMap<String, u32> = [("flat".to_string(), 3)].into();
        let e = parse(SPEC, &lic, None).unwrap_err();
        assert!(e.contains("resource 'flat'") && e.contains("clashes"), "{e}");
        let cases = [
            (
                "- resource: a\n  mode: MODE_1\n  layers:\n    - layer_name: x\n    - layer_name: x\n",
                "layer 'x': layer name used twice",
            ),
            (
                "- resource: a\n  mode: MODE_4\n  layers:\n    - layer_name: x\n",
                "resource 'a': mode 'MODE_4'",
            ),
            (
                "- resource: a\n  mode: MODE_1\n  layers:\n    - layer_name: x\n      count: -2\n",
                "layer 'x': count -2",
            ),
            (
                "- resource: a\n  mode: MODE_1\n  layers:\n    - layer_name: x\n      nodes: [\"node99\"]\n",
                "layer 'x': node 'node99' is not",
            ),
            (
                "- resource: a\n  mode: MODE_1\n  layers:\n    - layer_name: x\n      nodes: [\"node[01-\"]\n",
                "layer 'x': nodes 'node[01-'",
            ),
            (
                "- resource: a\n  mode: MODE_1\n  layers:\n    - layer_name: x\n      parent_name: y\n",
                "only for MODE_3",
            ),
            (
                "- resource: a\n  mode: MODE_3\n  layers:\n    - layer_name: x\n    - layer_name: y\n",
                "one root layer, found x, y",
            ),
            (
                "- resource: a\n  mode: MODE_3\n  layers:\n    - layer_name: x\n    - layer_name: y\n      parent_name: z\n",
                "layer 'y': parent_name 'z'",
            ),
            (
                "- resource: a\n  mode: MODE_3\n  layers:\n    - layer_name: r\n      nodes: [node01]\n    - layer_name: y\n      parent_name: r\n",
                "layer 'r': only leaf layers list nodes",
            ),
            (
                "- resource: a\n  mode: MODE_3\n  layers:\n    - layer_name: r\n    - layer_name: y\n      parent_name: r\n    - layer_name: z\n      parent_name: r\n    - layer_name: w\n      parent_name: z\n",
                "uniform depth",
            ),
            (
                "- resource: a\n  mode: MODE_3\n  layers:\n    - layer_name: r\n    - layer_name: y\n      parent_name: r\n      nodes: [node01]\n    - layer_name: z\n      parent_name: r\n      nodes: [node01]\n",
                "also under leaf 'y'",
            ),
            (
                "- resource: a\n  mode: MODE_1\n  layers:\n    - layer_name: x\n      count: 5\n      base:\n        - name: s\n          value: 6\n",
                "base usage 6 is above count 5",
            ),
            ("- resource: a\n  mode: MODE_1\n  layres: []\n", "unknown field `layres`"),
            (
                "- resource: a\n  mode: MODE_1\n  layers:\n    - layer_name: x\n      count: lots\n",
                "invalid type",
            ),
        ];
        for (text, says) in cases {
            let e = parse_err(text);
            assert!(e.contains(says), "expected {says:?} in {e:?}");
        }
    }

    #[test]
    fn licenses_and_resources_file() {
        let c = conf("[licenses]\nmatlab = 20\n").unwrap();
        assert_eq!(c.licenses.get("matlab"), Some(&20));
        assert!(conf("[licenses]\nmatlab = -1\n").unwrap_err().contains("licenses.matlab"));
        assert!(conf("[licenses]\n\"a b\" = 1\n").unwrap_err().contains("licenses.a b"));
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("spur.conf");
        std::fs::write(&conf, "[[nodes]]\nname = \"node[01-32]\"\n").unwrap();
        assert!(Config::load(&conf).unwrap().hres.is_empty(), "no resources.yaml beside it is fine");
        std::fs::copy("../examples/hres/resources.yaml", dir.path().join("resources.yaml")).unwrap();
        assert_eq!(Config::load(&conf).unwrap().hres.len(), 3);
        std::fs::write(&conf, "resources_file = \"nope.yaml\"\n").unwrap();
        let e = Config::load(&conf).unwrap_err().to_string();
        assert!(e.contains("resources_file") && e.contains("nope.yaml"), "{e}");
        std::fs::write(&conf, "[[nodes]]\nname = \"node[01-08]\"\n").unwrap();
        let e = Config::load(&conf).unwrap_err().to_string();
        assert!(e.contains("resources.yaml: resource 'flat', layer 'top': node 'node09'"), "{e}");
    }

    #[test]
    fn the_demo_config_loads_with_its_licenses_and_resources() {
        let c = Config::load(std::path::Path::new("../examples/demo/spur.conf")).unwrap();
        assert_eq!((c.licenses.get("matlab"), c.hres.len()), (Some(&4), 3));
    }

    #[test]
    fn counts_default_to_zero_and_flags_load() {
        let r = parse_ok(
            "- resource: a\n  mode: MODE_2\n  disable_hres: true\n  layers:\n    - layer_name: x\n      disable_layer: true\n",
        );
        assert_eq!((r[0].layers[0].count, r[0].disabled, r[0].layers[0].disabled), (0, true, true));
        assert!(parse_ok("").is_empty());
    }
}
