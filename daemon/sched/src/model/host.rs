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

/// The `cpuinfo` keys that are numbers in a condition.
pub const NUMERIC_FACTS: [&str; 4] =
    ["cpuinfo.cpu_family", "cpuinfo.model", "cpuinfo.microcode", "cpuinfo.cpu_cores"];

impl HostFacts {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }
}
