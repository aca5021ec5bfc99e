//! The `slurm` provisioner end to end, against a second Spur as the
//! upstream (it speaks Slurm: `spur install-links` gives it sbatch, squeue
//! and scancel). A job that only the slurm definition admits makes exactly
//! one pilot in the upstream's queue; the pilot's agent registers its node
//! here (with a single-use token the controller minted); the job completes
//! on it; after idle_timeout_secs the pilot is cancelled upstream and the
//! node is gone. While the pilot waits upstream the job is CONFIGURING on
//! the booting node, across a controller restart, which asks for no second
//! pilot; its run counts from the launch, and its cost is charged to its
//! account. A borrowed node with a short ttl drains itself naming it; a job
//! larger than the partition's static nodes is accepted where a definition
//! could lend a node that holds it. A pilot that does not boot in time puts
//! its CONFIGURING job back in the queue (a NODE_FAIL run in `sacct -D`).

use spur_tests::borrow::{Borrowing, DEFINITIONS, QUICK, Timeouts, ours};
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, field, links_dir, ok, run, sacct_state, wait_for};

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
    setup_with(DEFINITIONS, QUICK)
}

/// Both clusters, ours with `definitions` and timeouts `t`.
fn setup_with(definitions: &str, t: Timeouts) -> Setup {
    let up_dir = tempfile::tempdir().unwrap();
    let (up, up_agent) = upstream(up_dir.path());
    let url = up.url.clone();
    let queue = move || ok("squeue", &url, &["-h", "-o", "%j"]).lines().map(str::to_string).collect();
    let env = [("SPUR_CONTROLLER_ADDR", up.url.as_str())];
    let ours = Borrowing::start_with(links_dir(), &env, definitions, t, |t| t, queue);
    Setup { _up_dir: up_dir, up, _up_agent: up_agent, ours }
}

/// The job is CONFIGURING on burst-1 in squeue, scontrol and sacct.
fn configuring(s: &Borrowing, id: u64) {
    assert_eq!(field(&s.c.url, id, "%T %N"), "CONFIGURING burst-1");
    assert_eq!(scontrol_field(&s.c.url, id, "JobState"), "CONFIGURING");
    assert_eq!(sacct_state(&s.c.url, id), "CONFIGURING");
}

/// The account job `id` is charged to: sacct's `Cost` and the
/// provisioner's `account_costs` agree that it was charged.
fn charged_account(s: &Borrowing, id: u64) -> String {
    let row = ok("sacct", &s.c.url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "JobID,Account,Cost"]);
    let cols: Vec<&str> = row.trim().split('|').collect();
    assert_eq!((cols.len(), cols[0]), (3, id.to_string().as_str()), "{row}");
    assert!(cols[2].parse::<f64>().is_ok_and(|c| c >= 0.0), "{row}");
    let json = ok("scontrol", &s.c.url, &["--json", "show", "provisioner", "burst"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let costs = v["provisioners"][0]["account_costs"].as_array().cloned().unwrap_or_default();
    let mine = costs.iter().find(|a| a["account"] == cols[1]);
    assert!(mine.and_then(|a| a["cost"].as_f64()).is_some_and(|c| c > 0.0), "{json}");
    cols[1].to_string()
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
    // The job's share of the node is charged to its account, and sacct shows it.
    let account = charged_account(s, id);
    let shown = ok("scontrol", &s.c.url, &["show", "provisioner", "burst"]);
    assert!(
        shown.contains(&format!("AccountCost={}:", if account.is_empty() { "(null)" } else { &account })),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restart_while_the_pilot_waits_upstream_asks_for_no_second_one() {
    let Setup { _up_dir, up, _up_agent, ours: mut s } = setup();
    // The pilot waits in the upstream's queue while a job there holds its only node.
    let blocker = occupy(&up.url, s.dir.path());
    let id = s.submit();
    let mut most = 0;
    s.wait("one pilot upstream", &mut most, || s.pilots() == ["spur-burst-1"]);
    // Placed on the booting node, the job is CONFIGURING until its agent registers.
    s.wait("the job configuring on the booting node", &mut most, || field(&s.c.url, id, "%t") == "CF");
    configuring(&s, id);
    let placed_at = scontrol_field(&s.c.url, id, "StartTime");
    // The clock passes the placement's second, so a start counted from the launch shows later.
    wait_for("a second after the placement", || (local_now() > placed_at).then_some(()));
    s.c.restart();
    // Persisted: still CONFIGURING on the same node after the restart.
    configuring(&s, id);
    let shown = ok("scontrol", &s.c.url, &["show", "node", "burst-1"]);
    assert!(shown.contains("State=IDLE+CLOUD+POWERING_UP+DYNAMIC_NORM"), "waiting for its agent: {shown}");
    let short = ok("sinfo", &s.c.url, &["-h", "-N", "-n", "burst-1", "-o", "%t"]);
    assert_eq!(short.trim(), "idle#");
    ok("scancel", &up.url, &[&blocker]);
    s.completes_and_gives_back(id, &mut most);
    // Its run counts from the launch, not from its placement.
    let start = ok("sacct", &s.c.url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "Start"]);
    assert!(start.trim() > placed_at.as_str(), "started {start} after its placement at {placed_at}");
    // Its cost survives a restart.
    s.c.restart();
    charged_account(&s, id);
}

/// A job that holds the upstream's only node (`up01`, 4 CPUs) until
/// cancelled, so a pilot waits in its queue; its id, once it runs.
fn occupy(up_url: &str, dir: &std::path::Path) -> String {
    let wd = dir.display().to_string();
    let args = ["--parsable", "-c", "4", "-D", &wd, "-o", "/dev/null", "--wrap", "sleep 300"];
    let blocker = ok("sbatch", up_url, &args).trim().to_string();
    wait_for("the upstream's node busy", || {
        (field(up_url, blocker.parse().unwrap(), "%T") == "RUNNING").then_some(())
    });
    blocker
}

/// The local time as Slurm's commands print it, to the second.
fn local_now() -> String {
    let out = std::process::Command::new("date").arg("+%Y-%m-%dT%H:%M:%S").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `KEY=value` of `scontrol show job ID`.
fn scontrol_field(url: &str, id: u64, key: &str) -> String {
    let shown = ok("scontrol", url, &["show", "job", &id.to_string()]);
    let pre = format!("{key}=");
    let word = shown.split_whitespace().find_map(|w| w.strip_prefix(pre.as_str()).map(str::to_string));
    word.unwrap_or_else(|| panic!("no {key} in {shown}"))
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
    let c = Controller::start(d, &ours(&db, &fake, &env, "http://127.0.0.1:1", QUICK));
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

/// One slurm definition in the upstream's partition `compute`.
fn definition(id: &str, ttl: u32, cpu: u32, memory: &str, cost: f64) -> String {
    format!(
        "definitions:\n- id: {id}\n  provisioner: slurm\n  ttl: {ttl}\n  \
         provisionerSpec: {{cpu: {cpu}, memory: {memory}, partition: compute, costPerHour: {cost}}}\n"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_borrowed_node_drains_itself_before_its_ttl_ends_naming_it() {
    // Nodes idle for five minutes stay: only the expiry drains this one.
    // `burst` with a ttl of 65 seconds: its node drains itself 5 seconds after its request.
    let both = setup_with(&definition("burst", 65, 2, "1GiB", 0.3), Timeouts { idle: 300, ..QUICK });
    let s = &both.ours;
    // A one-minute job fits the 65-second ttl, so a node is asked for.
    s.submit_with(&["-t", "1"], "true");
    let mut most = 0;
    s.wait("the node drained before its expiry, naming its ttl", &mut most, || {
        let reasons = ok("sinfo", &s.c.url, &["-R", "-h", "-o", "%N|%U|%E"]);
        reasons
            .lines()
            .any(|l| l.starts_with("burst-1|slurm_provisioner|ttl of slurm definition burst ends at "))
    });
    let state = ok("sinfo", &s.c.url, &["-h", "-N", "-n", "burst-1", "-o", "%T"]);
    assert!(state.trim().starts_with("drain"), "{state}");
    assert_eq!(most, 1, "one pilot");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_larger_than_the_static_nodes_is_accepted_where_a_definition_could_lend_one() {
    // `wide`'s nodes have twice the CPUs of `burst`'s static node03.
    let both = setup_with(&definition("wide", 3600, 4, "2GiB", 0.5), QUICK);
    let s = &both.ours;
    // node03, the partition's one static node, has 2 CPUs: 4 fit only a `wide` node.
    let id = s.submit_with(&["-t", "5", "-c", "4"], "true");
    let mut most = 0;
    s.wait("the job completed on a borrowed node", &mut most, || sacct_state(&s.c.url, id) == "COMPLETED");
    let nodes = ok("sacct", &s.c.url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "NodeList"]);
    assert_eq!(nodes.trim(), "wide-1");
    assert_eq!(most, 1, "one pilot");
    // Past what the definition's nodes hold it is refused at submit, as without definitions.
    let wd = s.dir.path().display().to_string();
    let args = ["-p", "burst", "-t", "5", "-c", "8", "-D", &wd, "-o", "/dev/null", "--wrap", "true"];
    let out = run("sbatch", &s.c.url, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("Requested node configuration is not available"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pilot_that_does_not_boot_in_time_puts_its_configuring_job_back_never_losing_it() {
    // Eight seconds to boot (time enough once the upstream has room, even on a loaded
    // machine), while a job upstream holds the only node the pilot could run on.
    let both = setup_with(DEFINITIONS, Timeouts { boot: 8, ..QUICK });
    let (s, up) = (&both.ours, &both.up);
    let blocker = occupy(&up.url, s.dir.path());
    let id = s.submit();
    let mut most = 0;
    s.wait("the job configuring on the booting node", &mut most, || field(&s.c.url, id, "%t") == "CF");
    // Late: the node goes DOWN, the job back to the queue (its attempt a NODE_FAIL run), the pilot cancelled.
    s.wait("the attempt requeued", &mut most, || {
        let runs = ok("sacct", &s.c.url, &["-n", "-P", "-X", "-D", "-j", &id.to_string(), "-o", "State"]);
        runs.lines().any(|l| l.trim() == "NODE_FAIL")
    });
    let state = field(&s.c.url, id, "%T");
    assert!(state == "PENDING" || state == "CONFIGURING", "never lost: {state}");
    // Once the upstream has room, a pilot boots in time and the job runs there.
    ok("scancel", &up.url, &[&blocker]);
    s.wait("the job completed on a borrowed node", &mut most, || sacct_state(&s.c.url, id) == "COMPLETED");
    let restarts = ok("sacct", &s.c.url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "Restarts"]);
    assert!(restarts.trim().parse::<u32>().is_ok_and(|n| n >= 1), "{restarts}");
}
