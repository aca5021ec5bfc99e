//! salloc with the real binaries: a command run in the allocation with the
//! job's variables (srun inside it runs steps there), the allocation ending
//! with the command's exit code, and `--no-shell` leaving a running
//! allocation that scancel ends.

use spur_tests::cluster::Cluster;
use spur_tests::proc::{links_dir, run_with, wait_for};

/// The links first on PATH, so the command's `srun` is ours.
fn path() -> String {
    format!("{}:{}", links_dir().display(), std::env::var("PATH").unwrap_or_default())
}

fn salloc(e: &Cluster, args: &[&str]) -> std::process::Output {
    let dir = e.dir.path().display().to_string();
    let mut all = vec!["-D", &dir];
    all.extend(args);
    run_with("salloc", &e.c.url, &all, &[("PATH", &path())])
}

fn sacct(e: &Cluster) -> String {
    e.ok("sacct", "-n -P -a -X -o JobID,JobName,State,ExitCode")
}

#[test]
fn salloc_runs_srun_in_its_allocation_and_ends_with_the_command_s_code() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let out = salloc(&e, &["-N1", "srun", "sh", "-c", "echo $SLURMD_NODENAME"]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "node01");
    let id = err
        .lines()
        .find_map(|l| l.strip_prefix("salloc: Granted job allocation "))
        .unwrap_or_else(|| panic!("no grant in {err}"))
        .to_string();
    assert!(err.starts_with(&format!("salloc: Pending job allocation {id}\n")), "{err}");
    assert!(err.contains(&format!("salloc: Relinquishing job allocation {id}")), "{err}");
    let rows = wait_for("the allocation ended", || {
        let rows = sacct(&e);
        (!rows.is_empty() && !rows.contains("RUNNING")).then_some(rows)
    });
    assert_eq!(rows, format!("{id}|srun|COMPLETED|0:0\n"));
    assert_eq!(e.ok("sacct", &format!("-n -P -j {id}.0 -o JobID,State")), format!("{id}.0|COMPLETED\n"));

    // The command's variables, and its exit code through salloc.
    let script = "echo $SLURM_JOB_NUM_NODES $SLURM_NNODES $SLURM_JOB_NODELIST $SLURM_NTASKS; exit 3";
    let out = salloc(&e, &["-N2", "-n2", "-J", "vars", "sh", "-c", script]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2 2 node[01-02] 2");
    let rows = wait_for("the second allocation ended", || {
        let rows = sacct(&e);
        (rows.lines().count() == 2 && !rows.contains("RUNNING")).then_some(rows)
    });
    assert!(rows.lines().nth(1).is_some_and(|r| r.ends_with("|vars|FAILED|3:0")), "{rows}");
}

#[test]
fn salloc_no_shell_leaves_the_allocation_running_until_scancel() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let out = salloc(&e, &["--no-shell", "-N1", "--bb=x"]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    assert!(err.starts_with("salloc: warning: --bb has no effect on Spur: burst buffers"), "{err}");
    let id: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("salloc: Granted job allocation "))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("no grant in {err}"));
    assert_eq!(e.field(id, "%T"), "RUNNING");
    let dir = e.dir.path().display().to_string();
    let step = run_with(
        "srun",
        &e.c.url,
        &["-D", &dir, "--jobid", &id.to_string(), "sh", "-c", "echo in $SLURM_JOB_ID"],
        &[("PATH", &path())],
    );
    assert_eq!(String::from_utf8_lossy(&step.stdout).trim(), format!("in {id}"));
    assert_eq!(e.field(id, "%T"), "RUNNING", "a step does not end a detached allocation");
    e.ok("scancel", &id.to_string());
    e.wait_field(id, "%T", "CANCELLED");
}

#[test]
fn immediate_gives_up_an_allocation_that_pends_and_cancels_it() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let busy = e.sbatch(&["-N2", "--exclusive", "--wrap=sleep 600"]);
    e.wait_field(busy, "%T", "RUNNING");
    let dir = e.dir.path().display().to_string();
    let srun = run_with("srun", &e.c.url, &["-D", &dir, "-I", "-N1", "true"], &[]);
    assert_eq!(srun.status.code(), Some(1));
    let err = String::from_utf8_lossy(&srun.stderr);
    assert!(
        err.contains(
            "srun: error: Unable to allocate resources: the job did not start within 1 second (--immediate)"
        ),
        "{err}"
    );
    for args in [&["--no-shell", "-I", "-N1"][..], &["--immediate=2", "-N1", "true"][..]] {
        let out = salloc(&e, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("salloc: error: Unable to allocate resources: the job did not start within"),
            "{err}"
        );
    }
    // The three allocations given up are cancelled, not left pending.
    let rows = wait_for("the allocations cancelled", || {
        let rows = e.ok("sacct", "-n -P -a -X -o JobID,State");
        (rows.lines().filter(|l| l.ends_with("|CANCELLED")).count() == 3).then_some(rows)
    });
    assert!(rows.contains(&format!("{busy}|RUNNING")), "{rows}");
    e.ok("scancel", &busy.to_string());
}

#[test]
fn scancel_of_a_salloc_allocation_revokes_it_and_k_signals_the_command() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let dir = e.dir.path().display().to_string();
    let id_file = e.dir.path().join("id");
    let cmd = format!("echo $SLURM_JOB_ID > {}; exec sleep 600", id_file.display());
    let child =
        spur_tests::proc::client("salloc", &e.c.url, &["-D", &dir, "-N1", "-K", "sh", "-c", &cmd], &[])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
    let id = wait_for("the command running in the allocation", || {
        std::fs::read_to_string(&id_file).ok().and_then(|s| s.trim().parse::<u64>().ok())
    });
    e.ok("scancel", &id.to_string());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // -K: the command gets SIGTERM; salloc exits with its code.
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(err.contains(&format!("salloc: Job allocation {id} has been revoked.")), "{err}");
    e.wait_field(id, "%T", "CANCELLED");
}
