//! The node plane: nodes and partitions built from spur.conf, on-call drain,
//! resume and down with attribution, and the agents that host the nodes.
//!
//! - [`build`]: nodes and partitions from the config, keeping runtime state across reconfigure.
//! - [`dynamic`]: nodes not in spur.conf (`spurd --dynamic`, `scontrol create|delete NodeName=`).
//! - [`agents`]: registration, heartbeats, the not-responding monitor, commands to agents.
//! - [`facts`]: a registration's host facts and `--facts` overrides, resolved to each node's.
//! - [`partitions`]: runtime partition overrides (preemption exemption).
//! - [`pools`]: provisioner definitions' pools (conditions on node facts), `scontrol show provisioner`.
//!
//! One mutation path: validate -> persist the admin state -> apply in
//! memory -> publish. The audit rows are written by the RPC gate.

pub mod admin;
pub mod agents;
pub use admin::Requested;
pub mod build;
pub mod dynamic;
pub mod facts;
pub mod partitions;
pub mod pilots;
pub mod pools;

use crate::audit::Hub;
use crate::error::{Error, Result};
use crate::model::{Node, NodeAdmin, Partition};
use crate::store::{Store, now_ms};
use spur_proto::v1 as pb;
use spur_vocab::hostlist;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use tokio::sync::{broadcast, mpsc};

pub const KIND_NODE_STATE: &str = "node_state";

pub(crate) struct AgentConn {
    pub nodes: Vec<String>,
    /// SHA-256 of the key issued at registration, in hex.
    pub key: String,
    pub last_ms: i64,
    pub commands: Option<mpsc::Sender<pb::AgentCommand>>,
    /// The receiving end until the agent opens its command stream, so that
    /// commands sent right after registration (kills of stray jobs) wait for it.
    pub unopened: Option<mpsc::Receiver<pb::AgentCommand>>,
}

#[derive(Default)]
pub(crate) struct Cluster {
    pub nodes: BTreeMap<String, Node>,
    pub partitions: Vec<Partition>,
    pub agents: HashMap<String, AgentConn>,
    /// provisioners.yaml's definitions; each node's `definitions` follow from them.
    pub provision: Option<Arc<spur_sched::provision::Provision>>,
    /// Conditions that failed to evaluate, by (definition, node), so each is logged once.
    pub condition_errors: BTreeMap<(String, String), String>,
    /// Dynamic nodes (not in spur.conf) as persisted; built into `nodes` with the config's.
    pub dynamic: BTreeMap<String, dynamic::DynamicDef>,
    /// The config the nodes were last built from, so a dynamic node's arrival rebuilds them.
    pub cfg: Option<Arc<crate::config::Config>>,
    /// Node-milliseconds of borrowed nodes given back since start, by definition (their cost).
    pub given_back_ms: BTreeMap<String, i64>,
}

/// A node changed; subscribers re-read it.
#[derive(Debug, Clone)]
pub struct NodeEvent {
    pub names: Vec<String>,
}

pub struct NodeService {
    inner: RwLock<Cluster>,
    store: Option<Arc<dyn Store>>,
    hub: Arc<Hub>,
    admission: Arc<crate::admission::Admission>,
    pub heartbeat_secs: u32,
    pub timeout_secs: u32,
    events: broadcast::Sender<NodeEvent>,
    /// Held by an admin-state write from the snapshot it computes from to
    /// its install, so two writes never interleave (`admin.rs`).
    admin_writes: tokio::sync::Mutex<()>,
}

/// The Info an UpdateNodes request's row adds to its parameters.
pub fn update_info(updated: &[String], warning: &Option<String>) -> serde_json::Value {
    serde_json::json!({"updated": hostlist::compress(updated), "warning": warning})
}

impl NodeService {
    pub async fn new(
        cfg: &crate::config::Config,
        store: Option<Arc<dyn Store>>,
        hub: Arc<Hub>,
        admission: Arc<crate::admission::Admission>,
    ) -> Result<NodeService> {
        let mut admin: HashMap<String, NodeAdmin> = HashMap::new();
        if let Some(s) = &store {
            for (name, doc) in s.load(KIND_NODE_STATE).await? {
                admin.insert(name, serde_json::from_value(doc)?);
            }
        }
        // Dynamic nodes are back before the first pass, with the admin state below.
        let mut cluster = Cluster { dynamic: dynamic::load(store.as_deref()).await?, ..Cluster::default() };
        build::apply_config(&mut cluster, &Arc::new(cfg.clone()), now_ms())?;
        for (name, a) in admin {
            if let Some(n) = cluster.nodes.get_mut(&name) {
                n.admin = a;
            }
        }
        Ok(NodeService {
            inner: RwLock::new(cluster),
            store,
            hub,
            admission,
            heartbeat_secs: cfg.controller.heartbeat_interval_secs,
            timeout_secs: cfg.controller.node_timeout_secs,
            events: broadcast::channel(1024).0,
            admin_writes: tokio::sync::Mutex::new(()),
        })
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Cluster> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, Cluster> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    pub fn nodes(&self) -> Vec<Node> {
        self.read().nodes.values().cloned().collect()
    }

    pub fn node(&self, name: &str) -> Option<Node> {
        self.read().nodes.get(name).cloned()
    }

    pub fn partitions(&self) -> Vec<Partition> {
        self.read().partitions.clone()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<NodeEvent> {
        self.events.subscribe()
    }

    pub(crate) fn publish(&self, names: Vec<String>) {
        if !names.is_empty() {
            let _ = self.events.send(NodeEvent { names });
        }
    }

    /// How many nodes the cluster has: the most names a client's hostlist may give.
    pub fn count(&self) -> usize {
        self.read().nodes.len()
    }

    /// The length of the cluster's longest node name: no name a client's
    /// hostlist builds may be longer (MAX_NAME_LEN for a cluster of none).
    pub fn longest_name(&self) -> usize {
        self.read().nodes.keys().map(String::len).max().unwrap_or(hostlist::MAX_NAME_LEN)
    }

    /// Expands a hostlist and checks every name exists; errors name the culprit.
    pub fn resolve(&self, expr: &str) -> Result<Vec<String>> {
        let names = hostlist::expand_bounded(expr, self.count(), self.longest_name())
            .map_err(|e| Error::invalid("nodename", e))?;
        let c = self.read();
        match names.iter().find(|n| !c.nodes.contains_key(*n)) {
            Some(unknown) => Err(Error::NotFound(format!("nodename: unknown node '{unknown}'"))),
            None => Ok(names),
        }
    }

    /// Adds (or with `release`, returns) a job's per-node allocation.
    pub fn allocate(&self, nodes: &[String], per_node: (u32, u64, u64), release: bool) {
        self.adjust(nodes, per_node, release, true)
    }

    /// The audit hub, for rows the controller writes on its own.
    pub(crate) fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// Takes or gives back part of a job's footprint; `count` moves the job
    /// count too (a suspended job frees its CPUs but still sits on the node).
    pub fn adjust(&self, nodes: &[String], per_node: (u32, u64, u64), release: bool, count: bool) {
        let (cpus, mem, gpus) = per_node;
        let count = u32::from(count);
        {
            let mut c = self.write();
            for name in nodes {
                let Some(n) = c.nodes.get_mut(name) else { continue };
                if release {
                    n.alloc_cpus = n.alloc_cpus.saturating_sub(cpus);
                    n.alloc_memory_mb = n.alloc_memory_mb.saturating_sub(mem);
                    n.running_jobs = n.running_jobs.saturating_sub(count);
                } else {
                    n.alloc_cpus = (n.alloc_cpus + cpus).min(n.cpus);
                    n.alloc_memory_mb += mem;
                    n.running_jobs += count;
                }
                if gpus > 0 {
                    let used = n.alloc_gres.iter().find(|(g, _)| g == "gpu").map(|(_, c)| *c).unwrap_or(0);
                    let next = if release { used.saturating_sub(gpus) } else { used + gpus };
                    n.alloc_gres.retain(|(g, _)| g != "gpu");
                    if next > 0 {
                        n.alloc_gres.push(("gpu".into(), next));
                    }
                }
            }
        }
        self.publish(nodes.to_vec());
    }

    /// Re-reads the node and partition definitions, keeping the runtime and
    /// admin state of nodes that remain. Returns what changed.
    pub fn reconfigure(&self, cfg: &crate::config::Config) -> Result<Vec<String>> {
        let changes = {
            let mut c = self.write();
            build::apply_config(&mut c, &Arc::new(cfg.clone()), now_ms())?
        };
        self.publish(self.read().nodes.keys().cloned().collect());
        Ok(changes)
    }
}
