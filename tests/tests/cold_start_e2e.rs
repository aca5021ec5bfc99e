//! spurctld started while its database is unreachable (SQLite whose
//! directory is missing): it listens, refuses every request with an
//! Unavailable that names the database, and once the directory is back it
//! opens the store, loads the queue an earlier controller left, and runs it.

use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, field, ok, run, wait_for};

fn cluster() -> ClusterToml {
    ClusterToml::new()
        .heartbeat(1)
        .node_timeout(5)
        .nodes("node[01-02]", 4, 8192)
        .partition("batch", "node[01-02]")
}

/// Runs a client that must be refused because the database is unreachable;
/// its stderr.
fn refused(personality: &str, url: &str, args: &[&str], db: &str) -> String {
    let out = run(personality, url, args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{personality} {args:?}: {err}");
    assert!(err.contains(db) && err.contains("unreachable") && err.contains("retrying"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn a_queue_left_pending_runs_after_a_start_without_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let away = dir.path().join("away");
    std::fs::create_dir(&state).unwrap();
    let db = format!("sqlite://{}/spur.db", state.display());

    // A job no agent can run yet, in the durable queue.
    let mut c = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    let config = c.config.clone();
    ok("sacctmgr", &c.url, &["-i", "add", "qos", "name=normal"]);
    let workdir = dir.path().display().to_string();
    let out = ok("sbatch", &c.url, &["--parsable", "-D", &workdir, "-q", "normal", "--wrap=echo ran"]);
    let id: u64 = out.trim().parse().expect("a job id");
    assert_eq!(field(&c.url, id, "%T"), "PENDING");
    assert!(c.stop().success());

    std::fs::rename(&state, &away).unwrap();
    let mut c = Controller::start_with(&config);
    refused("squeue", &c.url, &[], &db);
    refused("sbatch", &c.url, &["-D", &workdir, "--wrap=echo lost"], &db);
    assert!(c.alive(), "spurctld must keep waiting for its database");

    std::fs::rename(&away, &state).unwrap();
    wait_for("the controller to serve its queue", || {
        let out = run("squeue", &c.url, &["-h", "-j", &id.to_string(), "-o", "%T"]);
        (out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "PENDING").then_some(())
    });
    let queue = ok("squeue", &c.url, &["-h", "-o", "%i"]);
    assert_eq!(queue.trim(), id.to_string(), "the refused submission was not kept");
    let _agent = Agent::start(&c.url, "node[01-02]", &[]);
    wait_for("the job to complete", || (field(&c.url, id, "%T") == "COMPLETED").then_some(()));
    let log = std::fs::read_to_string(dir.path().join(format!("slurm-{id}.out"))).unwrap();
    assert_eq!(log, "ran\n");
    assert!(c.stop().success());
}

#[test]
fn a_waiting_controller_stops_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/missing/spur.db", dir.path().display());
    let mut c = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    refused("sinfo", &c.url, &[], &db);
    assert!(c.stop().success(), "a clean exit while waiting");
}

#[test]
fn a_running_job_keeps_running_while_the_controller_waits() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let away = dir.path().join("away");
    std::fs::create_dir(&state).unwrap();
    let db = format!("sqlite://{}/spur.db", state.display());
    let mut c = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    let _agent = Agent::start(&c.url, "node[01-02]", &[]);
    let workdir = dir.path().display().to_string();
    let gated = "--wrap=echo started >> starts; while [ ! -f go ]; do sleep 0.05; done";
    let out = ok("sbatch", &c.url, &["--parsable", "-D", &workdir, gated]);
    let id: u64 = out.trim().parse().expect("a job id");
    let starts =
        || std::fs::read_to_string(dir.path().join("starts")).map(|s| s.lines().count()).unwrap_or(0);
    wait_for("the job to start", || (starts() == 1).then_some(()));
    let started = field(&c.url, id, "%S");

    c.stop();
    std::fs::rename(&state, &away).unwrap();
    // Same address: the agent keeps calling, and is refused until the database is back.
    c.restart();
    refused("squeue", &c.url, &[], &db);
    std::fs::rename(&away, &state).unwrap();
    wait_for("the agent to re-register", || {
        let out = run("sinfo", &c.url, &["-h", "-o", "%t:%D"]);
        (out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "mix:1\nidle:1").then_some(())
    });
    assert_eq!((field(&c.url, id, "%T"), field(&c.url, id, "%S")), ("RUNNING".to_string(), started));

    std::fs::write(dir.path().join("go"), "").unwrap();
    wait_for("the job to complete", || (field(&c.url, id, "%T") == "COMPLETED").then_some(()));
    assert_eq!(starts(), 1, "launched once, never killed or restarted");
}
