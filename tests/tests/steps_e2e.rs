//! srun and job steps with the real binaries: steps inside a batch job
//! (their output in the job's file, `-l` labels, srun's exit code), sacct's
//! `ID.batch` and `ID.N` rows, srun outside an allocation (its job and its
//! step 0, the command's exit code), `scancel ID.STEP` ending one step while
//! the script goes on, and no process left behind.

use spur_tests::cluster::Cluster;
use spur_tests::proc::{client, links_dir, pgrep, run_with, wait_for};
use std::process::Stdio;

fn start() -> Cluster {
    Cluster::two_nodes(|t| t, &[])
}

/// The links first on PATH, so a script's `srun` is ours.
fn path() -> String {
    format!("{}:{}", links_dir().display(), std::env::var("PATH").unwrap_or_default())
}

/// Submits `script` (written to `name` in the cluster's directory) with the test's PATH.
fn submit(e: &Cluster, name: &str, script: &str, args: &[&str]) -> u64 {
    let file = e.dir.path().join(name);
    std::fs::write(&file, script).unwrap();
    let dir = e.dir.path().display().to_string();
    let mut all = vec!["--parsable", "-D", &dir];
    all.extend(args);
    let file = file.display().to_string();
    all.push(&file);
    let out = run_with("sbatch", &e.c.url, &all, &[("PATH", &path())]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

fn output(e: &Cluster, name: &str) -> String {
    std::fs::read_to_string(e.dir.path().join(name)).unwrap_or_default()
}

fn sacct(e: &Cluster, refs: &str, fields: &str) -> String {
    e.ok("sacct", &format!("-n -P -j {refs} -o {fields}"))
}

#[test]
fn steps_in_a_batch_job_print_label_and_exit_with_their_tasks_code() {
    let e = start();
    let script = "#!/bin/sh\n#SBATCH -N 2 -n 4 -o steps.out\n\
        srun -n 4 sh -c 'echo task=$SLURM_PROCID of $SLURM_NTASKS step=$SLURM_STEP_ID'\n\
        srun -l -n 2 sh -c 'echo hi from $SLURMD_NODENAME'\n\
        srun -n 1 sh -c 'exit 3'\n\
        echo code=$?\n";
    let id = submit(&e, "steps.sh", script, &[]);
    e.wait_field(id, "%T", "COMPLETED");
    let out = output(&e, "steps.out");
    let mut tasks: Vec<&str> = out.lines().filter(|l| l.starts_with("task=")).collect();
    tasks.sort();
    assert_eq!(
        tasks,
        ["task=0 of 4 step=0", "task=1 of 4 step=0", "task=2 of 4 step=0", "task=3 of 4 step=0"],
        "{out}"
    );
    let mut labelled: Vec<&str> = out.lines().filter(|l| l.contains(": hi from")).collect();
    labelled.sort();
    assert_eq!(labelled, ["0: hi from node01", "1: hi from node02"], "{out}");
    assert!(out.lines().any(|l| l == "code=3"), "srun's code reaches the script: {out}");
    assert!(out.contains("srun: error: node01: task 0: Exited with exit code 3"), "{out}");
    let rows = sacct(&e, &id.to_string(), "JobID,State,ExitCode,NTasks");
    let want = format!(
        "{id}|COMPLETED|0:0|1\n{id}.batch|COMPLETED|0:0|1\n{id}.0|COMPLETED|0:0|4\n\
         {id}.1|COMPLETED|0:0|2\n{id}.2|FAILED|3:0|1\n"
    );
    assert_eq!(rows, want);
    assert_eq!(sacct(&e, &format!("{id}.1"), "JobID,NodeList"), format!("{id}.1|node[01-02]\n"));
    assert_eq!(sacct(&e, &format!("{id}.batch"), "JobID"), format!("{id}.batch\n"));
    assert_eq!(e.ok("sacct", &format!("-n -P -X -j {id} -o JobID")), format!("{id}\n"));
}

#[test]
fn srun_outside_an_allocation_runs_its_command_as_step_0() {
    let e = start();
    let url = &e.c.url;
    let dir = e.dir.path().display().to_string();
    let run = |args: &[&str]| {
        let mut all = vec!["-D", &dir];
        all.extend(args);
        run_with("srun", url, &all, &[("PATH", &path())])
    };
    let out = run(&["-N2", "-l", "sh", "-c", "echo $SLURMD_NODENAME"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect();
    lines.sort();
    assert_eq!(lines, ["0: node01", "1: node02"]);
    let out = run(&["sh", "-c", "exit 7"]);
    assert_eq!(out.status.code(), Some(7), "{}", String::from_utf8_lossy(&out.stderr));
    // srun returns when its step ends; the allocation's end is written just after.
    let jobs = wait_for("both allocations ended", || {
        let jobs = e.ok("sacct", "-n -P -a -o JobID,State,ExitCode");
        (jobs.lines().count() == 4 && !jobs.contains("RUNNING")).then_some(jobs)
    });
    let ids: Vec<&str> = jobs.lines().collect();
    assert_eq!(ids.len(), 4, "{jobs}");
    let first = ids[0].split('|').next().unwrap().to_string();
    let second = ids[2].split('|').next().unwrap().to_string();
    assert_eq!(ids[0], format!("{first}|COMPLETED|0:0"));
    assert_eq!(ids[1], format!("{first}.0|COMPLETED|0:0"), "no .batch for srun's allocation");
    assert_eq!(ids[2], format!("{second}|FAILED|7:0"));
    assert_eq!(ids[3], format!("{second}.0|FAILED|7:0"));
    // A command that is not there: the node says so, srun exits 2 (ENOENT), as Slurm's.
    let out = run(&["/nonexistent/prog"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("execve(): /nonexistent/prog"));
}

#[test]
fn scancel_of_a_step_ends_it_and_the_script_goes_on_leaving_nothing_behind() {
    let e = start();
    // A sleep no other test runs, so pgrep finds ours alone.
    let (first, second) = (marker(1), marker(2));
    let script =
        format!("#!/bin/sh\n#SBATCH -o cancel.out\nsrun sleep {first}\necho after=$?\nsrun sleep {second}\n");
    let id = submit(&e, "cancel.sh", &script, &[]);
    let step0 = format!("{id}.0");
    wait_for("step 0 running", || (sacct(&e, &step0, "State").trim() == "RUNNING").then_some(()));
    wait_for("its task running", || pgrep(&format!("^[^ ]*sleep {first}$")).then_some(()));
    e.ok("scancel", &step0);
    wait_for("step 0 cancelled", || (sacct(&e, &step0, "State").trim() == "CANCELLED").then_some(()));
    wait_for("the script going on", || output(&e, "cancel.out").contains("after=143").then_some(()));
    assert!(!pgrep(&format!("^[^ ]*sleep {first}$")), "the step's task is gone");
    let step1 = format!("{id}.1");
    wait_for("step 1 running", || (sacct(&e, &step1, "State").trim() == "RUNNING").then_some(()));
    assert_eq!(e.field(id, "%T"), "RUNNING", "the job goes on");
    let running = e.ok("squeue", "-s -h");
    assert!(running.contains(&step1) && running.contains("sleep"), "{running}");
    let shown = e.ok("scontrol", &format!("show step {step1}"));
    assert!(
        shown.starts_with(&format!("StepId={step1} UserId=")) && shown.contains("State=RUNNING"),
        "{shown}"
    );
    // Cancelling the job ends its running step, and leaves no process.
    e.ok("scancel", &id.to_string());
    wait_for("step 1 cancelled", || (sacct(&e, &step1, "State").trim() == "CANCELLED").then_some(()));
    wait_for("no task left", || (!pgrep(&format!("^[^ ]*sleep {second}$"))).then_some(()));
}

/// One agent hosts both nodes here, as `spurd --nodes 'node[01-02]'` does: a
/// step's tasks on each of them are signalled, not only the last node's.
#[test]
fn scancel_of_a_step_on_two_nodes_of_one_agent_ends_both_nodes_tasks() {
    let e = start();
    let sleep = marker(3);
    let script =
        format!("#!/bin/sh\n#SBATCH -N 2 -n 2 -o two.out\nsrun -N 2 -n 2 sleep {sleep}\necho after=$?\n");
    let id = submit(&e, "two.sh", &script, &[]);
    let step0 = format!("{id}.0");
    wait_for("step 0 running", || (sacct(&e, &step0, "State").trim() == "RUNNING").then_some(()));
    wait_for("both tasks running", || {
        let out =
            std::process::Command::new("pgrep").args(["-c", "-f", &format!("^[^ ]*sleep {sleep}$")]).output();
        out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "2").then_some(())
    });
    e.ok("scancel", &step0);
    wait_for("step 0 cancelled", || (sacct(&e, &step0, "State").trim() == "CANCELLED").then_some(()));
    wait_for("no task left", || (!pgrep(&format!("^[^ ]*sleep {sleep}$"))).then_some(()));
    e.wait_field(id, "%T", "COMPLETED");
}

/// A number of seconds to sleep that names this test process's own sleeps.
fn marker(n: u32) -> String {
    format!("{}{n}", 100_000 + std::process::id() % 100_000)
}

#[test]
fn a_second_ctrl_c_cancels_the_step() {
    use std::io::BufRead;
    let e = start();
    let marker = format!("spur-ctrlc-marker-{}", std::process::id());
    let dir = e.dir.path().display().to_string();
    let cmd = format!("trap 'echo got-int' INT; while true; do sleep 1; done # {marker}");
    let mut c = client("srun", &e.c.url, &["-D", &dir, "sh", "-c", &cmd], &[("PATH", &path())]);
    let mut child = c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // The task's own command line (srun's holds the marker too).
    let task = format!("^[^ ]*sh -c trap.*{marker}");
    wait_for("the task running", || pgrep(&task).then_some(()));
    let pid = child.id().to_string();
    let int = || assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    int();
    let mut said = vec![];
    wait_for("srun to take the first Ctrl-C", || {
        said.extend(rx.try_iter());
        said.iter().any(|l| l.contains("interrupt (one more within 1 sec to abort)")).then_some(())
    });
    int();
    let out = wait_for("srun to end", || child.try_wait().unwrap());
    assert_ne!(out.code(), Some(0));
    wait_for("no task left", || (!pgrep(&task)).then_some(()));
    let rows = e.ok("sacct", "-n -P -a -o JobID,State");
    assert!(rows.lines().any(|l| l.ends_with(".0|CANCELLED")), "{rows}");
}

#[test]
fn the_signal_option_warns_the_steps_or_the_batch_shell_before_the_time_limit() {
    let e = start();
    // A one-minute limit with the warning 58 s before it: due two seconds in.
    let steps = "#!/bin/bash\n#SBATCH -t 1 --signal=USR2@58 -o warn-steps.out\n\
        trap 'echo shell-got-usr2' USR2\n\
        srun bash -c \"trap 'echo step-got-usr2; exit 0' USR2; while :; do sleep 0.1; done\"\n\
        echo after=$?\n";
    let a = submit(&e, "warn-steps.sh", steps, &[]);
    let shell = "#!/bin/bash\n#SBATCH -t 1 --signal=B:USR1@58 -o warn-shell.out\n\
        trap 'echo shell-got-usr1; exit 0' USR1\n\
        srun bash -c \"trap 'echo step-got-usr1' USR1; sleep 613\" &\n\
        while :; do sleep 0.1; done\n";
    let b = submit(&e, "warn-shell.sh", shell, &[]);
    e.wait_field(a, "%T", "COMPLETED");
    let out = output(&e, "warn-steps.out");
    // The step's whole group gets it, as in Slurm; bash may report its sleep's
    // death ("User defined signal 2") between the two lines.
    let (got, after) = (out.find("step-got-usr2\n"), out.find("after=0"));
    assert!(matches!((got, after), (Some(g), Some(a)) if g < a), "{out}");
    assert!(!out.contains("shell-got-usr2"), "the steps, not the batch shell: {out}");
    wait_for("the shell's trap", || output(&e, "warn-shell.out").contains("shell-got-usr1").then_some(()));
    assert!(!output(&e, "warn-shell.out").contains("step-got-usr1"), "B: the batch shell alone");
    // The trap ends the script, and the job's end ends its step.
    e.wait_field(b, "%T", "COMPLETED");
    wait_for("no step left", || (!pgrep("^[^ ]*sleep 613$")).then_some(()));
}
