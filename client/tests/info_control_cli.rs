//! `spur info` / `spur control` (sinfo / scontrol) through the real binary:
//! argument errors and an unreachable controller, no controller needed.

use std::process::{Command, Output};

/// Runs `spur ARGS` with the controller pointed at a closed port, so nothing
/// here can reach a real controller by accident.
fn spur(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spur"))
        .args(args)
        .env("SPUR_CONTROLLER_ADDR", "http://127.0.0.1:1")
        .output()
        .unwrap()
}

fn fails_with(out: &Output, text: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(err.contains(text), "want {text:?} in {err:?}");
    assert_eq!(err.lines().count(), 1, "one-line errors: {err:?}");
    assert!(out.stdout.is_empty());
}

#[test]
fn sinfo_names_bad_flags_and_arguments() {
    fails_with(&spur(&["info", "--bogus"]), "sinfo: error: unrecognised flag '--bogus'");
    fails_with(&spur(&["info", "-Nz"]), "'-z'");
    fails_with(&spur(&["info", "-t", "sleepy"]), "'sleepy'");
    fails_with(&spur(&["info", "-o", "%P %Q"]), "'%Q'");
    fails_with(&spur(&["info", "node01"]), "'node01'");
}

#[test]
fn sinfo_reports_an_unreachable_controller() {
    fails_with(&spur(&["info", "--controller", "http://127.0.0.1:1"]), "cannot reach the controller");
    fails_with(&spur(&["info", "-R"]), "sinfo: error: cannot reach the controller at http://127.0.0.1:1");
}

#[test]
fn scontrol_names_bad_commands_and_keys() {
    fails_with(&spur(&["control", "update", "nodename=n1", "colour=3"]), "unknown key 'colour'");
    fails_with(&spur(&["control", "update", "jobid=1", "re=3"]), "'re' is ambiguous");
    fails_with(
        &spur(&["control", "re", "12"]),
        "'re' is ambiguous (it could be reconfigure, release, requeue)",
    );
    // A Slurm key Spur has no use for: one warning, and nothing to send.
    let out = spur(&["control", "update", "nodename=n1", "weight=3"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        err,
        "scontrol: warning: update node: Weight has no effect: a node's configuration comes from \
                     spur.conf (edit it and run scontrol reconfigure)\n"
    );
    fails_with(&spur(&["control", "update", "nodename=n1", "state=drain", "reason=hw", "fault"]), "'fault'");
    fails_with(&spur(&["control", "show", "job", "x12"]), "'x12'");
    fails_with(&spur(&["control", "suspend", "12"]), "suspend is not available");
    fails_with(&spur(&["control", "frob"]), "scontrol: error: unrecognised command 'frob'");
    fails_with(&spur(&["control", "--bogus", "show", "node"]), "'--bogus'");
    fails_with(&spur(&["control"]), "no command");
}

#[test]
fn scontrol_reports_an_unreachable_controller() {
    let out = spur(&["control", "--controller", "http://127.0.0.1:1", "show", "node"]);
    fails_with(&out, "scontrol: error: cannot reach the controller");
    fails_with(
        &spur(&["control", "update", "NodeName=n1", "State=DRAIN", "Reason=hw fault"]),
        "cannot reach",
    );
}

#[test]
fn local_commands_and_help_need_no_controller() {
    let out = spur(&["control", "show", "hostnames", "n[1-3]"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "n1\nn2\nn3\n");
    let out = spur(&["control", "show", "hostlist", "n3,n1,n2"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "n[1-3]\n");
    for (sub, flag) in [("info", "--list-reasons"), ("control", "update NodeName=")] {
        let out = spur(&[sub, "--help"]);
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains(flag), "{sub}: {flag}");
    }
}

#[test]
fn personalities_dispatch_by_name() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["sinfo", "scontrol"] {
        let link = dir.path().join(name);
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_spur"), &link).unwrap();
        let out = Command::new(&link).arg("--bogus").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with(&format!("{name}: error: unrecognised flag '--bogus'")), "{err}");
    }
}
