//! Jobs end to end through the API: submit to a controller with real
//! `spurd` agents, run, finish and free the nodes; pending reasons; the gate.

use spur_client::conn::{self, Clients, Identity};
use spur_proto::v1 as pb;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, ok};
use spur_tests::wait::wait_until;

fn cluster() -> ClusterToml {
    ClusterToml::new()
        .heartbeat(1)
        .node_timeout(5)
        .nodes("node[01-04]", 4, 8192)
        .partition("batch", "node[01-04]")
}

async fn client(url: &str) -> Clients {
    conn::connect(url, Identity::asserted("root", Some(0))).await.unwrap()
}

async fn wait_state(c: &mut Clients, id: u64, want: &str) -> pb::Job {
    wait_until(format!("job {id} to reach {want}"), || {
        let mut c = c.clone();
        async move {
            let req =
                pb::ListRequest { filter: vec![pb::KeyValue { key: "id".into(), value: id.to_string() }] };
            let jobs = c.jobs.list_jobs(req).await.unwrap().into_inner().jobs;
            jobs.into_iter().next().filter(|j| j.job_state().as_str() == want)
        }
    })
    .await
}

fn spec(script: &str, dir: &std::path::Path) -> pb::JobSpec {
    pb::JobSpec {
        name: "t".into(),
        num_nodes: 1,
        ntasks: 1,
        cpus_per_task: 1,
        script: format!("#!/bin/sh\n{script}\n"),
        workdir: dir.display().to_string(),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn jobs_run_finish_and_free_their_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let c = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    let _a = Agent::start(&c.url, "node[01-04]", &[]);
    let mut cl = client(&c.url).await;
    let id = cl
        .jobs
        .submit(pb::SubmitRequest {
            spec: Some(spec("echo id=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST", dir.path())),
        })
        .await
        .unwrap()
        .into_inner()
        .job_id;
    let done = wait_state(&mut cl, id, "COMPLETED").await;
    assert_eq!(done.nodes.len(), 1);
    let out = std::fs::read_to_string(dir.path().join(format!("slurm-{id}.out"))).unwrap();
    assert_eq!(out, format!("id={id} nodes={}\n", done.nodes[0]));
    let idle = ok("sinfo", &c.url, &["-h", "-o", "%t %D"]);
    assert_eq!(idle.trim(), "idle 4", "nodes freed: {idle}");

    // A failing job is FAILED with its exit code; a long one can be cancelled.
    let bad = cl
        .jobs
        .submit(pb::SubmitRequest { spec: Some(spec("exit 3", dir.path())) })
        .await
        .unwrap()
        .into_inner()
        .job_id;
    assert_eq!(wait_state(&mut cl, bad, "FAILED").await.exit_code, 3);
    let long = cl
        .jobs
        .submit(pb::SubmitRequest { spec: Some(spec("sleep 300", dir.path())) })
        .await
        .unwrap()
        .into_inner()
        .job_id;
    wait_state(&mut cl, long, "RUNNING").await;
    // An update commits its row with the job, once.
    ok("scontrol", &c.url, &["update", &format!("jobid={long}"), "TimeLimit=100"]);
    cl.jobs.cancel(pb::CancelRequest { ids: vec![long], ..Default::default() }).await.unwrap();
    wait_state(&mut cl, long, "CANCELLED").await;
    let txn = ok(
        "sacctmgr",
        &c.url,
        &["-n", "-P", "show", "txn", "Entity=job", "format=Action,Where,Outcome,Info"],
    );
    assert!(txn.contains(&format!("create|job:{id}|success|")), "{txn}");
    // The row commits with the job (audit/claim.rs), and only once.
    assert_eq!(txn.matches(&format!("create|job:{id}|")).count(), 1, "{txn}");
    assert_eq!(
        txn.matches(&format!("update|job:{long}|success|")).count(),
        2,
        "the update and the cancel: {txn}"
    );
    assert!(!txn.contains("echo id="), "scripts never reach the audit log: {txn}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_qos_node_cap_keeps_the_third_exclusive_job_pending() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let c = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    let _a = Agent::start(&c.url, "node[01-04]", &[]);
    ok("sacctmgr", &c.url, &["-i", "add", "qos", "name=gpu", "grptres=node=2", "maxjobsperuser=10"]);
    ok("sacctmgr", &c.url, &["-i", "add", "account", "name=ml"]);
    ok("sacctmgr", &c.url, &["-i", "add", "user", "name=root", "account=ml", "qos=gpu", "defaultqos=gpu"]);
    let mut cl = client(&c.url).await;
    let mut ids = vec![];
    for _ in 0..3 {
        let s = pb::JobSpec { exclusive: true, qos: "gpu".into(), ..spec("sleep 300", dir.path()) };
        ids.push(cl.jobs.submit(pb::SubmitRequest { spec: Some(s) }).await.unwrap().into_inner().job_id);
    }
    wait_state(&mut cl, ids[0], "RUNNING").await;
    wait_state(&mut cl, ids[1], "RUNNING").await;
    let third_id = ids[2];
    let third = wait_until("the third job to pend for QOSGrpNodeLimit", || {
        let mut cl = cl.clone();
        async move {
            let j = wait_state(&mut cl, third_id, "PENDING").await;
            if j.reason_str() == "QOSGrpNodeLimit" {
                Ok(j)
            } else {
                Err(format!("reason: {} {}", j.reason, j.reason_detail))
            }
        }
    })
    .await;
    assert!(third.reason_detail.contains("gpu"), "{}", third.reason_detail);
    cl.jobs.cancel(pb::CancelRequest { ids: ids.clone(), ..Default::default() }).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_gate_rejects_with_the_slurm_code() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let c = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    ok("sacctmgr", &c.url, &["-i", "add", "qos", "name=tight", "maxtresperjob=cpu=2", "flags=DenyOnLimit"]);
    ok("sacctmgr", &c.url, &["-i", "add", "qos", "name=none", "maxsubmitjobsperuser=0"]);
    ok("sacctmgr", &c.url, &["-i", "add", "account", "name=ml"]);
    ok("sacctmgr", &c.url, &["-i", "add", "user", "name=root", "account=ml"]);
    let mut cl = client(&c.url).await;
    let big = pb::JobSpec { qos: "tight".into(), ntasks: 4, ..spec("true", dir.path()) };
    let e = cl.jobs.submit(pb::SubmitRequest { spec: Some(big) }).await.unwrap_err();
    assert!(e.message().starts_with("QOSMaxCpuPerJobLimit"), "{}", e.message());
    let e = cl
        .jobs
        .submit(pb::SubmitRequest {
            spec: Some(pb::JobSpec { qos: "none".into(), ..spec("true", dir.path()) }),
        })
        .await
        .unwrap_err();
    assert!(e.message().starts_with("QOSMaxSubmitJobPerUserLimit"), "{}", e.message());
    let e = cl
        .jobs
        .submit(pb::SubmitRequest {
            spec: Some(pb::JobSpec { qos: "ghost".into(), ..spec("true", dir.path()) }),
        })
        .await
        .unwrap_err();
    assert!(e.message().contains("QOS 'ghost' does not exist"), "{}", e.message());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bulk_cancel_is_one_row_committed_with_its_last_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let c = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    let mut cl = client(&c.url).await;
    // More than one write's chunk (256), held so none starts.
    let mut ids = vec![];
    for _ in 0..300 {
        let spec = pb::JobSpec { name: "bulk".into(), hold: true, ..spec("true", dir.path()) };
        ids.push(cl.jobs.submit(pb::SubmitRequest { spec: Some(spec) }).await.unwrap().into_inner().job_id);
    }
    let filter = vec![pb::KeyValue { key: "name".into(), value: "bulk".into() }];
    let done = cl.jobs.cancel(pb::CancelRequest { filter, ..Default::default() }).await.unwrap();
    assert_eq!(done.into_inner().cancelled, ids);
    let txn = ok(
        "sacctmgr",
        &c.url,
        &["-n", "-P", "show", "txn", "Entity=job", "Action=update", "format=Where,Info"],
    );
    assert_eq!(txn.lines().count(), 1, "one row for the request: {txn}");
    assert!(txn.contains("\"total\":300"), "{txn}");
}
