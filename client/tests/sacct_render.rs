//! sacct's pure half on fake jobs: Slurm's default columns byte for byte,
//! the default user (own jobs; everyone's for -a, -j and root), Slurm's
//! default time windows with and without -s, ExitCode as code:signal,
//! `name%width` formats, `+` on cut values, -p/-P/--delimiter, and JSON.

use chrono::{DateTime, Local, TimeZone};
use spur_client::cli::sacct::{Args, exit_code, parse, report, select};
use spur_client::vocab::txn::format_time;
use spur_proto::v1 as pb;

/// Noon local time, so "today" in the tests is the same day in every zone.
fn now() -> DateTime<Local> {
    Local.with_ymd_and_hms(2024, 3, 1, 12, 0, 0).unwrap()
}

fn ms(mins_ago: i64) -> i64 {
    now().timestamp_millis() - mins_ago * 60_000
}

/// As run by alice (not root).
fn args(words: &[&str]) -> Args {
    let mut a = parse(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>(), now()).unwrap();
    a.me = "alice".into();
    a
}

fn as_user(mut a: Args, me: &str, root: bool) -> Args {
    (a.me, a.root) = (me.into(), root);
    a
}

fn err(words: &[&str]) -> String {
    parse(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>(), now()).unwrap_err()
}

fn job(id: u64, user: &str, state: &str, submit: i64, start: i64, end: i64) -> pb::Job {
    pb::Job {
        id,
        name: "train".into(),
        user: user.into(),
        account: "ml".into(),
        qos: "normal".into(),
        partition: "batch".into(),
        state: spur_proto::states::state_named(state),
        num_nodes: 1,
        num_cpus: 4,
        submit_ms: submit,
        start_ms: start,
        end_ms: end,
        ..Default::default()
    }
}

fn jobs() -> Vec<pb::Job> {
    let done = job(10, "alice", "COMPLETED", ms(120), ms(119), ms(60));
    let mut old = job(11, "alice", "FAILED", ms(22 * 60), ms(21 * 60), ms(20 * 60));
    old.exit_code = 2;
    let mut run = job(12, "bob", "RUNNING", ms(40), ms(30), 0);
    run.nodes = vec!["n1".into(), "n2".into()];
    let gone = job(13, "alice", "CANCELLED", ms(180), 0, ms(150));
    let mut killed = job(14, "alice", "FAILED", ms(100), ms(90), ms(80));
    killed.exit_code = -1;
    (killed.reason, killed.exit_signal) = (spur_proto::states::reason_named("RaisedSignal"), 9);
    let mut wait = job(15, "alice", "PENDING", ms(10), 0, 0);
    wait.name = "a-very-long-job-name".into();
    vec![done, old, run, gone, killed, wait]
}

fn ids(a: Args, me: &str, root: bool) -> Vec<u64> {
    select(&as_user(a, me, root), &jobs(), now()).unwrap().iter().map(|j| j.id).collect()
}

#[test]
fn default_columns_match_slurm() {
    let out = report(&args(&[]), &jobs(), now()).unwrap();
    let want = "\
JobID           JobName  Partition    Account  AllocCPUS      State ExitCode 
------------ ---------- ---------- ---------- ---------- ---------- -------- 
10                train      batch         ml          4  COMPLETED      0:0 
10.batch          batch                    ml          4  COMPLETED      0:0 
13                train      batch         ml          0  CANCELLED      0:0 
14                train      batch         ml          4     FAILED      0:9 
14.batch          batch                    ml          4     FAILED      0:9 
15           a-very-lo+      batch         ml          0    PENDING      0:0 
";
    assert_eq!(out, want, "a job that ran has its batch step's row");
}

#[test]
fn steps_have_rows_of_their_own_and_x_leaves_them_out() {
    let mut all = jobs();
    let step = |id, state: &str, exit_code, signal| pb::Step {
        id,
        name: "hostname".into(),
        state: spur_proto::states::state_named(state),
        nodes: vec!["n1".into()],
        ntasks: 4,
        cpus: 4,
        start_ms: ms(118),
        end_ms: ms(117),
        exit_code,
        signal,
        ..Default::default()
    };
    all[0].steps = vec![step(0, "COMPLETED", 0, 0), step(1, "FAILED", 3, 0), step(2, "CANCELLED", 0, 15)];
    let cols = "jobid,jobname,state,exitcode,ntasks,nodelist";
    let a = args(&["-P", "-n", "-o", cols, "-j", "10"]);
    assert_eq!(
        report(&a, &all, now()).unwrap(),
        "10|train|COMPLETED|0:0|1|None assigned\n10.batch|batch|COMPLETED|0:0|1|None assigned\n\
         10.0|hostname|COMPLETED|0:0|4|n1\n10.1|hostname|FAILED|3:0|4|n1\n10.2|hostname|CANCELLED|0:15|4|n1\n"
    );
    let a = args(&["-P", "-n", "-X", "-o", "jobid", "-j", "10"]);
    assert_eq!(report(&a, &all, now()).unwrap(), "10\n");
    let a = args(&["-P", "-n", "-o", "jobid,state", "-j", "10.1,10.batch"]);
    assert_eq!(report(&a, &all, now()).unwrap(), "10.batch|COMPLETED\n10.1|FAILED\n");
    let json = |words: &[&str]| -> serde_json::Value {
        serde_json::from_str(&report(&args(words), &all, now()).unwrap()).unwrap()
    };
    let v = json(&["--json", "-j", "10"]);
    let steps = &v["jobs"][0]["steps"];
    assert_eq!(steps.as_array().unwrap().len(), 4, "the batch step and srun's three");
    assert_eq!(steps[0]["step"], serde_json::json!({ "id": "10.batch", "name": "batch" }));
    assert_eq!(steps[2]["step"]["id"], "10.1");
    assert_eq!(steps[2]["exit_code"]["status"], serde_json::json!(["ERROR"]));
    assert_eq!(steps[2]["exit_code"]["return_code"]["number"], 3);
    assert_eq!(steps[3]["state"], serde_json::json!(["CANCELLED"]));
    assert_eq!(steps[3]["exit_code"]["status"], serde_json::json!(["SIGNALED"]));
    assert_eq!(steps[3]["exit_code"]["signal"]["name"], "TERM");
    assert_eq!(steps[3]["nodes"], serde_json::json!({ "count": 1, "range": "n1", "list": ["n1"] }));
    assert_eq!(steps[3]["tasks"]["count"], 4);
    assert!(json(&["--json", "-X", "-j", "10"])["jobs"][0]["steps"].as_array().unwrap().is_empty());
}

#[test]
fn own_jobs_unless_all_users_jobs_or_root() {
    assert_eq!(ids(args(&[]), "alice", false), [10, 13, 14, 15]);
    assert_eq!(ids(args(&["-a"]), "alice", false), [10, 12, 13, 14, 15]);
    assert_eq!(ids(args(&[]), "root", true), [10, 12, 13, 14, 15]);
    assert_eq!(ids(args(&["-u", "bob"]), "alice", false), [12]);
    assert_eq!(ids(args(&["-u", "-1"]), "alice", false), [10, 12, 13, 14, 15]);
    // -j names jobs of anyone, and its window starts at the epoch.
    assert_eq!(ids(args(&["-j", "12,11"]), "alice", false), [11, 12]);
    assert!(ids(args(&[]), "carol", false).is_empty());
    // The request carries the user, never the states (-s R also wants ended jobs).
    let f = args(&["-s", "R"]).filter();
    assert_eq!(
        f.iter().map(|kv| (kv.key.as_str(), kv.value.as_str())).collect::<Vec<_>>(),
        [("user", "alice"), ("history", "yes")]
    );
}

#[test]
fn windows_follow_slurm_defaults() {
    // Without -S the window opens at midnight: yesterday's job 11 is left out.
    assert_eq!(ids(args(&["-S", "2024-02-29"]), "alice", false), [10, 11, 13, 14, 15]);
    assert_eq!(ids(args(&["-S", "2024-02-29", "-E", "2024-02-29T20:00"]), "alice", false), [11]);
    assert_eq!(ids(args(&["-S", "11:00"]), "alice", false), [10, 15]);
    // With -s the window is the instant now, so ended states need -S.
    assert!(ids(args(&["-s", "CD"]), "alice", false).is_empty());
    assert_eq!(ids(args(&["-s", "cd,F", "-S", "midnight", "-E", "now"]), "alice", false), [10, 14]);
    // -S alone with -s is an instant too (E defaults to S).
    assert!(ids(args(&["-s", "CD", "-S", "midnight"]), "alice", false).is_empty());
    // R is "running at some time in the window", whatever the state now.
    assert_eq!(ids(args(&["-a", "-s", "RUNNING"]), "alice", false), [12]);
    assert_eq!(ids(args(&["-a", "-s", "R", "-S", "midnight", "-E", "now"]), "x", false), [10, 12, 14]);
    // PD: still pending now, or pending during the window.
    assert_eq!(ids(args(&["-s", "PD"]), "alice", false), [15]);
    assert_eq!(ids(args(&["-s", "PD", "-S", "10:00", "-E", "now"]), "alice", false), [10, 14, 15]);
    assert!(err(&["-S", "yesterday"]).starts_with("--starttime: 'yesterday'"));
    assert!(err(&["-E", "02/30"]).starts_with("--endtime: '02/30' is not a time ("));
    assert!(err(&["-S", "2024-03-02", "-E", "2024-03-01"]).contains("before"));
    assert!(err(&["-s", "XX"]).starts_with("--state: invalid job state 'XX'"));
}

#[test]
fn windows_take_slurms_date_forms() {
    // A date without a year is the last one (sacct looks back): Feb 29 is this year's.
    let all = ["-S", "2024-02-29"];
    for (start, end) in [("0229", "0301"), ("02/29", "03/01"), ("02/29/24", "03/01/24"), ("022924", "030124")]
    {
        assert_eq!(ids(args(&["-S", start]), "alice", false), ids(args(&all), "alice", false), "{start}");
        assert_eq!(ids(args(&["-S", start, "-E", end]), "alice", false), [11], "{start}..{end}");
    }
    assert_eq!(ids(args(&["-S", "02/29-10:00", "-E", "02/29-13:59:59"]), "alice", false), Vec::<u64>::new());
    assert_eq!(ids(args(&["-S", "02/29-10:00", "-E", "02/29-20:00:00"]), "alice", false), [11]);
    assert_eq!(ids(args(&["-S", "2024-02-29T16:00:00", "-E", "02/29-23:00"]), "alice", false), [11]);
    assert_eq!(
        ids(args(&["-S", "2024-02-29T16:00:01", "-E", "02/29-23:00"]), "alice", false),
        Vec::<u64>::new()
    );
    // A later month is last year's, so -S 1231 reaches back past New Year.
    assert_eq!(args(&["-S", "1231"]).window(now()).unwrap().0, at(2023, 12, 31, 0));
    // midnight and today are this morning's, and a bare hour today's, even if still to come.
    assert_eq!(args(&["-S", "midnight"]).window(now()).unwrap().0, at(2024, 3, 1, 0));
    assert_eq!(args(&["-S", "today"]).window(now()).unwrap().0, at(2024, 3, 1, 0));
    assert_eq!(
        args(&["-S", "11:00", "-E", "13:00"]).window(now()).unwrap(),
        (at(2024, 3, 1, 11), at(2024, 3, 1, 13))
    );
    assert_eq!(args(&["-S", "now-2hours"]).window(now()).unwrap().0, ms(120));
    for bad in ["13/01", "0230", "24:00", "now+", "2024-02-30"] {
        assert!(err(&["-S", bad]).starts_with(&format!("--starttime: '{bad}' is not a time (")), "{bad}");
    }
}

fn at(y: i32, m: u32, d: u32, h: u32) -> i64 {
    Local.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap().timestamp_millis()
}

#[test]
fn clusters_name_this_cluster_or_all() {
    assert_eq!(args(&["-M", "spur"]).clusters, ["spur"]);
    assert_eq!(args(&["--clusters=spur,all"]).clusters, ["spur", "all"]);
    assert!(args(&[]).clusters.is_empty(), "no -M, no extra call");
    assert_eq!(err(&["-M", ""]), "--clusters: '' names no cluster");
    assert!(err(&["-M", "a b"]).starts_with("--clusters: 'a b' is not a cluster name"));
    // The cluster checked at run time shows in the JSON.
    let mut a = args(&["--json", "-M", "spur", "-j", "10"]);
    a.cluster = Some("spur".into());
    let v: serde_json::Value = serde_json::from_str(&report(&a, &jobs(), now()).unwrap()).unwrap();
    assert_eq!((&v["jobs"][0]["cluster"], &v["meta"]["slurm"]["cluster"]), (&"spur".into(), &"spur".into()));
}

#[test]
fn exit_code_is_code_colon_signal() {
    let j = jobs();
    assert_eq!(exit_code(&j[0]), "0:0");
    assert_eq!(exit_code(&j[1]), "2:0");
    assert_eq!(exit_code(&j[4]), "0:9");
    let mut launch = j[0].clone();
    launch.exit_code = -1;
    launch.reason = spur_proto::states::reason_named("JobLaunchFailure");
    launch.reason_detail = "launch failed: no such file".into();
    assert_eq!(exit_code(&launch), "-1:0");
}

#[test]
fn format_names_prefixes_and_widths() {
    let a = args(&[
        "-X",
        "-S",
        "2024-02-29",
        "-o",
        "jobid,STATE%-12,exit,elapsed,start,end,nodel",
        "-j",
        "13,12",
    ]);
    let out = report(&a, &jobs(), now()).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "JobID        State        ExitCode    Elapsed               Start                 End        NodeList "
    );
    let run = format!(
        "12           RUNNING           0:0   00:30:00 {}             Unknown          n[1-2] ",
        format_time(ms(30))
    );
    assert_eq!(lines[2], run);
    // Cancelled while pending: Slurm shows its start as its end, and no nodes.
    let t = format_time(ms(150));
    assert_eq!(lines[3], format!("13           CANCELLED         0:0   00:00:00 {t} {t}   None assigned "));
    let out = report(&args(&["-o", "jobid%5,jobname%-6", "-n"]), &jobs(), now()).unwrap();
    assert_eq!(out.lines().next().unwrap(), "   10 train  ");
    assert!(err(&["-o", "Bogus"]).contains("Invalid field requested: \"Bogus\""));
    // Spur keeps no administrator's comment: the column is there, empty, at Slurm's width.
    let mut commented = jobs();
    commented[0].spec =
        Some(Box::new(pb::JobSpec { comment: "nightly".into(), mem_mb: 2048, ..Default::default() }));
    let a = args(&["-X", "-j", "10", "-o", "jobid,admincomment,comment,reason,reqmem"]);
    let out = report(&a, &commented, now()).unwrap();
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "JobID           AdminComment        Comment                 Reason     ReqMem ",
            "------------ --------------- -------------- ---------------------- ---------- ",
            "10                                  nightly                   None      2048M ",
        ]
    );
    let heads = report(&args(&["-P", "-j", "10", "-o", "a,ad,al"]), &jobs(), now()).unwrap();
    assert_eq!(heads.lines().next().unwrap(), "Account|AdminComment|AllocCPUS", "prefixes pick the first");
    assert!(err(&["-o", "jobid%x"]).contains("'jobid%x'"));
    assert!(err(&["--bogus"]).contains("'--bogus'"));
    assert!(err(&["stray"]).contains("'stray'"));
}

#[test]
fn parsable_forms_and_brief() {
    let a = args(&["-P", "-b", "-X", "-j", "14"]);
    assert_eq!(report(&a, &jobs(), now()).unwrap(), "JobID|State|ExitCode\n14|FAILED|0:9\n");
    let a = args(&["-p", "-n", "-o", "jobid,jobname,account", "-j", "15"]);
    assert_eq!(report(&a, &jobs(), now()).unwrap(), "15|a-very-long-job-name|ml|\n");
    let a = args(&["-P", "--delimiter=,", "-o", "jobid,user", "-j", "10"]);
    assert_eq!(
        report(&a, &jobs(), now()).unwrap(),
        "JobID,User\n10,alice\n10.batch,\n",
        "steps show no user"
    );
}

#[test]
fn json_has_slurms_shape() {
    let out = report(&args(&["--json", "-j", "11,13,14,15"]), &jobs(), now()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((&v["errors"], &v["warnings"]), (&serde_json::json!([]), &serde_json::json!([])));
    assert!(v["meta"].is_object());
    let set = |n: u64| serde_json::json!({ "set": true, "infinite": false, "number": n });
    let unset = serde_json::json!({ "set": false, "infinite": false, "number": 0 });
    let [failed, cancelled, killed, pending] = [0, 1, 2, 3].map(|i| &v["jobs"][i]);
    assert_eq!(
        (&killed["job_id"], &killed["name"], &killed["user"]),
        (&14.into(), &"train".into(), &"alice".into())
    );
    assert_eq!(
        (&killed["account"], &killed["partition"], &killed["qos"]),
        (&"ml".into(), &"batch".into(), &"normal".into())
    );
    assert_eq!(killed["state"], serde_json::json!({ "current": ["FAILED"], "reason": "RaisedSignal:9" }));
    assert_eq!(
        killed["exit_code"],
        serde_json::json!({ "status": ["SIGNALED"], "return_code": unset, "signal": { "id": set(9), "name": "KILL" } })
    );
    assert_eq!(failed["exit_code"]["status"], serde_json::json!(["ERROR"]));
    assert_eq!(failed["exit_code"]["return_code"], set(2));
    assert_eq!(pending["exit_code"]["status"], serde_json::json!(["PENDING"]));
    assert_eq!(pending["state"], serde_json::json!({ "current": ["PENDING"], "reason": "None" }));
    let t = &killed["time"];
    let secs = |mins_ago: i64| serde_json::Value::from(ms(mins_ago) / 1000);
    assert_eq!((&t["submission"], &t["start"], &t["end"]), (&secs(100), &secs(90), &secs(80)));
    assert_eq!((&t["elapsed"], &t["eligible"]), (&600.into(), &secs(100)));
    assert_eq!(t["limit"], serde_json::json!({ "set": false, "infinite": true, "number": 0 }));
    // Cancelled while pending: it starts when it ended, on no node.
    assert_eq!((&cancelled["time"]["start"], &cancelled["nodes"]), (&secs(150), &"None assigned".into()));
    assert_eq!((&pending["time"]["start"], &pending["time"]["end"]), (&0.into(), &0.into()));
    assert_eq!(killed["comment"], serde_json::json!({ "administrator": "", "job": "", "system": "" }));
    assert_eq!(killed["array"]["task_id"], unset);
    assert_eq!((&killed["required"]["CPUs"], &killed["allocation_nodes"]), (&4.into(), &1.into()));
    assert_eq!(pending["allocation_nodes"], 0);
    assert!(killed.get("cluster").is_none(), "without -M the cluster is not asked for");
    let none = report(&args(&["--json", "-u", "nobody"]), &jobs(), now()).unwrap();
    assert_eq!(serde_json::from_str::<serde_json::Value>(&none).unwrap()["jobs"], serde_json::json!([]));
}

#[test]
fn usage_columns_show_once_the_job_ended() {
    let mut all = jobs();
    let used = pb::JobUsage { user_cpu_us: 61_250_000, sys_cpu_us: 1_234_000, max_rss_kb: 1234 };
    all[0].usage = Some(used);
    // Only an ended job's figures are its own; a running one's are not shown.
    all[2].usage = Some(used);
    let cols = "jobid,totalcpu,usercpu,systemcpu,maxrss,averss,ntasks";
    let a = args(&["-a", "-X", "-P", "-o", cols, "-j", "10,12,13,15"]);
    let out = report(&a, &all, now()).unwrap();
    assert_eq!(
        out,
        "JobID|TotalCPU|UserCPU|SystemCPU|MaxRSS|AveRSS|NTasks\n\
         10|01:02.484|01:01.250|00:01.234|1234K|1234K|1\n\
         12||||||1\n\
         13||||||\n\
         15||||||\n"
    );
    let head = report(&args(&["-o", "totalcpu,maxrss,ntasks", "-j", "10"]), &all, now()).unwrap();
    assert_eq!(head.lines().next().unwrap(), "  TotalCPU     MaxRSS   NTasks ");
    let v: serde_json::Value =
        serde_json::from_str(&report(&args(&["--json", "-j", "10,13"]), &all, now()).unwrap()).unwrap();
    let t = &v["jobs"][0]["time"];
    assert_eq!(t["user"], serde_json::json!({ "seconds": 61, "microseconds": 250_000 }));
    assert_eq!(t["system"], serde_json::json!({ "seconds": 1, "microseconds": 234_000 }));
    assert_eq!(t["total"], serde_json::json!({ "seconds": 62, "microseconds": 484_000 }));
    // MaxRSS is where Slurm keeps it: the batch step's peak, in bytes.
    let peak = &v["jobs"][0]["steps"][0]["tres"]["requested"]["max"][0];
    assert_eq!((&peak["type"], &peak["count"]), (&"mem".into(), &(1234 * 1024).into()));
    assert_eq!(v["jobs"][1]["time"]["user"]["seconds"], 0, "a job without figures shows none");
}

#[test]
fn borrowed_is_a_field_of_its_own() {
    let mut all = jobs();
    all[0].borrowed = true;
    let a = args(&["-n", "-P", "-X", "-o", "JobID,Borrowed", "-j", "10,14"]);
    assert_eq!(report(&a, &all, now()).unwrap(), "10|yes\n14|no\n");
}

#[test]
fn cost_is_a_field_of_its_own_the_runs_hours_at_its_charge() {
    let mut all = jobs();
    // Job 10 ran 59 minutes at 0.6 an hour; job 12 has run 30 minutes so far at 0.3.
    (all[0].cost_per_hour, all[2].cost_per_hour) = (0.6, 0.3);
    // Job 16 waits for a boot after an earlier run that cost 0.25 before its requeue.
    all.push(pb::Job {
        cost_per_hour: 0.3,
        cost_before: 0.25,
        ..job(16, "alice", "CONFIGURING", ms(5), ms(4), 0)
    });
    let a = args(&["-n", "-P", "-X", "-a", "-o", "JobID,Account,Cost", "-j", "10,12,14,16"]);
    assert_eq!(
        report(&a, &all, now()).unwrap(),
        "10|ml|0.5900\n12|ml|0.1500\n14|ml|0.0000\n16|ml|0.2500\n",
        "nothing for this run while CONFIGURING; earlier runs kept"
    );
}

#[test]
fn duplicates_list_the_runs_a_reclaim_or_preemption_requeued() {
    let mut all = jobs();
    // Job 15 pends again: its earlier run was lent, and job 14 reclaimed it.
    all[5].past_runs = vec![pb::PastRun {
        start_ms: ms(50),
        end_ms: ms(20),
        nodes: vec!["n2".into()],
        state: spur_proto::states::state_named("PREEMPTED"),
        preempted_by: 14,
        borrowed: true,
        reclaim: true,
    }];
    let cols = "JobID,State,Borrowed,NodeList,Elapsed,Reason%50";
    let a = args(&["-n", "-P", "-X", "-D", "-o", cols, "-j", "15"]);
    assert_eq!(
        report(&a, &all, now()).unwrap(),
        "15|PREEMPTED|yes|n2|00:30:00|Requeued: reclaimed (idle-fill) by job 14\n15|PENDING|no|None assigned|00:00:00|None\n"
    );
    let a = args(&["-n", "-P", "-X", "-o", "JobID,State", "-j", "15"]);
    assert_eq!(report(&a, &all, now()).unwrap(), "15|PENDING\n", "without -D only the latest, as Slurm");
}

#[test]
fn uid_gid_and_group_are_the_ones_the_job_runs_as_and_empty_when_unknown() {
    let mut all = jobs();
    // Job 10 as MUNGE vouched for it; job 12 under plugin none or jwt (no uid).
    (all[0].uid, all[0].gid, all[0].group) = (Some(1001), Some(1002), "ml-users".into());
    let a = args(&["-P", "-a", "-o", "JobID,User,UID,Group,GID", "-j", "10,12"]);
    assert_eq!(
        report(&a, &all, now()).unwrap(),
        "JobID|User|UID|Group|GID\n10|alice|1001|ml-users|1002\n10.batch||||\n12|bob|||\n12.batch||||\n",
        "steps show no owner, as no user"
    );
    // Slurm's widths: UID and GID 6, Group 9.
    let a = args(&["-X", "-n", "-o", "uid,group,gid", "-j", "10"]);
    assert_eq!(report(&a, &all, now()).unwrap(), "  1001  ml-users   1002 \n");
    // A gid the controller has no name for is named by its number.
    all[0].group = String::new();
    let a = args(&["-P", "-n", "-X", "-o", "group", "-j", "10"]);
    assert_eq!(report(&a, &all, now()).unwrap(), "1002\n");
    let json = |words: &[&str]| -> serde_json::Value {
        serde_json::from_str(&report(&args(words), &all, now()).unwrap()).unwrap()
    };
    let v = json(&["--json", "-X", "-j", "10,12"]);
    assert_eq!((&v["jobs"][0]["group"], &v["jobs"][1]["group"]), (&"1002".into(), &"".into()));
}

#[test]
fn batch_script_and_env_vars_say_spur_keeps_neither() {
    for flag in ["--batch-script", "-B", "--env-vars"] {
        let e = err(&["-j", "12", flag]);
        assert!(e.contains("keeps no job's batch script or environment"), "{flag}: {e}");
        assert!(e.contains("AccountingStoreFlags=job_script,job_env"), "{flag}: {e}");
    }
}
