//! squeue's pure half on fake jobs: Slurm's default columns byte for byte,
//! `%R`, `-o` widths, `-O` names, `-S` sorts, the state filter (both the
//! request sent and the rows kept), `-l` and `--json`.

use spur_client::cli::squeue::{Args, States, parse, report};
use spur_client::vocab::txn::format_time;
use spur_proto::v1 as pb;

/// 2024-03-01T12:00:00Z.
const NOW: i64 = 1_709_294_400_000;

fn args(words: &[&str]) -> Args {
    parse(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>()).unwrap()
}

fn job(id: u64, name: &str, user: &str, partition: &str, state: &str) -> pb::Job {
    pb::Job {
        id,
        name: name.into(),
        user: user.into(),
        account: "ml".into(),
        qos: "normal".into(),
        partition: partition.into(),
        state: state.into(),
        num_nodes: 1,
        num_cpus: 1,
        submit_ms: NOW - 600_000,
        ..Default::default()
    }
}

fn jobs() -> Vec<pb::Job> {
    let mut run = job(101, "train", "alice", "gpu", "RUNNING");
    run.nodes = vec!["gpu1".into(), "gpu2".into()];
    run.num_nodes = 2;
    run.num_cpus = 16;
    run.start_ms = NOW - 3_723_000;
    run.time_limit_minutes = Some(120);
    run.priority = 900.0;
    let mut held = job(102, "a-very-long-name", "bob", "gpu", "PENDING");
    held.reason = "QOSGrpNodeLimit".into();
    held.reason_detail = "QOS gpu is at 4/4 nodes".into();
    held.priority = 2000.4;
    held.qos = "gpu".into();
    let mut prep = job(99, "prep", "alice", "batch", "PENDING");
    prep.reason = "Priority".into();
    prep.priority = 1500.0;
    prep.time_limit_minutes = Some(30);
    let mut done = job(90, "old", "carol", "batch", "COMPLETED");
    done.start_ms = NOW - 100_000;
    done.end_ms = NOW - 40_000;
    vec![run, held, prep, done]
}

#[test]
fn default_columns_match_slurm() {
    let out = report(&args(&[]), &jobs(), NOW).unwrap();
    let want = "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)
                99     batch     prep    alice PD       0:00      1 (Priority)
               102       gpu a-very-l      bob PD       0:00      1 (QOSGrpNodeLimit)
               101       gpu    train    alice  R    1:02:03      2 gpu[1-2]
";
    assert_eq!(out, want);
}

#[test]
fn state_filter_is_sent_and_applied() {
    let a = args(&[]);
    let f = a.filter();
    assert_eq!(f.len(), 2);
    assert_eq!(
        (f[0].key.as_str(), f[0].value.as_str()),
        ("state", "PENDING,RUNNING,SUSPENDED,COMPLETING,CONFIGURING,REQUEUED")
    );
    // The default columns need nothing from the spec, so the controller sends less.
    assert_eq!((f[1].key.as_str(), f[1].value.as_str()), ("view", "brief"));
    let full = |a: &[&str]| !args(a).filter().iter().any(|kv| kv.key == "view");
    assert!(full(&["--json"]) && full(&["-o", "%i %k"]) && full(&["-O", "JobID,WorkDir"]));
    assert!(!full(&["-l"]) && !full(&["-o", "%i %R"]));
    let a = args(&["-t", "cd,R", "-u", "alice,carol", "-p", "batch,gpu"]);
    assert_eq!(a.states, States::Only(vec!["COMPLETED", "RUNNING"]));
    let keys: Vec<(String, String)> = a.filter().into_iter().map(|kv| (kv.key, kv.value)).collect();
    assert!(keys.contains(&("state".into(), "COMPLETED,RUNNING".into())), "{keys:?}");
    assert!(keys.contains(&("user".into(), "alice,carol".into())));
    let out = report(&a, &jobs(), NOW).unwrap();
    let ids: Vec<&str> = out.lines().skip(1).map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(ids, ["90", "101"]);
    // -t all: no state filter at all; -j alone: every state, like Slurm.
    assert!(args(&["-t", "all", "--json"]).filter().is_empty());
    let a = args(&["-j", "90,102"]);
    assert_eq!(a.filter()[0].key, "id");
    assert_eq!(a.filter().len(), 2);
    assert_eq!(report(&a, &jobs(), NOW).unwrap().lines().count(), 3);
    assert!(report(&args(&["-A", "nope"]), &jobs(), NOW).unwrap().lines().count() == 1);
}

#[test]
fn format_codes_take_widths_and_justification() {
    let out = report(&args(&["-h", "-o", "%5i|%.6u|%t|%T|%l|%L|%r|%q|%D/%C|%p"]), &jobs(), NOW).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "99   | alice|PD|PENDING|30:00|30:00|Priority|normal|1/1|1500");
    assert_eq!(lines[1], "102  |   bob|PD|PENDING|UNLIMITED|UNLIMITED|QOSGrpNodeLimit|gpu|1/1|2000");
    assert_eq!(lines[2], "101  | alice|R|RUNNING|2:00:00|57:57|None|normal|2/16|900");
    let out = report(&args(&["-o", "%i %N %S %e", "-j", "101"]), &jobs(), NOW).unwrap();
    let start = format_time(NOW - 3_723_000);
    let end = format_time(NOW - 3_723_000 + 120 * 60_000);
    assert_eq!(out, format!("JOBID NODELIST START_TIME END_TIME\n101 gpu[1-2] {start} {end}\n"));
}

#[test]
fn long_names_default_to_twenty_wide() {
    let out = report(&args(&["-O", "JobID,name:6,STATE:.9,ReasonList", "-j", "102"]), &jobs(), NOW).unwrap();
    let want = format!(
        "{:<20}{:<6}{:>9}{:<20}\n{:<20}{:<6}{:>9}{:<20}\n",
        "JOBID", "NAME", "STATE", "NODELIST(REASON)", "102", "a-very", "PENDING", "(QOSGrpNodeLimit)"
    );
    assert_eq!(out, want);
    let out = report(&args(&["-h", "-O", "JobID:4|,TimeUsed:0", "-j", "90"]), &jobs(), NOW).unwrap();
    assert_eq!(out, "90  |1:00\n");
}

#[test]
fn sort_keys_follow_slurm() {
    let ids = |words: &[&str]| -> Vec<String> {
        let out = report(&args(words), &jobs(), NOW).unwrap();
        out.lines().map(|l| l.trim().to_string()).collect()
    };
    assert_eq!(ids(&["-h", "-t", "all", "-o", "%i", "-S", "-p,i"]), ["102", "99", "101", "90"]);
    assert_eq!(ids(&["-h", "-t", "all", "-o", "%i", "-S", "i"]), ["90", "99", "101", "102"]);
    assert_eq!(ids(&["-h", "-t", "all", "-o", "%i", "-S", "u,-i"]), ["101", "99", "102", "90"]);
    assert_eq!(ids(&["-h", "-o", "%i", "-S", "-M"]), ["101", "99", "102"]);
}

#[test]
fn bad_arguments_are_named() {
    let err = |w: &[&str]| parse(&w.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap_err();
    assert!(err(&["-o", "%i %y"]).contains("'%y'"));
    assert!(err(&["-O", "JobID,Nope"]).contains("'Nope'"));
    assert!(err(&["-O", "JobID:x"]).contains("'JobID:x'"));
    assert!(err(&["-S", "i,z"]).contains("'z'"));
    assert!(err(&["-t", "sleeping"]).contains("'sleeping'"));
    assert!(err(&["-j", "12_3"]).contains("arrays"));
    assert!(err(&["-j", "x"]).contains("'x'"));
    assert!(err(&["--bogus"]).contains("'--bogus'"));
    assert!(err(&["extra"]).contains("'extra'"));
}

#[test]
fn long_listing_and_json() {
    let out = report(&args(&["-l", "-j", "101"]), &jobs(), NOW).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].ends_with(" 2024"), "{}", lines[0]);
    assert_eq!(
        lines[1],
        "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)"
    );
    assert!(lines[2].contains(" RUNNING ") && lines[2].contains("2:00:00"), "{}", lines[2]);
    let v: serde_json::Value =
        serde_json::from_str(&report(&args(&["--json"]), &jobs(), NOW).unwrap()).unwrap();
    let arr = v["jobs"].as_array().unwrap();
    assert_eq!(arr.len(), 3);
    assert_eq!(arr[1]["reason_detail"], "QOS gpu is at 4/4 nodes");
    assert_eq!(arr[1]["state_compact"], "PD");
    assert!(arr.iter().all(|j| j.get("script").is_none()));
}
