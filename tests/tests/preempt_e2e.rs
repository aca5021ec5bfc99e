//! Preemption end to end with a real controller and agent: a job with a 2×
//! priority gap requeues a running one, `scontrol explain` gives both sides
//! of the formula and every guard, the partition's runtime exemption
//! override blocks and then (cleared) allows it, and each step is audited.

use spur_tests::proc::{Agent, Controller, conf, fails, ok, wait_for};

const CLUSTER: &str = r#"
[controller]
heartbeat_interval_secs = 1
node_timeout_secs = 5
[scheduler]
interval = 1
preemption_enabled = true
min_preemption_runtime = 0
[[nodes]]
name = "node01"
cpus = 2
memory_mb = 4096
[[partitions]]
name = "batch"
nodes = "node01"
default = true
preempt_mode = "requeue"
"#;

struct Env {
    dir: tempfile::TempDir,
    c: Controller,
    _a: Agent,
}

impl Env {
    fn ok(&self, p: &str, line: &str) -> String {
        ok(p, &self.c.url, &line.split_whitespace().collect::<Vec<_>>())
    }
    fn sbatch(&self, prio: u32) -> u64 {
        let dir = self.dir.path().display().to_string();
        let prio = format!("--priority={prio}");
        let args = ["--parsable", "-D", &dir, "-n", "2", &prio, "--requeue", "--wrap", "sleep 300"];
        ok("sbatch", &self.c.url, &args).trim().parse().expect("a job id")
    }
    fn state(&self, id: u64) -> String {
        self.ok("squeue", &format!("-h -j {id} -o %T")).trim().to_string()
    }
    fn wait_state(&self, id: u64, want: &str) {
        wait_for(&format!("job {id} {want}"), || (self.state(id) == want).then_some(()));
    }
}

#[test]
fn a_two_fold_gap_requeues_the_running_job_and_explain_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let c = Controller::start(dir.path(), &conf(&db, CLUSTER));
    let a = Agent::start(&c.url, "node01", &[]);
    let e = Env { dir, c, _a: a };
    wait_for("node up", || (e.ok("sinfo", "-h -o %t:%D").trim() == "idle:1").then_some(()));
    e.ok("sacctmgr", "-i add account name=ml");
    e.ok("sacctmgr", "-i add user name=root account=ml");

    let low = e.sbatch(100);
    e.wait_state(low, "RUNNING");
    let high = e.sbatch(1000);
    e.wait_state(high, "RUNNING");
    e.wait_state(low, "PENDING");

    // The pair, now reversed: the requeued job cannot take the node back.
    let pair = e.ok("scontrol", &format!("explain preempt {low} {high}"));
    // Fair share is 2.0 for a user with no usage yet, on both sides.
    assert!(pair.contains("gap: 2000.0 < 200.0/2 = 100.0 → fails"), "{pair}");
    assert!(pair.contains("guard partition mode: partition 'batch' preempt_mode=requeue → passes"), "{pair}");
    assert!(
        pair.contains(&format!("verdict: job {low} may not preempt job {high}; decided by gap")),
        "{pair}"
    );
    let job = e.ok("scontrol", &format!("explain job {low}"));
    assert!(job.contains(&format!("JobId={low} Reason=")), "{job}");
    assert!(job.contains(&format!("job {high} (root, qos -, batch): blocked by gap")), "{job}");
    let json: serde_json::Value =
        serde_json::from_str(&e.ok("scontrol", &format!("explain job {low} --json"))).unwrap();
    assert_eq!(json["candidates"][0]["candidate"]["job_id"], high);
    assert_eq!(json["candidates"][0]["gap"]["passes"], false);
    assert!(fails("scontrol", &e.c.url, &["explain", "job", "999"]).contains("job 999 does not exist"));

    // A runtime exemption of an hour protects the running job from a far higher one.
    e.ok("scontrol", "update PartitionName=batch PreemptExemptTime=3600");
    assert!(e.ok("scontrol", "show partition batch").contains("PreemptExemptTime=01:00:00"));
    let top = e.sbatch(100_000);
    wait_for("the exemption blocks", || {
        let out = e.ok("scontrol", &format!("explain job {top}"));
        out.contains("guard exempt time: ran")
            .then_some(())
            .filter(|_| out.contains("(partition 'batch') → blocks"))
    });
    assert_eq!(e.state(high), "RUNNING");
    // Cleared, the global default of 0 applies and the gap fires.
    e.ok("scontrol", "update PartitionName=batch ClearPreemptExemptTime=yes");
    e.wait_state(top, "RUNNING");
    e.wait_state(high, "PENDING");

    let txn = e.ok("sacctmgr", "-n -P show txn format=action,where,actor");
    assert!(txn.contains(&format!("preempt|job:{low}|spurctld")), "{txn}");
    assert!(txn.contains(&format!("preempt|job:{high}|spurctld")), "{txn}");
    assert!(txn.lines().filter(|l| l.contains("partition:batch")).count() >= 2, "{txn}");
    assert!(
        fails("scontrol", &e.c.url, &["update", "PartitionName=nope", "PreemptExemptTime=1"])
            .contains("partition 'nope' does not exist")
    );
}
