//! The cluster part of a test's spur.conf, built rather than pasted:
//! `ClusterToml::new().heartbeat(1).nodes("node[01-04]", 4, 8192).partition("batch", "node[01-04]").build()`.
//! Sections come out in a fixed order (plain tables, then `[[nodes]]`, then
//! `[[partitions]]`), so a key never lands in the wrong table.

use std::fmt::Write;

/// A TOML value as it is written: strings quoted, numbers and booleans bare.
pub trait Lit {
    fn lit(&self) -> String;
}

impl Lit for &str {
    fn lit(&self) -> String {
        format!("{self:?}")
    }
}

macro_rules! bare {
    ($($t:ty),*) => { $(impl Lit for $t { fn lit(&self) -> String { self.to_string() } })* };
}
bare!(bool, i32, u32, u64, i64, usize);

impl Lit for &[&str] {
    fn lit(&self) -> String {
        format!("[{}]", self.iter().map(|s| s.lit()).collect::<Vec<_>>().join(", "))
    }
}

type Table = Vec<(String, String)>;

#[derive(Debug, Default, Clone)]
pub struct ClusterToml {
    tables: Vec<(String, Table)>,
    nodes: Vec<Table>,
    partitions: Vec<Table>,
}

impl ClusterToml {
    pub fn new() -> ClusterToml {
        ClusterToml::default()
    }

    /// `key = value` in the plain table `[section]`, replacing an earlier value.
    pub fn set(mut self, section: &str, key: &str, value: impl Lit) -> Self {
        let pair = (key.to_string(), value.lit());
        match self.tables.iter_mut().find(|(s, _)| s == section) {
            // A later setting replaces an earlier one: TOML refuses a key twice.
            Some((_, t)) => match t.iter_mut().find(|(k, _)| k == key) {
                Some(old) => *old = pair,
                None => t.push(pair),
            },
            None => self.tables.push((section.to_string(), vec![pair])),
        }
        self
    }

    /// The agent-admission tests' cluster: admission by token, a heartbeat a
    /// second, node[01-03] (2 CPUs, 4 GiB), `batch` on node[01-02], `other` on node03.
    pub fn token_admission() -> ClusterToml {
        ClusterToml::new()
            .set("admission", "mode", "token")
            .heartbeat(1)
            .nodes("node[01-03]", 2, 4096)
            .partition("batch", "node[01-02]")
            .partition("other", "node03")
    }

    /// `[controller] heartbeat_interval_secs`.
    pub fn heartbeat(self, secs: u64) -> Self {
        self.set("controller", "heartbeat_interval_secs", secs)
    }

    /// `[controller] node_timeout_secs`.
    pub fn node_timeout(self, secs: u64) -> Self {
        self.set("controller", "node_timeout_secs", secs)
    }

    /// `[scheduler] interval`, in seconds.
    pub fn interval(self, secs: u64) -> Self {
        self.set("scheduler", "interval", secs)
    }

    /// `[scheduler] preemption_enabled`.
    pub fn preemption(self, on: bool) -> Self {
        self.set("scheduler", "preemption_enabled", on)
    }

    /// `[scheduler] KEY`.
    pub fn scheduler(self, key: &str, value: impl Lit) -> Self {
        self.set("scheduler", key, value)
    }

    /// A `[[nodes]]` entry of `cpus` CPUs and `memory_mb` of memory each.
    pub fn nodes(mut self, names: &str, cpus: u32, memory_mb: u64) -> Self {
        self.nodes.push(vec![
            ("name".into(), names.lit()),
            ("cpus".into(), cpus.lit()),
            ("memory_mb".into(), memory_mb.lit()),
        ]);
        self
    }

    /// A `[[nodes]]` entry with the controller's default hardware.
    pub fn nodes_default(mut self, names: &str) -> Self {
        self.nodes.push(vec![("name".into(), names.lit())]);
        self
    }

    /// A `[[nodes]]` entry of `cpus` CPUs, memory left to the default.
    pub fn nodes_cpus(mut self, names: &str, cpus: u32) -> Self {
        self.nodes.push(vec![("name".into(), names.lit()), ("cpus".into(), cpus.lit())]);
        self
    }

    /// A `[[partitions]]` entry; the first one added is the default partition.
    pub fn partition(mut self, name: &str, nodes: &str) -> Self {
        let mut t: Table = vec![("name".into(), name.lit()), ("nodes".into(), nodes.lit())];
        if self.partitions.is_empty() {
            t.push(("default".into(), true.lit()));
        }
        self.partitions.push(t);
        self
    }

    /// `key = value` on the last `[[nodes]]` entry added.
    pub fn node_set(mut self, key: &str, value: impl Lit) -> Self {
        let last = self.nodes.last_mut().expect("node_set after nodes");
        last.push((key.to_string(), value.lit()));
        self
    }

    /// `key = value` on the last partition added.
    pub fn partition_set(mut self, key: &str, value: impl Lit) -> Self {
        let last = self.partitions.last_mut().expect("partition_set after partition");
        last.push((key.to_string(), value.lit()));
        self
    }

    /// The TOML, for [`crate::proc::conf`].
    pub fn build(&self) -> String {
        let mut out = String::new();
        let mut table = |header: &str, t: &Table| {
            let _ = writeln!(out, "{header}");
            for (k, v) in t {
                let _ = writeln!(out, "{k} = {v}");
            }
        };
        for (section, t) in &self.tables {
            table(&format!("[{section}]"), t);
        }
        for t in &self.nodes {
            table("[[nodes]]", t);
        }
        for t in &self.partitions {
            table("[[partitions]]", t);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_come_out_in_an_order_toml_reads_back() {
        let text = ClusterToml::new()
            .nodes("node[01-02]", 4, 8192)
            .partition("batch", "node[01-02]")
            .partition_set("max_time", "1-00:00:00")
            .partition("other", "node02")
            .heartbeat(1)
            .preemption(true)
            .build();
        assert_eq!(
            text,
            "[controller]\nheartbeat_interval_secs = 1\n[scheduler]\npreemption_enabled = true\n\
             [[nodes]]\nname = \"node[01-02]\"\ncpus = 4\nmemory_mb = 8192\n\
             [[partitions]]\nname = \"batch\"\nnodes = \"node[01-02]\"\ndefault = true\nmax_time = \"1-00:00:00\"\n\
             [[partitions]]\nname = \"other\"\nnodes = \"node02\"\n"
        );
    }
}
