//! Loading resources.yaml beside spur.conf; the parser and its checks are
//! the scheduler's (`spur_sched::hres_spec`), so every error names the file,
//! the resource and the layer.

use super::{Config, ConfigError, one_line};
use serde::Deserialize;
pub use spur_sched::hres_spec::parse;
use std::time::Duration;

/// `[hres]`: how long plugin callbacks may run.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HresConfig {
    /// Validate arguments, pre-run, revoke and controller epilog run under
    /// the scheduler's lock: each is failed after this many milliseconds.
    #[serde(default = "default_callback_ms")]
    pub callback_timeout_ms: u64,
    /// Slurm's PrologTimeout for the node prologs (job, task, user task); unset: prolog_epilog_timeout_secs.
    #[serde(default)]
    pub prolog_timeout_secs: Option<u64>,
    /// Slurm's EpilogTimeout for the node epilogs; unset: prolog_epilog_timeout_secs.
    #[serde(default)]
    pub epilog_timeout_secs: Option<u64>,
    /// Slurm's PrologEpilogTimeout; unset: no limit.
    #[serde(default)]
    pub prolog_epilog_timeout_secs: Option<u64>,
}

fn default_callback_ms() -> u64 {
    500
}

impl Default for HresConfig {
    fn default() -> HresConfig {
        HresConfig {
            callback_timeout_ms: default_callback_ms(),
            prolog_timeout_secs: None,
            epilog_timeout_secs: None,
            prolog_epilog_timeout_secs: None,
        }
    }
}

impl HresConfig {
    pub fn callback(&self) -> Option<Duration> {
        (self.callback_timeout_ms > 0).then(|| Duration::from_millis(self.callback_timeout_ms))
    }

    /// (prolog, epilog) limits for the nodes, in ms.
    pub fn node_limits(&self) -> (Option<u64>, Option<u64>) {
        let ms = |s: Option<u64>| s.or(self.prolog_epilog_timeout_secs).map(|s| s.saturating_mul(1000));
        (ms(self.prolog_timeout_secs), ms(self.epilog_timeout_secs))
    }
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
        // A script's path is the same on every host: made absolute here, once.
        let dir = path.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
        for p in self.hres.iter_mut().filter_map(|r| r.plugin.as_mut()) {
            for (_, v) in p.config.iter_mut().filter(|(k, _)| k == "path") {
                let joined = dir.join(v.as_str());
                *v = std::path::absolute(&joined).unwrap_or(joined).display().to_string();
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::HresResource;
    use spur_vocab::hostlist;
    use std::collections::{BTreeMap, BTreeSet};

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
        // A layer naming more hosts than the cluster has is refused before its names are built.
        assert!(e.contains("resources.yaml: resource 'flat', layer 'top': nodes 'node[01-32]'"), "{e}");
        assert!(e.contains("names more than 8 hosts"), "{e}");
    }

    #[test]
    fn the_demo_config_loads_with_its_licenses_and_resources() {
        let c = Config::load(std::path::Path::new("../examples/demo/spur.conf")).unwrap();
        assert_eq!((c.licenses.get("matlab"), c.hres.len()), (Some(&4), 4));
        // The qpu plugin's script is found beside resources.yaml, whatever the working directory.
        let path = c.hres[3].plugin.as_ref().and_then(|p| p.path()).unwrap().to_string();
        assert!(path.starts_with('/') && path.ends_with("examples/demo/qpu.lua"), "{path}");
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
