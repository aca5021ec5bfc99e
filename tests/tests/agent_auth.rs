//! Only the agent running a job may end it: a report from a caller that is
//! no agent, from an agent with a wrong key, or from an admitted agent that
//! does not host the job's node is refused, and the job runs on.

use spur_proto::v1 as pb;
use spur_proto::v1::agent_client::AgentClient;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, field, ok, sacct_state, wait_for};
use tonic::Code;

fn cluster() -> ClusterToml {
    ClusterToml::token_admission()
}

fn forged(agent_id: &str, agent_key: &str, job_id: u64) -> pb::JobReport {
    pb::JobReport {
        agent_id: agent_id.into(),
        agent_key: agent_key.into(),
        job_id,
        state: "exited".into(),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn forged_job_reports_are_refused_and_the_job_runs_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = format!("sqlite://{}/spur.db", d.display());
    let c = Controller::start(d, &conf(&db, &cluster().build()));
    let token = ok("spur", &c.url, &["token", "create", "--ttl", "1h"]).trim().to_string();
    let _agent = Agent::start(&c.url, "node[01-02]", &[("SPUR_ADMISSION_TOKEN", &token)]);
    wait_for("nodes up", || {
        (ok("sinfo", &c.url, &["-h", "-p", "batch", "-o", "%t"]).trim() == "idle").then_some(())
    });
    let script = "while [ ! -f go ]; do sleep 0.05; done";
    let wd = d.display().to_string();
    let id: u64 = ok("sbatch", &c.url, &["--parsable", "-D", &wd, "-o", "/dev/null", "--wrap", script])
        .trim()
        .parse()
        .unwrap();
    wait_for("the job running", || (field(&c.url, id, "%T") == "RUNNING").then_some(()));

    let mut raw = AgentClient::connect(c.url.clone()).await.unwrap();
    // No agent at all.
    let err = raw.report_job(forged("not-an-agent", "", id)).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err:?}");
    // Not admitted: no registration, hence no key.
    let req = pb::RegisterRequest { nodes: vec!["node03".into()], ..Default::default() };
    assert_eq!(raw.register(req).await.unwrap_err().code(), Code::PermissionDenied);
    // An admitted agent of another node, with a wrong key and with its own.
    let req = pb::RegisterRequest {
        nodes: vec!["node03".into()],
        admission_token: token.clone(),
        ..Default::default()
    };
    let other = raw.register(req).await.unwrap().into_inner();
    let err = raw.report_job(forged(&other.agent_id, "guessed", id)).await.unwrap_err();
    assert_eq!(err.code(), Code::Unauthenticated, "{err:?}");
    let hb = pb::HeartbeatRequest { agent_id: other.agent_id.clone(), agent_key: "guessed".into() };
    assert_eq!(raw.heartbeat(hb).await.unwrap_err().code(), Code::Unauthenticated);
    let err = raw.report_job(forged(&other.agent_id, &other.agent_key, id)).await.unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err:?}");
    assert!(err.message().contains("does not host"), "{}", err.message());

    assert_eq!(field(&c.url, id, "%T"), "RUNNING", "no forged report ended it");
    std::fs::write(d.join("go"), "").unwrap();
    wait_for("the job completed by its own agent", || (sacct_state(&c.url, id) == "COMPLETED").then_some(()));
}
