//! Admin state writes (`scontrol update nodename=...`, the system's drains):
//! validate, persist, then install, under one lock from the snapshot the
//! write computes from to its install, so a concurrent drain, resume or
//! system drain never installs a copy older than another's. What the write
//! installs is the change applied again to the node as it is then, so a
//! memory-only change made meanwhile (an agent lost or back, its system
//! reason) is kept.

use super::NodeService;
use crate::accounting::Caller;
use crate::error::{Error, Result};
use crate::model::{Node, NodeAdmin, Reason};
use crate::store::{Action, now_ms};

pub use spur_vocab::nodestate::Requested;

/// The node's admin state with `want` applied, reason `stamp`.
fn apply(want: Requested, n: &Node, stamp: &Reason) -> NodeAdmin {
    let mut a = n.admin.clone();
    match want {
        Requested::Drain => {
            a.drain = true;
            a.reason = Some(stamp.clone());
        }
        Requested::Down => {
            a.down = true;
            a.reason = Some(stamp.clone());
        }
        Requested::Resume => {
            a.drain = false;
            a.down = false;
            // A node whose agent is silent stays DOWN, Not responding, until it returns.
            a.reason = match (n.responding || !n.registered, a.reason.take()) {
                (true, _) => None,
                (false, Some(r)) if r.system => Some(r),
                (false, _) => Some(Reason {
                    text: super::agents::NOT_RESPONDING.into(),
                    user: crate::store::SYSTEM_ACTOR.into(),
                    uid: None,
                    time_ms: stamp.time_ms,
                    system: true,
                }),
            };
        }
    }
    a
}

impl NodeService {
    /// `scontrol update nodename=LIST state=... reason=...`. Returns the
    /// nodes changed and a warning when the state was not recognised.
    pub async fn update(
        &self,
        caller: &Caller,
        expr: &str,
        state: &str,
        reason: &str,
    ) -> Result<(Vec<String>, Option<String>)> {
        let names = self.resolve(expr)?;
        let (want, warning) = Requested::parse(state);
        let reason = reason.trim();
        if matches!(want, Requested::Drain | Requested::Down) && reason.is_empty() {
            let s = if want == Requested::Drain { "drain" } else { "down" };
            return Err(Error::invalid("reason", format!("required with state={s} (say why, as in Slurm)")));
        }
        let stamp = Reason {
            text: reason.to_string(),
            user: caller.user.clone(),
            uid: caller.uid.map(i64::from),
            time_ms: now_ms(),
            system: false,
        };
        let _writing = self.admin_writes.lock().await;
        let next: Vec<(String, NodeAdmin)> = {
            let c = self.read();
            names
                .iter()
                .filter_map(|n| c.nodes.get(n))
                .map(|n| (n.name.clone(), apply(want, n, &stamp)))
                .collect()
        };
        // The request's row (the Note nodes_api returns) commits with the state.
        crate::audit::claim::take(expr, Action::Update, super::update_info(&names, &warning));
        self.persist(&next).await?;
        {
            let mut c = self.write();
            for (name, _) in &next {
                if let Some(n) = c.nodes.get_mut(name) {
                    n.admin = apply(want, n, &stamp);
                }
            }
        }
        self.publish(names.clone());
        Ok((names, warning))
    }

    /// Drains `name` for the system (an HRES plugin's node function failed),
    /// audited as Source=system.
    pub async fn drain_for(&self, name: &str, reason: &str) -> Result<()> {
        self.drain_as(name, reason, "hres_plugin", now_ms()).await
    }

    /// Drains `name` for the system at `now`, the reason's user `by` (the
    /// part of the controller that drains it), audited as Source=system.
    pub async fn drain_as(&self, name: &str, reason: &str, by: &str, now: i64) -> Result<()> {
        self.set_as(Requested::Drain, name, reason, by, now).await
    }

    /// Marks `name` DOWN for the system at `now`, as [`NodeService::drain_as`]
    /// drains it (a borrowed node whose agent did not register in time).
    pub async fn down_as(&self, name: &str, reason: &str, by: &str, now: i64) -> Result<()> {
        self.set_as(Requested::Down, name, reason, by, now).await
    }

    async fn set_as(&self, want: Requested, name: &str, reason: &str, by: &str, now: i64) -> Result<()> {
        let text = reason.to_string();
        let stamp = Reason { text, user: by.into(), uid: None, time_ms: now, system: false };
        let _writing = self.admin_writes.lock().await;
        let Some(a) = self.read().nodes.get(name).map(|n| apply(want, n, &stamp)) else {
            return Ok(());
        };
        self.persist(&[(name.to_string(), a)]).await?;
        if let Some(n) = self.write().nodes.get_mut(name) {
            n.admin = apply(want, n, &stamp);
        }
        self.publish(vec![name.to_string()]);
        let state = if want == Requested::Down { "down" } else { "drain" };
        let info = serde_json::json!({ "state": state, "reason": reason });
        self.hub().record_all(vec![crate::store::TxnRow::system("node", name, "update", info)]).await;
        Ok(())
    }

    /// Writes the nodes' admin state, with the request's audit row when its
    /// core took one (`audit::claim`), in one durable commit.
    async fn persist(&self, admin: &[(String, NodeAdmin)]) -> Result<()> {
        let Some(store) = &self.store else { return Ok(()) };
        let docs = admin
            .iter()
            .map(|(name, a)| Ok((name.clone(), Some(serde_json::to_string(a)?))))
            .collect::<Result<Vec<_>>>()?;
        crate::audit::claim::commit(store.as_ref(), super::KIND_NODE_STATE, &docs).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    async fn service(db: &str) -> Arc<NodeService> {
        let text = "[[nodes]]\nname = \"n1\"\n[[partitions]]\nname = \"p\"\nnodes = \"n1\"\n";
        let cfg = crate::config::Config::parse(text, "spur.conf", "/etc/spur".into()).unwrap();
        let store = crate::store::open(db).await.unwrap();
        let hub = Arc::new(crate::audit::Hub::new(Some(store.clone())));
        let admission = Arc::new(crate::admission::Admission::load(cfg.admission.mode, None).await.unwrap());
        Arc::new(NodeService::new(&cfg, Some(store), hub, admission).await.unwrap())
    }

    fn flags(svc: &NodeService) -> (bool, bool) {
        let c = svc.read();
        (c.nodes["n1"].admin.drain, c.nodes["n1"].admin.down)
    }

    /// Drains, resumes, system drains and the agent's loss and return race on
    /// one node; after each round memory and the store (read by a restarted
    /// service) agree.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn racing_drain_resume_and_agent_loss_leave_memory_and_store_in_step() {
        let dir = tempfile::tempdir().unwrap();
        let db = format!("sqlite://{}/spur.db", dir.path().display());
        let svc = service(&db).await;
        let admin = Caller { user: "root".into(), ..Caller::default() };
        for round in 0..500 {
            let (a, b, c) = (svc.clone(), svc.clone(), svc.clone());
            let who = admin.clone();
            let drain = tokio::spawn(async move { a.update(&who, "n1", "drain", "disk").await.map(|_| ()) });
            let who = admin.clone();
            let resume = tokio::spawn(async move { b.update(&who, "n1", "resume", "").await.map(|_| ()) });
            let system = tokio::spawn(async move { c.drain_for("n1", "prolog failed").await });
            // The agent goes silent while the writes are on their way to the store: memory only.
            svc.check_timeouts(i64::MAX);
            for t in [drain, resume, system] {
                t.await.unwrap().unwrap();
            }
            {
                let c = svc.read();
                let n = &c.nodes["n1"];
                assert!(
                    n.responding || n.admin.reason.is_some(),
                    "round {round}: a silent node keeps a reason"
                );
            }
            // The agent is back: its system reason goes, as a heartbeat does it.
            {
                let mut c = svc.write();
                let n = c.nodes.get_mut("n1").unwrap();
                n.responding = true;
                if n.admin.reason.as_ref().is_some_and(|r| r.system) {
                    n.admin.reason = None;
                }
            }
            if round % 50 == 49 {
                let restarted = service(&db).await;
                assert_eq!(flags(&restarted), flags(&svc), "round {round}: the store has what memory shows");
            }
        }
        let restarted = service(&db).await;
        assert_eq!(flags(&restarted), flags(&svc));
    }
}
