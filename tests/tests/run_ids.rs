//! A job run belongs to one controller's job and to nothing else: a
//! controller started again with a fresh store (a reinstall, a restore, two
//! clusters on one host) under agents still running jobs from before has
//! those runs ended at registration, and its own job 1 runs to COMPLETED
//! rather than being taken for the old job 1.

use spur_client::conn::{self, Clients, Identity};
use spur_proto::v1 as pb;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, wait_for};
use spur_tests::wait::wait_until;
use std::path::Path;

fn cluster() -> String {
    ClusterToml::new()
        .heartbeat(1)
        .node_timeout(10)
        .nodes("node[01-02]", 4, 8192)
        .partition("batch", "node[01-02]")
        .build()
}

async fn client(url: &str) -> Clients {
    conn::connect(url, Identity::asserted("root", Some(0))).await.unwrap()
}

async fn submit(c: &mut Clients, dir: &Path, script: &str) -> u64 {
    let spec = pb::JobSpec {
        script: format!("#!/bin/sh\n{script}\n"),
        workdir: dir.display().to_string(),
        stdout_path: dir.join("out-%j-%s").display().to_string(),
        ..Default::default()
    };
    c.jobs.submit(pb::SubmitRequest { spec: Some(spec) }).await.unwrap().into_inner().job_id
}

async fn state(c: &Clients, id: u64) -> String {
    let req = pb::ListRequest { filter: vec![pb::KeyValue::new("id", &id.to_string())] };
    let jobs = c.clone().jobs.list_jobs(req).await.map(|r| r.into_inner().jobs).unwrap_or_default();
    jobs.into_iter().next().map(|j| j.job_state().as_str().to_string()).unwrap_or_default()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_store_s_job_1_is_not_an_old_job_1() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let old_db = format!("sqlite://{}/old.db", d.display());
    let mut c = Controller::start(d, &conf(&old_db, &cluster()));
    let agent = Agent::start(&c.url, "node[01-02]", &[]);
    let mut cl = client(&c.url).await;
    let mut pids = vec![];
    for _ in 0..4 {
        let id = submit(&mut cl, d, "echo $$ > old-pid-$SLURM_JOB_ID; exec sleep 300").await;
        let path = d.join(format!("old-pid-{id}"));
        let pid: u32 =
            wait_for(&format!("old job {id}"), || std::fs::read_to_string(&path).ok()?.trim().parse().ok());
        pids.push(pid);
    }
    // The same controller address and agents, a new store: a reinstall
    // (the agent restarted with it, adopting the old runs).
    let listen = c.url.clone();
    let state_dir = agent.state_dir().to_path_buf();
    agent.kill_agent_only();
    c.stop();
    let new_conf = conf(&format!("sqlite://{}/new.db", d.display()), &cluster());
    std::fs::write(d.join("spur.conf"), new_conf).unwrap();
    c.restart();
    assert_eq!(c.url, listen);
    // Submitted at once, before the agents are back: the new job 1 meets
    // the old job 1 on the node.
    let mut cl = client(&c.url).await;
    let id = submit(&mut cl, d, "echo new job $SLURM_JOB_ID").await;
    assert_eq!(id, 1, "a fresh store starts at job 1");
    let _agent = Agent::start_in(&c.url, "node[01-02]", &[], &state_dir);
    for pid in &pids {
        wait_for(&format!("the old run {pid} to be ended"), || (!alive(*pid)).then_some(()));
    }
    let cl2 = cl.clone();
    wait_until("the new job 1 to complete", || {
        let cl = cl2.clone();
        async move {
            let s = state(&cl, 1).await;
            if s == "COMPLETED" { Ok(()) } else { Err(s) }
        }
    })
    .await;
    let out = std::fs::read_to_string(d.join("out-1-4294967294")).unwrap_or_default();
    let out = if out.is_empty() {
        std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("out-1-"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect()
    } else {
        out
    };
    assert!(out.contains("new job 1"), "the new job 1 ran: {out:?}");
}
