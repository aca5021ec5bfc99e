//! Generated from Slurm's man pages: every `-O`/`--Format` name and `-o`
//! letter of squeue.1 and sinfo.1, and every `--format` field of sacct.1
//! (the lists in `tests/slurm/*.fields` and `*.letters`, extracted by
//! `tests/slurm/extract_fields.py`), is known to the command and renders for
//! a sample record without panicking: a value, or Slurm's unset value.

use chrono::{Local, TimeZone};
use spur_client::cli::{sacct, sinfo, squeue};
use spur_proto::v1 as pb;

/// 2024-03-01T12:00:00Z.
const NOW: i64 = 1_709_294_400_000;

/// The names of one list, without its `# from ...` line.
fn names(file: &str) -> Vec<String> {
    let path = format!("{}/tests/slurm/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    assert!(first.starts_with("# from SchedMD/slurm slurm-25-05-8-1 doc/man/man1/"), "{path}: {first}");
    let out: Vec<String> =
        lines.filter(|l| !l.trim().is_empty()).map(|l| l.split('\t').next().unwrap().to_string()).collect();
    assert!(out.len() > 20, "{path}: only {} names", out.len());
    out
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

pub fn sample_job() -> pb::Job {
    pb::Job {
        id: 42,
        name: "train".into(),
        user: "alice".into(),
        account: "ml".into(),
        qos: "normal".into(),
        partition: "gpu".into(),
        state: spur_proto::states::state_named("RUNNING"),
        num_nodes: 2,
        num_cpus: 16,
        nodes: vec!["gpu1".into(), "gpu2".into()],
        submit_ms: NOW - 600_000,
        start_ms: NOW - 300_000,
        time_limit_minutes: Some(60),
        uid: Some(1001),
        gid: Some(1001),
        group: "alice".into(),
        spec: Some(Box::new(pb::JobSpec {
            ntasks: 4,
            cpus_per_task: 4,
            mem_mb: 2048,
            gpus_per_node: 1,
            stdout_path: "/home/alice/%j.out".into(),
            workdir: "/home/alice".into(),
            dependency: "afterok:41".into(),
            constraint: "a100".into(),
            wckey: "proj".into(),
            comment: "hi".into(),
            ..Default::default()
        })),
        ..Default::default()
    }
}

/// The cells of the one data row of a `-h` listing.
fn row(out: &str) -> &str {
    out.lines().next().unwrap_or_default()
}

#[test]
fn every_squeue_format_name_renders() {
    let jobs = [sample_job()];
    for name in names("squeue.fields") {
        let a = squeue::parse(&argv(&["-h", "-O", &format!("{name}:0|")]))
            .unwrap_or_else(|e| panic!("-O {name}: {e}"));
        let out = squeue::report(&a, &jobs, NOW).unwrap();
        assert!(!row(&out).is_empty(), "-O {name} printed no row: {out:?}");
        let head = squeue::report(&squeue::parse(&argv(&["-O", &name])).unwrap(), &[], NOW).unwrap();
        assert!(!head.trim().is_empty(), "-O {name} has no header");
    }
}

#[test]
fn every_squeue_format_letter_renders() {
    let jobs = [sample_job()];
    for letter in names("squeue.letters") {
        let a = squeue::parse(&argv(&["-h", "-o", &format!("%{letter}|")]))
            .unwrap_or_else(|e| panic!("-o %{letter}: {e}"));
        let out = squeue::report(&a, &jobs, NOW).unwrap();
        assert!(!row(&out).is_empty(), "-o %{letter} printed nothing");
    }
}

#[test]
fn squeue_fields_show_what_spur_keeps_and_slurm_s_unset_values() {
    let a = squeue::parse(&argv(&[
        "-h",
        "-O",
        "Dependency:0|,Feature:0|,WCKey:0|,STDOUT:0|,NumTasks:0|,cpus-per-task:0|,BurstBuffer:0|,HetJobID:0|,DerivedEC:0",
    ]))
    .unwrap();
    let out = squeue::report(&a, &[sample_job()], NOW).unwrap();
    assert_eq!(out, "afterok:41|a100|proj|/home/alice/42.out|4|4|(null)|N/A|0:0\n");
    let a = squeue::parse(&argv(&["-h", "-o", "%A|%E|%f|%y|%z|%B"])).unwrap();
    assert_eq!(squeue::report(&a, &[sample_job()], NOW).unwrap(), "42|afterok:41|a100|0|*:*:*|gpu1\n");
}

/// The sample job, ended, with what its agent measured.
fn ended_job() -> pb::Job {
    let mut j = sample_job();
    j.state = spur_proto::states::state_named("COMPLETED");
    j.end_ms = NOW - 60_000;
    j.usage = Some(pb::JobUsage { user_cpu_us: 1_500_000, sys_cpu_us: 500_000, max_rss_kb: 2048 });
    j
}

#[test]
fn every_sacct_format_field_renders() {
    let now = Local.timestamp_millis_opt(NOW).unwrap();
    let jobs = [ended_job()];
    for name in names("sacct.fields") {
        let a = sacct::parse(&argv(&["-n", "-P", "-X", "-j", "42", "-o", &name]), now)
            .unwrap_or_else(|e| panic!("-o {name}: {e}"));
        // A prefix picks the first match: each man page name must pick itself.
        let cols = sacct::columns(&a).unwrap();
        assert!(cols[0].0.0.eq_ignore_ascii_case(&name), "-o {name} picked {}", cols[0].0.0);
        let out = sacct::report(&a, &jobs, now).unwrap();
        assert_eq!(out.lines().count(), 1, "-o {name}: {out:?}");
    }
}

#[test]
fn sacct_fields_show_what_spur_keeps() {
    let now = Local.timestamp_millis_opt(NOW).unwrap();
    let fields = "ReqTRES,AllocTRES,Constraints,WCKey,StdOut,DerivedExitCode,TRESUsageInTot,MaxRSSNode,Restarts,\
                  ConsumedEnergy,Reservation,ReqCPUFreq";
    let a = sacct::parse(&argv(&["-n", "-P", "-X", "-j", "42", "-o", fields]), now).unwrap();
    assert_eq!(
        sacct::report(&a, &[ended_job()], now).unwrap(),
        "cpu=16,mem=4096M,node=2,gres/gpu=2|cpu=16,mem=4096M,node=2,gres/gpu=2|a100|proj|/home/alice/42.out|0:0|\
         cpu=00:00:02,mem=2M|gpu1|0|0||Unknown\n"
    );
}

fn sample_nodes() -> (Vec<pb::Node>, Vec<pb::Partition>) {
    let node = |name: &str, base: &str, drain: bool| pb::Node {
        name: name.into(),
        base_state: base.into(),
        drain,
        cpus: 8,
        alloc_cpus: if base == "MIXED" { 4 } else { 0 },
        memory_mb: 4000,
        alloc_memory_mb: 1000,
        weight: 1,
        gres: "gpu:2".into(),
        features: vec!["a100".into()],
        agent_host: "host1".into(),
        partitions: vec!["batch".into()],
        reason: if drain { "hw".into() } else { String::new() },
        ..Default::default()
    };
    let part = pb::Partition {
        name: "batch".into(),
        is_default: true,
        state: "UP".into(),
        max_time_minutes: Some(60),
        ..Default::default()
    };
    (vec![node("n1", "IDLE", false), node("n2", "MIXED", false), node("n3", "IDLE", true)], vec![part])
}

#[test]
fn every_sinfo_format_name_and_letter_renders() {
    let (nodes, parts) = sample_nodes();
    for name in names("sinfo.fields") {
        let a = sinfo::parse(&argv(&["-h", "-O", &format!("{name}:0|")]))
            .unwrap_or_else(|e| panic!("-O {name}: {e}"));
        let out = sinfo::report(&a, &nodes, &parts).unwrap();
        assert!(!out.is_empty(), "-O {name} printed nothing");
    }
    for letter in names("sinfo.letters") {
        let a = sinfo::parse(&argv(&["-h", "-o", &format!("%{letter}|")]))
            .unwrap_or_else(|e| panic!("-o %{letter}: {e}"));
        let out = sinfo::report(&a, &nodes, &parts).unwrap();
        assert!(!out.is_empty(), "-o %{letter} printed nothing");
    }
}

#[test]
fn sinfo_fields_slurm_has_and_spur_did_not() {
    let (nodes, parts) = sample_nodes();
    let run = |w: &[&str]| sinfo::report(&sinfo::parse(&argv(w)).unwrap(), &nodes, &parts).unwrap();
    assert_eq!(run(&["-h", "-o", "%A %z %Y %O %s %g"]), "1/1 1:8:1 8 N/A 1-infinite all\n");
    assert_eq!(
        run(&["-h", "-N", "-O", "NodeList:4,StateComplete:16,AllocMem:5,GresUsed"]).lines().nth(2),
        Some("n3  IDLE+DRAIN      1000 (null)              ")
    );
    let all = run(&["-h", "-o", "%all"]);
    assert!(all.starts_with("up|") && all.contains(" |batch* |batch |"), "{all}");
}

#[test]
fn sinfo_json_is_data_parser_s_document_and_yaml_the_same() {
    let (nodes, parts) = sample_nodes();
    let run = |flag: &str| sinfo::report(&sinfo::parse(&argv(&[flag])).unwrap(), &nodes, &parts).unwrap();
    let json: serde_json::Value = serde_json::from_str(&run("--json")).unwrap();
    let yaml: serde_json::Value = serde_yaml_ng::from_str(&run("--yaml")).unwrap();
    assert_eq!(json, yaml);
    let lines = json["sinfo"].as_array().unwrap();
    // batch* idle (n1), mixed (n2), drained (n3): the default listing's three lines.
    assert_eq!(lines.len(), 3, "{json:#}");
    let mixed = lines.iter().find(|l| l["node"]["state"][0] == "MIXED").unwrap();
    assert_eq!(mixed["nodes"]["nodes"], serde_json::json!(["n2"]));
    assert_eq!((&mixed["cpus"]["allocated"], &mixed["cpus"]["total"]), (&4.into(), &8.into()));
    assert_eq!(mixed["partition"]["name"], "batch");
    assert_eq!(json["errors"], serde_json::json!([]));
    assert!(json["meta"]["plugin"].is_object() && json["nodes"].as_array().unwrap().len() == 3);
}

#[test]
fn squeue_and_sacct_yaml_are_their_json_documents() {
    let job = sample_job();
    let run = |flag: &str| {
        squeue::report(&squeue::parse(&argv(&[flag])).unwrap(), std::slice::from_ref(&job), NOW).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&run("--json")).unwrap();
    assert_eq!(json, serde_yaml_ng::from_str::<serde_json::Value>(&run("--yaml")).unwrap());
    assert_eq!(json["jobs"][0]["job_id"], 42);
    let now = Local.timestamp_millis_opt(NOW).unwrap();
    let acct = |flag: &str| {
        sacct::report(&sacct::parse(&argv(&[flag, "-j", "42"]), now).unwrap(), &[ended_job()], now).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&acct("--json")).unwrap();
    assert_eq!(json, serde_yaml_ng::from_str::<serde_json::Value>(&acct("--yaml")).unwrap());
    assert_eq!(json["jobs"][0]["job_id"], 42);
}
