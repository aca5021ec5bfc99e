//! The multi-call binary dispatches on its name. (Having integration tests
//! here also makes `cargo test --workspace` build `spur` for the e2e suite.)

use std::process::Command;

#[test]
fn unknown_subcommand_is_named() {
    let out = Command::new(env!("CARGO_BIN_EXE_spur")).arg("frob").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown subcommand 'frob'"));
}

#[test]
fn sacctmgr_help_lists_the_flags() {
    let out = Command::new(env!("CARGO_BIN_EXE_spur")).args(["accounts", "--help"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in ["--noheader", "--parsable2", "--immediate"] {
        assert!(text.contains(flag), "{flag}");
    }
}

#[test]
fn install_links_makes_every_personality() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_spur")).arg("install-links").arg(dir.path()).output().unwrap();
    assert!(out.status.success());
    for name in ["sacctmgr", "scontrol", "squeue", "sinfo", "sbatch", "scancel", "sprio", "sacct", "seff"] {
        assert!(dir.path().join(name).exists(), "{name}");
    }
}
