//! Generated from Slurm's man pages: every key of scontrol.1's `update
//! job|node|partition` and of sacctmgr.1's account, user, QOS and association
//! specifications, and sacctmgr's commands and entities (the lists in
//! `tests/slurm/*.keys`, `*.commands`, `*.entities`, extracted by
//! `tests/slurm/extract_fields.py`), is known: implemented, or accepted with
//! exactly one warning naming it. None is "unknown".

use spur_client::cli::{args, scontrol};
use spur_client::vocab::keys::{self, Entity, Resolved};

/// `(name, entity)` rows of one list, without its `# from ...` line.
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
    assert!(out.len() > 10, "{path}: only {} rows", out.len());
    out
}

fn words(s: &[&str]) -> Vec<String> {
    s.iter().map(|w| w.to_string()).collect()
}

/// A value each implemented key takes; the rest are dropped whatever they are.
fn value(key: &str) -> &'static str {
    match key.to_ascii_lowercase().as_str() {
        "timelimit" => "5",
        "priority" | "nice" | "arraytaskthrottle" | "preemptexempttime" | "usagefactor" | "maxjobs" => "3",
        "dependency" => "afterok:1",
        "eligibletime" | "starttime" | "begintime" => "2030-01-01T00:00:00",
        "mailtype" => "END",
        "mailuser" => "a@example.com",
        "state" => "drain",
        "clearpreemptexempttime" => "yes",
        "flags" => "DenyOnLimit",
        "preemptmode" => "off",
        "grptres" => "cpu=4",
        "grpwall" => "10",
        "adminlevel" => "None",
        "parent" => "root",
        _ => "abc",
    }
}

#[test]
fn every_scontrol_update_key_is_implemented_or_warned() {
    for (key, entity) in rows("scontrol.keys") {
        if matches!(key.as_str(), "JobId" | "NodeName" | "PartitionName") {
            continue; // each is the base of its entity's line below
        }
        let base: &[&str] = match entity.as_str() {
            "job" => &["update", "JobId=7"],
            "node" if key != "State" => &["update", "NodeName=n1", "State=drain"],
            "node" => &["update", "NodeName=n1"],
            "partition" => &["update", "PartitionName=p"],
            other => panic!("entity {other}"),
        };
        let mut argv = words(base);
        if !base.iter().any(|w| w.starts_with(&format!("{key}="))) {
            argv.push(format!("{key}={}", value(&key)));
        }
        let (flags, cmd) =
            scontrol::parse(&argv).unwrap_or_else(|e| panic!("update {entity} {key}: refused: {e}"));
        match flags.warnings.as_slice() {
            [] => assert_ne!(cmd, scontrol::Command::Nothing, "{key}"),
            [one] => assert!(one.contains(" has no effect: "), "{key}: {one}"),
            more => panic!("{key}: {} warnings: {more:?}", more.len()),
        }
    }
}

#[test]
fn every_sacctmgr_key_is_implemented_or_warned() {
    for (key, entity) in rows("sacctmgr.keys") {
        let entities: &[(&str, Entity)] = match entity.as_str() {
            "association" => &[("account", Entity::Account), ("user", Entity::User)],
            "account" => &[("account", Entity::Account)],
            "user" => &[("user", Entity::User)],
            "qos" => &[("qos", Entity::Qos)],
            other => panic!("entity {other}"),
        };
        for (word, e) in entities {
            // WithAssoc, WithCoord, WithDeleted: show's words, not pairs.
            if key.starts_with("With") {
                let c = args::parse(&words(&["show", word, &key])).unwrap();
                assert_eq!(c.warnings.len(), 1, "show {word} {key}");
                continue;
            }
            let pair = format!("{key}={}", value(&key));
            let c = args::parse(&words(&["add", word, "x", &pair]))
                .unwrap_or_else(|e| panic!("add {word} {pair}: refused: {e}"));
            match keys::resolve(*e, &key).unwrap_or_else(|err| panic!("{word} {key}: {err}")) {
                Some(Resolved::Key(_)) => {
                    assert!(c.warnings.is_empty() && c.set.iter().any(|(k, _)| *k == key), "{word} {key}");
                    keys::parse(*e, &key, value(&key)).unwrap_or_else(|err| panic!("{word} {key}: {err}"));
                }
                Some(Resolved::NoEffect(..)) => assert_eq!(c.warnings.len(), 1, "{word} {key}"),
                None => panic!("{word} key {key} is unknown"),
            }
        }
    }
}

#[test]
fn every_sacctmgr_command_and_entity_is_served_or_named() {
    for (cmd, _) in rows("sacctmgr.commands") {
        match args::parse(&words(&[&cmd, "qos"])) {
            Ok(_) => {}
            Err(e) => assert!(
                e.0.contains("is not available in this Spur release") || e.0.contains("needs 'set"),
                "{cmd}: {e}"
            ),
        }
    }
    for (entity, _) in rows("sacctmgr.entities") {
        match args::parse(&words(&["show", &entity])) {
            Ok(_) => {}
            Err(e) => assert!(e.0.contains("is not available in this Spur release"), "{entity}: {e}"),
        }
    }
}

#[test]
fn sacctmgr_and_scontrol_take_unambiguous_prefixes() {
    let c = args::parse(&words(&["sh", "QO"])).unwrap();
    assert_eq!((c.verb, c.target), (args::Verb::Show, args::Target::Qos));
    assert!(args::parse(&words(&["show", "a"])).unwrap_err().0.contains("account, association"));
    let c = args::parse(&words(&["add", "acc", "x", "cluster=c1"])).unwrap();
    assert_eq!(c.warnings, ["account key 'cluster' has no effect in Spur: Spur serves one cluster"]);
    let (_, cmd) = scontrol::parse(&words(&["upd", "JobId=12", "timel=5"])).unwrap();
    assert_eq!(
        cmd,
        scontrol::Command::UpdateJobs { ids: vec![12], set: vec![("TimeLimit".into(), "5".into())] }
    );
    let (_, cmd) = scontrol::parse(&words(&["update", "job=12", "TimeLimit=5"])).unwrap();
    assert!(matches!(cmd, scontrol::Command::UpdateJobs { .. }));
    let (_, cmd) = scontrol::parse(&words(&["show", "part"])).unwrap();
    assert_eq!(cmd, scontrol::Command::ShowPartitions(None));
}

#[test]
fn every_scontrol_command_is_served_or_named() {
    for (cmd, _) in rows("scontrol.commands") {
        match scontrol::parse(&words(&[&cmd])) {
            Ok(_) => {}
            Err(e) => assert!(!e.contains("unrecognised command"), "{cmd}: {e}"),
        }
    }
}
