//! Nodes borrowed through pilot jobs upstream (`slurm` definitions): each
//! is a dynamic node whose record carries a [`Pilot`], persisted before its
//! pilot is submitted, so a restarted controller knows every pilot it asked
//! for and never asks twice. What a pass counts of them, and the driver's
//! writes; the driver itself (the commands, the lifecycle) is `crate::pilots`.

use super::NodeService;
use super::dynamic::DynamicDef;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use spur_sched::demand::Provisioned;
use spur_vocab::nodestate::Dynamic;
use std::collections::HashMap;

/// What a borrowed node was lent for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pilot {
    /// The `slurm` definition's id.
    pub definition: String,
    /// The upstream job id, once sbatch answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    pub requested_ms: i64,
    /// When the upstream ends the pilot: the request plus its time limit.
    pub expires_ms: i64,
}

/// A borrowed node as the driver sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PilotNode {
    pub name: String,
    pub pilot: Pilot,
    /// Its agent has registered.
    pub registered: bool,
    /// No job holds it.
    pub idle: bool,
    /// Drained (by an admin or before its expiry).
    pub drained: bool,
    /// Marked DOWN (by an admin, or when it did not boot in time).
    pub down: bool,
}

impl NodeService {
    /// Every borrowed node.
    pub fn pilot_nodes(&self) -> Vec<PilotNode> {
        let c = self.read();
        (c.dynamic.iter())
            .filter_map(|(name, d)| {
                let pilot = d.pilot.clone()?;
                let node = c.nodes.get(name);
                Some(PilotNode {
                    name: name.clone(),
                    pilot,
                    registered: node.is_some_and(|n| n.hosted()),
                    idle: node.is_none_or(|n| n.running_jobs == 0 && n.alloc_cpus == 0),
                    drained: node.is_some_and(|n| n.admin.drain),
                    down: node.is_some_and(|n| n.admin.down),
                })
            })
            .collect()
    }

    /// Each borrowed node's expiry, for a pass's placement.
    pub fn pilot_expiries(&self) -> HashMap<String, i64> {
        let c = self.read();
        (c.dynamic.iter()).filter_map(|(n, d)| Some((n.clone(), d.pilot.as_ref()?.expires_ms))).collect()
    }

    /// Each definition's borrowed nodes, booting and active, for a pass's snapshot.
    pub fn provisioned(&self) -> HashMap<String, Provisioned> {
        let c = self.read();
        let mut out: HashMap<String, Provisioned> = HashMap::new();
        // Counted in place: a pass needs no copy of the pilots.
        for (name, p) in (c.dynamic.iter()).filter_map(|(n, d)| Some((n, d.pilot.as_ref()?))) {
            let e = out.entry(p.definition.clone()).or_default();
            match c.nodes.get(name).is_some_and(|n| n.hosted()) {
                true => e.active += 1,
                false => e.booting += 1,
            }
        }
        out
    }

    /// The first free name `<definition>-<n>`, n from 1.
    pub fn pilot_name(&self, definition: &str) -> String {
        let c = self.read();
        let taken = |n: &String| c.nodes.contains_key(n) || c.dynamic.contains_key(n);
        (1u64..).map(|i| format!("{definition}-{i}")).find(|n| !taken(n)).unwrap_or_default()
    }

    /// Makes and persists the node a pilot will host, CLOUD until its agent registers.
    pub async fn create_pilot(&self, name: &str, cpus: u32, memory_mb: u64, pilot: Pilot) -> Result<()> {
        let def = DynamicDef {
            cpus,
            memory_mb,
            gres: vec![],
            features: vec![],
            hres: vec![],
            state: Dynamic::PoweringUp,
            pilot: Some(pilot),
        };
        self.put_dynamic(name, def, false).await
    }

    /// Counts a given-back node's time, `held_ms`, toward its definition's node-hours.
    pub fn note_given_back(&self, definition: &str, held_ms: i64) {
        *self.write().given_back_ms.entry(definition.to_string()).or_default() += held_ms.max(0);
    }

    /// Records the upstream job id sbatch gave the pilot of `name`: stored,
    /// then set in place (no node or partition depends on it, so nothing is rebuilt).
    pub async fn set_pilot_job(&self, name: &str, job: &str) -> Result<()> {
        let _writing = self.admin_writes.lock().await;
        let mut def = self
            .read()
            .dynamic
            .get(name)
            .cloned()
            .ok_or_else(|| Error::NotFound(format!("NodeName: no dynamic node '{name}'")))?;
        let Some(p) = def.pilot.as_mut() else {
            return Err(Error::FailedPrecondition(format!("NodeName: node '{name}' has no pilot")));
        };
        p.job = Some(job.to_string());
        self.persist_dynamic(name, &def).await?;
        self.write().dynamic.insert(name.to_string(), def);
        self.publish(vec![name.to_string()]);
        Ok(())
    }
}
