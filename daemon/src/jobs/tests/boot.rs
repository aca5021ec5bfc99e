//! Jobs CONFIGURING on borrowed nodes still booting: a pass's start on a
//! booting node persists CONFIGURING with no launch; its nodes registering
//! launch it, running from then; a node that failed to boot requeues it.

use super::*;
use crate::jobs::boot::{Boot, boot_of};
use crate::model::{Node, NodeAdmin};
use crate::sched;

/// Placed on `node` two minutes ago, waiting for it to boot.
fn configuring(id: u64, node: &str) -> JobRecord {
    JobRecord { state: JobState::Configuring, start_ms: NOW - 2 * MIN, ..running(id, node) }
}

#[test]
fn a_start_on_a_booting_node_is_configuring_and_not_launched() {
    let q = queue([pending(1), pending(2)]);
    let fx = q.start(
        &[sched::Start { configuring: true, ..start(1, "big-1") }, start(2, "n1")],
        &[],
        NOW,
        &mut || 0,
        &mut [],
    );
    let got: Vec<_> = fx.persisted().iter().map(|j| (j.id, j.state, j.nodes.clone())).collect();
    assert_eq!(
        got,
        [
            (1, JobState::Configuring, vec!["big-1".to_string()]),
            (2, JobState::Running, vec!["n1".to_string()])
        ]
    );
    assert_eq!(fx.launches(), [(2, "n1")], "only the job on a registered node is launched");
}

#[test]
fn its_nodes_registered_it_runs_from_then_and_is_launched() {
    let q = queue([configuring(1, "big-1"), running(2, "n1")]);
    let fx = q.booted(1, NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!(
        (j.state, j.start_ms, j.nodes.as_slice()),
        (JobState::Running, NOW, &["big-1".to_string()][..])
    );
    assert_eq!(fx.launches(), [(1, "big-1")]);
    assert!(q.booted(2, NOW).is_empty(), "a running job is not launched twice");
}

#[test]
fn a_node_that_failed_to_boot_requeues_its_job_whatever_its_requeue() {
    let q = queue([JobRecord { requeue: false, ..configuring(1, "big-1") }]);
    let fx = q.boot_failed(1, NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!((j.state, j.nodes.len(), j.start_ms), (JobState::Pending, 0, 0));
    assert_eq!(j.reason, Some(spur_vocab::reason::ReasonCode::NodeDown));
    assert_eq!(j.past_runs.len(), 1, "counted in its restarts");
    assert_eq!((j.past_runs[0].start_ms, j.past_runs[0].end_ms), (NOW - 2 * MIN, NOW));
    assert_eq!(fx.audits(), [(1, "requeue")]);
    assert!(fx.launches().is_empty());
    // sacct -D lists the attempt as NODE_FAIL, not PREEMPTED.
    let wire = crate::server::convert::job(j);
    assert_eq!(wire.past_runs[0].state, spur_proto::states::state_wire(JobState::NodeFail));
}

fn node(registered: bool, admin: NodeAdmin) -> Node {
    Node {
        name: "big-1".into(),
        cpus: 16,
        memory_mb: 32768,
        gres: vec![],
        features: vec![],
        weight: 1,
        partitions: vec![],
        alloc_cpus: 2,
        alloc_memory_mb: 100,
        alloc_gres: vec![],
        running_jobs: 1,
        admin,
        registered,
        responding: registered,
        agent_id: None,
        agent_host: String::new(),
        last_heartbeat_ms: 0,
        facts: None,
        definitions: vec![],
        annotations: vec![],
        dynamic: Some(spur_vocab::nodestate::Dynamic::PoweringUp),
    }
}

#[test]
fn boot_reads_the_nodes_as_they_are() {
    let names = ["big-1".to_string()];
    let down = NodeAdmin { down: true, ..NodeAdmin::default() };
    assert_eq!(boot_of(&names, |_| Some(node(false, NodeAdmin::default()))), Boot::Waiting);
    assert_eq!(boot_of(&names, |_| Some(node(true, NodeAdmin::default()))), Boot::Ready);
    assert_eq!(boot_of(&names, |_| Some(node(false, down.clone()))), Boot::Failed);
    assert_eq!(boot_of(&names, |_| None), Boot::Failed, "given back");
}
