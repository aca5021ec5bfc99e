//! Dynamic nodes with the real binaries: `spurd --dynamic` registers a node
//! spur.conf does not define (admitted by a token bound to its name), a job
//! runs on it, `sinfo` and `scontrol show node` flag it DYNAMIC, and it is
//! still there after spurctld restarts; `scontrol create|delete NodeName=`
//! make and remove one from the admin side, and a delete is refused while a
//! job runs on it; bad input is refused naming the flag or key.

use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, fails, field, ok, sacct_state, wait_for};

/// Token admission, node[01-03] in spur.conf, and up to `max` dynamic nodes
/// joining `batch` (by `dynamic_partitions`) and `all` (nodes = "ALL").
fn start(dir: &std::path::Path, max: u32) -> Controller {
    let db = format!("sqlite://{}/spur.db", dir.display());
    let cluster = ClusterToml::token_admission()
        .set("controller", "max_dynamic_nodes", max)
        .set("controller", "dynamic_partitions", &["batch"][..])
        .partition("all", "ALL");
    Controller::start(dir, &conf(&db, &cluster.build()))
}

fn token(c: &Controller, nodes: &str) -> String {
    ok("spur", &c.url, &["token", "create", "--nodes", nodes]).trim().to_string()
}

fn dynamic_agent(c: &Controller, name: &str, token: &str) -> Agent {
    let args = ["--dynamic", "--cpus", "2", "--memory-mb", "2048", "--features", "fast", "--token", token];
    Agent::start_args(&c.url, name, &args)
}

fn state_complete(c: &Controller, name: &str) -> String {
    ok("sinfo", &c.url, &["-h", "-N", "-n", name, "-O", "StateComplete"]).trim().to_string()
}

fn show(c: &Controller, name: &str) -> String {
    ok("scontrol", &c.url, &["show", "node", name])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dynamic_agent_joins_runs_a_job_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut c = start(d, 2);
    let t = token(&c, "dyn1");
    let agent = dynamic_agent(&c, "dyn1", &t);
    wait_for("dyn1 up", || (state_complete(&c, "dyn1") == "IDLE+DYNAMIC_NORM").then_some(()));
    let shown = show(&c, "dyn1");
    assert!(shown.contains("State=IDLE+DYNAMIC_NORM"), "{shown}");
    assert!(shown.contains("Partitions=batch,all"), "{shown}");
    // The partition that does not name it (other) does not have it.
    let other = ok("sinfo", &c.url, &["-h", "-p", "other", "-o", "%N"]);
    assert_eq!(other.trim(), "node03");

    // A job that only dyn1 can run (the feature) runs there to COMPLETED.
    let wd = d.display().to_string();
    let args = ["--parsable", "-p", "batch", "-C", "fast", "-D", &wd, "-o", "/dev/null", "--wrap", "true"];
    let id: u64 = ok("sbatch", &c.url, &args).trim().parse().unwrap();
    wait_for("the job completed", || (sacct_state(&c.url, id) == "COMPLETED").then_some(()));
    let nodes = ok("sacct", &c.url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "NodeList"]);
    assert_eq!(nodes.trim(), "dyn1");

    // Persisted: the restarted controller has it before its agent is back.
    c.restart();
    let shown = show(&c, "dyn1");
    assert!(shown.contains("DYNAMIC_NORM") && shown.contains("Partitions=batch,all"), "{shown}");
    wait_for("dyn1 back", || (state_complete(&c, "dyn1") == "IDLE+DYNAMIC_NORM").then_some(()));

    // A running job refuses the delete, named; once it is gone, the delete goes through.
    let args =
        ["--parsable", "-p", "batch", "-C", "fast", "-D", &wd, "-o", "/dev/null", "--wrap", "sleep 300"];
    let id: u64 = ok("sbatch", &c.url, &args).trim().parse().unwrap();
    wait_for("the job running", || (field(&c.url, id, "%T") == "RUNNING").then_some(()));
    let e = fails("scontrol", &c.url, &["delete", "NodeName=dyn1"]);
    assert!(e.contains("has jobs") && e.contains(&id.to_string()), "{e}");
    ok("scancel", &c.url, &[&id.to_string()]);
    wait_for("the job ended", || (sacct_state(&c.url, id) == "CANCELLED").then_some(()));
    // Its agent goes first: a running one would register the node again.
    agent.kill();
    ok("scontrol", &c.url, &["delete", "NodeName=dyn1"]);
    let e = fails("scontrol", &c.url, &["show", "node", "dyn1"]);
    assert!(e.contains("dyn1"), "{e}");
    let all = ok("sinfo", &c.url, &["-h", "-p", "all", "-o", "%N"]);
    assert_eq!(all.trim(), "node[01-03]");
    // Gone from the store too.
    c.restart();
    fails("scontrol", &c.url, &["show", "node", "dyn1"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn scontrol_creates_and_deletes_a_node_that_waits_for_its_agent() {
    let dir = tempfile::tempdir().unwrap();
    let c = start(dir.path(), 1);
    ok("scontrol", &c.url, &["create", "NodeName=dyn3", "CPUs=2", "RealMemory=1024", "State=CLOUD"]);
    let shown = show(&c, "dyn3");
    assert!(shown.contains("State=IDLE+CLOUD+POWERED_DOWN+DYNAMIC_NORM"), "{shown}");
    assert_eq!(ok("sinfo", &c.url, &["-h", "-N", "-n", "dyn3", "-o", "%t"]).trim(), "idle~");
    let rows =
        ok("sacctmgr", &c.url, &["-n", "-P", "show", "txn", "Entity=node", "format=Action,Where,Outcome"]);
    let created =
        rows.lines().filter(|l| l.starts_with("create|") && l.contains("dyn3") && l.ends_with("|success"));
    assert_eq!(created.count(), 1, "{rows}");

    // Again, a second one past max_dynamic_nodes, and a node of spur.conf: each refused, named.
    let again = ["create", "NodeName=dyn3", "CPUs=2", "RealMemory=1024", "State=CLOUD"];
    assert!(fails("scontrol", &c.url, &again).contains("already exists"));
    let more = ["create", "NodeName=dyn4", "CPUs=2", "RealMemory=1024", "State=FUTURE"];
    assert!(fails("scontrol", &c.url, &more).contains("max_dynamic_nodes"));
    let e = fails("scontrol", &c.url, &["delete", "NodeName=node01"]);
    assert!(e.contains("spur.conf"), "{e}");
    // Bad input, named before anything is sent.
    for (args, key) in [
        (&["create", "NodeName=x", "RealMemory=1", "State=CLOUD"][..], "CPUs:"),
        (&["create", "NodeName=x", "CPUs=1", "State=CLOUD"][..], "RealMemory:"),
        (&["create", "NodeName=x", "CPUs=1", "RealMemory=1", "State=IDLE"][..], "State:"),
        (&["create", "NodeName=x[1-2]", "CPUs=1", "RealMemory=1", "State=CLOUD"][..], "NodeName:"),
        (&["create", "NodeName=x", "CPUs=1", "RealMemory=1", "State=CLOUD", "HRES=[{"][..], "HRES:"),
    ] {
        let e = fails("scontrol", &c.url, args);
        assert!(e.contains(key), "{args:?}: {e}");
    }

    // Its agent comes: the node it waited for is in service.
    let t = token(&c, "dyn3");
    let _agent = dynamic_agent(&c, "dyn3", &t);
    wait_for("dyn3 up", || (state_complete(&c, "dyn3") == "IDLE+DYNAMIC_NORM").then_some(()));
}

#[tokio::test(flavor = "multi_thread")]
async fn dynamic_agents_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let c = start(dir.path(), 2);
    let t = token(&c, "dyn1");
    let state = dir.path().join("spurd").display().to_string();
    let base = ["--controller", &c.url, "--state-dir", &state];
    let refused = |more: &[&str]| {
        let (status, said) = Agent::refused(&[&base[..], more].concat());
        assert_eq!(status.code(), Some(1), "{more:?}: {said}");
        said
    };
    // A token may name as many nodes as may yet exist, longer names than spur.conf's.
    token(&c, "pilot-node-[001-005]");
    let e = fails("spur", &c.url, &["token", "create", "--nodes", "pilot-node-[001-006]"]);
    assert!(e.contains("--nodes") && e.contains("more than 5 hosts"), "{e}");
    // A token bound to another name.
    let said = refused(&["--dynamic", "--nodes", "dyn2", "--cpus", "1", "--memory-mb", "1", "--token", &t]);
    assert!(said.contains("does not admit node dyn2"), "{said}");
    // Bad flags, each named.
    let said = refused(&["--dynamic", "--nodes", "dyn1", "--memory-mb", "1"]);
    assert!(said.contains("--cpus"), "{said}");
    let said = refused(&["--dynamic", "--nodes", "dyn[1-2]", "--cpus", "1", "--memory-mb", "1"]);
    assert!(said.contains("--nodes") && said.contains("exactly one"), "{said}");
    let said = refused(&["--dynamic", "--nodes", "dyn1", "--cpus", "1", "--memory-mb", "1", "--hres", "{"]);
    assert!(said.contains("--hres"), "{said}");
    // A node spur.conf does not define, without --dynamic.
    let t3 = token(&c, "dyn3");
    let said = refused(&["--nodes", "dyn3", "--token", &t3]);
    assert!(said.contains("--dynamic"), "{said}");

    // A controller that allows none says how to allow them.
    let other = tempfile::tempdir().unwrap();
    let none = start(other.path(), 0);
    let t = token(&none, "dyn1");
    let state = other.path().join("spurd").display().to_string();
    let args = ["--controller", &none.url, "--state-dir", &state, "--token", &t];
    let more = ["--dynamic", "--nodes", "dyn1", "--cpus", "1", "--memory-mb", "1"];
    let (status, said) = Agent::refused(&[&args[..], &more[..]].concat());
    assert_eq!(status.code(), Some(1), "{said}");
    assert!(said.contains("max_dynamic_nodes"), "{said}");
}
