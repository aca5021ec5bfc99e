//! The `slurm` provisioner end to end, against a second Spur as the
//! upstream (it speaks Slurm: `spur install-links` gives it sbatch, squeue
//! and scancel). A job that only the slurm definition admits makes exactly
//! one pilot in the upstream's queue; the pilot's agent registers its node
//! here (with a single-use token the controller minted); the job completes
//! on it; after idle_timeout_secs the pilot is cancelled upstream and the
//! node is gone. A controller restart while the pilot waits upstream asks
//! for no second one.

use spur_tests::borrow::{Borrowing, DEFINITIONS, ours};
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, field, links_dir, ok, run, wait_for};

/// The upstream: one node of 4 CPUs in partition `compute`.
fn upstream(dir: &std::path::Path) -> (Controller, Agent) {
    let db = format!("sqlite://{}/spur.db", dir.display());
    let toml =
        ClusterToml::new().heartbeat(1).interval(1).nodes("up01", 4, 8192).partition("compute", "up01");
    let c = Controller::start(dir, &conf(&db, &toml.build()));
    let agent = Agent::start(&c.url, "up01", &[]);
    wait_for("the upstream's node", || {
        (ok("sinfo", &c.url, &["-h", "-o", "%t:%D"]).trim() == "idle:1").then_some(())
    });
    (c, agent)
}

/// Both clusters: the upstream, and ours borrowing from it.
struct Setup {
    _up_dir: tempfile::TempDir,
    up: Controller,
    _up_agent: Agent,
    ours: Borrowing,
}

fn setup() -> Setup {
    let up_dir = tempfile::tempdir().unwrap();
    let (up, up_agent) = upstream(up_dir.path());
    let url = up.url.clone();
    let queue = move || ok("squeue", &url, &["-h", "-o", "%j"]).lines().map(str::to_string).collect();
    let ours = Borrowing::start(links_dir(), &[("SPUR_CONTROLLER_ADDR", &up.url)], 2, queue);
    Setup { _up_dir: up_dir, up, _up_agent: up_agent, ours }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_only_the_slurm_definition_admits_runs_on_a_borrowed_node_given_back_when_idle() {
    let both = setup();
    let s = &both.ours;
    let shown = ok("scontrol", &s.c.url, &["show", "provisioner", "burst"]);
    assert!(shown.contains("Backend=slurm") && shown.contains("State=no nodes"), "{shown}");
    let id = s.submit();
    let mut most = 0;
    s.wait("one pilot upstream", &mut most, || s.pilots() == ["spur-burst-1"]);
    s.completes_and_gives_back(id, &mut most);
    // The node's borrowed time is counted, and its cost at costPerHour 0.3.
    let json = ok("scontrol", &s.c.url, &["--json", "show", "provisioner", "burst"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let (hours, cost) = (v["provisioners"][0]["node_hours"].as_f64(), v["provisioners"][0]["cost"].as_f64());
    assert!(hours.is_some_and(|h| h > 0.0) && cost.is_some_and(|c| c > 0.0), "{json}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restart_while_the_pilot_waits_upstream_asks_for_no_second_one() {
    let Setup { _up_dir, up, _up_agent, ours: mut s } = setup();
    // The pilot waits in the upstream's queue while a job there holds its only node.
    let wd = s.dir.path().display().to_string();
    let args = ["--parsable", "-c", "4", "-D", &wd, "-o", "/dev/null", "--wrap", "sleep 300"];
    let blocker = ok("sbatch", &up.url, &args).trim().to_string();
    wait_for("the upstream's node busy", || {
        (field(&up.url, blocker.parse().unwrap(), "%T") == "RUNNING").then_some(())
    });
    let id = s.submit();
    let mut most = 0;
    s.wait("one pilot upstream", &mut most, || s.pilots() == ["spur-burst-1"]);
    s.c.restart();
    // A pass has run since the restart: the job has its reason again.
    s.wait("a pass after the restart", &mut most, || !field(&s.c.url, id, "%r").is_empty());
    let shown = ok("scontrol", &s.c.url, &["show", "node", "burst-1"]);
    assert!(shown.contains("State=IDLE+CLOUD+POWERING_UP+DYNAMIC_NORM"), "waiting for its agent: {shown}");
    let short = ok("sinfo", &s.c.url, &["-h", "-N", "-n", "burst-1", "-o", "%t"]);
    assert_eq!(short.trim(), "idle#");
    ok("scancel", &up.url, &[&blocker]);
    s.completes_and_gives_back(id, &mut most);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_upstream_makes_jobs_pend_naming_the_definition_and_the_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fake = d.join("bin");
    std::fs::create_dir(&fake).unwrap();
    let sbatch = fake.join("sbatch");
    std::fs::write(
        &sbatch,
        "#!/bin/sh\necho 'sbatch: error: invalid partition specified: compute' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&sbatch, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(d.join("provisioners.yaml"), DEFINITIONS).unwrap();
    let db = format!("sqlite://{}/spur.db", d.display());
    let env = [("SPUR_CONTROLLER_ADDR", "http://127.0.0.1:1")];
    let c = Controller::start(d, &ours(&db, &fake, &env, "http://127.0.0.1:1", 2));
    let wd = d.display().to_string();
    let args = ["--parsable", "-p", "burst", "-t", "5", "-D", &wd, "-o", "/dev/null", "--wrap", "true"];
    let id: u64 = ok("sbatch", &c.url, &args).trim().parse().unwrap();
    wait_for("the job pends naming the definition", || {
        (field(&c.url, id, "%r") == "ProvisionerUnavailable").then_some(())
    });
    let why = ok("scontrol", &c.url, &["explain", "job", &id.to_string()]);
    assert!(
        why.contains("provisioner definition burst is unavailable")
            && why.contains("invalid partition specified"),
        "{why}"
    );
    assert!(
        run("scontrol", &c.url, &["show", "node", "burst-1"]).status.code() != Some(0),
        "no node left behind"
    );
}
