//! Agents report their running jobs when they (re-)register, and the
//! controller reconciles: a job on both sides keeps running through a
//! controller restart; a job the agent lost is requeued (or NODE_FAIL); a
//! job the agent runs but the controller does not is killed; a job that
//! ended while the controller was away ends with its real exit code.

use spur_client::conn::{self, Clients, Identity};
use spur_proto::v1 as pb;
use spur_proto::v1::agent_client::AgentClient;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, DEADLINE, conf, starts};
use spur_tests::wait::wait_until;
use spur_vocab::JobState;
use std::path::Path;

fn cluster() -> ClusterToml {
    ClusterToml::new()
        .heartbeat(1)
        .node_timeout(10)
        .nodes("node[01-02]", 4, 8192)
        .partition("batch", "node[01-02]")
}

async fn client(url: &str) -> Clients {
    conn::connect(url, Identity::asserted("root", Some(0))).await.unwrap()
}

async fn job(c: &mut Clients, id: u64) -> Option<pb::Job> {
    let req = pb::ListRequest { filter: vec![pb::KeyValue { key: "id".into(), value: id.to_string() }] };
    c.jobs.list_jobs(req).await.ok()?.into_inner().jobs.into_iter().next()
}

/// Waits until the job satisfies `ok`, with the deadline.
async fn wait_job(c: &mut Clients, id: u64, what: &str, ok: impl Fn(&pb::Job) -> bool) -> pb::Job {
    let ok = &ok;
    wait_until(format!("job {id} to become {what}"), || {
        let mut c = c.clone();
        async move {
            match job(&mut c, id).await {
                Some(j) if ok(&j) => Ok(j),
                other => Err(format!("{other:?}")),
            }
        }
    })
    .await
}

/// A job that notes each start in `starts` and runs until `go` exists.
async fn submit_gated(c: &mut Clients, dir: &Path, requeue: bool) -> u64 {
    let spec = pb::JobSpec {
        name: "gated".into(),
        script: "#!/bin/sh\necho started >> starts-$SLURM_JOB_ID\nwhile [ ! -f go ]; do sleep 0.05; done\n"
            .into(),
        workdir: dir.display().to_string(),
        requeue: Some(requeue),
        ..Default::default()
    };
    c.jobs.submit(pb::SubmitRequest { spec: Some(spec) }).await.unwrap().into_inner().job_id
}

/// Waits until the job's script has started `n` times: RUNNING on the
/// controller precedes the launch reaching the agent.
fn wait_started(dir: &Path, id: u64, n: usize) {
    spur_tests::proc::wait_for(&format!("job {id} to start {n} time(s)"), || {
        (starts(dir, id) >= n).then_some(())
    });
}

/// Waits until every node has an agent again (after a controller restart they are UNKNOWN).
async fn wait_registered(c: &mut Clients) {
    wait_until("the agent to re-register", || {
        let mut c = c.clone();
        async move {
            let nodes = c.nodes.list_nodes(pb::ListRequest::default()).await.map(|r| r.into_inner().nodes);
            nodes
                .is_ok_and(|ns| ns.iter().all(|n| n.base_state != "UNKNOWN" && !n.agent_host.is_empty()))
                .then_some(())
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_job_survives_a_controller_restart_and_completes() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let mut c = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    let _a = Agent::start(&c.url, "node[01-02]", &[]);
    let mut cl = client(&c.url).await;
    let id = submit_gated(&mut cl, dir.path(), true).await;
    let before = wait_job(&mut cl, id, "RUNNING", |j| j.job_state() == JobState::Running).await;
    wait_started(dir.path(), id, 1);

    c.restart();
    let mut cl = client(&c.url).await;
    wait_registered(&mut cl).await;
    let after = job(&mut cl, id).await.unwrap();
    assert_eq!(
        (after.job_state().as_str(), after.start_ms, &after.nodes),
        ("RUNNING", before.start_ms, &before.nodes)
    );

    std::fs::write(dir.path().join("go"), "").unwrap();
    let done = wait_job(&mut cl, id, "COMPLETED", |j| j.job_state() == JobState::Completed).await;
    assert_eq!(done.start_ms, before.start_ms, "the run was not restarted");
    assert_eq!(starts(dir.path(), id), 1, "launched once");
}

#[tokio::test(flavor = "multi_thread")]
async fn jobs_a_new_agent_does_not_run_are_requeued_or_node_fail() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let c = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    let first = Agent::start(&c.url, "node[01-02]", &[]);
    let mut cl = client(&c.url).await;
    let again = submit_gated(&mut cl, dir.path(), true).await;
    let once = submit_gated(&mut cl, dir.path(), false).await;
    let before = wait_job(&mut cl, again, "RUNNING", |j| j.job_state() == JobState::Running).await;
    wait_job(&mut cl, once, "RUNNING", |j| j.job_state() == JobState::Running).await;
    wait_started(dir.path(), again, 1);
    wait_started(dir.path(), once, 1);

    // The agent dies with its jobs (the node lost them); a new one takes the nodes.
    first.kill();
    let _second = Agent::start(&c.url, "node[01-02]", &[]);
    let failed = wait_job(&mut cl, once, "NODE_FAIL", |j| j.job_state() == JobState::NodeFail).await;
    assert_eq!(failed.reason_str(), "JobLostOnNode");
    let rerun = wait_job(&mut cl, again, "running again", |j| {
        j.job_state() == JobState::Running && j.start_ms != before.start_ms
    })
    .await;
    assert!(rerun.start_ms > before.start_ms);
    std::fs::write(dir.path().join("go"), "").unwrap();
    wait_job(&mut cl, again, "COMPLETED", |j| j.job_state() == JobState::Completed).await;
    assert_eq!(starts(dir.path(), again), 2, "requeued and launched again");
}

/// A scripted agent speaking the Agent protocol, to say exactly what it runs.
async fn fake_agent(
    url: &str,
    running: Vec<pb::RunningJob>,
    ended: Vec<pb::JobReport>,
) -> (AgentClient<tonic::transport::Channel>, tonic::Streaming<pb::AgentCommand>) {
    let mut a = AgentClient::connect(url.to_string()).await.unwrap();
    let req = pb::RegisterRequest {
        nodes: vec!["node01".into(), "node02".into()],
        hostname: "fake".into(),
        running,
        ended,
        ..Default::default()
    };
    let reg = a.register(req).await.unwrap().into_inner();
    let req = pb::CommandsRequest { agent_id: reg.agent_id, agent_key: reg.agent_key };
    let cmds = a.commands(req).await.unwrap().into_inner();
    (a, cmds)
}

async fn next_command(cmds: &mut tonic::Streaming<pb::AgentCommand>) -> pb::agent_command::Cmd {
    let msg = tokio::time::timeout(DEADLINE, cmds.message()).await.expect("no command in time");
    msg.unwrap().and_then(|c| c.cmd).expect("a command")
}

#[tokio::test(flavor = "multi_thread")]
async fn stray_jobs_are_killed_and_ends_reported_at_registration_count() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let c = Controller::start(dir.path(), &conf(&db, &cluster().build()));

    // An agent that runs a job the controller never had: told to kill it.
    let stray = pb::RunningJob { job_id: 4242, node: "node01".into(), run_id: String::new() };
    let (_a, mut cmds) = fake_agent(&c.url, vec![stray], vec![]).await;
    match next_command(&mut cmds).await {
        pb::agent_command::Cmd::Signal(s) => assert_eq!((s.job_id, s.signal), (4242, 9)),
        other => panic!("expected a kill, got {other:?}"),
    }

    // A job launched on the agent, which then loses the controller; the job
    // exits 3 meanwhile and the agent says so when it registers again.
    let mut cl = client(&c.url).await;
    let id = submit_gated(&mut cl, dir.path(), true).await;
    let node = match next_command(&mut cmds).await {
        pb::agent_command::Cmd::Launch(l) => {
            assert_eq!(l.job_id, id);
            l.node
        }
        other => panic!("expected the launch, got {other:?}"),
    };
    let ended = pb::JobReport { job_id: id, state: "exited".into(), exit_code: 3, ..Default::default() };
    drop(cmds);
    let _again = fake_agent(&c.url, vec![], vec![ended]).await;
    let j = wait_job(&mut cl, id, "FAILED", |j| j.job_state() != JobState::Running).await;
    assert_eq!((j.job_state().as_str(), j.exit_code, j.nodes.first()), ("FAILED", 3, Some(&node)));
}
