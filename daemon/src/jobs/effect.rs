//! What a transition asks of the world, as data. A transition is a
//! synchronous function of the queue that returns these; the executor
//! (`transition.rs`) applies them at the edge in one fixed order: every
//! `Persist` in one store write, then everything installed in memory, then
//! the acts (signals, launches, audit rows, the Watch flush) in the order
//! given. Keeping them data is what lets a unit test call a transition and
//! read what it would do, with no runtime, store or agent.

use super::record::JobRecord;
use serde_json::Value;

pub(crate) const SIGKILL: i32 = 9;
pub(crate) const SIGTERM: i32 = 15;
pub(crate) const SIGCONT: i32 = 18;
pub(crate) const SIGSTOP: i32 = 19;

// Most effects are records: boxing them would cost an allocation each to
// save space only in the few that are not.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Effect {
    /// The job's next record (or a new job): durable first, in one write
    /// with the transition's others, and only then installed.
    Persist(JobRecord),
    /// Installed with the records: the end the job's stopped run will
    /// still report says nothing of its next run, and is to be dropped.
    IgnoreReport(u64),
    /// Installed with the records: that dropped end came.
    ReportIgnored(u64),
    /// Hands the run to the agent of `node` (the job's first), with the
    /// command built from the record as installed.
    Launch { job: u64, node: String },
    /// Signals the job's process group through the agent of `node`; with a
    /// `kill_wait`, the agent follows up with SIGKILL that many seconds later.
    Signal { job: u64, node: String, signal: i32, kill_wait: u32 },
    /// A txn row by the controller about the job, after the change is in memory.
    Audit { job: u64, action: &'static str, info: Value },
    /// Publishes the Watch batch now rather than after the gather delay.
    Flush,
    /// An agent command built by the transition (a step's launch or signal),
    /// sent to the agent of `node` after the install.
    Command { job: u64, node: String, cmd: spur_proto::v1::AgentCommand },
}

impl Effect {
    fn job(&self) -> Option<u64> {
        match self {
            Effect::Persist(j) => Some(j.id),
            Effect::IgnoreReport(id) | Effect::ReportIgnored(id) => Some(*id),
            Effect::Launch { job, .. }
            | Effect::Signal { job, .. }
            | Effect::Audit { job, .. }
            | Effect::Command { job, .. } => Some(*job),
            Effect::Flush => None,
        }
    }
}

/// A transition's effects, in the order it asked for them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Effects(pub Vec<Effect>);

impl Effects {
    pub fn push(&mut self, e: Effect) {
        self.0.push(e);
    }

    pub fn persist(&mut self, j: JobRecord) {
        self.push(Effect::Persist(j));
    }

    /// Stops what runs of `was`, a job the controller ended or took back:
    /// SIGTERM to its process group, SIGKILL `kill_wait` seconds later.
    pub fn terminate(&mut self, was: &JobRecord, kill_wait: u32) {
        if was.is_placed() {
            self.signal(was, SIGTERM, kill_wait);
        }
    }

    /// `signal` to the job through the agent of its first node, where it was launched.
    pub fn signal(&mut self, j: &JobRecord, signal: i32, kill_wait: u32) {
        if let Some(node) = j.nodes.first() {
            self.push(Effect::Signal { job: j.id, node: node.clone(), signal, kill_wait });
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The records to persist, in order.
    pub fn records(&self) -> impl Iterator<Item = &JobRecord> {
        self.0.iter().filter_map(|e| match e {
            Effect::Persist(j) => Some(j),
            _ => None,
        })
    }

    /// Every job an effect names, once each, in the order first named.
    pub fn jobs(&self) -> Vec<u64> {
        let mut seen = std::collections::HashSet::new();
        self.0.iter().filter_map(Effect::job).filter(|id| seen.insert(*id)).collect()
    }
}

impl From<Effect> for Effects {
    fn from(e: Effect) -> Effects {
        Effects(vec![e])
    }
}

/// Readings of recorded effects, for the transition tests.
#[cfg(test)]
impl Effects {
    pub fn persisted(&self) -> Vec<&JobRecord> {
        self.records().collect()
    }

    /// (job, node, signal, kill_wait) of each signal, in order.
    pub fn signals(&self) -> Vec<(u64, &str, i32, u32)> {
        (self.0.iter())
            .filter_map(|e| match e {
                Effect::Signal { job, node, signal, kill_wait } => {
                    Some((*job, node.as_str(), *signal, *kill_wait))
                }
                _ => None,
            })
            .collect()
    }

    /// (job, node) of each launch, in order.
    pub fn launches(&self) -> Vec<(u64, &str)> {
        (self.0.iter())
            .filter_map(|e| match e {
                Effect::Launch { job, node } => Some((*job, node.as_str())),
                _ => None,
            })
            .collect()
    }

    /// (job, action) of each audit row, in order.
    pub fn audits(&self) -> Vec<(u64, &'static str)> {
        (self.0.iter())
            .filter_map(|e| match e {
                Effect::Audit { job, action, .. } => Some((*job, *action)),
                _ => None,
            })
            .collect()
    }
}
