//! A host's facts, as `spurd` collects them at registration, for the
//! `condition` of static provisioner definitions (provisioners.yaml).

use std::collections::BTreeMap;

/// What a node's hardware and OS say of it. `values` holds the dotted
/// variables of the spec's tables ("uname.machine", "osrelease.id",
/// "cpuinfo.cpu_cores", ...) as text; the condition's environment turns the
/// numeric ones (`cpuinfo.cpu_family`, `model`, `microcode`, `cpu_cores`)
/// into integers. `hostname()` and `uname.nodename` are the node's own name,
/// set when the condition is evaluated, so nodes that differ only by name
/// share one `HostFacts`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostFacts {
    pub values: BTreeMap<String, String>,
    /// PCI modaliases (`pci:v000010DEd...`), which `modalias.match` globs.
    pub modaliases: Vec<String>,
}

/// Facts in one map (spurd collects 18; the rest is room for newer agents).
pub const MAX_FACTS: usize = 64;
/// Modaliases in one list, after spurd dropped repeats.
pub const MAX_MODALIASES: usize = 1024;
/// Bytes of one key, value, modalias or hostlist (the agent's facts file
/// and the controller's check of a registration share them).
pub const MAX_TEXT: usize = 4096;
/// Overrides in one registration.
pub const MAX_OVERRIDES: usize = 256;

/// The `cpuinfo` keys that are numbers in a condition.
pub const NUMERIC_FACTS: [&str; 4] =
    ["cpuinfo.cpu_family", "cpuinfo.model", "cpuinfo.microcode", "cpuinfo.cpu_cores"];

impl HostFacts {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }
}
