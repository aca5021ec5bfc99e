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
        state: spur_proto::states::state_named(state),
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
    held.reason = spur_proto::states::reason_named("QOSGrpNodeLimit");
    held.reason_detail = "QOS gpu is at 4/4 nodes".into();
    held.priority = 2000.4;
    held.qos = "gpu".into();
    let mut prep = job(99, "prep", "alice", "batch", "PENDING");
    prep.reason = spur_proto::states::reason_named("Priority");
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
    assert_eq!(a.states, States::Only(vec![spur_vocab::JobState::Completed, spur_vocab::JobState::Running]));
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
    assert!(err(&["-o", "%i %!"]).contains("'%!'"));
    assert!(err(&["-O", "JobID,Nope"]).contains("'Nope'"));
    assert!(err(&["-O", "JobID:x"]).contains("'JobID:x'"));
    assert!(err(&["-S", "i,!"]).contains("'!'"));
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
    assert!(arr.iter().all(|j| j.get("script").is_none()));
    assert_eq!((&v["errors"], &v["warnings"]), (&serde_json::json!([]), &serde_json::json!([])));
    assert!(v["meta"].is_object() && v["last_update"]["set"] == true);
}

#[test]
fn json_is_slurms_job_info() {
    let v: serde_json::Value =
        serde_json::from_str(&report(&args(&["--json", "-t", "all"]), &jobs(), NOW).unwrap()).unwrap();
    let set = |n: u64| serde_json::json!({ "set": true, "infinite": false, "number": n });
    let unset = serde_json::json!({ "set": false, "infinite": false, "number": 0 });
    let find = |id: u64| v["jobs"].as_array().unwrap().iter().find(|j| j["job_id"] == id).unwrap().clone();
    let (run, held, done) = (find(101), find(102), find(90));
    assert_eq!(
        (&run["name"], &run["user_name"], &run["account"]),
        (&"train".into(), &"alice".into(), &"ml".into())
    );
    assert_eq!((&run["partition"], &run["qos"]), (&"gpu".into(), &"normal".into()));
    assert_eq!(run["job_state"], serde_json::json!(["RUNNING"]));
    assert_eq!((&run["nodes"], &run["node_count"], &run["cpus"]), (&"gpu[1-2]".into(), &set(2), &set(16)));
    assert_eq!((&run["time_limit"], &run["priority"]), (&set(120), &set(900)));
    let secs = |ms: i64| set((ms / 1000) as u64);
    assert_eq!((&run["submit_time"], &run["start_time"]), (&secs(NOW - 600_000), &secs(NOW - 3_723_000)));
    assert_eq!(
        run["end_time"],
        secs(NOW - 3_723_000 + 120 * 60_000),
        "a running job's end is due at its limit"
    );
    assert_eq!(run["exit_code"]["status"], serde_json::json!(["PENDING"]), "no exit code before the end");
    assert_eq!((&run["array_job_id"], &run["array_task_id"]), (&set(0), &unset));
    assert_eq!(held["state_reason"], "QOSGrpNodeLimit");
    assert_eq!(held["state_description"], "QOS gpu is at 4/4 nodes");
    assert_eq!(held["time_limit"], serde_json::json!({ "set": false, "infinite": true, "number": 0 }));
    assert_eq!((&held["start_time"], &held["priority"]), (&set(0), &set(2000)));
    assert_eq!(done["exit_code"]["status"], serde_json::json!(["SUCCESS"]));
    assert_eq!(done["exit_code"]["return_code"], set(0));
    assert_eq!((&done["admin_comment"], &done["comment"]), (&"".into(), &"".into()));
    let mut task = jobs()[0].clone();
    (task.array_job_id, task.array_task_id) = (100, Some(3));
    let v: serde_json::Value =
        serde_json::from_str(&report(&args(&["--json"]), &[task], NOW).unwrap()).unwrap();
    assert_eq!((&v["jobs"][0]["array_job_id"], &v["jobs"][0]["array_task_id"]), (&set(100), &set(3)));
}

#[test]
fn clusters_name_this_cluster_or_all() {
    assert_eq!(args(&["-M", "spur,all"]).clusters, ["spur", "all"]);
    assert!(
        parse(&["-M".to_string(), String::new()]).unwrap_err().contains("--clusters: '' names no cluster")
    );
    // The name checked at run time heads the listing, after -l's time, as Slurm prints it.
    let mut a = args(&["-M", "spur", "-l", "-j", "101"]);
    a.cluster = Some("spur".into());
    let out = report(&a, &jobs(), NOW).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].ends_with(" 2024") && lines[1] == "CLUSTER: spur", "{out}");
    assert!(lines[2].trim_start().starts_with("JOBID"), "{out}");
    a.noheader = true;
    assert!(!report(&a, &jobs(), NOW).unwrap().contains("CLUSTER"), "-h drops it");
    let mut a = args(&["--json", "-M", "all"]);
    a.cluster = Some("spur".into());
    let v: serde_json::Value = serde_json::from_str(&report(&a, &jobs(), NOW).unwrap()).unwrap();
    assert_eq!((&v["jobs"][0]["cluster"], &v["meta"]["slurm"]["cluster"]), (&"spur".into(), &"spur".into()));
}

#[test]
fn w_is_the_borrowed_column_and_licenses_stay_a_long_name() {
    let mut all = jobs();
    all[0].borrowed = true;
    all[0].spec = Some(Box::new(pb::JobSpec { licenses: "matlab:2".into(), ..Default::default() }));
    // spur-idle-fill.md: squeue -o "%i %j %u %t %N %W".
    let out = report(&args(&["-o", "%i %j %u %t %N %W", "-j", "101,99"]), &all, NOW).unwrap();
    assert_eq!(
        out,
        "JOBID NAME USER ST NODELIST BORROWED\n99 prep alice PD  no\n101 train alice R gpu[1-2] yes\n"
    );
    let out = report(&args(&["-h", "-O", "JobID:4,Borrowed:4,Licenses", "-j", "101"]), &all, NOW).unwrap();
    assert_eq!(out.trim_end(), "101 yes matlab:2");
    let v: serde_json::Value =
        serde_json::from_str(&report(&args(&["--json", "-j", "101"]), &all, NOW).unwrap()).unwrap();
    assert_eq!(v["jobs"][0]["borrowed"], true);
}

#[test]
fn uid_gid_and_group_columns_and_the_view_they_need() {
    let mut all = jobs();
    // 101 has the ids (MUNGE, or an Operator's --uid/--gid); 102 runs as the agent's user.
    (all[0].uid, all[0].gid, all[0].group) = (Some(1001), Some(1001), "alice".into());
    let out = report(&args(&["-j", "101,102", "-o", "%i %u %U %G %g"]), &all, NOW).unwrap();
    assert_eq!(out, "JOBID USER UID GROUP GROUP\n102 bob N/A N/A N/A\n101 alice 1001 1001 alice\n");
    let out = report(&args(&["-h", "-j", "101", "-O", "UserID:6,groupid:6,GroupName:8"]), &all, NOW).unwrap();
    assert_eq!(out, "1001  1001  alice   \n");
    // The streamed brief listing carries no ids: these columns ask for the full view.
    let full = |a: &[&str]| !args(a).filter().iter().any(|kv| kv.key == "view");
    assert!(full(&["-o", "%i %U"]) && full(&["-o", "%G"]) && full(&["-O", "JobID,GroupName"]));
}
