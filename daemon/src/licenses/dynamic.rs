//! Dynamic nodes in HRES layers (the HRES page's "Dynamic Nodes"): a node
//! not in resources.yaml names its layers when it is created (`HRES=`), is
//! added to them and their parents, and is removed from every layer when it
//! is deleted. An unknown or unsuitable layer creates the node without HRES
//! membership and logs an error. The layers a node was created with are kept
//! with the node's record, so they are applied again after a restart or a
//! reconfigure, which rebuild the table from resources.yaml.

use super::{KIND_HRES_NODES, LicenseService};
use crate::error::Result;
use crate::model::{HresMode, HresResource};
use serde_json::json;
use spur_vocab::dynamic::HresPair;
use std::sync::Arc;

impl LicenseService {
    /// Puts dynamic node `name` on the layers `pairs` names; returns why it
    /// joined none when one of them is unknown or unsuitable (also logged).
    pub async fn join_dynamic(&self, name: &str, pairs: &[HresPair]) -> Option<String> {
        let _writing = self.writes.lock().await;
        let before =
            self.dynamic.write().unwrap_or_else(|p| p.into_inner()).insert(name.to_string(), pairs.to_vec());
        // A re-registration naming the same layers changes nothing (runtime moves are kept).
        if before.as_deref() == Some(pairs) {
            return None;
        }
        {
            let mut known = self.nodes.write().unwrap_or_else(|p| p.into_inner());
            // An empty set is a cluster of no configured nodes: every name is known.
            if !known.is_empty() {
                known.insert(name.to_string());
            }
        }
        let mut all = (*self.hres()).clone();
        // Other layers than before: the old ones are left first.
        if before.is_some() {
            leave(&mut all, name);
        }
        let refused = join(&mut all, name, pairs).err();
        if let Some(e) = &refused {
            tracing::error!(node = %name, "the dynamic node joins no HRES layer: {e}");
        }
        self.table.write().unwrap_or_else(|p| p.into_inner()).1 = Arc::new(all);
        self.notify("");
        refused
    }

    /// Takes a deleted node off every layer, and off the saved membership
    /// of layers a runtime update wrote, so a restart does not bring it back.
    pub async fn leave_dynamic(&self, name: &str) -> Result<()> {
        let _writing = self.writes.lock().await;
        self.dynamic.write().unwrap_or_else(|p| p.into_inner()).remove(name);
        self.nodes.write().unwrap_or_else(|p| p.into_inner()).remove(name);
        if let Some(s) = &self.store {
            let mut docs = vec![];
            for (key, doc) in s.load(KIND_HRES_NODES).await? {
                let mut nodes: Vec<String> = serde_json::from_value(doc["nodes"].clone()).unwrap_or_default();
                if nodes.iter().any(|n| n == name) {
                    nodes.retain(|n| n != name);
                    docs.push((key, Some(json!({ "nodes": nodes }).to_string())));
                }
            }
            if !docs.is_empty() {
                s.commit_raw(KIND_HRES_NODES, &docs, &[]).await?;
            }
        }
        let mut all = (*self.hres()).clone();
        leave(&mut all, name);
        self.table.write().unwrap_or_else(|p| p.into_inner()).1 = Arc::new(all);
        self.notify("");
        Ok(())
    }

    /// The dynamic nodes' layers applied again to a table just built from resources.yaml.
    pub(super) fn rejoin(&self, hres: &mut [HresResource]) {
        for (name, pairs) in self.dynamic.read().unwrap_or_else(|p| p.into_inner()).iter() {
            if let Err(e) = join(hres, name, pairs) {
                tracing::error!(node = %name, "the dynamic node joins no HRES layer: {e}");
            }
        }
    }
}

/// Adds `name` to each pair's layer and its parents (Mode 3 parents follow
/// their leaves), all or none: an unknown resource or layer, a Mode 3 layer
/// that is not a leaf, or two leaves of one Mode 3 resource refuse them all.
pub fn join(hres: &mut [HresResource], name: &str, pairs: &[HresPair]) -> std::result::Result<(), String> {
    let mut next: Vec<HresResource> = hres.to_vec();
    for (k, p) in pairs.iter().enumerate() {
        let r = (next.iter_mut().find(|r| r.name == p.hres_name))
            .ok_or_else(|| format!("HRES: no resource '{}'", p.hres_name))?;
        let i = (r.layer(&p.layer_name))
            .ok_or_else(|| format!("HRES: resource '{}' has no layer '{}'", p.hres_name, p.layer_name))?;
        if r.mode == HresMode::Three {
            if !r.is_leaf(i) {
                return Err(format!(
                    "HRES: layer '{}' of '{}' has children; in MODE_3 a node joins a leaf",
                    p.layer_name, p.hres_name
                ));
            }
            if pairs[..k].iter().any(|o| o.hres_name == p.hres_name) {
                return Err(format!("HRES: in MODE_3 a node joins one leaf of '{}'", p.hres_name));
            }
        }
        let nodes = &mut r.layers[i].nodes;
        if let Err(pos) = nodes.binary_search_by(|n| n.as_str().cmp(name)) {
            nodes.insert(pos, name.to_string());
        }
        // Only MODE_3 layers have parents, and derive makes each the union of its children.
        r.derive();
    }
    hres.clone_from_slice(&next);
    Ok(())
}

/// Removes `name` from every layer of every resource.
pub fn leave(hres: &mut [HresResource], name: &str) {
    for r in hres.iter_mut() {
        if r.layers.iter().any(|l| l.nodes.iter().any(|n| n == name)) {
            for l in &mut r.layers {
                l.nodes.retain(|n| n != name);
            }
            r.derive();
        }
    }
}
