//! Provisioner definitions' pools: which nodes each static definition's
//! condition admits, evaluated when a node registers (its facts arrive) and
//! on reconfigure; `scontrol show provisioner`.

use super::{Cluster, NodeService};
use crate::error::{Error, Result};
use crate::model::Node;
use spur_proto::v1 as pb;
use spur_sched::provision::{Backend, Provision};
use spur_vocab::hostlist;
use std::sync::Arc;

/// Installs the config's definitions (None: none) and judges every node again.
pub(crate) fn apply(c: &mut Cluster, provision: Option<Arc<Provision>>) {
    c.provision = provision;
    c.condition_errors.clear();
    let names: Vec<String> = c.nodes.keys().cloned().collect();
    refresh(c, &names);
}

/// Recomputes the definitions of the named nodes from their facts. A
/// condition that fails to evaluate leaves the node out of that definition
/// and is logged once per node and definition.
pub(crate) fn refresh(c: &mut Cluster, names: &[String]) {
    let Some(p) = c.provision.clone() else {
        for n in names {
            if let Some(node) = c.nodes.get_mut(n) {
                node.definitions.clear();
                node.annotations.clear();
            }
        }
        return;
    };
    for name in names {
        let lent = c.dynamic.get(name).and_then(|d| d.pilot.as_ref()).map(|p| p.definition.clone());
        let Some(node) = c.nodes.get_mut(name) else { continue };
        if let Some(def) = lent {
            // A borrowed node serves the definition it was lent for, whatever its facts say.
            node.definitions = vec![def];
            node.annotations = annotations(&p, node);
            continue;
        }
        let Some(facts) = node.facts.clone() else { continue };
        node.definitions.clear();
        for d in p.defs.iter().filter(|d| d.backend == Backend::Static) {
            match d.holds(name, &facts) {
                Ok(true) => node.definitions.push(d.id.clone()),
                Ok(false) => {}
                Err(e) => {
                    let key = (d.id.clone(), name.clone());
                    if c.condition_errors.get(&key) != Some(&e) {
                        tracing::warn!(definition = %d.id, node = %name, error = %e, "condition failed to evaluate; the node is left out of the definition");
                    }
                    c.condition_errors.insert(key, e);
                }
            }
        }
        node.annotations = annotations(&p, node);
    }
}

/// nodeAnnotations, then the annotations of the node's definitions.
fn annotations(p: &Provision, n: &Node) -> Vec<(String, String)> {
    let mut out = p.node_annotations.clone();
    for d in n.definitions.iter().filter_map(|id| p.defs.iter().find(|d| &d.id == id)) {
        for (k, v) in &d.annotations {
            match out.iter_mut().find(|(ok, _)| ok == k) {
                Some(e) => e.1 = v.clone(),
                None => out.push((k.clone(), v.clone())),
            }
        }
    }
    out
}

/// A definition's borrowed nodes at `now`, by name, each with its cost so far.
fn borrowed(c: &Cluster, definition: &str, cost_per_hour: f64, now: i64) -> Vec<pb::BorrowedNode> {
    let mut out: Vec<pb::BorrowedNode> = (c.dynamic.iter())
        .filter_map(|(name, d)| Some((name, d.pilot.as_ref().filter(|p| p.definition == definition)?)))
        .map(|(name, p)| {
            let node = c.nodes.get(name);
            let state = match (&p.job, node.is_some_and(|n| n.hosted())) {
                (None, _) => "requested",
                (Some(_), false) => "booting",
                _ if node.is_some_and(|n| n.admin.drain) => "draining",
                _ => "active",
            };
            let hours = now.saturating_sub(p.requested_ms).max(0) as f64 / 3_600_000.0;
            pb::BorrowedNode {
                name: name.clone(),
                state: state.into(),
                upstream_job: p.job.clone().unwrap_or_default(),
                expires_ms: p.expires_ms,
                cost: hours * cost_per_hour,
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

impl NodeService {
    pub fn provision(&self) -> Option<Arc<Provision>> {
        self.read().provision.clone()
    }

    /// `scontrol show provisioner [ID]` at `now`.
    pub fn provisioners(&self, id: &str, now: i64) -> Result<pb::ListProvisionersResponse> {
        let c = self.read();
        let Some(p) = c.provision.as_ref() else {
            if !id.is_empty() {
                return Err(Error::NotFound(format!(
                    "provisioner '{id}': no provisioner definitions are configured"
                )));
            }
            return Ok(pb::ListProvisionersResponse::default());
        };
        let mut out = vec![];
        for d in p.defs.iter().filter(|d| id.is_empty() || d.id == id) {
            let members: Vec<&Node> = c.nodes.values().filter(|n| n.definitions.contains(&d.id)).collect();
            let names: Vec<String> = members.iter().map(|n| n.name.clone()).collect();
            let usable = members.iter().filter(|n| n.in_service()).count();
            let served = d.backend == Backend::Static || p.drives(d);
            let state = match (served, members.is_empty()) {
                (true, false) => "active",
                (true, true) => "no nodes",
                _ => "no driver",
            };
            let errors = (c.condition_errors.iter())
                .filter(|((def, _), _)| def == &d.id)
                .map(|((_, node), e)| pb::KeyValue::new(node, e))
                .collect();
            // Borrowed node-hours: those given back, and those held now since their request.
            let held: i64 = (c.dynamic.values())
                .filter_map(|n| n.pilot.as_ref().filter(|p| p.definition == d.id))
                .map(|p| now.saturating_sub(p.requested_ms).max(0))
                .sum();
            let node_hours = (c.given_back_ms.get(&d.id).copied().unwrap_or(0) + held) as f64 / 3_600_000.0;
            let borrowed = borrowed(&c, &d.id, d.cost, now);
            out.push(pb::Provisioner {
                node_hours,
                cost: node_hours * d.cost,
                id: d.id.clone(),
                backend: d.backend.as_str().into(),
                state: state.into(),
                nodes: hostlist::compress(&names),
                node_count: names.len() as u32,
                usable_nodes: usable as u32,
                annotations: d.annotations.iter().map(|(k, v)| pb::KeyValue::new(k, v)).collect(),
                policy: d.policy.as_ref().map(|c| c.source.clone()).unwrap_or_default(),
                condition: d.condition.as_ref().map(|c| c.source.clone()).unwrap_or_default(),
                exclusive: d.exclusive.as_str().into(),
                cost_per_hour: d.cost,
                ttl: d.ttl,
                ttl_buffer: d.ttl_buffer,
                spec: d.spec.iter().map(|(k, v)| pb::KeyValue::new(k, v)).collect(),
                condition_errors: errors,
                borrowed,
                ..Default::default()
            });
        }
        if out.is_empty() && !id.is_empty() {
            return Err(Error::NotFound(format!("provisioner '{id}' not found")));
        }
        Ok(pb::ListProvisionersResponse { provisioners: out, file: String::new() })
    }
}
