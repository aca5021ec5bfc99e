//! The workload issue's sbatch options and dependencies, with real
//! binaries: the submit environment reaches the job (`--export`), an
//! ordinary site script with `#SBATCH --ntasks-per-node`, `--mail-type`,
//! `-C` and `--mem=1GB` runs, `afterok`/`afternotok`/`singleton` decide when
//! jobs start, `--begin` pends on BeginTime, and `sbatch --wait` returns the
//! job's exit code.

use spur_tests::cluster::Cluster;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{run_with, sacct_state, wait_for};

fn start() -> Cluster {
    let toml = ClusterToml::new()
        .heartbeat(1)
        .node_timeout(5)
        .interval(1)
        .nodes("node[01-02]", 4, 8192)
        .node_set("features", &["fast", "ib"][..])
        .nodes("node[03-04]", 4, 8192)
        .partition("batch", "node[01-04]");
    let e = Cluster::start(&toml.build(), &[], "node[01-04]", 4);
    e.ok("sacctmgr", "-i add user name=root account=ml");
    e
}

fn output(e: &Cluster, name: &str) -> String {
    std::fs::read_to_string(e.dir.path().join(name)).unwrap_or_default()
}

#[test]
fn the_submit_environment_and_a_site_script_reach_the_job() {
    let e = start();
    let dir = e.dir.path().display().to_string();
    let script = e.dir.path().join("site.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n#SBATCH --ntasks-per-node=2 -N 2\n#SBATCH --mail-type=END,FAIL --mail-user=me@example.org\n\
         #SBATCH -C fast&ib --mem=1GB --open-mode=append\n#SBATCH -o logs/%x-%j.out\n\
         echo \"var=$SPUR_TEST_VAR ntasks=$SLURM_NTASKS tpn=$SLURM_TASKS_PER_NODE mem=$SLURM_MEM_PER_NODE id=$SLURM_JOB_ID\"\n",
    )
    .unwrap();
    let url = &e.c.url;
    let submit = |args: &[&str]| {
        let mut all = vec!["--parsable", "-D", &dir];
        all.extend(args);
        let out = run_with("sbatch", url, &all, &[("SPUR_TEST_VAR", "hello"), ("SLURM_JOB_ID", "999")]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().parse::<u64>().unwrap()
    };
    let id = submit(&[script.to_str().unwrap()]);
    e.wait_field(id, "%T", "COMPLETED");
    let out = output(&e, &format!("logs/site.sh-{id}.out"));
    assert_eq!(
        out.trim(),
        format!("var=hello ntasks=4 tpn=2(x2) mem=1024 id={id}"),
        "the log folder was made"
    );
    let show = e.ok("scontrol", &format!("show job {id}"));
    for want in ["Features=fast&ib", "MailUser=me@example.org MailType=END,FAIL", "NtasksPerN:B:S:C=2:0:*:*"]
    {
        assert!(show.contains(want), "{want} in {show}");
    }
    let nodes = e.field(id, "%N");
    assert_eq!(nodes, "node[01-02]", "only the nodes with the features");

    // --export=NONE: only SLURM_* of the submitter's environment.
    let none = submit(&["--export=NONE", "-o", "none.out", "--wrap=echo var=${SPUR_TEST_VAR:-unset}"]);
    let named =
        submit(&["--export=SPUR_TEST_VAR,EXTRA=1", "-o", "named.out", "--wrap=echo $SPUR_TEST_VAR $EXTRA"]);
    e.wait_field(none, "%T", "COMPLETED");
    e.wait_field(named, "%T", "COMPLETED");
    assert_eq!(output(&e, "none.out").trim(), "var=unset");
    assert_eq!(output(&e, "named.out").trim(), "hello 1");

    // No node set has the feature: refused at submit, naming it.
    let err = e.fails("sbatch", &["-C", "gpu", "--wrap=true"]);
    assert!(err.contains("features 'gpu' (-C)"), "{err}");
    let err = e.fails("sbatch", &["--mem=1GB", "--mem-per-cpu=100", "--wrap=true"]);
    assert!(err.contains("mutually exclusive"), "{err}");
    let err = e.fails("sbatch", &["--begin=whenever", "--wrap=true"]);
    assert!(err.contains("--begin: 'whenever'"), "{err}");
}

#[test]
fn dependencies_decide_when_jobs_start() {
    let e = start();
    let ok = e.sbatch(&["--wrap=sleep 1"]);
    let after_ok = e.sbatch(&["-d", &format!("afterok:{ok}"), "--wrap=true"]);
    let after_not_ok = e.sbatch(&[&format!("--dependency=afternotok:{ok}"), "--wrap=true"]);
    let killed = e.sbatch(&["-d", &format!("afternotok:{ok}"), "--kill-on-invalid-dep=yes", "--wrap=true"]);
    assert_eq!(e.field(after_ok, "%r"), "Dependency");
    e.wait_field(after_ok, "%T", "COMPLETED");
    e.wait_field(after_not_ok, "%r", "DependencyNeverSatisfied");
    let show = e.ok("scontrol", &format!("show job {after_not_ok}"));
    assert!(show.contains(&format!("afternotok:{ok}: job is COMPLETED")), "{show}");
    assert!(show.contains(&format!("Dependency=afternotok:{ok}")), "{show}");
    e.wait_field(killed, "%T", "CANCELLED");

    // An update gives the never-satisfied job a dependency that holds.
    e.ok("scontrol", &format!("update job {after_not_ok} Dependency=afterany:{ok}"));
    e.wait_field(after_not_ok, "%T", "COMPLETED");

    // singleton: one job of a name at a time.
    let first = e.sbatch(&["-J", "one", "-d", "singleton", "--wrap=sleep 30"]);
    let second = e.sbatch(&["-J", "one", "-d", "singleton", "--wrap=true"]);
    e.wait_field(first, "%T", "RUNNING");
    e.wait_field(second, "%r", "Dependency");
    e.ok("scancel", &first.to_string());
    e.wait_field(second, "%T", "COMPLETED");

    let err = e.fails("sbatch", &["-d", "afterok:999999", "--wrap=true"]);
    assert!(err.contains("Job dependency problem"), "{err}");
    let err = e.fails("sbatch", &["-d", "afterok:1?afterany:2,afterok:3", "--wrap=true"]);
    assert!(err.contains("--dependency:"), "{err}");
}

#[test]
fn begin_time_holds_a_job_and_wait_returns_its_exit_code() {
    let e = start();
    let later = e.sbatch(&["--begin=now+1hour", "--wrap=true"]);
    e.wait_field(later, "%r", "BeginTime");
    e.ok("scontrol", &format!("update job {later} BeginTime=now"));
    e.wait_field(later, "%T", "COMPLETED");

    let dir = e.dir.path().display().to_string();
    let out = run_with("sbatch", &e.c.url, &["-W", "-D", &dir, "--wrap=exit 3"], &[]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Submitted batch job "));
    let out = run_with("sbatch", &e.c.url, &["--wait", "-D", &dir, "--wrap=true"], &[]);
    assert_eq!(out.status.code(), Some(0));
    wait_for("nothing left running", || (e.ok("squeue", "-h").trim().is_empty()).then_some(()));

    // Tools read the controller's settings under Slurm's keys.
    let config = e.ok("scontrol", "show config");
    assert!(config.starts_with("Configuration data as of "), "{config}");
    for want in [
        "MinJobAge               = 300 sec",
        "KillWait                = 30 sec",
        "MaxArraySize            = 1001",
    ] {
        assert!(config.lines().any(|l| l == want), "{want} in {config}");
    }
}

#[test]
fn a_dependency_outlives_its_targets_purge_and_a_controller_restart() {
    // Ended jobs leave memory at once: the fate of the one a pending job names stays.
    let toml = ClusterToml::new()
        .heartbeat(1)
        .node_timeout(5)
        .interval(1)
        .scheduler("min_job_age_secs", 0)
        .nodes("node[01-02]", 4, 8192)
        .partition("batch", "node[01-02]");
    let mut e = Cluster::start(&toml.build(), &[], "node[01-02]", 2);
    e.ok("sacctmgr", "-i add user name=root account=ml");
    let failed = e.sbatch(&["--wrap=exit 1"]);
    let waits = e.sbatch(&["-d", &format!("afterok:{failed}"), "--wrap=true"]);
    let held = e.sbatch(&["-H", "--wrap=true"]);
    let behind = e.sbatch(&["-d", &format!("afterany:{held}"), "--wrap=true"]);
    e.wait_field(waits, "%r", "DependencyNeverSatisfied");
    wait_for("the failed job purged", || {
        e.ok("squeue", &format!("-h -j {failed}")).trim().is_empty().then_some(())
    });
    e.c.restart();
    // Still never satisfied after the restart, and still waiting behind the held job.
    e.wait_field(waits, "%r", "DependencyNeverSatisfied");
    e.wait_field(behind, "%r", "Dependency");
    let show = e.ok("scontrol", &format!("show job {waits}"));
    assert!(show.contains(&format!("afterok:{failed}: job is FAILED")), "{show}");
    e.ok("scontrol", &format!("release {held}"));
    // Purged as soon as it ends: sacct has it.
    wait_for("the job behind ran", || (sacct_state(&e.c.url, behind) == "COMPLETED").then_some(()));
}

#[test]
fn mail_types_run_the_mail_program_with_slurm_s_subjects() {
    let mail = "#!/bin/sh\necho \"$SLURM_JOB_MAIL_TYPE|$SLURM_JOB_ID|$1|$2|$3|$4\" >> \"$(dirname \"$0\")/mails.log\"\n";
    let e = Cluster::two_nodes(|t| t.set("mail", "program", "mail.sh"), &[("mail.sh", mail)]);
    let prog = e.dir.path().join("mail.sh");
    std::fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let a = e.sbatch(&[
        "--mail-type=BEGIN,END",
        "--mail-user=ops@example.org",
        "-J",
        "mailed",
        "--wrap",
        "exit 3",
    ]);
    let b = e.sbatch(&["--mail-type=FAIL", "--wrap", "true"]);
    let c = e.sbatch(&["--wrap", "true"]);
    // An address is one plain address, at submit and at update.
    for bad in ["-oQ/tmp/x", "ops@example.org;reboot", "$(id)", ""] {
        let err = e.fails("sbatch", &["--mail-type=END", &format!("--mail-user={bad}"), "--wrap", "true"]);
        assert!(err.contains("--mail-user: "), "{bad}: {err}");
    }
    let err = e.fails("scontrol", &["update", &format!("jobid={c}"), "MailUser=a|b"]);
    assert!(err.contains("MailUser: 'a|b' holds '|'"), "{err}");
    for id in [a, b, c] {
        wait_for("the job to end", || (!sacct_state(&e.c.url, id).ends_with("ING")).then_some(()));
    }
    let mails = wait_for("two mails", || {
        let log = output(&e, "mails.log");
        (log.lines().count() >= 2).then_some(log)
    });
    let mut lines: Vec<&str> = mails.lines().collect();
    lines.sort();
    assert_eq!(lines.len(), 2, "b succeeded (FAIL only) and c asked for none: {mails}");
    let began = format!("Began|{a}|-s|Slurm Job_id={a} Name=mailed Began, Queued time 00:00:0");
    // The recipient comes after `--`: never an option of the mail program.
    assert!(lines[0].starts_with(&began) && lines[0].ends_with("|--|ops@example.org"), "{mails}");
    assert!(
        lines[1].starts_with(&format!("Failed|{a}|-s|Slurm Job_id={a} Name=mailed Failed, Run time "))
            && lines[1].ends_with(", FAILED, ExitCode 3|--|ops@example.org"),
        "{mails}"
    );
}

#[test]
fn test_only_says_where_a_job_would_start_and_submits_nothing() {
    let e = start();
    let url = &e.c.url;
    let out = run_with("sbatch", url, &["--test-only", "-N", "2", "-c", "2", "--wrap", "true"], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(said.starts_with("sbatch: Job 1 to start at 20"), "{said}");
    assert!(
        said.trim_end().ends_with("using 4 processors on nodes node[01-02] in partition batch"),
        "{said}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(e.ok("squeue", "-h"), "", "nothing was submitted");
    // The id was only peeked: the first real job takes it.
    assert_eq!(e.sbatch(&["--wrap", "true"]), 1);
    let bad = run_with("sbatch", url, &["--test-only", "-N", "9", "--wrap", "true"], &[]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("Requested node configuration is not available"));
}
