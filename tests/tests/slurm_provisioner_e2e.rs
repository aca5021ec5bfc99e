//! The `slurm` provisioner end to end, against a second Spur as the
//! upstream (it speaks Slurm: `spur install-links` gives it sbatch, squeue
//! and scancel). A job that only the slurm definition admits makes exactly
//! one pilot in the upstream's queue; the pilot's agent registers its node
//! here (with a single-use token the controller minted); the job completes
//! on it; after idle_timeout_secs the pilot is cancelled upstream and the
//! node is gone.

use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, bin, conf, links_dir, ok, run, sacct_state, wait_for};

const DEFINITIONS: &str = "definitions:
- id: burst
  provisioner: slurm
  ttl: 3600
  provisionerSpec: {cpu: 2, memory: 1GiB, partition: compute, costPerHour: 0.3}
";

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

/// Our spur.conf: token admission, partition `burst` whose one configured
/// node never comes (so only a borrowed node can run a job), and the upstream.
fn ours(db: &str, upstream_url: &str, controller_url: &str) -> String {
    let toml = ClusterToml::token_admission()
        .interval(1)
        .set("controller", "max_dynamic_nodes", 2u32)
        .set("controller", "dynamic_partitions", &["burst"][..])
        .partition("burst", "node03");
    let block = format!(
        "[upstream.slurm]\nbin_dir = {:?}\nenv = {{ SPUR_CONTROLLER_ADDR = {upstream_url:?} }}\n\
         spurd_path = {:?}\ncontroller_url = {controller_url:?}\n\
         call_timeout_secs = 10\nboot_timeout_secs = 60\nidle_timeout_secs = 2\n",
        links_dir().display().to_string(),
        bin("spurd").display().to_string(),
    );
    conf(db, &format!("{}{block}", toml.build()))
}

/// The upstream's queue: one job name a line.
fn upstream_queue(url: &str) -> Vec<String> {
    ok("squeue", url, &["-h", "-o", "%j"]).lines().map(str::to_string).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_only_the_slurm_definition_admits_runs_on_a_borrowed_node_given_back_when_idle() {
    let up_dir = tempfile::tempdir().unwrap();
    let (up, _up_agent) = upstream(up_dir.path());

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("provisioners.yaml"), DEFINITIONS).unwrap();
    let db = format!("sqlite://{}/spur.db", d.display());
    // The pilots' agents must reach this controller where it listens: known once it
    // has started, so it restarts on the same address with the URL in its config.
    let mut c = Controller::start(d, &ours(&db, &up.url, "http://127.0.0.1:1"));
    std::fs::write(&c.config, ours(&db, &up.url, &c.url)).unwrap();
    c.restart();
    let shown = ok("scontrol", &c.url, &["show", "provisioner", "burst"]);
    assert!(shown.contains("Backend=slurm") && shown.contains("State=no nodes"), "{shown}");

    let wd = d.display().to_string();
    let args = ["--parsable", "-p", "burst", "-t", "5", "-D", &wd, "-o", "/dev/null", "--wrap", "true"];
    let id: u64 = ok("sbatch", &c.url, &args).trim().parse().unwrap();
    let mut most = 0;
    wait_for("one pilot upstream", || {
        let q = upstream_queue(&up.url);
        most = most.max(q.len());
        (q == ["spur-burst-1"]).then_some(())
    });
    wait_for("the job completed on the borrowed node", || {
        let q = upstream_queue(&up.url);
        most = most.max(q.len());
        (sacct_state(&c.url, id) == "COMPLETED").then_some(())
    });
    assert_eq!(most, 1, "exactly one pilot was asked for");
    let nodes = ok("sacct", &c.url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "NodeList"]);
    assert_eq!(nodes.trim(), "burst-1");
    // Its token was single-use and bound to its node.
    let tokens = ok("spur", &c.url, &["token", "list"]);
    assert!(tokens.contains("burst-1"), "{tokens}");

    wait_for("the node given back", || {
        let gone = !run("scontrol", &c.url, &["show", "node", "burst-1"]).status.success();
        (gone && upstream_queue(&up.url).is_empty()).then_some(())
    });
}
