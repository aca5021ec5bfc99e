//! Jobs placed on borrowed nodes still booting: a pass starts them
//! CONFIGURING (`sched::Start::configuring`), holding their nodes, as Slurm
//! does for jobs on powering-up cloud nodes. Each pass looks at them again:
//! once every node's agent has registered the job is launched and RUNNING,
//! its start (and so its elapsed time and time limit) counted from then, as
//! Slurm resets a job's start when its nodes have booted; a node that went
//! DOWN or was given back before it registered (its pilot failed or did not
//! boot in time) puts the job back in the queue with the run counted in its
//! restarts, whatever its `--requeue`, since it never ran. The record is
//! persisted as any state, so a restarted controller keeps waiting.

use super::JobService;
use super::effect::{Effect, Effects};
use super::ending::requeued;
use super::parts::PastRun;
use super::queue::Queue;
use super::record::JobRecord;
use crate::model::{BaseState, Node};
use crate::store::now_ms;
use spur_vocab::JobState;
use spur_vocab::reason::ReasonCode;

/// What a CONFIGURING job's nodes say now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boot {
    /// Every node's agent registered and answers.
    Ready,
    /// A node is gone or DOWN before it registered.
    Failed,
    /// Still booting.
    Waiting,
}

/// Whether `j` is CONFIGURING for its nodes' boot, not for an HRES
/// asynchronous pre-run (`jobs/configure.rs`, which launches it itself).
pub fn waits_for_boot(j: &JobRecord) -> bool {
    j.state == JobState::Configuring && !j.hres.as_ref().is_some_and(|r| r.async_running)
}

/// Where `nodes` (each looked up by `node`) stand for a job placed on them.
pub fn boot_of(nodes: &[String], node: impl Fn(&str) -> Option<Node>) -> Boot {
    let mut ready = true;
    for n in nodes {
        let Some(n) = node(n) else { return Boot::Failed };
        if n.admin.down || n.base_state() == BaseState::Down {
            return Boot::Failed;
        }
        ready &= n.registered && n.responding;
    }
    if ready { Boot::Ready } else { Boot::Waiting }
}

impl Queue {
    /// CONFIGURING job `id`'s nodes have all registered at `now`: it runs
    /// from now, launched on its first node.
    pub fn booted(&self, id: u64, now: i64) -> Effects {
        let Some(j) = self.jobs().get(&id).filter(|j| waits_for_boot(j)) else {
            return Effects::default();
        };
        let mut n = j.clone();
        n.state = JobState::Running;
        n.start_ms = now;
        let node = n.nodes.first().cloned().unwrap_or_default();
        let mut fx: Effects = Effect::Persist(n).into();
        fx.push(Effect::Launch { job: id, node });
        fx
    }

    /// A node of CONFIGURING job `id` failed to boot: the job pends again
    /// at `now`, the attempt kept as a past run (its restart count).
    pub fn boot_failed(&self, id: u64, now: i64) -> Effects {
        let Some(j) = self.jobs().get(&id).filter(|j| waits_for_boot(j)) else {
            return Effects::default();
        };
        let mut next = requeued(j, now);
        next.reason = Some(ReasonCode::NodeDown);
        next.push_past_run(PastRun {
            start_ms: j.start_ms,
            end_ms: now,
            nodes: j.nodes.clone(),
            preempted_by: 0,
            borrowed: j.borrowed,
            reclaim: false,
        });
        let info = serde_json::json!({ "reason": "a node failed to boot", "nodes": j.nodes });
        let mut fx: Effects = Effect::Persist(next).into();
        fx.push(Effect::Audit { job: id, action: "requeue", info });
        fx
    }
}

impl JobService {
    /// Launches the CONFIGURING jobs whose nodes registered, and requeues
    /// those whose nodes failed to boot.
    pub(crate) async fn boots(&self) {
        let waiting: Vec<(u64, Vec<String>)> = (self.lock().jobs().values())
            .filter(|j| waits_for_boot(j))
            .map(|j| (j.id, j.nodes.clone()))
            .collect();
        for (id, nodes) in waiting {
            match boot_of(&nodes, |n| self.nodes.node(n)) {
                Boot::Waiting => {}
                Boot::Ready => {
                    let done = self.transit(&[id], |q| Ok(q.booted(id, now_ms()))).await;
                    // The agent never had it: back in the queue.
                    for id in done.map(|d| d.unlaunched).unwrap_or_default() {
                        let _ = self.requeue_lost(id).await;
                    }
                }
                Boot::Failed => {
                    tracing::warn!(job = id, "a node of the job failed to boot; requeueing");
                    let _ = self.transit(&[id], |q| Ok(q.boot_failed(id, now_ms()))).await;
                }
            }
        }
    }
}
