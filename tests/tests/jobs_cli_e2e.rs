//! The jobs issue's acceptance, through sbatch, squeue, scancel and scontrol,
//! with real spurd agents.

use spur_tests::cluster::Cluster;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{fails, ok, wait_for};

fn cluster() -> ClusterToml {
    ClusterToml::new()
        .heartbeat(1)
        .node_timeout(5)
        .interval(1)
        .nodes("node[01-04]", 4, 8192)
        .partition("batch", "node[01-04]")
}

fn start() -> Cluster {
    Cluster::start(&cluster().build(), &[], "node[01-04]", 4)
}

#[test]
fn jobs_run_finish_and_free_their_nodes() {
    let e = start();
    e.ok("sacctmgr", "-i add user name=root account=ml");
    let id = e.sbatch(&["-N", "2", "--wrap=echo nodes=$SLURM_JOB_NUM_NODES list=$SLURM_JOB_NODELIST"]);
    e.wait_field(id, "%T", "COMPLETED");
    let out = std::fs::read_to_string(e.dir.path().join(format!("slurm-{id}.out"))).unwrap();
    assert!(out.starts_with("nodes=2 list=node["), "{out}");
    wait_for("nodes freed", || (e.ok("sinfo", "-h -o %t:%D").trim() == "idle:4").then_some(()));
}

#[test]
fn limits_show_as_pending_reasons_and_the_gate_rejects() {
    let e = start();
    e.ok("sacctmgr", "-i add qos name=gpu grptres=node=2");
    e.ok("sacctmgr", "-i add qos name=one maxjobsperuser=1");
    e.ok("sacctmgr", "-i add qos name=deny maxtresperjob=cpu=2 flags=DenyOnLimit");
    e.ok("sacctmgr", "-i add qos name=closed maxsubmitjobsperuser=0");
    e.ok("sacctmgr", "-i add qos name=walled maxwall=90");
    e.ok("sacctmgr", "-i add qos name=budget grpwall=0");
    e.ok(
        "sacctmgr",
        "-i add user name=root account=ml qos=gpu,one,deny,closed,walled,budget defaultqos=walled",
    );

    // An exhausted GrpWall budget never rejects; the job pends.
    let b = e.sbatch(&["-q", "budget", "--wrap=true"]);
    e.wait_field(b, "%r", "QOSGrpWallLimit");
    ok("scancel", &e.c.url, &[&b.to_string()]);

    let gpu: Vec<u64> = (0..3).map(|_| e.sbatch(&["-q", "gpu", "--exclusive", "--wrap=sleep 300"])).collect();
    e.wait_field(gpu[2], "%r", "QOSGrpNodeLimit");
    let show = e.ok("scontrol", &format!("show job {}", gpu[2]));
    assert!(show.contains("Reason=QOSGrpNodeLimit (") && show.contains("gpu"), "{show}");
    ok(
        "scancel",
        &e.c.url,
        &gpu.iter().map(|i| i.to_string()).collect::<Vec<_>>().iter().map(String::as_str).collect::<Vec<_>>(),
    );

    let one: Vec<u64> = (0..2).map(|_| e.sbatch(&["-q", "one", "--wrap=sleep 300"])).collect();
    e.wait_field(one[1], "%r", "QOSMaxJobsPerUserLimit");
    ok("scancel", &e.c.url, &["-u", "root"]);

    let err = fails("sbatch", &e.c.url, &["-q", "deny", "-n", "4", "--wrap=true"]);
    assert!(err.contains("QOSMaxCpuPerJobLimit"), "{err}");
    let err = fails("sbatch", &e.c.url, &["-q", "closed", "--wrap=true"]);
    assert!(err.contains("QOSMaxSubmitJobPerUserLimit"), "{err}");

    // No -t: the job inherits the QOS maxwall.
    let id = e.sbatch(&["--hold", "--wrap=true"]);
    assert_eq!(e.field(id, "%l"), "1:30:00");
    assert_eq!(e.field(id, "%r"), "JobHeldUser");
    e.ok("scontrol", &format!("release {id}"));
    e.wait_field(id, "%T", "COMPLETED");
}

#[test]
fn backfill_starts_a_short_job_in_front_of_a_blocked_wide_one() {
    let e = start();
    e.ok("sacctmgr", "-i add user name=root account=ml");
    // Three of the four nodes are busy for an hour.
    let long = e.sbatch(&["-N", "3", "-t", "60", "--exclusive", "--wrap=sleep 600"]);
    e.wait_field(long, "%T", "RUNNING");
    // The wide job needs all four: it is reserved the nodes from the long job's end.
    let wide = e.sbatch(&["-N", "4", "-t", "10", "--exclusive", "--priority=100000", "--wrap=true"]);
    e.wait_field(wide, "%t", "PD");
    // A job that would still run at that time must wait; a short one starts now.
    let late = e.sbatch(&["-N", "1", "-t", "120", "--wrap=true"]);
    let short = e.sbatch(&["-N", "1", "-t", "5", "--wrap=true"]);
    e.wait_field(short, "%T", "COMPLETED");
    assert_eq!(e.field(late, "%t"), "PD", "a job that would delay the wide one waits");
    assert_eq!(e.field(wide, "%t"), "PD", "the wide job still waits for the long one");
    ok("scancel", &e.c.url, &[&long.to_string(), &wide.to_string(), &late.to_string()]);
}
