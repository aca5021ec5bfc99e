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

use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, bin, conf, field, links_dir, ok, run, sacct_state, wait_for};

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
fn ours(db: &str, upstream_url: &str, controller_url: &str, t: Timeouts) -> String {
    ours_in(db, upstream_url, controller_url, links_dir(), t)
}

/// `[upstream.slurm]`'s idle_timeout_secs and boot_timeout_secs.
#[derive(Clone, Copy)]
struct Timeouts {
    idle: u32,
    boot: u32,
}

/// Nodes given back idle for 2 seconds; a minute to boot.
const QUICK: Timeouts = Timeouts { idle: 2, boot: 60 };

/// [`ours`] with the upstream's commands in `bin_dir`.
fn ours_in(
    db: &str,
    upstream_url: &str,
    controller_url: &str,
    bin_dir: &std::path::Path,
    t: Timeouts,
) -> String {
    let toml = ClusterToml::token_admission()
        .interval(1)
        .set("controller", "max_dynamic_nodes", 2u32)
        .set("controller", "dynamic_partitions", &["burst"][..])
        .partition("burst", "node03");
    let block = format!(
        "[upstream.slurm]\nbin_dir = {:?}\nenv = {{ SPUR_CONTROLLER_ADDR = {upstream_url:?} }}\n\
         spurd_path = {:?}\ncontroller_url = {controller_url:?}\n\
         call_timeout_secs = {}\nboot_timeout_secs = {}\nidle_timeout_secs = {}\n",
        bin_dir.display().to_string(),
        bin("spurd").display().to_string(),
        // At most boot_timeout_secs, as the config requires.
        t.boot.min(10),
        t.boot,
        t.idle,
    );
    conf(db, &format!("{}{block}", toml.build()))
}

/// The pilots in the upstream's queue, by job name.
fn upstream_queue(url: &str) -> Vec<String> {
    let names = ok("squeue", url, &["-h", "-o", "%j"]);
    names.lines().filter(|n| n.starts_with("spur-")).map(str::to_string).collect()
}

/// Both clusters; ours knows where it listens.
struct Setup {
    _up_dir: tempfile::TempDir,
    up: Controller,
    _up_agent: Agent,
    dir: tempfile::TempDir,
    c: Controller,
}

fn setup() -> Setup {
    setup_with(DEFINITIONS, QUICK)
}

/// Both clusters, ours with `definitions` and timeouts `t`.
fn setup_with(definitions: &str, t: Timeouts) -> Setup {
    let up_dir = tempfile::tempdir().unwrap();
    let (up, up_agent) = upstream(up_dir.path());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("provisioners.yaml"), definitions).unwrap();
    let db = format!("sqlite://{}/spur.db", d.display());
    // The pilots' agents must reach this controller where it listens: known once it
    // has started, so it restarts on the same address with the URL in its config.
    let mut c = Controller::start(d, &ours(&db, &up.url, "http://127.0.0.1:1", t));
    std::fs::write(&c.config, ours(&db, &up.url, &c.url, t)).unwrap();
    c.restart();
    Setup { _up_dir: up_dir, up, _up_agent: up_agent, dir, c }
}

impl Setup {
    /// A 5-minute job in `burst`, which only a borrowed node can run.
    fn submit(&self) -> u64 {
        self.submit_with(&["-t", "5"])
    }

    /// A job in `burst` with `opts`, running `true`.
    fn submit_with(&self, opts: &[&str]) -> u64 {
        let wd = self.dir.path().display().to_string();
        let mut args = vec!["--parsable", "-p", "burst", "-D", &wd, "-o", "/dev/null"];
        args.extend(opts);
        args.extend(["--wrap", "true"]);
        ok("sbatch", &self.c.url, &args).trim().parse().unwrap()
    }

    /// Waits for `done`, noting the most pilots the upstream's queue held meanwhile.
    fn wait(&self, what: &str, most: &mut usize, mut done: impl FnMut() -> bool) {
        wait_for(what, || {
            *most = (*most).max(upstream_queue(&self.up.url).len());
            done().then_some(())
        });
    }

    /// The job is CONFIGURING on burst-1 in squeue, scontrol and sacct.
    fn configuring(&self, id: u64) {
        assert_eq!(field(&self.c.url, id, "%T %N"), "CONFIGURING burst-1");
        assert_eq!(scontrol_field(&self.c.url, id, "JobState"), "CONFIGURING");
        assert_eq!(sacct_state(&self.c.url, id), "CONFIGURING");
    }

    /// The account job `id` is charged to: sacct's `Cost` and the
    /// provisioner's `account_costs` agree that it was charged.
    fn charged_account(&self, id: u64) -> String {
        let row =
            ok("sacct", &self.c.url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "JobID,Account,Cost"]);
        let cols: Vec<&str> = row.trim().split('|').collect();
        assert_eq!((cols.len(), cols[0]), (3, id.to_string().as_str()), "{row}");
        assert!(cols[2].parse::<f64>().is_ok_and(|c| c >= 0.0), "{row}");
        let json = ok("scontrol", &self.c.url, &["--json", "show", "provisioner", "burst"]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let costs = v["provisioners"][0]["account_costs"].as_array().cloned().unwrap_or_default();
        let mine = costs.iter().find(|a| a["account"] == cols[1]);
        assert!(mine.and_then(|a| a["cost"].as_f64()).is_some_and(|c| c > 0.0), "{json}");
        cols[1].to_string()
    }

    /// Waits for the job to complete on burst-1 and the node to be given back.
    fn completes_and_gives_back(&self, id: u64, most: &mut usize) {
        self.wait("the job completed on the borrowed node", most, || {
            sacct_state(&self.c.url, id) == "COMPLETED"
        });
        let nodes = ok("sacct", &self.c.url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "NodeList"]);
        assert_eq!(nodes.trim(), "burst-1");
        self.wait("the node given back", most, || {
            let gone = !run("scontrol", &self.c.url, &["show", "node", "burst-1"]).status.success();
            gone && upstream_queue(&self.up.url).is_empty()
        });
        assert_eq!(*most, 1, "exactly one pilot was asked for");
        // One single-use token, bound to the one node.
        let tokens = ok("spur", &self.c.url, &["token", "list"]);
        assert_eq!(tokens.matches("burst-").count(), 1, "{tokens}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_only_the_slurm_definition_admits_runs_on_a_borrowed_node_given_back_when_idle() {
    let s = setup();
    let shown = ok("scontrol", &s.c.url, &["show", "provisioner", "burst"]);
    assert!(shown.contains("Backend=slurm") && shown.contains("State=no nodes"), "{shown}");
    let id = s.submit();
    let mut most = 0;
    s.wait("one pilot upstream", &mut most, || upstream_queue(&s.up.url) == ["spur-burst-1"]);
    s.completes_and_gives_back(id, &mut most);
    // The node's borrowed time is counted, and its cost at costPerHour 0.3.
    let json = ok("scontrol", &s.c.url, &["--json", "show", "provisioner", "burst"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let (hours, cost) = (v["provisioners"][0]["node_hours"].as_f64(), v["provisioners"][0]["cost"].as_f64());
    assert!(hours.is_some_and(|h| h > 0.0) && cost.is_some_and(|c| c > 0.0), "{json}");
    // The job's share of the node is charged to its account, and sacct shows it.
    let account = s.charged_account(id);
    let shown = ok("scontrol", &s.c.url, &["show", "provisioner", "burst"]);
    assert!(
        shown.contains(&format!("AccountCost={}:", if account.is_empty() { "(null)" } else { &account })),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restart_while_the_pilot_waits_upstream_asks_for_no_second_one() {
    let mut s = setup();
    // The pilot waits in the upstream's queue while a job there holds its only node.
    let wd = s.dir.path().display().to_string();
    let args = ["--parsable", "-c", "4", "-D", &wd, "-o", "/dev/null", "--wrap", "sleep 300"];
    let blocker = ok("sbatch", &s.up.url, &args).trim().to_string();
    wait_for("the upstream's node busy", || {
        (field(&s.up.url, blocker.parse().unwrap(), "%T") == "RUNNING").then_some(())
    });
    let id = s.submit();
    let mut most = 0;
    s.wait("one pilot upstream", &mut most, || upstream_queue(&s.up.url) == ["spur-burst-1"]);
    // Placed on the booting node, the job is CONFIGURING until its agent registers.
    s.wait("the job configuring on the booting node", &mut most, || field(&s.c.url, id, "%t") == "CF");
    s.configuring(id);
    let placed_at = scontrol_field(&s.c.url, id, "StartTime");
    // The clock passes the placement's second, so a start counted from the launch shows later.
    wait_for("a second after the placement", || (local_now() > placed_at).then_some(()));
    s.c.restart();
    // Persisted: still CONFIGURING on the same node after the restart.
    s.configuring(id);
    let shown = ok("scontrol", &s.c.url, &["show", "node", "burst-1"]);
    assert!(shown.contains("State=IDLE+CLOUD+POWERING_UP+DYNAMIC_NORM"), "waiting for its agent: {shown}");
    let short = ok("sinfo", &s.c.url, &["-h", "-N", "-n", "burst-1", "-o", "%t"]);
    assert_eq!(short.trim(), "idle#");
    ok("scancel", &s.up.url, &[&blocker]);
    s.completes_and_gives_back(id, &mut most);
    // Its run counts from the launch, not from its placement.
    let start = ok("sacct", &s.c.url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "Start"]);
    assert!(start.trim() > placed_at.as_str(), "started {start} after its placement at {placed_at}");
    // Its cost survives a restart.
    s.c.restart();
    s.charged_account(id);
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
    let c = Controller::start(d, &ours_in(&db, "http://127.0.0.1:1", "http://127.0.0.1:1", &fake, QUICK));
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

/// `burst` with a ttl of 65 seconds: its node drains itself 5 seconds after its request.
const SHORT_TTL: &str = "definitions:
- id: burst
  provisioner: slurm
  ttl: 65
  provisionerSpec: {cpu: 2, memory: 1GiB, partition: compute, costPerHour: 0.3}
";

#[tokio::test(flavor = "multi_thread")]
async fn a_borrowed_node_drains_itself_before_its_ttl_ends_naming_it() {
    // Nodes idle for five minutes stay: only the expiry drains this one.
    let s = setup_with(SHORT_TTL, Timeouts { idle: 300, ..QUICK });
    // A one-minute job fits the 65-second ttl, so a node is asked for.
    s.submit_with(&["-t", "1"]);
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

/// A definition whose nodes have twice the CPUs of `burst`'s static node03.
const WIDE: &str = "definitions:
- id: wide
  provisioner: slurm
  ttl: 3600
  provisionerSpec: {cpu: 4, memory: 2GiB, partition: compute, costPerHour: 0.5}
";

#[tokio::test(flavor = "multi_thread")]
async fn a_job_larger_than_the_static_nodes_is_accepted_where_a_definition_could_lend_one() {
    let s = setup_with(WIDE, QUICK);
    // node03, the partition's one static node, has 2 CPUs: 4 fit only a `wide` node.
    let id = s.submit_with(&["-t", "5", "-c", "4"]);
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
    let s = setup_with(DEFINITIONS, Timeouts { boot: 8, ..QUICK });
    let wd = s.dir.path().display().to_string();
    let args = ["--parsable", "-c", "4", "-D", &wd, "-o", "/dev/null", "--wrap", "sleep 300"];
    let blocker = ok("sbatch", &s.up.url, &args).trim().to_string();
    wait_for("the upstream's node busy", || {
        (field(&s.up.url, blocker.parse().unwrap(), "%T") == "RUNNING").then_some(())
    });
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
    ok("scancel", &s.up.url, &[&blocker]);
    s.wait("the job completed on a borrowed node", &mut most, || sacct_state(&s.c.url, id) == "COMPLETED");
    let restarts = ok("sacct", &s.c.url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "Restarts"]);
    assert!(restarts.trim().parse::<u32>().is_ok_and(|n| n >= 1), "{restarts}");
}
