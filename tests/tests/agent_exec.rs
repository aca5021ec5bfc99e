//! The launch, signal and report path: the controller sends a trivial job to
//! a real `spurd`, which runs it, and the exit comes back as a report.

use spur_daemon::config::Config;
use spur_proto::v1 as pb;
use spur_tests::proc::{Agent, DEADLINE};

async fn report(rx: &mut tokio::sync::broadcast::Receiver<pb::JobReport>) -> pb::JobReport {
    tokio::time::timeout(DEADLINE, rx.recv()).await.expect("a job report in time").unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn launch_signal_and_report_through_a_real_agent() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("spur.conf");
    std::fs::write(
        &conf,
        "[controller]\nheartbeat_interval_secs = 1\nnode_timeout_secs = 5\n[[nodes]]\nname = \"n[1-2]\"\n",
    )
    .unwrap();
    let running = spur_daemon::controller::start(Config::load(&conf).unwrap(), "127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", running.addr());
    let _agent = Agent::start(&url, "n[1-2]", &[]);
    let nodes = running.nodes.clone();
    let mut reports = nodes.reports();
    let out = dir.path().join("job.out");
    let launch = |job_id: u64, script: &str| pb::AgentCommand {
        cmd: Some(pb::agent_command::Cmd::Launch(pb::Launch {
            job_id,
            node: "n2".into(),
            script: script.into(),
            env: vec![pb::KeyValue { key: "SPUR_JOB_ID".into(), value: job_id.to_string() }],
            stdout_path: out.display().to_string(),
            stderr_path: String::new(),
            workdir: dir.path().display().to_string(),
        })),
    };
    // The agent's command stream opens right after it registers.
    let start = std::time::Instant::now();
    while nodes.send("n2", launch(1, "echo hello from $SPUR_JOB_ID; exit 4")).await.is_err() {
        assert!(start.elapsed() < DEADLINE, "agent never connected");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let r = report(&mut reports).await;
    assert_eq!((r.job_id, r.state.as_str(), r.exit_code), (1, "exited", 4));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "hello from 1\n");

    nodes.send("n2", launch(2, "exec sleep 300")).await.unwrap();
    let signal = pb::AgentCommand {
        cmd: Some(pb::agent_command::Cmd::Signal(pb::SignalJob { job_id: 2, signal: 9 })),
    };
    // The job may not have started when the signal arrives; resend until it ends.
    let ended = loop {
        nodes.send("n2", signal.clone()).await.unwrap();
        if let Ok(Ok(r)) = tokio::time::timeout(std::time::Duration::from_millis(200), reports.recv()).await {
            break r;
        }
        assert!(start.elapsed() < DEADLINE, "job 2 never ended");
    };
    assert_eq!((ended.job_id, ended.signal), (2, 9));
    running.shutdown().await.unwrap();
}
