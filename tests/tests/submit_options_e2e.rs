//! sbatch's options from the whole man page with the real binaries:
//! `--mincpus` raising a job's CPUs, `--export-file` reaching the job's
//! environment (`--reservation` is reservations_e2e.rs's).

use spur_tests::cluster::Cluster;
use spur_tests::proc::run;

#[test]
fn mincpus_and_export_file() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let dir = e.dir.path().display().to_string();
    let vars = e.dir.path().join("vars");
    std::fs::write(&vars, "FROM_FILE=yes it is\nOTHER=2\n").unwrap();
    let vars = vars.display().to_string();
    let args = [
        "--parsable",
        "-D",
        &dir,
        "-n1",
        "--mincpus=2",
        "--export-file",
        &vars,
        "-o",
        "env.out",
        "--wrap=echo \"$FROM_FILE/$OTHER\"",
    ];
    let out = run("sbatch", &e.c.url, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err, "", "every option here takes effect");
    let id: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    e.wait_field(id, "%T", "COMPLETED");
    assert_eq!(e.field(id, "%C"), "2", "one task, raised to --mincpus");
    let got = std::fs::read_to_string(e.dir.path().join("env.out")).unwrap();
    assert_eq!(got, "yes it is/2\n");
}

#[test]
fn propagate_sets_the_submitter_s_soft_limits_on_the_job() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let dir = e.dir.path().display().to_string();
    let sbatch = spur_tests::proc::links_dir().join("sbatch").display().to_string();
    // The submitter's shell lowers its own limit; the job sees it, and not the unnamed one.
    let line = format!(
        "ulimit -S -n 777 && ulimit -S -c 0 && exec {sbatch} --parsable -D {dir} --propagate=NOFILE \
         -o limits.out --wrap='echo $(ulimit -S -n) $SLURM_RLIMIT_NOFILE ${{SLURM_RLIMIT_CORE:-none}}'"
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &line])
        .env("SPUR_CONTROLLER_ADDR", &e.c.url)
        .env_remove("SPUR_TOKEN")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    e.wait_field(id, "%T", "COMPLETED");
    let got = std::fs::read_to_string(e.dir.path().join("limits.out")).unwrap();
    assert_eq!(got, "777 777 none\n");
}

#[test]
fn get_user_env_loads_the_login_environment_under_the_job_s() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let dir = e.dir.path().display().to_string();
    // The job's HOME is the submitter's (exported); its login profile sets two variables.
    let home = e.dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join(".profile"), "export FROM_LOGIN=yes\nexport KEPT=login\n").unwrap();
    std::fs::write(home.join(".bash_profile"), ". ~/.profile\n").unwrap();
    let home = home.display().to_string();
    let args =
        ["--parsable", "-D", &dir, "--get-user-env", "-o", "login.out", "--wrap=echo $FROM_LOGIN/$KEPT"];
    let out =
        spur_tests::proc::run_with("sbatch", &e.c.url, &args, &[("HOME", &home), ("KEPT", "submitter")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "no warning: {}", String::from_utf8_lossy(&out.stderr));
    let id: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    e.wait_field(id, "%T", "COMPLETED");
    let got = std::fs::read_to_string(e.dir.path().join("login.out")).unwrap();
    assert_eq!(got, "yes/submitter\n", "the login's variables fill in; sbatch's win");
}

#[test]
fn tmp_and_layout_asks_are_checked_against_the_nodes_facts() {
    let e = Cluster::two_nodes(|t| t, &[]);
    // This host's /tmp and CPUs: a small ask fits and runs.
    let id = e.sbatch(&["--tmp=1M", "--threads-per-core=1", "--cores-per-socket=1", "--wrap=true"]);
    e.wait_field(id, "%T", "COMPLETED");
    let err = e.fails("sbatch", &["--tmp=1000000T", "--wrap=true"]);
    assert!(err.contains("with --tmp=1048576000000 MB and partition") && err.contains("has 0 such"), "{err}");
    let err = e.fails("sbatch", &["--sockets-per-node=4096", "--wrap=true"]);
    assert!(err.contains("with --sockets-per-node=4096 and partition"), "{err}");
}

#[test]
fn overcommit_allocates_one_task_s_cpus_a_node_and_its_sruns_overcommit_too() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let dir = e.dir.path().display().to_string();
    let path =
        format!("{}:{}", spur_tests::proc::links_dir().display(), std::env::var("PATH").unwrap_or_default());
    let script = "--wrap=srun -n8 true; echo rc=$? $SLURM_OVERCOMMIT";
    // The nodes have 4 CPUs: 8 tasks on one node fit only with -O.
    let refused = e.fails("sbatch", &["-D", &dir, "-N1", "-n8", script]);
    assert!(refused.contains("per node"), "{refused}");
    let args = ["--parsable", "-D", &dir, "-N1", "-n8", "-O", "-o", "oc.out", script];
    let out = spur_tests::proc::run_with("sbatch", &e.c.url, &args, &[("PATH", &path)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    e.wait_field(id, "%T", "COMPLETED");
    assert_eq!(std::fs::read_to_string(e.dir.path().join("oc.out")).unwrap(), "rc=0 1\n");
}

#[test]
fn input_is_the_batch_script_s_standard_input() {
    let e = Cluster::two_nodes(|t| t, &[]);
    std::fs::write(e.dir.path().join("in.txt"), "fed through stdin\n").unwrap();
    let id = e.sbatch(&["--input=in.txt", "-o", "cat.out", "--wrap", "cat"]);
    e.wait_field(id, "%T", "COMPLETED");
    let got = std::fs::read_to_string(e.dir.path().join("cat.out")).unwrap();
    assert_eq!(got, "fed through stdin\n");
    // Without --input the script reads nothing (/dev/null), as before.
    let plain = e.sbatch(&["-o", "plain.out", "--wrap", "cat; echo end"]);
    e.wait_field(plain, "%T", "COMPLETED");
    assert_eq!(std::fs::read_to_string(e.dir.path().join("plain.out")).unwrap(), "end\n");
    // A file that is not there fails the launch, and says which.
    let missing = e.sbatch(&["-i", "nosuch-%j.txt", "--wrap", "cat"]);
    e.wait_field(missing, "%T", "FAILED");
    let shown = e.ok("scontrol", &format!("show job {missing}"));
    assert!(shown.contains(&format!("nosuch-{missing}.txt")), "{shown}");
}

#[test]
fn script_arguments_reach_the_script_across_a_restart_a_requeue_and_an_array() {
    let mut e = Cluster::two_nodes(|t| t, &[]);
    let d = e.dir.path().to_path_buf();
    let script = d.join("args.sh");
    // The first run of each job waits for its requeue; the second ends.
    let text = "#!/bin/sh\necho \"$#:$1:$2\" >> \"args-${SLURM_ARRAY_TASK_ID:-job$SLURM_JOB_ID}.out\"\n\
                [ -e \"ran-$SLURM_JOB_ID\" ] || [ -n \"$SLURM_ARRAY_TASK_ID\" ] || \
                { touch \"ran-$SLURM_JOB_ID\"; exec sleep 300; }\n";
    std::fs::write(&script, text).unwrap();
    let path = script.display().to_string();
    // Held across a controller restart: the arguments come back from the store.
    let id = e.sbatch(&["-H", &path, "one", "two words"]);
    e.c.restart();
    let shown = e.ok("scontrol", &format!("show job {id}"));
    assert!(shown.contains(&format!("\n   Command={path}\n")), "the path alone, as Slurm's: {shown}");
    assert_eq!(e.field(id, "%o"), path);
    let line = format!("\n   SubmitLine=sbatch --parsable -D {} -H {path} one two words\n", d.display());
    assert!(shown.contains(&line), "Slurm's SubmitLine, the words joined: {shown}");
    e.ok("scontrol", &format!("release {id}"));
    let out = d.join(format!("args-job{id}.out"));
    let read = || std::fs::read_to_string(&out).unwrap_or_default();
    spur_tests::proc::wait_for("the first run", || (read() == "2:one:two words\n").then_some(()));
    e.ok("scontrol", &format!("requeue {id}"));
    e.wait_field(id, "%T", "COMPLETED");
    assert_eq!(read(), "2:one:two words\n2:one:two words\n", "the requeued run has them too");
    // Each task of an array runs with them.
    let arr = e.sbatch(&["--array=0-1", &path, "-x", "--", "three"]);
    for t in 0..2 {
        let done = |t: u32| std::fs::read_to_string(d.join(format!("args-{t}.out"))).unwrap_or_default();
        spur_tests::proc::wait_for("an array task", || (!done(t).is_empty()).then_some(()));
        assert_eq!(done(t), "3:-x:--\n", "task {t} of {arr}");
    }
    // Arguments past one environment string's 128 KiB reach the script too.
    let (a, b) = ("a".repeat(100_000), "b".repeat(100_000));
    e.sbatch(&["--array=5", &path, &a, &b]);
    let big = d.join("args-5.out");
    spur_tests::proc::wait_for("the big arguments", || {
        std::fs::read_to_string(&big).ok().filter(|t| !t.is_empty())
    });
    assert!(std::fs::read_to_string(&big).unwrap() == format!("2:{a}:{b}\n"), "200 KB of arguments");
    // --wrap takes no script arguments, as Slurm's sbatch says.
    let err = e.fails("sbatch", &["--wrap=true", "extra"]);
    assert!(err.contains("script arguments ('extra')") && err.contains("--wrap"), "{err}");
}
