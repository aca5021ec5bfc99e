//! sbatch, squeue, scancel and scontrol's job commands through the real
//! binary: argument errors are one line on stderr with exit 1 and nothing on
//! stdout, and everything that gets past parsing reports the unreachable
//! controller (a closed port, so no test can reach a real one by accident).

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn spur(args: &[&str]) -> Output {
    spur_stdin(args, None)
}

fn spur_stdin(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spur"))
        .args(args)
        .env("SPUR_CONTROLLER_ADDR", "http://127.0.0.1:1")
        .env_remove("SQUEUE_FORMAT")
        .env_remove("SQUEUE_FORMAT2")
        .env_remove("SQUEUE_SORT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        pipe.write_all(text.as_bytes()).unwrap();
    }
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn fails_with(out: &Output, text: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(err.contains(text), "want {text:?} in {err:?}");
    assert_eq!(err.lines().count(), 1, "one-line errors: {err:?}");
    assert!(out.stdout.is_empty());
}

#[test]
fn sbatch_names_bad_options_and_scripts() {
    fails_with(&spur(&["submit", "--bogus", "x.sh"]), "sbatch: error: unrecognised option '--bogus'");
    fails_with(&spur(&["submit", "-N", "two", "--wrap=true"]), "--nodes: 'two'");
    fails_with(&spur(&["submit", "-t", "soon", "--wrap=true"]), "'soon'");
    fails_with(&spur(&["submit", "--mem=1Z", "--wrap=true"]), "--mem: '1Z'");
    fails_with(&spur(&["submit", "/no/such/script.sh"]), "cannot read script '/no/such/script.sh'");
    fails_with(&spur_stdin(&["submit"], Some("echo hi\n")), "#!");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("job.sh");
    std::fs::write(&script, "#!/bin/sh\n#SBATCH --ntasks=none\nhostname\n").unwrap();
    fails_with(&spur(&["submit", script.to_str().unwrap()]), "line 2");
}

#[test]
fn sbatch_reaches_for_the_controller_once_the_job_is_valid() {
    fails_with(
        &spur(&["submit", "-J", "x", "--wrap", "hostname"]),
        "sbatch: error: cannot reach the controller",
    );
    fails_with(&spur_stdin(&["submit"], Some("#!/bin/sh\ntrue\n")), "cannot reach the controller");
}

#[test]
fn squeue_names_bad_flags_and_fields() {
    fails_with(&spur(&["queue", "--bogus"]), "squeue: error: unrecognised flag '--bogus'");
    fails_with(&spur(&["queue", "-o", "%i %!"]), "'%!'");
    fails_with(&spur(&["queue", "-O", "JobID,Nope"]), "'Nope'");
    fails_with(&spur(&["queue", "-t", "sleeping"]), "'sleeping'");
    fails_with(&spur(&["queue", "-S", "!"]), "'!'");
    fails_with(&spur(&["queue", "-j", "abc"]), "'abc'");
    fails_with(&spur(&["queue", "-u", "alice"]), "squeue: error: cannot reach the controller");
}

#[test]
fn scancel_names_bad_arguments() {
    fails_with(&spur(&["cancel"]), "scancel: error: No job identification provided");
    fails_with(&spur(&["cancel", "12x"]), "'12x'");
    fails_with(&spur(&["cancel", "-s", "NOPE", "5"]), "'NOPE'");
    fails_with(&spur(&["cancel", "-t", "completed", "-u", "bob"]), "'completed'");
    fails_with(&spur(&["cancel", "5"]), "scancel: error: cannot reach the controller");
}

#[test]
fn scontrol_job_commands_check_before_connecting() {
    fails_with(&spur(&["control", "show", "job", "x"]), "'x'");
    fails_with(&spur(&["control", "update", "JobId=5", "TimeLimit=later"]), "'later'");
    fails_with(&spur(&["control", "update", "job", "5", "Colour=red"]), "unknown key 'Colour'");
    fails_with(&spur(&["control", "update", "job", "5", "Dependency=afterok:x"]), "Dependency: ");
    fails_with(&spur(&["control", "update", "job", "5", "BeginTime=later"]), "BeginTime: ");
    fails_with(&spur(&["control", "hold"]), "hold: needs a job id");
    fails_with(&spur(&["control", "requeue", "12"]), "scontrol: error: cannot reach the controller");
    fails_with(&spur(&["control", "show", "job"]), "cannot reach the controller");
}

#[test]
fn help_needs_no_controller() {
    for (sub, text) in [("submit", "--wrap"), ("queue", "--Format"), ("cancel", "--signal")] {
        let out = spur(&[sub, "--help"]);
        assert!(out.status.success(), "{sub}");
        assert!(String::from_utf8_lossy(&out.stdout).contains(text), "{sub}: {text}");
    }
}

#[test]
fn personalities_dispatch_by_name() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["sbatch", "squeue", "scancel"] {
        let link = dir.path().join(name);
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_spur"), &link).unwrap();
        let out = Command::new(&link).arg("--bogus").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with(&format!("{name}: error: unrecognised")), "{err}");
        assert!(err.contains("'--bogus'"), "{err}");
    }
}
