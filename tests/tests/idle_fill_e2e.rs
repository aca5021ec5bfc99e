//! Idle-fill with the real binaries: the spec's ifalice/ifbob story. Bob's
//! job over his QOS node cap borrows an idle node (`%W` = yes); Alice's
//! in-quota job arrives and Bob's run is requeued (on a partition with
//! preempt_mode "off" and a QOS with preemptmode=cancel), Alice's starts,
//! sacct -D shows Bob's run PREEMPTED with its reclaimer, the txn log has
//! the reclaim as the system's, and Bob's job starts again once capacity frees.

use spur_tests::cluster::Cluster;
use spur_tests::proc::{run_with, wait_for};

fn start() -> Cluster {
    let e = Cluster::two_nodes(
        |t| {
            t.scheduler("idle_fill_enabled", true)
                .scheduler("idle_fill_exempt_secs", 1u64)
                .partition_set("preempt_mode", "off")
        },
        &[],
    );
    e.ok("sacctmgr", "-i add qos name=ifq grptres=node=1 preemptmode=cancel");
    e.ok("sacctmgr", "-i add user name=ifbob account=ml qos=ifq");
    e.ok("sacctmgr", "-i add user name=ifalice account=ml");
    e
}

/// `sbatch` as `user`: a whole node for ten minutes; the job id.
fn submit(e: &Cluster, user: &str, args: &[&str]) -> u64 {
    let dir = e.dir.path().display().to_string();
    let mut all = vec!["--parsable", "-D", &dir, "--exclusive", "-t", "10", "-A", "ml"];
    all.extend(args);
    let out = run_with("sbatch", &e.c.url, &all, &[("USER", user)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn bob_borrows_an_idle_node_and_alice_reclaims_it() {
    let e = start();
    let first = submit(&e, "ifbob", &["-q", "ifq", "--wrap", "sleep 300"]);
    e.wait_field(first, "%T", "RUNNING");
    let lent = submit(&e, "ifbob", &["-q", "ifq", "-J", "bob-borrow", "--wrap", "sleep 300"]);
    e.wait_field(lent, "%T", "RUNNING");
    let row = e.ok("squeue", &format!("-h -j {first},{lent} -o %i:%W"));
    assert_eq!(row, format!("{first}:no\n{lent}:yes\n"));
    // A third over-quota job finds no idle node: it keeps its real reason.
    let third = submit(&e, "ifbob", &["-q", "ifq", "--wrap", "sleep 300"]);
    e.wait_field(third, "%r", "QOSGrpNodeLimit");
    let why = e.ok("scontrol", &format!("explain job {third}"));
    assert!(why.contains("Idle-fill: idle-fill borrow: eligible, but no idle node"), "{why}");

    let alice = submit(&e, "ifalice", &["-J", "alice-legit", "--wrap", "sleep 300"]);
    e.wait_field(alice, "%T", "RUNNING");
    let state = e.field(lent, "%T");
    assert!(state == "PENDING" || state == "RUNNING", "requeued, and maybe lent again: {state}");
    let show = e.ok("scontrol", &format!("show job {lent}"));
    assert!(show.contains(&format!("PreemptedBy={alice} PreemptMode=REQUEUE")), "{show}");
    assert!(show.contains("Reclaims=1"), "{show}");
    let runs = e.ok("sacct", &format!("-n -P -X -D -j {lent} -o JobID,State,Borrowed,Reason%60"));
    let first_run = runs.lines().next().unwrap_or_default();
    assert_eq!(first_run, format!("{lent}|PREEMPTED|yes|Requeued: reclaimed (idle-fill) by job {alice}"));
    let rows =
        e.ok("sacctmgr", &format!("-n -P show txn Entity=job Name={lent} format=Action,Actor,Source,Info"));
    assert!(
        rows.lines().any(|l| l.starts_with("preempt|spurctld|system|")
            && l.contains(&format!("\"by\":{alice}"))
            && l.contains("idle-fill reclaim")),
        "{rows}"
    );
    // Capacity frees: Bob's reclaimed job runs again.
    e.ok("scancel", &first.to_string());
    e.ok("scancel", &third.to_string());
    wait_for("bob's job to run again", || (e.field(lent, "%T") == "RUNNING").then_some(()));
}
