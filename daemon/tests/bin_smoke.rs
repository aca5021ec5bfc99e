//! The binaries start and explain themselves. (Having integration tests here
//! also makes `cargo test --workspace` build `spurctld` for the e2e suite.)

use std::process::Command;

#[test]
fn spurctld_help_names_its_flags() {
    let out = Command::new(env!("CARGO_BIN_EXE_spurctld")).arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--config") && text.contains("--listen"), "{text}");
}

#[test]
fn spurctld_missing_config_is_one_clear_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_spurctld"))
        .args(["--config", "/nonexistent/spur.conf"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/spur.conf: cannot read"), "{err}");
}
