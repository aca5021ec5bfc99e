//! Admission tokens bound to nodes and single-use tokens (issue 34), and an
//! agent's registration speaking only for runs on its own nodes, with the
//! real binaries: a token bound to node[01-02] cannot register node03; a
//! `--once` token registers once, also across a controller restart; a
//! running list naming a job on another agent's node changes nothing of it.

use spur_proto::v1 as pb;
use spur_proto::v1::agent_client::AgentClient;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, fails, field, ok, sacct_state, wait_for};
use tonic::Code;

fn cluster() -> ClusterToml {
    ClusterToml::token_admission()
}

fn start(dir: &std::path::Path) -> Controller {
    let db = format!("sqlite://{}/spur.db", dir.display());
    Controller::start(dir, &conf(&db, &cluster().build()))
}

fn create(c: &Controller, args: &[&str]) -> (String, String) {
    let token = ok("spur", &c.url, &[&["token", "create"][..], args].concat()).trim().to_string();
    let id = token.split_once('.').expect("ID.SECRET").0.to_string();
    (id, token)
}

fn register(nodes: &str, token: &str) -> pb::RegisterRequest {
    pb::RegisterRequest {
        nodes: spur_client::vocab::hostlist::expand(nodes).unwrap(),
        admission_token: token.into(),
        ..Default::default()
    }
}

/// The one row of `spur token list --json` for token `id`.
fn listed(c: &Controller, id: &str) -> serde_json::Value {
    let rows: serde_json::Value =
        serde_json::from_str(&ok("spur", &c.url, &["token", "list", "--json"])).unwrap();
    rows.as_array().unwrap().iter().find(|r| r["ID"] == id).cloned().expect("listed")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_bound_to_nodes_registers_only_those() {
    let dir = tempfile::tempdir().unwrap();
    let c = start(dir.path());
    // Bad input is refused naming the flag, by the CLI and by the controller.
    let e = fails("spur", &c.url, &["token", "create", "--nodes", "node[1-"]);
    assert!(e.contains("--nodes") && e.contains("unclosed"), "{e}");
    let mut admin = spur_client::conn::connect(&c.url, spur_client::conn::Identity::local()).await.unwrap();
    let req = pb::CreateTokenRequest { nodes: Some("node[1-4]".into()), ..Default::default() };
    let e = admin.admission.create_token(req).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("--nodes: ") && e.message().contains("more than 3 hosts"), "{e:?}");

    let (id, token) = create(&c, &["--nodes", "node[01-02]", "--ttl", "1h"]);
    let row = listed(&c, &id);
    assert_eq!((row["Nodes"].as_str(), row["Once"].as_str()), (Some("node[01-02]"), Some("no")));
    let audit = ok("sacctmgr", &c.url, &["-n", "-P", "show", "txn", "Entity=token", "format=Action,Info"]);
    assert!(audit.contains(r#""nodes":"node[01-02]""#) && audit.contains(r#""once":false"#), "{audit}");

    // The real agent: refused, and it says why.
    let state = dir.path().join("spurd").display().to_string();
    let args = ["--controller", &c.url, "--nodes", "node[02-03]", "--token", &token, "--state-dir", &state];
    let (status, said) = Agent::refused(&args);
    assert_eq!(status.code(), Some(1), "{said}");
    assert!(said.contains("node03") && said.contains(&id), "{said}");
    let mut raw = AgentClient::connect(c.url.clone()).await.unwrap();
    let e = raw.register(register("node03", &token)).await.unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    assert_eq!(
        e.message(),
        format!("admission refused: admission token {id} does not admit node node03 (only node[01-02])")
    );
    // Its own nodes it registers, as often as asked.
    raw.register(register("node[01-02]", &token)).await.unwrap();
    raw.register(register("node02", &token)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_once_token_registers_once_and_a_restart_does_not_forget_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(dir.path());
    let (id, token) = create(&c, &["--once"]);
    assert_eq!(listed(&c, &id)["Used"], "never");
    let audit = ok("sacctmgr", &c.url, &["-n", "-P", "show", "txn", "Entity=token", "format=Info"]);
    assert!(audit.contains(r#""once":true"#), "{audit}");

    let agent = Agent::start(&c.url, "node01", &[("SPUR_ADMISSION_TOKEN", &token)]);
    wait_for("node01 up", || {
        (ok("sinfo", &c.url, &["-h", "-n", "node01", "-o", "%t"]).trim() == "idle").then_some(())
    });
    // The node shows before the registration is acknowledged, and the token is
    // marked used just before that: until then a second try hears "under way".
    wait_for("the token marked used", || (listed(&c, &id)["Status"] == "used").then_some(()));
    let used = format!("admission refused: admission token {id} was used already");
    let mut raw = AgentClient::connect(c.url.clone()).await.unwrap();
    let e = raw.register(register("node02", &token)).await.unwrap_err();
    assert_eq!((e.code(), e.message()), (Code::PermissionDenied, used.as_str()));
    let row = listed(&c, &id);
    assert_eq!((row["Once"].as_str(), row["Status"].as_str()), (Some("yes"), Some("used")));
    assert_ne!(row["Used"], "never");

    // The used mark is in the store: the restarted controller refuses the
    // agent's re-registration with it too (a new token is needed).
    c.restart();
    let status = agent.wait_exit();
    assert_eq!(status.code(), Some(1));
    let mut raw = AgentClient::connect(c.url.clone()).await.unwrap();
    let e = raw.register(register("node01", &token)).await.unwrap_err();
    assert_eq!((e.code(), e.message()), (Code::PermissionDenied, used.as_str()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_registration_cannot_speak_for_jobs_on_another_agents_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let c = start(d);
    let (_, token) = create(&c, &[]);
    let _agent = Agent::start(&c.url, "node[01-02]", &[("SPUR_ADMISSION_TOKEN", &token)]);
    wait_for("nodes up", || {
        (ok("sinfo", &c.url, &["-h", "-p", "batch", "-o", "%t"]).trim() == "idle").then_some(())
    });
    let wd = d.display().to_string();
    let script = "while [ ! -f go ]; do sleep 0.05; done";
    let id: u64 = ok("sbatch", &c.url, &["--parsable", "-D", &wd, "-o", "/dev/null", "--wrap", script])
        .trim()
        .parse()
        .unwrap();
    wait_for("the job running", || (field(&c.url, id, "%T") == "RUNNING").then_some(()));
    let start = field(&c.url, id, "%S");

    // The agent of node03 says it runs the job on node01, node02 and node03.
    let mut raw = AgentClient::connect(c.url.clone()).await.unwrap();
    let mut req = register("node03", &token);
    req.running = ["node01", "node02", "node03"]
        .iter()
        .map(|n| pb::RunningJob { job_id: id, node: n.to_string(), run_id: String::new() })
        .collect();
    raw.register(req).await.unwrap();

    // Nothing of the job changed, and its own agent's end is taken.
    assert_eq!((field(&c.url, id, "%T"), field(&c.url, id, "%S")), ("RUNNING".into(), start));
    std::fs::write(d.join("go"), "").unwrap();
    wait_for("the job completed by its own agent", || (sacct_state(&c.url, id) == "COMPLETED").then_some(()));
}
