//! Hierarchical resources as plain data: what resources.yaml defines plus the
//! runtime changes of `scontrol update HRESName=`. The scheduler reads these;
//! usage is not kept here but summed from what running jobs were charged.

use serde::{Deserialize, Serialize};

/// `count: -1`.
pub const INFINITE: i64 = -1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HresMode {
    /// Enough on any one layer over the job's nodes.
    One,
    /// Enough on every layer over the job's nodes.
    Two,
    /// Charged per node, summed from the leaf up to the root.
    Three,
}

impl HresMode {
    pub fn number(self) -> u8 {
        match self {
            HresMode::One => 1,
            HresMode::Two => 2,
            HresMode::Three => 3,
        }
    }

    pub fn parse(s: &str) -> Option<HresMode> {
        match s {
            "MODE_1" => Some(HresMode::One),
            "MODE_2" => Some(HresMode::Two),
            "MODE_3" => Some(HresMode::Three),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HresLayer {
    pub name: String,
    pub parent: Option<String>,
    /// Expanded and sorted. A Mode 3 parent holds the union of its children's.
    pub nodes: Vec<String>,
    /// [`INFINITE`] or at least 0.
    pub count: i64,
    pub base: Vec<(String, u64)>,
    /// The layer's base, plus in Mode 3 its children's base usage.
    pub base_usage: u64,
    pub disabled: bool,
}

impl HresLayer {
    /// What is left for jobs: count minus base usage; None is infinite.
    pub fn total(&self) -> Option<u64> {
        (self.count != INFINITE)
            .then(|| u64::try_from(self.count).unwrap_or(0).saturating_sub(self.base_usage))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HresResource {
    pub name: String,
    pub mode: HresMode,
    pub topology: Option<String>,
    pub variables: Vec<(String, i64)>,
    pub disabled: bool,
    /// In resources.yaml order.
    pub layers: Vec<HresLayer>,
    /// The `plugin` section, when the resource has one.
    #[serde(default)]
    pub plugin: Option<HresPlugin>,
}

/// A resource's plugin (`plugin:` in resources.yaml); only `hres/lua` exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HresPlugin {
    pub kind: String,
    /// `config: [{name, value}]` in order; hres/lua needs `path`.
    pub config: Vec<(String, String)>,
    /// Seconds between maintenance calls; 0 is none.
    pub maintenance_cycle: u64,
    /// Seconds a maintenance call may run; 0 is no limit.
    pub maintenance_timeout: u64,
}

impl HresPlugin {
    /// The script (`config` entry `path`).
    pub fn path(&self) -> Option<&str> {
        config_path(&self.config)
    }
}

/// The `path` entry of a plugin configuration: hres/lua's script.
pub fn config_path(config: &[(String, String)]) -> Option<&str> {
    config.iter().find(|(k, _)| k == "path").map(|(_, v)| v.as_str())
}

impl HresResource {
    pub fn layer(&self, name: &str) -> Option<usize> {
        self.layers.iter().position(|l| l.name == name)
    }

    /// Indices of a layer's children (Mode 3).
    pub fn children(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let name = &self.layers[i].name;
        self.layers.iter().enumerate().filter(move |(_, l)| l.parent.as_ref() == Some(name)).map(|(c, _)| c)
    }

    pub fn is_leaf(&self, i: usize) -> bool {
        self.mode != HresMode::Three || self.children(i).next().is_none()
    }

    /// Distance from the root (Mode 3); 0 for modes 1 and 2.
    pub fn depth(&self, i: usize) -> usize {
        let (mut d, mut at) = (0, i);
        while let Some(p) = self.layers[at].parent.as_ref().and_then(|p| self.layer(p)) {
            d += 1;
            at = p;
            if d > self.layers.len() {
                break;
            }
        }
        d
    }

    /// Recomputes Mode 3 parents' nodes (union of children) and every layer's
    /// base usage (own base, plus children's in Mode 3), leaves first.
    pub fn derive(&mut self) {
        let mut order: Vec<usize> = (0..self.layers.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.depth(i)));
        for i in order {
            let own: u64 = self.layers[i].base.iter().map(|(_, v)| *v).sum();
            if self.mode == HresMode::Three && !self.is_leaf(i) {
                let kids: Vec<usize> = self.children(i).collect();
                let mut nodes: Vec<String> =
                    kids.iter().flat_map(|&c| self.layers[c].nodes.iter().cloned()).collect();
                nodes.sort();
                nodes.dedup();
                let below: u64 = kids.iter().map(|&c| self.layers[c].base_usage).sum();
                self.layers[i].nodes = nodes;
                self.layers[i].base_usage = own + below;
            } else {
                self.layers[i].base_usage = own;
            }
        }
    }
}

/// Every counted license of the cluster: plain ones (`[licenses]`) and hierarchical resources.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LicenseTable {
    pub plain: std::collections::BTreeMap<String, u32>,
    pub hres: Vec<HresResource>,
}

impl LicenseTable {
    pub fn resource(&self, name: &str) -> Option<&HresResource> {
        self.hres.iter().find(|r| r.name == name)
    }
}
