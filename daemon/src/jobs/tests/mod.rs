//! Transition tests in the manner of tako's `TestComm`: build a queue, call
//! a transition (a plain function, no runtime, store or agent), and read the
//! effects it recorded. `executor.rs` drives the executor itself.

mod ending;
mod executor;
mod lifecycle;
mod plugin;
mod preempt;

use super::queue::Queue;
use super::record::JobRecord;
use crate::accounting::Caller;
use spur_vocab::JobState;

pub const NOW: i64 = 1_700_000_000_000;
pub const MIN: i64 = 60_000;
/// The queue's KillWait in these tests.
pub const KW: u32 = 30;

/// A queue holding `jobs`, their limit counts as a load would make them.
pub fn queue(jobs: impl IntoIterator<Item = JobRecord>) -> Queue {
    let mut q = Queue { kill_wait: KW, ..Queue::default() };
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

pub fn who(user: &str) -> Caller {
    Caller { user: user.into(), ..Caller::default() }
}
