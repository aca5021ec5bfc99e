//! Placement with provisioner definitions: a job only on its definitions'
//! nodes, cheapest first, `NoProvisionerDefinition` with every refusal,
//! nodes in no definition, and exclusive pools.

use super::{Fx, NOW, job, run_on};
use crate::provision::{AdmitCache, parse, prepare};
use crate::reason::{Facts, ReasonCode};
use std::sync::Arc;

const YAML: &str = "definitions:
- id: gpu
  provisioner: static
  annotations: {nvidia.com/gpu.count: 4}
  provisionerSpec: {condition: 'hostname() in [\"n1\", \"n2\"]', costPerHour: 2.5}
- id: cheap
  provisioner: static
  provisionerSpec: {condition: 'hostname() == \"n4\"', costPerHour: 0.1}
- id: dear
  provisioner: static
  provisionerSpec: {condition: 'hostname() == \"n3\"', costPerHour: 0.9}
- id: phys-only
  provisioner: static
  policy: request.owner.account_id == \"phys\"
  exclusive: job
  provisionerSpec: {condition: 'hostname() == \"n5\"'}
";

/// Nodes n1..n6: n1,n2 gpu; n3 dear; n4 cheap; n5 phys-only (exclusive); n6 in none.
fn fx(yaml: &str) -> Fx {
    let p = parse(yaml, 1).unwrap();
    Fx::new(6, 8, 8192, 0).with(|f| {
        for n in f.snap.nodes.iter_mut() {
            let facts = crate::model::HostFacts::default();
            n.definitions = (0..p.defs.len() as u16)
                .filter(|d| p.defs[*d as usize].holds(&n.name, &facts).unwrap())
                .collect();
        }
        f.snap.provision = Some(Arc::new(p));
    })
}

fn placed(f: &Fx, id: u64) -> Vec<String> {
    f.plan().start_of(id).map(|s| s.nodes.clone()).unwrap_or_default()
}

#[test]
fn an_annotated_job_lands_only_on_the_matching_definition() {
    let mut j = job(1, "alice");
    j.annotations = vec![("nvidia.com/gpu.count".into(), "2".into())];
    let f = fx(YAML).job(j);
    let nodes = placed(&f, 1);
    assert!(nodes == ["n1"] || nodes == ["n2"], "{nodes:?}");
}

#[test]
fn the_cheapest_definition_is_used_first() {
    let f = fx(YAML).job(job(1, "alice")).job(job(2, "alice")).with(|f| {
        for j in f.snap.jobs.iter_mut() {
            j.exclusive = true;
        }
    });
    let plan = f.plan();
    assert_eq!(plan.start_of(1).unwrap().nodes, ["n6"], "no cost: nodes in no definition first");
    assert_eq!(plan.start_of(2).unwrap().nodes, ["n4"], "then the cheapest definition");
}

#[test]
fn an_annotation_no_definition_matches_pends_naming_the_key() {
    let mut j = job(1, "alice");
    j.annotations = vec![("tier".into(), "gold".into())];
    let f = fx(YAML).job(j);
    let plan = f.plan();
    let r = plan.reason_of(1).unwrap();
    assert_eq!(r.code, ReasonCode::NoProvisionerDefinition);
    let s = r.sentence();
    assert!(
        s.contains("annotation tier=gold not matched") && s.contains("gpu:") && s.contains("cheap:"),
        "{s}"
    );
    let Facts::NoDefinition { refusals, .. } = &r.facts else { panic!() };
    assert_eq!(refusals.len(), 4);
}

#[test]
fn a_policy_admits_one_account_and_refuses_another() {
    let yaml = "definitions:
- id: phys-only
  provisioner: static
  policy: request.owner.account_id == \"phys\"
  provisionerSpec: {condition: 'true'}
";
    let mut chem = job(2, "alice");
    chem.account = Some("chem".into());
    let mut phys = job(1, "alice");
    phys.account = Some("phys".into());
    let f = fx(yaml)
        .with(|f| {
            f.catalog.accounts.insert("chem".into(), super::account("chem", "root")).map(|_| ()).unwrap_or(())
        })
        .job(phys)
        .job(chem);
    let plan = f.plan();
    assert!(plan.start_of(1).is_some());
    let r = plan.reason_of(2).unwrap();
    assert_eq!(r.code, ReasonCode::NoProvisionerDefinition, "{r}");
    assert!(r.sentence().contains("policy is false (request.owner.account_id == \"phys\")"), "{r}");
}

#[test]
fn a_job_exclusive_pool_takes_one_job_a_node() {
    let yaml = "definitions:
- id: solo
  provisioner: static
  exclusive: job
  provisionerSpec: {condition: 'true'}
";
    let f = Fx::new(1, 8, 8192, 0);
    let p = parse(yaml, 1).unwrap();
    let f = f.with(|f| {
        f.snap.nodes[0].definitions = vec![0];
        f.snap.provision = Some(Arc::new(p));
    });
    let f = f.running(run_on(job(1, "alice"), &["n1"], NOW - 1000)).job(job(2, "alice"));
    let plan = f.plan();
    assert!(plan.start_of(2).is_none(), "one CPU of eight is used, but the node is the running job's alone");
    assert_eq!(plan.reason_of(2).unwrap().code, ReasonCode::Resources);
}

#[test]
fn a_workflow_pool_is_shared_within_the_workflow_only() {
    let yaml = "definitions:
- id: wf
  provisioner: static
  exclusive: workflow
  provisionerSpec: {condition: 'true'}
";
    let p = parse(yaml, 1).unwrap();
    let mut a = run_on(job(1, "alice"), &["n1"], NOW - 1000);
    a.workflow = Some("w1".into());
    let mut same = job(2, "alice");
    same.workflow = Some("w1".into());
    let mut other = job(3, "alice");
    other.workflow = Some("w2".into());
    let f = Fx::new(1, 8, 8192, 0)
        .with(|f| {
            f.snap.nodes[0].definitions = vec![0];
            f.snap.provision = Some(Arc::new(p));
        })
        .running(a)
        .job(same)
        .job(other);
    let plan = f.plan();
    assert!(plan.start_of(2).is_some(), "same workflow shares the node");
    assert!(plan.start_of(3).is_none(), "another workflow waits");
}

#[test]
fn a_job_without_annotations_takes_any_definition_and_nodes_in_none() {
    let yaml = "definitions:
- id: gpu
  provisioner: static
  annotations: {kind: gpu}
  provisionerSpec: {condition: 'hostname() == \"n1\"'}
";
    let f = fx(yaml).job(job(1, "alice")).job(job(2, "alice")).with(|f| {
        f.snap.nodes.truncate(2);
        f.snap.partitions[0].nodes.truncate(2);
        f.snap.jobs.iter_mut().for_each(|j| j.exclusive = true);
    });
    let plan = f.plan();
    let mut used: Vec<String> =
        [1, 2].iter().flat_map(|i| plan.start_of(*i).unwrap().nodes.clone()).collect();
    used.sort();
    assert_eq!(used, ["n1", "n2"], "no key to match: every definition admits it, and n2 is in none");
}

#[test]
fn without_definitions_nothing_changes() {
    let f = Fx::new(2, 8, 8192, 0).job(job(1, "alice"));
    assert_eq!(placed(&f, 1), ["n1"]);
}

#[test]
fn the_cache_gives_the_same_plan_and_reuses_verdicts() {
    let mut j = job(1, "alice");
    j.annotations = vec![("nvidia.com/gpu.count".into(), "2".into())];
    let f = fx(YAML).job(j).job(job(2, "alice")).job(job(3, "alice"));
    let inline = f.plan();
    let mut snap = f.snap_with_catalog();
    let mut cache = AdmitCache::default();
    prepare(&mut snap, &mut cache, NOW);
    assert_eq!(cache.len(), 2, "jobs 2 and 3 ask alike and share a verdict");
    assert_eq!(crate::schedule(&snap, NOW), inline);
    prepare(&mut snap, &mut cache, NOW);
    assert_eq!(cache.len(), 2);
}

#[test]
fn scheduler_priority_orders_the_queue_and_leaves_the_multifactor_value() {
    let yaml = "scheduler:\n  priority: \"job.id * 10 + workflow.priority + age\"\n";
    let p = parse(yaml, 1).unwrap();
    let f = Fx::new(1, 8, 8192, 0)
        .with(|f| f.snap.provision = Some(Arc::new(p)))
        .job(job(1, "alice"))
        .job(job(2, "alice"))
        .with(|f| f.snap.jobs.iter_mut().for_each(|j| j.exclusive = true));
    let plan = f.plan();
    assert!(plan.start_of(2).is_some(), "job 2 scores 20, job 1 10");
    let pend = plan.pending.iter().find(|p| p.job == 1).unwrap();
    assert_eq!(pend.priority.ordered, Some(10.0));
    assert!(pend.priority.effective >= 1000.0, "the multifactor value stays for the preemption gap");
    let snap = f.snap_with_catalog();
    let ctx = crate::provision::priority_context(&snap.jobs[0], None, &snap.catalog, &pend.priority, NOW);
    let inputs = crate::provision::flatten(&ctx);
    assert!(inputs.contains(&("job.id".to_string(), "1".to_string())), "{inputs:?}");
    assert!(inputs.iter().any(|(k, _)| k == "multifactor"));
}

#[test]
fn a_changed_request_is_judged_again() {
    let yaml = "definitions:
- id: phys-only
  provisioner: static
  policy: request.owner.account_id == \"phys\" && request.job_ttl <= 3600
  provisionerSpec: {condition: 'true'}
";
    let mut j = job(1, "alice");
    j.account = Some("phys".into());
    j.time_limit = Some(60);
    let f = fx(yaml).job(j);
    let mut snap = f.snap_with_catalog();
    let mut cache = AdmitCache::default();
    prepare(&mut snap, &mut cache, NOW);
    assert_eq!(snap.admits[&1].candidates, vec![0]);
    snap.jobs[0].time_limit = Some(120);
    prepare(&mut snap, &mut cache, NOW);
    assert!(snap.admits[&1].candidates.is_empty(), "scontrol update TimeLimit=2:00:00 is seen");
    snap.jobs[0].time_limit = Some(60);
    snap.jobs[0].account = Some("chem".into());
    prepare(&mut snap, &mut cache, NOW);
    assert!(snap.admits[&1].candidates.is_empty(), "and a new account");
    snap.jobs[0].account = Some("phys".into());
    prepare(&mut snap, &mut cache, NOW);
    assert_eq!(snap.admits[&1].candidates, vec![0]);
}

#[test]
fn preemption_weighs_each_job_on_its_own_definitions_nodes() {
    let yaml = "definitions:
- id: a
  provisioner: static
  annotations: {k: a}
  provisionerSpec: {condition: 'hostname() == \"n1\"'}
- id: b
  provisioner: static
  annotations: {k: b}
  provisionerSpec: {condition: 'hostname() == \"n2\"'}
";
    let wide = |id: u64, prio: u64, k: &str| crate::Job {
        priority: Some(prio),
        ntasks: 4,
        requeueable: true,
        annotations: vec![("k".into(), k.into())],
        ..job(id, "alice")
    };
    let f = fx(yaml)
        .with(|f| {
            f.snap.nodes.truncate(2);
            f.snap.nodes.iter_mut().for_each(|n| (n.cpus, n.free_cpus) = (4, 4));
            f.snap.partitions[0].nodes.truncate(2);
        })
        .preempting()
        .running(run_on(wide(1, 100, "a"), &["n1"], NOW - 600_000))
        .running(run_on(wide(2, 100, "b"), &["n2"], NOW - 600_000))
        .job(wide(10, 1000, "a"))
        .job(wide(11, 1000, "b"));
    let mut got: Vec<(u64, u64)> = f.plan().preemptions.iter().map(|p| (p.victim, p.by)).collect();
    got.sort();
    assert_eq!(got, vec![(1, 10), (2, 11)], "each evicts the run on its own definition's node");
}
