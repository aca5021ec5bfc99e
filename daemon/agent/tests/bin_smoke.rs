//! spurd starts and explains itself. (Having integration tests here also
//! makes `cargo test --workspace` build `spurd` for the e2e suite.)

use std::process::Command;

fn spurd(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_spurd")).args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn spurd_help_names_its_flags() {
    let (code, out, _) = spurd(&["--help"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("--controller") && out.contains("--nodes") && out.contains("--state-dir"), "{out}");
}

#[test]
fn bad_or_missing_nodes_are_one_clear_line_naming_the_flag() {
    let (code, _, err) = spurd(&["--nodes", "n[1-", "--controller", "http://127.0.0.1:1"]);
    assert_ne!(code, Some(0));
    assert_eq!(err.trim(), "spurd: error: --nodes: 'n[1-' has an unclosed '['");
    let (code, _, err) = spurd(&[]);
    assert_ne!(code, Some(0));
    assert!(err.contains("--nodes"), "{err}");
}
