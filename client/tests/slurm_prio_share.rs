//! Generated from Slurm's man pages: every option of sshare.1 and sprio.1,
//! sshare's output fields and sprio's `-o` letters (the lists in
//! `tests/slurm/{sshare,sprio}.*`, extracted by `tests/slurm/extract_fields.py`)
//! is accepted: implemented, or with one warning naming why it has no effect.

use spur_client::cli::{sprio, sshare};
use spur_proto::v1 as pb;

fn rows(file: &str) -> Vec<(String, String)> {
    let path = format!("{}/tests/slurm/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    assert!(lines.next().unwrap_or_default().starts_with("# from SchedMD/slurm slurm-25-05-8-1 "), "{path}");
    let out: Vec<(String, String)> = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (a, b) = l.split_once('\t').unwrap_or((l, ""));
            (a.to_string(), b.to_string())
        })
        .collect();
    assert!(out.len() >= 10, "{path}: only {} rows", out.len());
    out
}

/// A plausible value for an option that takes one.
fn value(long: &str, cmd: &str) -> &'static str {
    match (long, cmd) {
        ("format", "sprio") => "%i %Y",
        ("format", _) => "Account,FairShare",
        ("jobs", _) => "12",
        ("clusters", _) => "all",
        ("sort", _) => "i",
        _ => "abc",
    }
}

/// Parses `--long` (with a value when it takes one), then `-s` alike; each
/// must parse and give at most one warning, which names the flag.
fn accepts<A>(cmd: &str, parse: fn(&[String]) -> Result<A, String>, warnings: fn(&A) -> Vec<String>) {
    for (long, short) in rows(&format!("{cmd}.options")) {
        let spellings = [Some(format!("--{long}")), (!short.is_empty()).then(|| format!("-{short}"))];
        for flag in spellings.into_iter().flatten() {
            let a = match parse(std::slice::from_ref(&flag)) {
                Err(e) if e.contains("needs a value") || e.contains("requires an argument") => {
                    parse(&[flag.clone(), value(&long, cmd).to_string()])
                }
                other => other,
            }
            .unwrap_or_else(|e| panic!("{cmd} {flag}: {e}"));
            let w = warnings(&a);
            assert!(w.len() <= 1, "{cmd} {flag}: {w:?}");
            if let Some(one) = w.first() {
                assert!(one.starts_with(&format!("--{long} has no effect: ")), "{cmd} {flag}: {one}");
            }
        }
    }
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn every_sshare_option_is_accepted() {
    accepts("sshare", sshare::parse, |a| a.warnings.clone());
}

#[test]
fn every_sprio_option_is_accepted() {
    accepts("sprio", sprio::parse, |a| a.warnings.clone());
}

#[test]
fn every_sshare_field_is_known() {
    for (name, _) in rows("sshare.fields") {
        let a = sshare::parse(&argv(&["-o", &name])).unwrap_or_else(|e| panic!("-o {name}: {e}"));
        let cols = sshare::columns(&a).unwrap();
        assert!(cols[0].0.eq_ignore_ascii_case(&name), "-o {name} picked {}", cols[0].0);
        let row = pb::ShareRow { account: "ml".into(), user: "alice".into(), ..Default::default() };
        let resp = pb::ListSharesResponse { rows: vec![row], ..Default::default() };
        sshare::report(&a, &resp, "alice").unwrap();
    }
}

#[test]
fn every_sprio_letter_renders() {
    let job = pb::JobPriority {
        id: 7,
        user: "alice".into(),
        account: "ml".into(),
        partition: "gpu".into(),
        qos: "normal".into(),
        state: spur_proto::states::state_named("PENDING"),
        priority: 2000.0,
        ..Default::default()
    };
    for (letter, _) in rows("sprio.letters") {
        let a = sprio::parse(&argv(&["-h", "-o", &format!("%{letter}|")]))
            .unwrap_or_else(|e| panic!("-o %{letter}: {e}"));
        let out = sprio::report(&a, std::slice::from_ref(&job)).unwrap();
        assert!(out.len() > 2, "-o %{letter}: {out:?}");
    }
    let a = sprio::parse(&argv(&["-h", "-o", "%N %o %c %y %b"])).unwrap();
    assert_eq!(sprio::report(&a, &[job]).unwrap(), "alice ml N/A 0 0\n");
}

#[test]
fn yaml_is_the_json_document() {
    let row =
        pb::ShareRow { account: "ml".into(), user: "alice".into(), fair_share: 2.0, ..Default::default() };
    let resp = pb::ListSharesResponse { rows: vec![row], ..Default::default() };
    let json = sshare::report(&sshare::parse(&argv(&["--json", "-a"])).unwrap(), &resp, "x").unwrap();
    let yaml = sshare::report(&sshare::parse(&argv(&["--yaml", "-a"])).unwrap(), &resp, "x").unwrap();
    let from_json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let from_yaml: serde_json::Value = serde_yaml_ng::from_str(&yaml).unwrap();
    assert_eq!(from_json, from_yaml);
    assert!(yaml.contains("shares:"), "{yaml}");
}
