//! Dynamic nodes: nodes not in spur.conf, as Slurm's `slurmd -Z` and
//! `scontrol create|delete NodeName=` make them.
//!
//! The rule: `[controller] max_dynamic_nodes` (Slurm's MaxNodeCount, less
//! the configured nodes) says how many may exist; 0, the default, allows
//! none. A dynamic node is one persisted record (its shape and HRES layers),
//! built into the cluster with spur.conf's nodes (`build.rs`), so it joins
//! the partitions whose `nodes` is `ALL` or that `dynamic_partitions` names,
//! and provisioner conditions judge it like any node. An agent registering
//! with `--dynamic` creates (or reshapes) its node after its admission token
//! is checked; `scontrol create` makes one that waits for its agent
//! (CLOUD or FUTURE); `scontrol delete` removes one no job holds.

use super::NodeService;
use crate::admission::Admitted;
use crate::error::{Error, Result};
use crate::store::{Action, Store, now_ms};
use serde::{Deserialize, Serialize};
use spur_proto::v1 as pb;
use spur_vocab::dynamic::{HresPair, check_name, parse_features, parse_hres};
use spur_vocab::nodestate::Dynamic;
use std::collections::BTreeMap;

/// Store docs: node name -> [`DynamicDef`].
pub const KIND_DYNAMIC_NODE: &str = "dynamic_node";

/// A dynamic node's record: what spur.conf's `[[nodes]]` would say of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DynamicDef {
    pub cpus: u32,
    pub memory_mb: u64,
    #[serde(default)]
    pub gres: Vec<(String, u64)>,
    #[serde(default)]
    pub features: Vec<String>,
    /// The HRES layers it joined at creation (the spec's configured layers).
    #[serde(default)]
    pub hres: Vec<HresPair>,
    /// How it waits for its agent: NORM when an agent made it.
    pub state: Dynamic,
    /// A node a `slurm` definition borrowed through a pilot job upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pilot: Option<super::pilots::Pilot>,
}

impl DynamicDef {
    /// Checks a request's shape; errors name the key as `scontrol create`
    /// spells it. `agent`: from `spurd --dynamic`, which gives no State=.
    pub fn from_wire(d: &pb::DynamicNode, agent: bool) -> Result<DynamicDef> {
        if d.cpus == 0 {
            return Err(Error::invalid("CPUs", "a dynamic node needs CPUs= of at least 1"));
        }
        let gres = crate::config::parse_gres(&d.gres).map_err(|e| Error::invalid("Gres", e))?;
        let hres = parse_hres(&d.hres).map_err(|e| Error::invalid("HRES", e))?;
        let features = parse_features(&d.features).map_err(|e| Error::invalid("Features", e))?;
        let state = match (agent, d.state.trim()) {
            (true, _) => Dynamic::Norm,
            (false, s) => match Dynamic::parse(s) {
                Some(st @ (Dynamic::Cloud | Dynamic::Future)) => st,
                _ => {
                    return Err(Error::invalid(
                        "State",
                        format!("'{s}': scontrol create makes a node State=CLOUD or State=FUTURE"),
                    ));
                }
            },
        };
        Ok(DynamicDef { cpus: d.cpus, memory_mb: d.memory_mb, gres, features, hres, state, pilot: None })
    }
}

/// The persisted dynamic nodes; a record that no longer reads is logged and skipped.
pub(crate) async fn load(store: Option<&dyn Store>) -> Result<BTreeMap<String, DynamicDef>> {
    let mut out = BTreeMap::new();
    let Some(s) = store else { return Ok(out) };
    for (name, doc) in s.load(KIND_DYNAMIC_NODE).await? {
        match serde_json::from_value::<DynamicDef>(doc) {
            Ok(d) => {
                out.insert(name, d);
            }
            Err(e) => tracing::error!(node = %name, "a saved dynamic node does not read; skipped: {e}"),
        }
    }
    Ok(out)
}

/// Whether `name` may become (or stay) the dynamic node `def` in a cluster
/// with these nodes, records and limit; `replace` lets an agent reshape its own.
fn admissible(c: &super::Cluster, name: &str, replace: bool) -> Result<()> {
    check_name(name).map_err(|e| Error::invalid("NodeName", e))?;
    let max = c.cfg.as_ref().map_or(0, |cfg| cfg.controller.max_dynamic_nodes);
    if max == 0 {
        return Err(Error::FailedPrecondition(
            "dynamic nodes are not allowed here: set [controller] max_dynamic_nodes in spur.conf".into(),
        ));
    }
    let exists = c.dynamic.contains_key(name);
    if c.nodes.contains_key(name) && !exists {
        return Err(Error::FailedPrecondition(format!(
            "NodeName: node '{name}' is defined in spur.conf; only a node not in it can be dynamic"
        )));
    }
    if exists && !replace {
        return Err(Error::FailedPrecondition(format!("NodeName: node '{name}' already exists")));
    }
    if !exists && c.dynamic.len() >= max as usize {
        return Err(Error::ResourceExhausted(format!(
            "NodeName: {max} dynamic nodes exist, the most [controller] max_dynamic_nodes allows"
        )));
    }
    Ok(())
}

impl NodeService {
    /// `scontrol create NodeName=...`: a dynamic node that waits for its
    /// agent. Returns the HRES layers it asks to join.
    pub async fn create(&self, name: &str, d: &pb::DynamicNode) -> Result<Vec<HresPair>> {
        let def = DynamicDef::from_wire(d, false)?;
        let hres = def.hres.clone();
        crate::audit::claim::take(name, Action::Create, serde_json::json!({ "state": def.state.as_str() }));
        self.put_dynamic(name, def, false).await?;
        Ok(hres)
    }

    /// A `spurd --dynamic` registration: the token is checked before
    /// anything is created, then the node is made (or reshaped: the agent's
    /// flags win over what `scontrol create` said) and registered. Returns
    /// the registration and the HRES layers the node asks to join.
    pub async fn register_dynamic(
        &self,
        req: &pb::RegisterRequest,
        now: i64,
    ) -> Result<((String, String, Admitted), Vec<HresPair>)> {
        let out = self.admit_dynamic(req, now).await;
        if let Err(e) = &out {
            let token = crate::admission::presented_id(&req.admission_token);
            tracing::warn!(nodes = ?req.nodes, token = ?token, "dynamic registration refused: {e}");
        }
        out
    }

    async fn admit_dynamic(
        &self,
        req: &pb::RegisterRequest,
        now: i64,
    ) -> Result<((String, String, Admitted), Vec<HresPair>)> {
        let admitted = self.admission.admit(&req.admission_token, &req.nodes, now)?;
        let [name] = req.nodes.as_slice() else {
            return Err(Error::invalid("nodes", "a dynamic agent hosts exactly one node"));
        };
        let def = DynamicDef::from_wire(req.dynamic.as_ref().unwrap_or(&pb::DynamicNode::default()), true)?;
        let hres = def.hres.clone();
        let unchanged = self.read().dynamic.get(name).is_some_and(|old| {
            old.cpus == def.cpus
                && old.memory_mb == def.memory_mb
                && old.gres == def.gres
                && old.features == def.features
        });
        // A re-registration after a controller restart changes nothing: no write.
        if !unchanged {
            self.put_dynamic(name, def, true).await?;
        }
        Ok((self.attach(req, now, admitted)?, hres))
    }

    /// Persists `def` as the dynamic node `name`, then rebuilds the nodes
    /// and partitions with it, under the admin-write lock.
    pub(super) async fn put_dynamic(&self, name: &str, mut def: DynamicDef, replace: bool) -> Result<()> {
        let _writing = self.admin_writes.lock().await;
        let cfg = {
            let c = self.read();
            admissible(&c, name, replace)?;
            // An agent keeps the layers its node was created with (the spec's configured layers).
            if let Some(old) = c.dynamic.get(name)
                && def.hres.is_empty()
            {
                def.hres = old.hres.clone();
            }
            // Its agent's registration keeps what the pilot's node was lent for.
            if let Some(old) = c.dynamic.get(name)
                && def.pilot.is_none()
            {
                def.pilot = old.pilot.clone();
            }
            c.cfg.clone()
        };
        let cfg = cfg.ok_or_else(|| Error::Unavailable("the node service is not configured".into()))?;
        self.persist_dynamic(name, &def).await?;
        {
            let mut c = self.write();
            c.dynamic.insert(name.to_string(), def);
            super::build::apply_config(&mut c, &cfg, now_ms())?;
        }
        tracing::info!(node = %name, "dynamic node added");
        self.publish(vec![name.to_string()]);
        Ok(())
    }

    /// Stores `def` as the dynamic node `name` (before it is applied).
    pub(super) async fn persist_dynamic(&self, name: &str, def: &DynamicDef) -> Result<()> {
        if let Some(store) = &self.store {
            let doc = [(name.to_string(), Some(serde_json::to_string(def)?))];
            crate::audit::claim::commit(store.as_ref(), KIND_DYNAMIC_NODE, &doc).await?;
        }
        Ok(())
    }

    /// `scontrol delete NodeName=`: removes a dynamic node; `holding` are the
    /// jobs on it, which refuse the delete (as Slurm's does).
    pub async fn delete(&self, name: &str, holding: &[u64]) -> Result<()> {
        let _writing = self.admin_writes.lock().await;
        let cfg = {
            let c = self.read();
            if !c.dynamic.contains_key(name) {
                return Err(match c.nodes.contains_key(name) {
                    true => Error::FailedPrecondition(format!(
                        "NodeName: node '{name}' is defined in spur.conf; remove it there and reconfigure"
                    )),
                    false => Error::NotFound(format!("NodeName: no dynamic node '{name}'")),
                });
            }
            if !holding.is_empty() {
                let ids: Vec<String> = holding.iter().map(u64::to_string).collect();
                return Err(Error::FailedPrecondition(format!(
                    "NodeName: node '{name}' has jobs: {}; cancel or requeue them first",
                    ids.join(",")
                )));
            }
            c.cfg.clone().ok_or_else(|| Error::Unavailable("the node service is not configured".into()))?
        };
        crate::audit::claim::take(name, Action::Delete, serde_json::json!({}));
        if let Some(store) = &self.store {
            let docs = [(name.to_string(), None), (name.to_string(), None)];
            crate::audit::claim::commit(store.as_ref(), KIND_DYNAMIC_NODE, &docs[..1]).await?;
            // Its admin state (a drain) goes with it: a node of that name made later starts clean.
            store.commit_raw(super::KIND_NODE_STATE, &docs[1..], &[]).await?;
        }
        {
            let mut c = self.write();
            c.dynamic.remove(name);
            // Its agent hosts nothing here now: the agent's next heartbeat is told to register again.
            for a in c.agents.values_mut() {
                a.nodes.retain(|n| n != name);
            }
            c.agents.retain(|_, a| !a.nodes.is_empty());
            c.condition_errors.retain(|(_, n), _| n != name);
            super::build::apply_config(&mut c, &cfg, now_ms())?;
        }
        tracing::info!(node = %name, "dynamic node deleted");
        self.publish(vec![name.to_string()]);
        Ok(())
    }

    /// How many hosts, and how long a name, a token's `--nodes` may name: the
    /// cluster's nodes, and where dynamic nodes are allowed, as many more
    /// names as may yet register, of any length a node name may have.
    pub fn token_bounds(&self) -> (usize, usize) {
        let (max, configured) = {
            let c = self.read();
            let max = c.cfg.as_ref().map_or(0, |cfg| cfg.controller.max_dynamic_nodes as usize);
            (max, c.nodes.values().filter(|n| n.dynamic.is_none()).count())
        };
        match max {
            0 => (self.count(), self.longest_name()),
            m => (configured + m, spur_vocab::hostlist::MAX_NAME_LEN),
        }
    }

    /// Each dynamic node's HRES layers, for the license table's start and reconfigure.
    pub fn dynamic_hres(&self) -> Vec<(String, Vec<HresPair>)> {
        (self.read().dynamic.iter()).map(|(n, d)| (n.clone(), d.hres.clone())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const CONF: &str = "[controller]\nmax_dynamic_nodes = 2\ndynamic_partitions = [\"gpu\"]\n\
        [[nodes]]\nname = \"n1\"\n[[partitions]]\nname = \"p\"\nnodes = \"n1\"\n\
        [[partitions]]\nname = \"gpu\"\nnodes = \"n1\"\n[[partitions]]\nname = \"all\"\nnodes = \"ALL\"\n";

    async fn service(db: &str) -> Arc<NodeService> {
        let cfg = crate::config::Config::parse(CONF, "spur.conf", "/etc/spur".into()).unwrap();
        let store = crate::store::open(db).await.unwrap();
        let hub = Arc::new(crate::audit::Hub::new(Some(store.clone())));
        let admission = Arc::new(crate::admission::Admission::load(cfg.admission.mode, None).await.unwrap());
        Arc::new(NodeService::new(&cfg, Some(store), hub, admission).await.unwrap())
    }

    fn shape(state: &str) -> pb::DynamicNode {
        pb::DynamicNode {
            cpus: 4,
            memory_mb: 1024,
            features: vec!["a,b".into()],
            state: state.into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_shape_is_checked_and_each_bad_key_named() {
        let d = DynamicDef::from_wire(&shape("cloud"), false).unwrap();
        assert_eq!((d.cpus, d.state, d.features.len()), (4, Dynamic::Cloud, 2));
        assert_eq!(DynamicDef::from_wire(&shape(""), true).unwrap().state, Dynamic::Norm);
        let bad = |d: pb::DynamicNode| DynamicDef::from_wire(&d, false).unwrap_err().to_string();
        assert!(bad(pb::DynamicNode { cpus: 0, ..shape("CLOUD") }).contains("CPUs"));
        assert!(bad(shape("IDLE")).contains("State"));
        assert!(bad(pb::DynamicNode { gres: "gpu:x".into(), ..shape("CLOUD") }).contains("Gres"));
        assert!(bad(pb::DynamicNode { hres: "[".into(), ..shape("CLOUD") }).contains("HRES"));
        assert!(bad(pb::DynamicNode { features: vec!["a b".into()], ..shape("CLOUD") }).contains("Features"));
    }

    /// Created nodes join ALL and dynamic_partitions, are capped by
    /// max_dynamic_nodes, survive a restart, and a delete is refused while
    /// jobs hold the node and is durable once done.
    #[tokio::test]
    async fn dynamic_nodes_join_partitions_persist_and_delete() {
        let dir = tempfile::tempdir().unwrap();
        let db = format!("sqlite://{}/spur.db", dir.path().display());
        let svc = service(&db).await;
        svc.create("d1", &shape("CLOUD")).await.unwrap();
        svc.create("d2", &shape("FUTURE")).await.unwrap();
        let e = svc.create("d3", &shape("CLOUD")).await.unwrap_err().to_string();
        assert!(e.contains("max_dynamic_nodes"), "{e}");
        let e = svc.create("d1", &shape("CLOUD")).await.unwrap_err().to_string();
        assert!(e.contains("already exists"), "{e}");
        let e = svc.create("n1", &shape("CLOUD")).await.unwrap_err().to_string();
        assert!(e.contains("spur.conf"), "{e}");
        let members = |svc: &NodeService, p: &str| {
            svc.partitions().into_iter().find(|x| x.name == p).map(|x| x.nodes).unwrap_or_default()
        };
        assert_eq!(members(&svc, "gpu"), ["n1", "d1", "d2"]);
        assert_eq!(members(&svc, "all"), ["d1", "d2", "n1"]);
        assert_eq!(members(&svc, "p"), ["n1"]);
        assert_eq!(svc.node("d1").unwrap().partitions, ["gpu", "all"]);
        // Tokens may name the configured node and as many more, of any name length.
        assert_eq!(svc.token_bounds(), (1 + 2, spur_vocab::hostlist::MAX_NAME_LEN));
        // A created node waits: the timeout monitor leaves it alone.
        assert!(svc.check_timeouts(i64::MAX).iter().all(|n| n == "n1"));

        let restarted = service(&db).await;
        assert_eq!(restarted.node("d2").unwrap().dynamic, Some(Dynamic::Future));
        assert_eq!(members(&restarted, "gpu"), ["n1", "d1", "d2"]);

        let e = restarted.delete("d1", &[7, 9]).await.unwrap_err().to_string();
        assert!(e.contains("has jobs: 7,9"), "{e}");
        restarted.delete("d1", &[]).await.unwrap();
        assert!(restarted.delete("n1", &[]).await.unwrap_err().to_string().contains("spur.conf"));
        assert!(matches!(restarted.delete("d1", &[]).await, Err(Error::NotFound(_))));
        assert!(restarted.node("d1").is_none() && !members(&restarted, "all").contains(&"d1".to_string()));
        let again = service(&db).await;
        assert!(again.node("d1").is_none() && again.node("d2").is_some());
    }

    /// An agent's registration makes the node, and static definitions'
    /// conditions judge it from the facts it sent, like any node's.
    #[tokio::test]
    async fn a_registered_dynamic_node_is_judged_by_static_definitions() {
        let dir = tempfile::tempdir().unwrap();
        let svc = service(&format!("sqlite://{}/spur.db", dir.path().display())).await;
        let yaml = "definitions:\n- id: dyn\n  provisioner: static\n  \
            provisionerSpec: {condition: 'hostname() matches \"d[0-9]+\"'}\n";
        let mut cfg = svc.read().cfg.as_deref().cloned().unwrap();
        cfg.provision = Some(Arc::new(spur_sched::provision::parse(yaml, 1).unwrap()));
        svc.reconfigure(&cfg).unwrap();
        let req = pb::RegisterRequest {
            nodes: vec!["d7".into()],
            dynamic: Some(shape("")),
            facts: Some(pb::HostFacts::default()),
            ..Default::default()
        };
        let ((id, _, _), _) = svc.register_dynamic(&req, 0).await.unwrap();
        let n = svc.node("d7").unwrap();
        assert_eq!(
            (n.definitions.as_slice(), n.agent_id.as_deref()),
            (&["dyn".to_string()][..], Some(id.as_str()))
        );
        assert_eq!(n.dynamic, Some(Dynamic::Norm));
        let two = pb::RegisterRequest { nodes: vec!["d8".into(), "d9".into()], ..req.clone() };
        let e = svc.register_dynamic(&two, 0).await.unwrap_err().to_string();
        assert!(e.contains("exactly one"), "{e}");
    }
}
