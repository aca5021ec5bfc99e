//! Node agents (spurd): registration with an admission token and the
//! host's facts, heartbeats, the monitor that sets silent nodes DOWN "Not
//! responding" (and back), and the command stream that carries launches and
//! signals to agents.

use super::{AgentConn, NodeService};
use crate::admission::Admitted;
use crate::error::{Error, Result};
use crate::model::Reason;
use crate::store::{TxnRow, now_ms};
use spur_proto::v1 as pb;
use spur_vocab::hostlist::compress;
use spur_vocab::nodestate::Dynamic;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

pub const NOT_RESPONDING: &str = "Not responding";
/// Commands queued for one agent before sends wait.
const COMMAND_QUEUE: usize = 256;
/// Who the controller's own actions are attributed to.
pub use crate::store::SYSTEM_ACTOR;

impl NodeService {
    /// Registers an agent for its nodes at `now`; returns its id, its key
    /// (the credential its later calls present) and what admitted it, to be
    /// spent before the registration is acknowledged. A refusal is logged.
    pub fn register(&self, req: &pb::RegisterRequest, now: i64) -> Result<(String, String, Admitted)> {
        let out = self.admit(req, now);
        if let Err(e) = &out {
            let token = crate::admission::presented_id(&req.admission_token);
            tracing::warn!(nodes = %compress(&req.nodes), token = ?token, "registration refused: {e}");
        }
        out
    }

    fn admit(&self, req: &pb::RegisterRequest, now: i64) -> Result<(String, String, Admitted)> {
        let admitted = self.admission.admit(&req.admission_token, &req.nodes, now)?;
        self.attach(req, now, admitted)
    }

    /// Registers an agent its admission token admitted for nodes that exist.
    pub(super) fn attach(
        &self,
        req: &pb::RegisterRequest,
        now: i64,
        admitted: Admitted,
    ) -> Result<(String, String, Admitted)> {
        if req.nodes.is_empty() {
            return Err(Error::invalid("nodes", "an agent must host at least one node"));
        }
        let facts = super::facts::resolve(req)?;
        let id = crate::admission::random_hex(8)?;
        let key = crate::admission::random_hex(32)?;
        let back = {
            let mut c = self.write();
            if let Some(unknown) = req.nodes.iter().find(|n| !c.nodes.contains_key(*n)) {
                return Err(Error::NotFound(format!(
                    "nodes: '{unknown}' is not defined in spur.conf (a node that is not registers with --dynamic)"
                )));
            }
            // A node moves to its newest agent.
            for a in c.agents.values_mut() {
                a.nodes.retain(|n| !req.nodes.contains(n));
            }
            c.agents.retain(|_, a| !a.nodes.is_empty());
            let (tx, rx) = mpsc::channel(COMMAND_QUEUE);
            let conn = AgentConn {
                nodes: req.nodes.clone(),
                key: crate::admission::hash(&key),
                last_ms: now,
                commands: Some(tx),
                unopened: Some(rx),
            };
            c.agents.insert(id.clone(), conn);
            let mut back = vec![];
            for (name, facts) in req.nodes.iter().zip(facts) {
                if let Some(n) = c.nodes.get_mut(name) {
                    n.facts = Some(facts);
                    if n.registered && !n.responding {
                        back.push(name.clone());
                    }
                    n.registered = true;
                    n.responding = true;
                    n.agent_id = Some(id.clone());
                    n.agent_host = req.hostname.clone();
                    n.last_heartbeat_ms = now;
                    if n.admin.reason.as_ref().is_some_and(|r| r.system) {
                        n.admin.reason = None;
                    }
                }
            }
            // New facts may admit the nodes to other definitions; judged before anyone reads them.
            super::pools::refresh(&mut c, &req.nodes);
            back
        };
        tracing::info!(agent = %id, host = %req.hostname, nodes = req.nodes.len(), "agent registered");
        if !back.is_empty() {
            self.system_row(&back, "responding again");
        }
        self.publish(req.nodes.clone());
        Ok((id, key, admitted))
    }

    /// The nodes of the agent `agent_id`, if `key` is its credential.
    pub fn agent_nodes(&self, agent_id: &str, key: &str) -> Result<Vec<String>> {
        let c = self.read();
        Ok(authenticate(&c.agents, agent_id, key)?.ok_or_else(|| unknown_agent(agent_id))?.nodes.clone())
    }

    /// Returns false when the agent is unknown (the controller restarted).
    pub fn heartbeat(&self, agent_id: &str, key: &str) -> Result<bool> {
        let now = now_ms();
        let mut c = self.write();
        if authenticate(&c.agents, agent_id, key)?.is_none() {
            return Ok(false);
        }
        let Some(a) = c.agents.get_mut(agent_id) else { return Ok(false) };
        a.last_ms = now;
        let nodes = a.nodes.clone();
        let mut back = vec![];
        for name in &nodes {
            if let Some(n) = c.nodes.get_mut(name) {
                if !n.responding {
                    back.push(name.clone());
                    if n.admin.reason.as_ref().is_some_and(|r| r.system) {
                        n.admin.reason = None;
                    }
                }
                n.responding = true;
                n.last_heartbeat_ms = now;
            }
        }
        drop(c);
        if !back.is_empty() {
            self.system_row(&back, "responding again");
            self.publish(back);
        }
        Ok(true)
    }

    /// The command stream of an agent.
    pub fn commands(&self, agent_id: &str, key: &str) -> Result<mpsc::Receiver<pb::AgentCommand>> {
        let mut c = self.write();
        authenticate(&c.agents, agent_id, key)?.ok_or_else(|| unknown_agent(agent_id))?;
        let a = c.agents.get_mut(agent_id).ok_or_else(|| unknown_agent(agent_id))?;
        if let Some(rx) = a.unopened.take() {
            return Ok(rx);
        }
        // A second stream for the same registration replaces the first.
        let (tx, rx) = mpsc::channel(COMMAND_QUEUE);
        a.commands = Some(tx);
        Ok(rx)
    }

    /// Sends a command to the agent hosting `node`.
    pub async fn send(&self, node: &str, cmd: pb::AgentCommand) -> Result<()> {
        let tx = {
            let c = self.read();
            let n = c.nodes.get(node).ok_or_else(|| Error::NotFound(format!("unknown node '{node}'")))?;
            let id = n
                .agent_id
                .as_ref()
                .ok_or_else(|| Error::Unavailable(format!("node '{node}' has no agent")))?;
            c.agents.get(id).and_then(|a| a.commands.clone())
        };
        let tx =
            tx.ok_or_else(|| Error::Unavailable(format!("the agent of node '{node}' is not connected")))?;
        tx.send(cmd).await.map_err(|_| Error::Unavailable(format!("the agent of node '{node}' went away")))
    }

    /// Marks nodes whose agent has been silent past the timeout as not
    /// responding, and audits it as a system action.
    pub fn check_timeouts(&self, now: i64) -> Vec<String> {
        let limit = i64::from(self.timeout_secs) * 1000;
        let mut lost = vec![];
        {
            let mut c = self.write();
            for n in c.nodes.values_mut() {
                // A created dynamic node is powered down (CLOUD) or not yet in service
                // (FUTURE) until its agent comes: no agent is late.
                let waiting = n.dynamic_now().is_some_and(|d| d != Dynamic::Norm);
                let silent = now - n.last_heartbeat_ms > limit && !waiting;
                let flagged = n.admin.reason.as_ref().is_some_and(|r| r.system);
                if silent && (n.responding || !n.registered) && !flagged {
                    n.responding = false;
                    n.registered = true;
                    if n.admin.reason.is_none() {
                        n.admin.reason = Some(Reason {
                            text: NOT_RESPONDING.into(),
                            user: SYSTEM_ACTOR.into(),
                            uid: None,
                            time_ms: now,
                            system: true,
                        });
                    }
                    lost.push(n.name.clone());
                }
            }
        }
        if !lost.is_empty() {
            tracing::warn!(nodes = %compress(&lost), "nodes not responding; set DOWN");
            self.system_row(&lost, NOT_RESPONDING);
            self.publish(lost.clone());
        }
        lost
    }

    /// Checks timeouts every second for the life of the controller.
    pub fn spawn_monitor(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let me = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                me.check_timeouts(now_ms());
            }
        })
    }

    /// An after-the-fact txn row for a state change the controller made itself.
    fn system_row(&self, nodes: &[String], what: &str) {
        let hub = self.hub.clone();
        let rows: Vec<TxnRow> = nodes
            .iter()
            .map(|n| TxnRow::system("node", n, "update", serde_json::json!({ "state": what })))
            .collect();
        tokio::spawn(async move { hub.record_all(rows).await });
    }
}

fn unknown_agent(agent_id: &str) -> Error {
    Error::NotFound(format!("agent '{agent_id}' is not registered"))
}

/// The agent `agent_id` if `key` is its credential; None when no such
/// agent is registered (the controller restarted: it registers again).
/// Digests are compared, so the comparison's time says nothing of the key.
fn authenticate<'a>(
    agents: &'a std::collections::HashMap<String, AgentConn>,
    agent_id: &str,
    key: &str,
) -> Result<Option<&'a AgentConn>> {
    let Some(a) = agents.get(agent_id) else { return Ok(None) };
    if a.key != crate::admission::hash(key) {
        tracing::warn!(agent = agent_id, "an agent call with a wrong agent key; refused");
        return Err(Error::Unauthenticated(format!("agent '{agent_id}': wrong or missing agent key")));
    }
    Ok(Some(a))
}
