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

/// Facts in one map (spurd collects 22; the rest is room for newer agents).
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

    /// A numeric fact (0 when absent or not a number); `node.cores` is derived (sockets × cores per socket).
    pub fn number(&self, key: &str) -> u64 {
        let n = |k: &str| self.get(k).and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
        if key == CORES { n(SOCKETS).saturating_mul(n(CORES_PER_SOCKET)) } else { n(key) }
    }
}

/// The facts of a node's layout and scratch disk that a job's
/// `--tmp`, `--sockets-per-node`, `--cores-per-socket` and
/// `--threads-per-core` are checked against (spurd reports them).
pub const TMP_DISK_MB: &str = "node.tmp_disk_mb";
pub const SOCKETS: &str = "node.sockets";
pub const CORES_PER_SOCKET: &str = "node.cores_per_socket";
pub const THREADS_PER_CORE: &str = "node.threads_per_core";
/// Not reported: sockets × cores per socket, which `--ntasks-per-core` needs.
pub const CORES: &str = "node.cores";

/// What a job needs of a node beyond CPUs, memory and GPUs: at least this
/// much of each fact (0: not asked). A node without the fact has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NodeNeeds {
    pub tmp_mb: u64,
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub threads_per_core: u32,
    /// Cores in all (sockets × cores per socket) and sockets that the tasks
    /// a node runs need under `--ntasks-per-core` and `--ntasks-per-socket`.
    pub cores: u32,
    pub task_sockets: u32,
}

impl NodeNeeds {
    pub fn is_empty(&self) -> bool {
        *self == NodeNeeds::default()
    }

    /// Each need with its fact and what asked it: (fact, option, asked); an
    /// option's own value reads `--opt=N`, a derived one `N cores (--opt)`.
    pub fn asks(&self) -> impl Iterator<Item = (&'static str, &'static str, u64)> {
        [
            (TMP_DISK_MB, "--tmp", self.tmp_mb),
            (SOCKETS, "--sockets-per-node", u64::from(self.sockets)),
            (CORES_PER_SOCKET, "--cores-per-socket", u64::from(self.cores_per_socket)),
            (THREADS_PER_CORE, "--threads-per-core", u64::from(self.threads_per_core)),
            (CORES, "cores (--ntasks-per-core)", u64::from(self.cores)),
            (SOCKETS, "sockets (--ntasks-per-socket)", u64::from(self.task_sockets)),
        ]
        .into_iter()
        .filter(|(_, _, n)| *n > 0)
    }

    /// The first need `facts` do not meet: (option, asked, the node's value).
    pub fn unmet(&self, facts: Option<&HostFacts>) -> Option<(&'static str, u64, u64)> {
        self.asks().find_map(|(fact, opt, asked)| {
            let has = facts.map_or(0, |f| f.number(fact));
            (has < asked).then_some((opt, asked, has))
        })
    }

    pub fn fits(&self, facts: Option<&HostFacts>) -> bool {
        self.is_empty() || self.unmet(facts).is_none()
    }
}
