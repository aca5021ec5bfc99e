//! Jobs and their agent, with the real binaries: a restarted `spurd` adopts
//! the jobs still running (none runs twice, none is lost), ending a job
//! (scancel, requeue, KillWait) ends its whole process tree, a script runs
//! by its `#!` line, and sacct shows what a job used.

use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, fails, field, ok, sacct_state, starts, wait_for};
use std::path::Path;

fn config() -> ClusterToml {
    ClusterToml::new()
        .heartbeat(1)
        .node_timeout(10)
        .scheduler("kill_wait_secs", 1)
        .nodes("node[01-02]", 5, 8192)
        .partition("batch", "node[01-02]")
}

fn cluster(dir: &Path) -> Controller {
    let db = format!("sqlite://{}/spur.db", dir.display());
    Controller::start(dir, &conf(&db, &config().build()))
}

fn sbatch(url: &str, dir: &Path, args: &[&str], script: &str) -> u64 {
    let d = dir.display().to_string();
    let mut all = vec!["--parsable", "-D", &d, "-o", "/dev/null"];
    all.extend(args);
    all.extend(["--wrap", script]);
    ok("sbatch", url, &all).trim().parse().expect("a job id")
}

/// A pid the job wrote to `name-ID`, once it has.
fn pid_file(dir: &Path, name: &str, id: u64) -> u32 {
    let path = dir.join(format!("{name}-{id}"));
    wait_for(&format!("{}", path.display()), || std::fs::read_to_string(&path).ok()?.trim().parse().ok())
}

fn alive(pid: u32) -> bool {
    // A zombie has ended; only its parent has not reaped it yet.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
}

fn wait_gone(pid: u32, what: &str) {
    wait_for(what, || (!alive(pid)).then_some(()));
}

const GATED: &str = "echo x >> starts-$SLURM_JOB_ID; while [ ! -f go ]; do sleep 0.05; done";

#[test]
fn a_restarted_agent_adopts_its_jobs_and_none_runs_twice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let c = cluster(d);
    let agent = Agent::start(&c.url, "node[01-02]", &[]);
    wait_for("nodes up", || (ok("sinfo", &c.url, &["-h", "-o", "%t:%D"]).trim() == "idle:2").then_some(()));
    let mut ids: Vec<u64> = (0..7).map(|_| sbatch(&c.url, d, &[], GATED)).collect();
    ids.push(sbatch(&c.url, d, &["--no-requeue"], GATED));
    for id in &ids {
        wait_for(&format!("job {id} started"), || (starts(d, *id) == 1).then_some(()));
    }
    let before: Vec<String> = ids.iter().map(|id| field(&c.url, *id, "%S")).collect();

    // kill -9 of the agent alone: the jobs run on under their supervisors.
    let state = agent.state_dir().to_path_buf();
    agent.kill_agent_only();
    let _again = Agent::start_in(&c.url, "node[01-02]", &[], &state);
    // A job run after the restart: the new agent registered (and reconciled) first.
    let probe = sbatch(&c.url, d, &[], "true");
    wait_for("the probe job completed", || (sacct_state(&c.url, probe) == "COMPLETED").then_some(()));
    for (id, start) in ids.iter().zip(&before) {
        assert_eq!(field(&c.url, *id, "%T"), "RUNNING", "job {id}");
        assert_eq!(&field(&c.url, *id, "%S"), start, "job {id} kept its start");
    }
    std::fs::write(d.join("go"), "").unwrap();
    for id in &ids {
        wait_for(&format!("job {id} completed"), || (sacct_state(&c.url, *id) == "COMPLETED").then_some(()));
        assert_eq!(starts(d, *id), 1, "job {id} ran once");
    }
}

#[test]
fn scancel_and_requeue_end_the_whole_process_tree() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let c = cluster(d);
    let _agent = Agent::start(&c.url, "node[01-02]", &[]);
    // The shell runs `sleep 1000` as its child: signalling the shell alone leaves it.
    let script = "echo x >> starts-$SLURM_JOB_ID; sleep 1000 & echo $! > child-$SLURM_JOB_ID; wait";
    let id = sbatch(&c.url, d, &[], script);
    let child = pid_file(d, "child", id);
    ok("scancel", &c.url, &[&id.to_string()]);
    wait_gone(child, "the cancelled job's child to end");

    let id = sbatch(&c.url, d, &[], script);
    let first = pid_file(d, "child", id);
    std::fs::remove_file(d.join(format!("child-{id}"))).unwrap();
    ok("scontrol", &c.url, &["requeue", &id.to_string()]);
    wait_gone(first, "the requeued run's child to end");
    let second = pid_file(d, "child", id);
    assert_ne!(first, second);
    assert!(alive(second), "the new run goes on");
    assert_eq!(starts(d, id), 2);
}

#[test]
fn a_job_deaf_to_sigterm_is_killed_after_kill_wait() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let c = cluster(d);
    let _agent = Agent::start(&c.url, "node[01-02]", &[]);
    // An ignored TERM is inherited: neither the shell nor its sleep hears it.
    let script = "trap '' TERM; sleep 1000 & echo $! > child-$SLURM_JOB_ID; wait; sleep 1000";
    let id = sbatch(&c.url, d, &[], script);
    let child = pid_file(d, "child", id);
    ok("scancel", &c.url, &[&id.to_string()]);
    wait_gone(child, "SIGKILL after KillWait");
    assert_eq!(sacct_state(&c.url, id), "CANCELLED");
    // A cancelled job is not signalled again by a second scancel, nor is it an error.
    assert!(fails("scancel", &c.url, &["999"]).contains("999"));
}

#[test]
fn a_process_that_leaves_the_job_s_process_group_is_killed_through_its_cgroup() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let c = cluster(d);
    let _agent = Agent::start(&c.url, "node[01-02]", &[]);
    let script = "setsid sleep 1000 & echo $! > child-$SLURM_JOB_ID; wait";
    let id = sbatch(&c.url, d, &[], script);
    let child = pid_file(d, "child", id);
    let cgroup = std::fs::read_to_string(format!("/proc/{child}/cgroup")).unwrap_or_default();
    if !cgroup.lines().any(|l| l.starts_with("0::") && l.contains("spur-job")) {
        // No writable cgroup v2 here: the process group is the unit, and this one escapes it.
        eprintln!("note: no cgroup v2 for jobs on this host; the escape is not caught");
        ok("scancel", &c.url, &[&id.to_string()]);
        let _ = std::process::Command::new("kill").arg("-9").arg(child.to_string()).status();
        return;
    }
    ok("scancel", &c.url, &[&id.to_string()]);
    wait_gone(child, "the escaped child to end with its cgroup");
}

/// Submits the script file `name` (written to `dir` first) with `args`.
fn sbatch_file(url: &str, dir: &Path, args: &[&str], name: &str, script: &str) -> u64 {
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    let (d, p) = (dir.display().to_string(), path.display().to_string());
    let mut all = vec!["--parsable", "-D", &d];
    all.extend(args);
    all.push(&p);
    ok("sbatch", url, &all).trim().parse().expect("a job id")
}

/// sacct's `fields` of one job, `|`-separated.
fn sacct(url: &str, id: u64, fields: &str) -> String {
    ok("sacct", url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", fields]).trim_end().to_string()
}

fn ended(url: &str, id: u64) -> String {
    wait_for(&format!("job {id} to end"), || {
        let s = sacct_state(url, id);
        (!matches!(s.as_str(), "PENDING" | "RUNNING" | "COMPLETING" | "")).then_some(s)
    })
}

#[test]
fn a_script_runs_by_its_interpreter_line_and_its_output_directory_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let c = cluster(d);
    let _agent = Agent::start(&c.url, "node[01-02]", &[]);
    // `[[ ]]` is bash's: under /bin/sh (dash here) the script would fail.
    let bash = "#!/bin/bash\nset -e\n[[ -n \"$BASH_VERSION\" && 1 -lt 2 ]]\necho \"bash $BASH_VERSION\"\n";
    let id = sbatch_file(&c.url, d, &["-o", "bash-%j.out"], "bash.sh", bash);
    assert_eq!(ended(&c.url, id), "COMPLETED", "{}", sacct(&c.url, id, "State,ExitCode,Reason"));
    let out = std::fs::read_to_string(d.join(format!("bash-{id}.out"))).unwrap();
    assert!(out.starts_with("bash "), "{out}");

    let missing = "#!/nonexistent/interp\necho never\n";
    let id = sbatch_file(&c.url, d, &["-o", "missing-%j.out"], "missing.sh", missing);
    assert_eq!(ended(&c.url, id), "FAILED");
    let reason = sacct(&c.url, id, "Reason");
    assert!(reason.contains("/nonexistent/interp"), "the interpreter is named: {reason}");
    let err = std::fs::read_to_string(d.join(format!("missing-{id}.out"))).unwrap();
    assert!(err.contains("/nonexistent/interp") && !err.contains("never"), "{err}");

    let id = sbatch(&c.url, d, &["-o", "sub/dir/out-%j.txt"], "echo made");
    assert_eq!(ended(&c.url, id), "COMPLETED", "{}", sacct(&c.url, id, "State,Reason"));
    assert_eq!(std::fs::read_to_string(d.join(format!("sub/dir/out-{id}.txt"))).unwrap(), "made\n");
}

/// Whether a CPU time as sacct prints it (`00:01.234`) is more than zero.
fn nonzero(time: &str) -> bool {
    time.bytes().any(|b| b.is_ascii_digit() && b != b'0')
}

#[test]
fn sacct_shows_what_a_job_used_once_it_ended() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let c = cluster(d);
    let _agent = Agent::start(&c.url, "node[01-02]", &[]);
    const USAGE: &str = "TotalCPU,UserCPU,SystemCPU,MaxRSS,AveRSS,NTasks";
    let held = sbatch(&c.url, d, &["-H"], "true");
    assert_eq!(sacct(&c.url, held, USAGE), "|||||", "a job that has not run shows nothing");

    let busy = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done";
    let id = sbatch(&c.url, d, &[], busy);
    assert_eq!(ended(&c.url, id), "COMPLETED");
    let row = sacct(&c.url, id, USAGE);
    let [total, user, _sys, max_rss, ave_rss, ntasks] = row.split('|').collect::<Vec<_>>()[..] else {
        panic!("{row}")
    };
    assert!(nonzero(total) && nonzero(user), "{row}");
    assert!(max_rss.ends_with(['K', 'M']) && nonzero(max_rss) && ave_rss == max_rss, "{row}");
    assert_eq!(ntasks, "1", "{row}");

    // Cancelled: the controller ends the job, and its agent's later report brings the usage.
    let spin = "touch spinning-$SLURM_JOB_ID; while :; do :; done";
    let id = sbatch(&c.url, d, &[], spin);
    let flag = d.join(format!("spinning-{id}"));
    wait_for("the spinning job to start", || flag.exists().then_some(()));
    ok("scancel", &c.url, &[&id.to_string()]);
    spur_tests::wait::wait_until_blocking("the cancelled job's usage", || {
        let row = sacct(&c.url, id, "State,TotalCPU");
        (row.starts_with("CANCELLED|") && nonzero(&row["CANCELLED|".len()..])).then_some(()).ok_or(row)
    });
}
