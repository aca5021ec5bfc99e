//! Nodes and partitions from spur.conf. A reconfigure rebuilds the shape and
//! keeps each remaining node's runtime and admin state.

use super::Cluster;
use crate::config::{Config, parse_gres};
use crate::error::{Error, Result};
use crate::model::{Node, NodeAdmin, Partition};
use spur_vocab::hostlist;
use spur_vocab::nodestate::Dynamic;
use std::collections::BTreeMap;

/// Applies the config to the cluster; returns one line per change.
/// `cfg` is shared, not copied: dynamic nodes' writes rebuild with the one in force.
pub(crate) fn apply_config(
    c: &mut Cluster,
    cfg: &std::sync::Arc<Config>,
    now_ms: i64,
) -> Result<Vec<String>> {
    let bad = |e: String| Error::InvalidArgument(format!("spur.conf: {e}"));
    let mut nodes: BTreeMap<String, Node> = BTreeMap::new();
    for nc in &cfg.nodes {
        let gres = parse_gres(&nc.gres).map_err(bad)?;
        for name in hostlist::expand(&nc.name).map_err(bad)? {
            let shape = Shape { cpus: nc.cpus, memory_mb: nc.memory_mb, gres: &gres, features: &nc.features };
            let node = fresh(c, &name, shape, nc.weight, None, now_ms);
            nodes.insert(name, node);
        }
    }
    // A node of spur.conf wins over a dynamic one of its name, as Slurm ignores HRES= for those.
    let mut dynamic = vec![];
    for (name, d) in &c.dynamic {
        if nodes.contains_key(name) {
            tracing::warn!(node = %name, "a dynamic node is now defined in spur.conf; the config's wins");
            continue;
        }
        let shape = Shape { cpus: d.cpus, memory_mb: d.memory_mb, gres: &d.gres, features: &d.features };
        nodes.insert(name.clone(), fresh(c, name, shape, 1, Some(d.state), now_ms));
        dynamic.push(name.clone());
    }
    let mut partitions = vec![];
    for pc in &cfg.partitions {
        let members = if pc.nodes.eq_ignore_ascii_case("all") {
            nodes.keys().cloned().collect()
        } else {
            let mut m = hostlist::expand(&pc.nodes).map_err(bad)?;
            if cfg.dynamic_joins(pc) {
                m.extend(dynamic.iter().cloned());
            }
            m
        };
        for m in &members {
            if let Some(n) = nodes.get_mut(m) {
                n.partitions.push(pc.name.clone());
            }
        }
        let minutes = |v: &Option<crate::config::TimeValue>| v.as_ref().map(|t| t.minutes()).transpose();
        partitions.push(Partition {
            name: pc.name.clone(),
            nodes: members,
            is_default: pc.default,
            max_time: minutes(&pc.max_time).map_err(bad)?.flatten(),
            default_time: minutes(&pc.default_time).map_err(bad)?.flatten(),
            priority_tier: pc.priority_tier,
            preempt_mode: pc.preempt_mode,
            preempt_exempt_time: pc.preempt_exempt_time,
            state: pc.state.to_ascii_uppercase(),
        });
    }
    let mut changes = vec![];
    let added: Vec<&String> = nodes.keys().filter(|n| !c.nodes.contains_key(*n)).collect();
    let removed: Vec<&String> = c.nodes.keys().filter(|n| !nodes.contains_key(*n)).collect();
    if !added.is_empty() {
        changes.push(format!("nodes added: {}", hostlist::compress(&added)));
    }
    if !removed.is_empty() {
        changes.push(format!("nodes removed: {}", hostlist::compress(&removed)));
    }
    for n in nodes.values() {
        if let Some(old) = c.nodes.get(&n.name)
            && (old.cpus, old.memory_mb, &old.gres, &old.features, old.weight)
                != (n.cpus, n.memory_mb, &n.gres, &n.features, n.weight)
        {
            changes.push(format!("node {} redefined", n.name));
        }
    }
    for p in &partitions {
        match c.partitions.iter().find(|o| o.name == p.name) {
            None => changes.push(format!("partition {} added", p.name)),
            Some(o) if o != p => changes.push(format!("partition {} changed", p.name)),
            _ => {}
        }
    }
    for o in c.partitions.iter().filter(|o| !partitions.iter().any(|p| p.name == o.name)) {
        changes.push(format!("partition {} removed", o.name));
    }
    c.nodes = nodes;
    c.partitions = partitions;
    c.cfg = Some(cfg.clone());
    let (old, new) =
        (c.provision.as_ref().map(|p| p.defs.len()), cfg.provision.as_ref().map(|p| p.defs.len()));
    if old.is_some() || new.is_some() {
        changes.push(format!("provisioner definitions: {}", new.unwrap_or(0)));
    }
    super::pools::apply(c, cfg.provision.clone());
    Ok(changes)
}

/// A node's configured shape.
struct Shape<'a> {
    cpus: u32,
    memory_mb: u64,
    gres: &'a [(String, u64)],
    features: &'a [String],
}

/// The node `name` with `shape`, keeping the runtime and admin state of the
/// node of that name the cluster already has.
fn fresh(c: &Cluster, name: &str, shape: Shape, weight: u32, dynamic: Option<Dynamic>, now_ms: i64) -> Node {
    let mut node = Node {
        name: name.to_string(),
        cpus: shape.cpus,
        memory_mb: shape.memory_mb,
        gres: shape.gres.to_vec(),
        features: shape.features.to_vec(),
        weight,
        partitions: vec![],
        alloc_cpus: 0,
        alloc_memory_mb: 0,
        alloc_gres: vec![],
        running_jobs: 0,
        admin: NodeAdmin::default(),
        registered: false,
        responding: false,
        agent_id: None,
        agent_host: String::new(),
        // The timeout clock for a node that never registers starts now.
        last_heartbeat_ms: now_ms,
        facts: None,
        definitions: vec![],
        annotations: vec![],
        dynamic,
    };
    if let Some(old) = c.nodes.get(name) {
        node.alloc_cpus = old.alloc_cpus;
        node.alloc_memory_mb = old.alloc_memory_mb;
        node.alloc_gres = old.alloc_gres.clone();
        node.running_jobs = old.running_jobs;
        node.admin = old.admin.clone();
        node.registered = old.registered;
        node.responding = old.responding;
        node.agent_id = old.agent_id.clone();
        node.agent_host = old.agent_host.clone();
        node.last_heartbeat_ms = old.last_heartbeat_ms;
        node.facts = old.facts.clone();
        node.definitions = old.definitions.clone();
        node.annotations = old.annotations.clone();
    }
    node
}
