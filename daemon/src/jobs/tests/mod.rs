//! Transition tests in the manner of tako's `TestComm`: build a queue, call
//! a transition (a plain function, no runtime, store or agent), and read the
//! effects it recorded. `executor.rs` drives the executor itself.

mod boot;
mod ending;
mod executor;
mod lifecycle;
mod plugin;
mod preempt;
mod update;

use super::bounds::Bounds;
use super::queue::Queue;
use super::record::JobRecord;
use crate::accounting::{Caller, Catalog};
use crate::model::Partition;
use crate::sched::SubmitPolicy;
use spur_vocab::JobState;

pub const NOW: i64 = 1_700_000_000_000;
pub const MIN: i64 = 60_000;
/// The queue's KillWait in these tests.
pub const KW: u32 = 30;

/// A queue holding `jobs`, their limit counts as a load would make them.
pub fn queue(jobs: impl IntoIterator<Item = JobRecord>) -> Queue {
    let mut q = Queue::loaded(Default::default(), KW);
    for j in jobs {
        q.install(j);
    }
    q.changed.clear();
    q
}

pub fn pending(id: u64) -> JobRecord {
    JobRecord {
        id,
        name: format!("job{id}"),
        user: "alice".into(),
        partition: "batch".into(),
        num_nodes: 1,
        ntasks: 1,
        cpus_per_task: 2,
        requeue: true,
        script: "#!/bin/sh\ntrue\n".into(),
        submit_ms: NOW - 10 * MIN,
        state: JobState::Pending,
        ..JobRecord::default()
    }
}

/// Running on `node` since ten minutes ago.
pub fn running(id: u64, node: &str) -> JobRecord {
    JobRecord {
        state: JobState::Running,
        nodes: vec![node.into()],
        alloc: (2, 100, 0),
        start_ms: NOW - 10 * MIN,
        ..pending(id)
    }
}

pub fn suspended(id: u64, node: &str, since: i64) -> JobRecord {
    JobRecord { state: JobState::Suspended, suspend_ms: since, preempted_by: Some(99), ..running(id, node) }
}

/// A pass's start of `job` on `node`: not lent, not backfilled, not booting.
pub fn start(job: u64, node: &str) -> crate::sched::Start {
    crate::sched::Start {
        job,
        nodes: vec![node.into()],
        borrowed: false,
        backfilled: false,
        priority: crate::sched::PriorityFactors::new(1.0, 0.5, 0.1, 1),
        licenses: vec![],
        configuring: false,
        charge: vec![],
    }
}

pub fn who(user: &str) -> Caller {
    Caller { user: user.into(), ..Caller::default() }
}

/// Partition `name` (nodes n1 and n2), with `max_time` minutes as its MaxTime.
pub fn partition(name: &str, max_time: Option<u64>) -> Partition {
    Partition {
        name: name.into(),
        nodes: vec!["n1".into(), "n2".into()],
        is_default: name == "batch",
        max_time,
        default_time: None,
        priority_tier: 1,
        preempt_mode: Default::default(),
        preempt_exempt_time: None,
        state: "UP".into(),
    }
}

/// What an update is held to, owned: partitions batch and gpu with no
/// MaxTime, an empty catalog and accounting off, unless a test sets them.
pub struct At {
    pub parts: Vec<Partition>,
    pub catalog: Catalog,
    pub policy: SubmitPolicy,
}

impl Default for At {
    fn default() -> At {
        At {
            parts: vec![partition("batch", None), partition("gpu", None)],
            catalog: Catalog { loaded: true, ..Catalog::default() },
            policy: SubmitPolicy::default(),
        }
    }
}

impl At {
    pub fn bounds(&self) -> Bounds<'_> {
        Bounds { partitions: &self.parts, catalog: &self.catalog, policy: &self.policy }
    }
}
