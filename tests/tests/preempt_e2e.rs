//! Preemption end to end with a real controller and agent: a job with a 2×
//! priority gap requeues a running one, `scontrol explain` gives both sides
//! of the formula and every guard, the partition's runtime exemption
//! override blocks and then (cleared) allows it, and each step is audited.

use spur_tests::cluster::Cluster;
use spur_tests::config::ClusterToml;
use spur_tests::proc::wait_for;

/// One partition over `nodes`, requeueing what it preempts.
fn cluster_on(nodes: &str) -> ClusterToml {
    ClusterToml::new()
        .heartbeat(1)
        .node_timeout(5)
        .interval(1)
        .preemption(true)
        .scheduler("min_preemption_runtime", 0)
        .nodes(nodes, 2, 4096)
        .partition("batch", nodes)
        .partition_set("preempt_mode", "requeue")
}

fn sbatch(e: &Cluster, prio: u32) -> u64 {
    let prio = format!("--priority={prio}");
    e.sbatch(&["-n", "2", &prio, "--requeue", "--wrap", "sleep 300"])
}

#[test]
fn a_two_fold_gap_requeues_the_running_job_and_explain_says_why() {
    let e = Cluster::start(&cluster_on("node01").build(), &[], "node01", 1);
    e.ok("sacctmgr", "-i add user name=root account=ml");

    let low = sbatch(&e, 100);
    e.wait_field(low, "%T", "RUNNING");
    let high = sbatch(&e, 1000);
    e.wait_field(high, "%T", "RUNNING");
    e.wait_field(low, "%T", "PENDING");

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
    assert!(e.fails("scontrol", &["explain", "job", "999"]).contains("job 999 does not exist"));

    // A runtime exemption of an hour protects the running job from a far higher one.
    e.ok("scontrol", "update PartitionName=batch PreemptExemptTime=3600");
    assert!(e.ok("scontrol", "show partition batch").contains("PreemptExemptTime=01:00:00"));
    let top = sbatch(&e, 100_000);
    wait_for("the exemption blocks", || {
        let out = e.ok("scontrol", &format!("explain job {top}"));
        out.contains("guard exempt time: ran")
            .then_some(())
            .filter(|_| out.contains("(partition 'batch') → blocks"))
    });
    assert_eq!(e.field(high, "%T"), "RUNNING");
    // Cleared, the global default of 0 applies and the gap fires.
    e.ok("scontrol", "update PartitionName=batch ClearPreemptExemptTime=yes");
    e.wait_field(top, "%T", "RUNNING");
    e.wait_field(high, "%T", "PENDING");

    let txn = e.ok("sacctmgr", "-n -P show txn format=action,where,actor");
    assert!(txn.contains(&format!("preempt|job:{low}|spurctld")), "{txn}");
    assert!(txn.contains(&format!("preempt|job:{high}|spurctld")), "{txn}");
    assert!(txn.lines().filter(|l| l.contains("partition:batch")).count() >= 2, "{txn}");
    assert!(
        e.fails("scontrol", &["update", "PartitionName=nope", "PreemptExemptTime=1"])
            .contains("partition 'nope' does not exist")
    );
}

const MODE3: &str = r#"
- resource: power
  mode: MODE_3
  layers:
    - layer_name: left
      parent_name: room
      nodes: ["node01"]
      count: 100
    - layer_name: right
      parent_name: room
      nodes: ["node02"]
      count: 100
    - layer_name: room
      count: 100
"#;

#[test]
fn a_mode3_holder_under_a_shared_layer_is_requeued_with_no_node_in_common() {
    let cluster = cluster_on("node[01-02]").build();
    let e = Cluster::start(&cluster, &[("resources.yaml", MODE3)], "node[01-02]", 2);
    e.ok("sacctmgr", "-i add user name=root account=ml");
    let low =
        e.sbatch(&["--priority=100", "--requeue", "-L", "power:80", "-w", "node01", "--wrap", "sleep 300"]);
    e.wait_field(low, "%T", "RUNNING");
    let high = e.sbatch(&["--priority=1000", "-L", "power:50", "-w", "node02", "--wrap", "sleep 300"]);
    e.wait_field(high, "%T", "RUNNING");
    e.wait_field(low, "%T", "PENDING");
    let pair = e.ok("scontrol", &format!("explain preempt {low} {high}"));
    assert!(
        pair.contains("guard layer overlap: holds 'power' on room over the pending job's nodes → passes"),
        "{pair}"
    );
    assert!(pair.contains("decided by gap"), "{pair}");
    let txn = e.ok("sacctmgr", "-n -P show txn format=action,where,actor");
    assert!(txn.contains(&format!("preempt|job:{low}|spurctld")), "{txn}");
}
