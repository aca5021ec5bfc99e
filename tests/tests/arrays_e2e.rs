//! Job arrays with real binaries: `--array` with `%N` never runs more than N
//! tasks at once and completes; the tasks see Slurm's array variables and
//! `%A_%a` names their output; squeue shows `12_[..]` for the pending part
//! and `12_3` for started tasks (`-r` expands); scancel takes `12_3`,
//! `12_[1-5]` and the whole array; `ArrayTaskThrottle` changes the limit;
//! sacct lists each task; a dependency on the array waits for all of it.

use spur_tests::cluster::Cluster;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{ok, sacct_state, wait_for};
use spur_tests::wait::wait_progress;

fn start(max_array_size: u32) -> Cluster {
    let toml = ClusterToml::new()
        .heartbeat(1)
        .node_timeout(5)
        .interval(1)
        .scheduler("max_array_size", max_array_size)
        .nodes("node[01-04]", 8, 8192)
        .partition("batch", "node[01-04]");
    let e = Cluster::start(&toml.build(), &[], "node[01-04]", 4);
    e.ok("sacctmgr", "-i add user name=root account=ml");
    e
}

/// How many of the array's tasks run now, from `squeue -h -t R -o %F`.
fn running(e: &Cluster, array: u64) -> usize {
    let out = e.ok("squeue", "-h -t R -o %F");
    out.lines().filter(|l| l.trim() == array.to_string()).count()
}

#[test]
fn a_throttled_array_of_a_thousand_tasks_never_runs_more_than_its_limit() {
    let e = start(1001);
    let dir = e.dir.path();
    // Each task records that it ran, then holds its place a moment so the
    // limit is really exercised; the marker file counts the live tasks.
    let script = dir.join("task.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n#SBATCH -o out/%A_%a.out\nmkdir -p live done\ntouch live/$SLURM_ARRAY_TASK_ID\n\
         n=$(ls live | wc -l)\necho $n >> peaks\nsleep 0.05\nrm live/$SLURM_ARRAY_TASK_ID\n\
         echo \"$SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT $SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX\"\n\
         touch done/$SLURM_ARRAY_TASK_ID\n",
    )
    .unwrap();
    let id = e.sbatch(&["--array=0-999%20", script.to_str().unwrap()]);
    let first = e.ok("squeue", &format!("-h -j {id} -t PD -o %i"));
    assert!(first.trim().starts_with(&format!("{id}_[")) && first.contains("%20]"), "{first}");
    wait_progress("every task done", || {
        let n = std::fs::read_dir(dir.join("done")).map(|d| d.count()).unwrap_or(0);
        assert!(running(&e, id) <= 20, "more than 20 tasks at once");
        (n as u64, n == 1000)
    });
    let peaks = std::fs::read_to_string(dir.join("peaks")).unwrap();
    let peak = peaks.lines().filter_map(|l| l.trim().parse::<usize>().ok()).max().unwrap();
    assert!(peak <= 20, "at most 20 ran at once, saw {peak}");
    let out = std::fs::read_to_string(dir.join(format!("out/{id}_7.out"))).unwrap();
    assert_eq!(out.trim(), format!("{id} 7 1000 0 999"));
    wait_for("the array ended", || {
        e.ok("squeue", &format!("-h -j {id} -t PD,R,CG")).trim().is_empty().then_some(())
    });
    let rows = ok("sacct", &e.c.url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "JobID,State"]);
    assert_eq!(rows.lines().count(), 1000, "one row per task");
    assert!(rows.lines().all(|l| l.ends_with("|COMPLETED")), "{rows}");
    assert!(rows.lines().any(|l| l == format!("{id}_999|COMPLETED")), "{rows}");
}

#[test]
fn tasks_are_listed_cancelled_and_throttled_by_their_names() {
    let e = start(1001);
    let id = e.sbatch(&["-a", "0-9%2", "--wrap=sleep 300"]);
    wait_for("two tasks run", || (running(&e, id) == 2).then_some(()));
    let pending = e.ok("squeue", &format!("-h -j {id} -t PD -o %i|%r"));
    assert_eq!(pending.trim(), format!("{id}_[2-9%2]|JobArrayTaskLimit"));
    let expanded = e.ok("squeue", &format!("-h -r -j {id} -t PD -o %i"));
    assert_eq!(expanded.lines().count(), 8, "{expanded}");
    assert!(expanded.lines().any(|l| l.trim() == format!("{id}_9")), "{expanded}");
    let show = e.ok("scontrol", &format!("show job {id}_0"));
    assert!(show.contains(&format!("ArrayJobId={id} ArrayTaskId=0")), "{show}");

    // A pending task and a running one, by name; then the limit is raised.
    e.ok("scancel", &format!("{id}_[5-6] {id}_0"));
    wait_for("task 0 cancelled", || (running(&e, id) == 2).then_some(()));
    e.ok("scontrol", &format!("update jobid={id} ArrayTaskThrottle=4"));
    wait_for("four tasks run", || (running(&e, id) == 4).then_some(()));
    let rows = ok("sacct", &e.c.url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "JobID,State"]);
    assert!(rows.contains(&format!("{id}_[5-6]|CANCELLED")), "{rows}");
    assert!(rows.contains(&format!("{id}_0|CANCELLED")), "{rows}");

    // A dependency on the array waits for every task; scancel of the array ends them all.
    let after = e.sbatch(&["-d", &format!("afterany:{id}"), "--wrap=true"]);
    assert_eq!(e.field(after, "%r"), "Dependency");
    e.ok("scancel", &id.to_string());
    wait_for("the array is gone", || {
        e.ok("squeue", &format!("-h -j {id} -t PD,R,CG")).trim().is_empty().then_some(())
    });
    wait_for("the dependent ran", || (sacct_state(&e.c.url, after) == "COMPLETED").then_some(()));

    let err = e.fails("sbatch", &["--array=0-2000", "--wrap=true"]);
    assert!(err.contains("more than the 1001"), "{err}");
    let err = e.fails("sbatch", &["--array=5-1", "--wrap=true"]);
    assert!(err.contains("--array: "), "{err}");
}

#[test]
fn aftercorr_starts_each_task_after_its_corresponding_task_succeeds() {
    let e = start(1001);
    let dir = e.dir.path().display().to_string();
    // Task 1 fails; task 2 waits for a file the test makes; 0 and 3 succeed at once.
    let a = e.sbatch(&[
        "--array=0-3",
        "--wrap",
        "case $SLURM_ARRAY_TASK_ID in 1) exit 1;; 2) while [ ! -e go ]; do sleep 0.1; done;; esac",
    ]);
    let dep = format!("aftercorr:{a}");
    let b = e.sbatch(&["--array=0-3", "-d", &dep, "--wrap", "echo $SLURM_ARRAY_TASK_ID >> b.log"]);
    let log = || {
        let mut v: Vec<String> = std::fs::read_to_string(format!("{dir}/b.log"))
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect();
        v.sort();
        v
    };
    wait_for("tasks 0 and 3 of the second array", || (log() == ["0", "3"]).then_some(()));
    let q = e.ok("squeue", "-h -r -o %F:%K:%T");
    assert!(
        q.lines().any(|l| l == format!("{a}:2:RUNNING")),
        "task 2 of the first array still runs, so task 2 of the second waits: {q}"
    );
    std::fs::write(format!("{dir}/go"), "").unwrap();
    wait_for("task 2 of the second array", || (log() == ["0", "2", "3"]).then_some(()));
    // Task 1's corresponding task failed: it can never start.
    let reason = wait_for("task 1 never satisfied", || {
        let r = e.ok("squeue", "-h -t PD -o %F:%K:%r");
        r.contains("DependencyNeverSatisfied").then_some(r)
    });
    assert_eq!(reason.trim(), format!("{b}:1:DependencyNeverSatisfied"));
    let states = e.ok("sacct", &format!("-n -P -X -j {a} -o JobID,State"));
    assert_eq!(states.lines().filter(|l| l.ends_with("|COMPLETED")).count(), 3, "{states}");
}
