//! Demand for dynamic definitions: only jobs left pending for room ask, a
//! booting node takes jobs CONFIGURING, they pack onto requests not yet
//! recorded first, and `maxNodes` caps what a definition holds.

use super::{Fx, NOW, job, run_on};
use crate::demand::{NodeRequest, Provisioned};
use crate::job::{Hold, Job};
use crate::provision::{Backend, Owner, Provision, Why, admit, parse};
use std::sync::Arc;

const YAML: &str = "definitions:
- id: local
  provisioner: static
  provisionerSpec: {condition: 'hostname() in [\"n1\", \"n2\"]'}
- id: burst
  provisioner: slurm
  ttl: 3600
  maxNodes: 3
  policy: request.job_resource.cpu.cores <= 16
  provisionerSpec: {cpu: 16, memory: 32GiB, partition: compute, costPerHour: 0.3}
";

/// n1, n2 (8 CPUs) in the static pool; `burst` driven unless `driven` is false.
fn fx(driven: bool) -> Fx {
    let mut p = parse(YAML, 1).unwrap();
    if driven {
        p.drivers = vec![Backend::Slurm];
    }
    Fx::new(2, 8, 8192, 0).with(|f| {
        for n in f.snap.nodes.iter_mut() {
            n.definitions = vec![0];
        }
        f.snap.provision = Some(Arc::new(p));
    })
}

/// A 30-minute job of `cpus` CPUs.
fn sized(id: u64, cpus: u32) -> Job {
    Job { cpus_per_task: cpus, time_limit: Some(30), ..job(id, "alice") }
}

fn burst(count: u32) -> Vec<NodeRequest> {
    vec![NodeRequest { definition: "burst".into(), count }]
}

#[test]
fn a_job_a_static_pool_starts_this_pass_asks_for_nothing() {
    let plan = fx(true).job(sized(1, 4)).plan();
    assert_eq!(plan.start_of(1).unwrap().nodes, ["n1"]);
    assert!(plan.provision.is_empty(), "{:?}", plan.provision);
}

#[test]
fn a_job_too_big_for_the_static_pool_asks_for_one_node() {
    let plan = fx(true).job(sized(1, 12)).plan();
    assert!(plan.start_of(1).is_none());
    assert_eq!(plan.provision, burst(1));
}

#[test]
fn jobs_pending_behind_a_busy_static_pool_ask_too() {
    let f = fx(true)
        .running(run_on(sized(1, 8), &["n1"], NOW))
        .running(run_on(sized(2, 8), &["n2"], NOW))
        .job(sized(3, 4));
    assert_eq!(f.plan().provision, burst(1));
}

#[test]
fn small_jobs_pack_onto_one_node() {
    let busy = fx(true).running(run_on(sized(1, 8), &["n1"], NOW)).running(run_on(sized(2, 8), &["n2"], NOW));
    let f = (10..14).fold(busy, |f, id| f.job(sized(id, 4)));
    assert_eq!(f.plan().provision, burst(1), "four 4-CPU jobs fill one 16-CPU node");
}

#[test]
fn max_nodes_caps_the_request_and_counts_active_nodes() {
    let f = (10..16).fold(fx(true), |f, id| f.job(sized(id, 12)));
    assert_eq!(f.plan().provision, burst(3), "six jobs, maxNodes 3");
    let f = f.with(|f| {
        f.snap.provisioned.insert("burst".into(), Provisioned { active: 2, ..Provisioned::default() });
    });
    assert_eq!(f.plan().provision, burst(1), "two already active");
}

#[test]
fn nodes_already_requested_are_counted() {
    let f = fx(true).job(sized(1, 12)).job(sized(2, 12));
    let queued = |n| {
        let mut f = fx(true).job(sized(1, 12)).job(sized(2, 12));
        f.snap.provisioned.insert("burst".into(), Provisioned { queued: n, ..Provisioned::default() });
        f.plan().provision
    };
    assert_eq!(f.plan().provision, burst(2));
    assert_eq!(queued(1), burst(1), "one asked for serves the first job");
    assert_eq!(queued(2), vec![], "both served by nodes asked for");
    assert_eq!(queued(3), vec![], "more asked for than needed asks for none");
}

/// `f` with `n3`, a `burst` node still booting (expiring in an hour), in the partition.
fn with_booting(f: Fx) -> Fx {
    f.with(|f| {
        let mut n3 = crate::SchedNode::idle("n3", 16, 32768, 0);
        (n3.definitions, n3.expires_ms, n3.booting) = (vec![1], Some(NOW + 3_600_000), true);
        f.snap.partitions[0].nodes.push("n3".into());
        f.snap.nodes.push(n3);
        f.snap.provisioned.insert("burst".into(), Provisioned { booting: 1, ..Provisioned::default() });
    })
}

#[test]
fn a_booting_node_takes_jobs_configuring_and_the_rest_ask_for_more() {
    let f = with_booting(fx(true).job(sized(1, 12)).job(sized(2, 12)));
    let plan = f.plan();
    let s = plan.start_of(1).expect("job 1 placed on the booting node");
    assert_eq!((s.nodes.as_slice(), s.configuring), (&["n3".to_string()][..], true));
    assert!(plan.start_of(2).is_none(), "n3 has 4 CPUs left");
    assert_eq!(plan.provision, burst(1), "job 2 needs a node of its own; n3 counts against maxNodes");
    // A job on a registered node starts as usual.
    let plan = fx(true).job(sized(1, 4)).plan();
    assert!(!plan.start_of(1).unwrap().configuring);
}

#[test]
fn a_drained_or_down_booting_node_takes_nothing() {
    use crate::model::{BaseState, Node, NodeAdmin};
    let node = |admin: NodeAdmin| Node {
        name: "n3".into(),
        cpus: 16,
        memory_mb: 32768,
        gres: vec![],
        features: vec![],
        weight: 1,
        partitions: vec![],
        alloc_cpus: 0,
        alloc_memory_mb: 0,
        alloc_gres: vec![],
        running_jobs: 0,
        admin,
        registered: false,
        responding: false,
        agent_id: None,
        agent_host: String::new(),
        last_heartbeat_ms: 0,
        facts: None,
        definitions: vec![],
        annotations: vec![],
        dynamic: Some(spur_vocab::nodestate::Dynamic::PoweringUp),
    };
    let up = node(NodeAdmin::default());
    assert_eq!(up.base_state(), BaseState::Unknown);
    let s = crate::SchedNode::from_model(&up);
    assert!(s.booting && s.schedulable, "a powering-up node is placed on");
    for admin in
        [NodeAdmin { down: true, ..NodeAdmin::default() }, NodeAdmin { drain: true, ..NodeAdmin::default() }]
    {
        let s = crate::SchedNode::from_model(&node(admin));
        assert!(!s.booting && !s.schedulable, "{s:?}");
    }
    let registered = Node { registered: true, responding: true, ..up };
    assert!(!crate::SchedNode::from_model(&registered).booting);
}

#[test]
fn held_jobs_long_jobs_and_jobs_the_policy_refuses_ask_for_nothing() {
    let held = Job { hold: Hold::User, ..sized(1, 12) };
    let long = Job { time_limit: Some(120), ..sized(2, 12) };
    let unlimited = Job { time_limit: None, ..sized(3, 12) };
    let refused = sized(4, 32);
    let plan = fx(true).job(held).job(long).job(unlimited).job(refused).plan();
    assert!(plan.provision.is_empty(), "{:?}", plan.provision);
    assert!(plan.start_of(2).is_none());
}

#[test]
fn without_a_driver_the_definition_refuses_and_asks_for_nothing() {
    let f = fx(false).job(sized(1, 12));
    assert!(f.plan().provision.is_empty());
    let p = f.snap.provision.as_ref().unwrap();
    let a = admit(p, &f.snap.jobs[0], &Owner { organization: "", cluster: "" }, &[2, 0], NOW);
    assert_eq!(a.candidates, [0]);
    assert!(matches!(a.refusals[0].why, Why::NoDriver { backend: "slurm" }), "{:?}", a.refusals);
    let p = parse(YAML, 1).map(|p| Provision { drivers: vec![Backend::Slurm], ..p }).unwrap();
    assert_eq!(
        admit(&p, &f.snap.jobs[0], &Owner { organization: "", cluster: "" }, &[2, 0], NOW).candidates,
        [0, 1]
    );
}

#[test]
fn a_borrowed_node_takes_only_jobs_that_end_before_it_expires() {
    // n1, n2 full; n3 borrowed for `burst`, expiring in 20 minutes.
    let f = fx(true)
        .running(run_on(sized(1, 8), &["n1"], NOW))
        .running(run_on(sized(2, 8), &["n2"], NOW))
        .with(|f| {
            let mut n3 = crate::SchedNode::idle("n3", 16, 32768, 0);
            (n3.definitions, n3.expires_ms) = (vec![1], Some(NOW + 20 * 60_000));
            f.snap.partitions[0].nodes.push("n3".into());
            f.snap.nodes.push(n3);
        })
        .job(sized(3, 4))
        .job(Job { time_limit: Some(10), ..sized(4, 4) });
    let plan = f.plan();
    assert!(plan.start_of(3).is_none(), "30 minutes end after the node's expiry");
    assert_eq!(plan.start_of(4).map(|s| s.nodes.clone()), Some(vec!["n3".into()]), "{:?}", plan.pending);
}

#[test]
fn a_definition_backing_off_asks_for_nothing_and_its_jobs_pend_naming_it() {
    let down = crate::demand::Unavailable {
        error: "sbatch: exit status 1: no partition".into(),
        until_ms: NOW + 90_000,
    };
    let f = fx(true).job(sized(1, 12)).job(sized(2, 4)).with(|f| {
        f.snap
            .provisioned
            .insert("burst".into(), Provisioned { unavailable: Some(down), ..Provisioned::default() });
        // The static pool is down: job 2 has no usable node either.
        f.snap.nodes.iter_mut().for_each(|n| n.schedulable = false);
    });
    let plan = f.plan();
    assert!(plan.provision.is_empty());
    let r = plan.reason_of(1).unwrap();
    assert_eq!(r.code, crate::reason::ReasonCode::ProvisionerUnavailable);
    assert_eq!(
        r.sentence(),
        "provisioner definition burst is unavailable (retried in 00:01:30): sbatch: exit status 1: no partition"
    );
}

/// A requeueable 8-CPU job with a base priority.
fn ranked(id: u64, prio: u64) -> Job {
    Job { priority: Some(prio), requeueable: true, ..sized(id, 8) }
}

#[test]
fn preemption_waits_while_a_dynamic_definition_can_still_provision() {
    use crate::{JobCheck, Outcome};
    // n1, n2 full of low jobs; job 10 (10× their priority) fits a burst node.
    let full = |p: Provisioned| {
        (fx(true).preempting())
            .running(run_on(ranked(1, 100), &["n1"], NOW - 600_000))
            .running(run_on(ranked(2, 100), &["n2"], NOW - 600_000))
            .job(ranked(10, 1000))
            .with(|f| drop(f.snap.provisioned.insert("burst".into(), p)))
    };
    let f = full(Provisioned { queued: 1, active: 1, ..Provisioned::default() });
    let plan = f.plan();
    assert!(plan.preemptions.is_empty(), "{:?}", plan.preemptions);
    assert_eq!(plan.provision, vec![], "the node asked for serves job 10");
    let v = f.explained(10);
    let dynamic = v.checks.iter().find_map(|c| match c {
        JobCheck::Dynamic(h) => Some(h.clone()),
        _ => None,
    });
    let h = dynamic.expect("a dynamic-definition check");
    assert_eq!((h.definition.as_str(), h.held, h.max_nodes, h.can_provision()), ("burst", 2, 3, true));
    assert_eq!(v.outcome, Outcome::Checks);
    // At maxNodes, or backing off, it provisions nothing: preemption goes ahead.
    let at_cap = full(Provisioned { booting: 1, active: 2, ..Provisioned::default() });
    assert_eq!(at_cap.plan().preemptions.len(), 1);
    let down = crate::demand::Unavailable { error: "sbatch failed".into(), until_ms: NOW + 60_000 };
    let backing_off = full(Provisioned { unavailable: Some(down), ..Provisioned::default() });
    assert_eq!(backing_off.plan().preemptions.len(), 1);
    // A job no burst node could run (a day long, over the ttl) is not held back.
    let long = full(Provisioned::default()).job(Job { time_limit: Some(1440), ..ranked(11, 1000) });
    assert!(long.plan().preemptions.iter().any(|p| p.by == 11), "{:?}", long.plan().preemptions);
}

#[test]
fn a_run_on_a_borrowed_node_is_charged_its_share_of_costs_per_hour() {
    // n1, n2 full; n3 borrowed for `burst` (costPerHour 0.3, 16 CPUs).
    let f = with_booting(fx(true).running(run_on(sized(1, 8), &["n1"], NOW)).running(run_on(
        sized(2, 8),
        &["n2"],
        NOW,
    )))
    .job(sized(3, 4))
    .job(Job { exclusive: true, ..sized(4, 4) });
    let plan = f.plan();
    let charged = |id| plan.start_of(id).map(|s| s.charge.clone());
    assert_eq!(charged(3), Some(vec![("burst".to_string(), 0.3 * 4.0 / 16.0)]), "a quarter of the node");
    assert!(plan.start_of(4).is_none(), "n3 is shared already");
    let plan = with_booting(fx(true).running(run_on(sized(1, 8), &["n1"], NOW)).running(run_on(
        sized(2, 8),
        &["n2"],
        NOW,
    )))
    .job(Job { exclusive: true, ..sized(4, 4) })
    .plan();
    assert_eq!(
        plan.start_of(4).map(|s| s.charge.clone()),
        Some(vec![("burst".to_string(), 0.3)]),
        "the whole node"
    );
    let plan = fx(true).job(sized(5, 4)).plan();
    assert_eq!(plan.start_of(5).map(|s| s.charge.len()), Some(0), "this cluster's nodes cost nothing");
}
