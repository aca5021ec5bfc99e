//! sacct, sprio and sshare through the real binary, by subcommand and by
//! argv[0]: argument errors are one line on stderr with exit 1 and nothing on
//! stdout; help needs no controller; anything that parses reports the
//! unreachable controller (a closed port, so no test reaches a real one).

use std::path::Path;
use std::process::{Command, Output};

fn run(exe: &Path, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        .env("SPUR_CONTROLLER_ADDR", "http://127.0.0.1:1")
        .env_remove("SACCT_FORMAT")
        .output()
        .unwrap()
}

fn spur(args: &[&str]) -> Output {
    run(Path::new(env!("CARGO_BIN_EXE_spur")), args)
}

fn fails_with(out: &Output, text: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(err.contains(text), "want {text:?} in {err:?}");
    assert_eq!(err.lines().count(), 1, "one-line errors: {err:?}");
    assert!(out.stdout.is_empty());
}

fn prints(out: &Output, text: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(text), "want {text:?} in {stdout:?}");
}

#[test]
fn sacct_names_bad_arguments() {
    fails_with(&spur(&["acct", "--bogus"]), "sacct: error: unrecognised flag '--bogus'");
    fails_with(&spur(&["acct", "-o", "JobID,Bogus"]), "sacct: error: Invalid field requested: \"Bogus\"");
    fails_with(&spur(&["acct", "-o", "jobid%wide"]), "'jobid%wide'");
    fails_with(&spur(&["acct", "-S", "someday"]), "sacct: error: --starttime: 'someday'");
    fails_with(&spur(&["acct", "-E", "2024-13-01"]), "--endtime");
    fails_with(&spur(&["acct", "-s", "DONE"]), "--state: invalid job state 'DONE'");
    fails_with(&spur(&["acct", "-j", "1.x"]), "--jobs: invalid job id '1.x'");
    fails_with(&spur(&["acct", "extra"]), "unrecognised argument 'extra'");
    fails_with(&spur(&["acct", "-S"]), "'-S' needs a value");
}

#[test]
fn sprio_and_sshare_name_bad_arguments() {
    fails_with(&spur(&["prio", "-o", "%i %Z"]), "sprio: error: format: unknown field '%Z'");
    fails_with(&spur(&["prio", "-x"]), "sprio: error: unrecognised flag '-x'");
    fails_with(&spur(&["prio", "-j", "abc"]), "--jobs: invalid job id 'abc'");
    fails_with(&spur(&["share", "-x"]), "sshare: error: unrecognised flag '-x'");
    fails_with(&spur(&["share", "-o", "Nope"]), "Invalid field requested: \"Nope\"");
    fails_with(&spur(&["share", "-o", "user%"]), "'user%'");
}

#[test]
fn help_needs_no_controller() {
    prints(&spur(&["acct", "--help"]), "--starttime");
    prints(&spur(&["acct", "-e"]), "ExitCode");
    prints(&spur(&["prio", "--help"]), "PRIORITY = BASE x min(FAIRSHARE, 10) x AGE x max(TIER, 1)");
    prints(&spur(&["share", "--help"]), "A user's RawShares is 1");
    prints(&spur(&["share", "--helpformat"]), "EffectvUsage");
    prints(&spur(&["--help"]), "share ...");
}

#[test]
fn valid_commands_reach_for_the_controller() {
    fails_with(
        &spur(&["acct", "-a", "-S", "now-2days", "-o", "jobid,elapsed%-12"]),
        "cannot reach the controller",
    );
    fails_with(&spur(&["prio", "-l"]), "sprio: error: cannot reach the controller");
    fails_with(&spur(&["share", "-a", "-P"]), "sshare: error: cannot reach the controller");
}

#[test]
fn install_links_makes_sshare_and_the_names_answer() {
    let dir = tempfile::tempdir().unwrap();
    let out = spur(&["install-links", dir.path().to_str().unwrap()]);
    assert!(out.status.success());
    for name in ["sacct", "sprio", "sshare"] {
        assert!(dir.path().join(name).exists(), "{name}");
    }
    prints(&run(&dir.path().join("sshare"), &["--help"]), "usage: sshare");
    prints(&run(&dir.path().join("sacct"), &["--help"]), "usage: sacct");
    fails_with(&run(&dir.path().join("sprio"), &["--bogus"]), "sprio: error: unrecognised flag '--bogus'");
}
