//! HRES plugins' transitions: a plugin's hold, the end of an async pre-run,
//! a downed layer, and a failed job prolog.

use super::*;
use crate::hres_lua::HresRun;
use crate::hres_lua::{JobInfo, Prep};
use spur_proto::v1 as pb;
use spur_vocab::Hold;

fn configuring(id: u64, requeue: bool) -> JobRecord {
    let run = HresRun {
        job: JobInfo { job_id: id, sluid: format!("{id}.{NOW}"), ..JobInfo::default() },
        resources: vec![Prep { name: "qpu".into(), payload: Some("token".into()), ..Prep::default() }],
        async_running: true,
        ..HresRun::default()
    };
    JobRecord { state: JobState::Configuring, requeue, hres: Some(Box::new(run)), ..running(id, "n1") }
}

#[test]
fn a_plugin_hold_is_an_admin_hold_with_its_message_and_audited() {
    let q = queue([pending(1), running(2, "n1")]);
    let fx = q.plugin_hold(1, "qpu: no", "prerun", NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!((j.hold, j.plugin_hold.as_deref()), (Hold::Admin, Some("qpu: no")));
    assert_eq!(fx.audits(), [(1, "hold")]);
    assert!(q.plugin_hold(2, "qpu: no", "prerun", NOW).is_empty(), "only a pending job is held");
}

#[test]
fn an_async_pre_run_launches_its_job_with_its_payload() {
    let q = queue([configuring(1, true)]);
    let payloads = Ok(vec![("qpu".into(), Some("async".into()))]);
    // On a node still booting it stays CONFIGURING, its payload kept, for the boot to launch.
    let fx = q.configured(1, &format!("1.{NOW}"), &payloads, false, NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!((j.state, super::super::boot::waits_for_boot(j)), (JobState::Configuring, true));
    assert_eq!(j.hres.as_deref().unwrap().resources[0].payload.as_deref(), Some("async"));
    assert!(fx.launches().is_empty(), "no launch before the agent is there");
    let fx = q.configured(1, &format!("1.{NOW}"), &payloads, true, NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    let run = j.hres.as_deref().unwrap();
    assert_eq!(
        (j.state, run.async_running, run.resources[0].payload.as_deref()),
        (JobState::Running, false, Some("async"))
    );
    assert_eq!(fx.launches(), [(1, "n1")]);
    // A result for another run of the job is dropped.
    assert!(q.configured(1, "1.5", &Ok(vec![]), true, NOW).is_empty());
}

#[test]
fn a_failed_async_pre_run_requeues_or_cancels() {
    let q = queue([configuring(1, true), configuring(2, false)]);
    let fx = q.configured(1, "", &Err("qpu: down".into()), true, NOW);
    assert_eq!(fx.persisted()[0].state, JobState::Pending);
    assert_eq!(fx.audits(), [(1, "requeue")]);
    let fx = q.configured(2, "", &Err("qpu: down".into()), true, NOW);
    assert_eq!(fx.persisted()[0].state, JobState::Cancelled);
    assert_eq!(fx.audits(), [(2, "cancel")]);
}

#[test]
fn a_downed_layer_requeues_its_running_jobs_and_stops_their_runs() {
    let q = queue([
        JobRecord { requeue: true, ..running(1, "n1") },
        JobRecord { requeue: false, ..running(2, "n2") },
        pending(3),
    ]);
    let fx = q.layer_down(1, "qpu/q1 down", NOW);
    assert_eq!(fx.persisted()[0].state, JobState::Pending);
    assert_eq!(fx.signals().len(), 1, "its run is stopped");
    let fx = q.layer_down(2, "qpu/q1 down", NOW);
    assert_eq!((fx.persisted()[0].state, fx.audits()), (JobState::Cancelled, vec![(2, "cancel")]));
    assert!(q.layer_down(3, "qpu/q1 down", NOW).is_empty());
}

#[test]
fn a_failed_job_prolog_requeues_the_batch_job() {
    let q = queue([running(1, "n1")]);
    let r = pb::JobReport {
        job_id: 1,
        state: "failed".into(),
        hres_phase: "prolog".into(),
        hres_message: "qpu: hres_node_job_prolog returned ERROR".into(),
        ..Default::default()
    };
    let fx = q.report(&["n1".to_string()], &r, NOW).unwrap();
    assert_eq!(fx.persisted()[0].state, JobState::Pending);
    assert_eq!(fx.audits(), [(1, "requeue")]);
}
