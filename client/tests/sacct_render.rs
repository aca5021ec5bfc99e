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
        state: state.into(),
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
    killed.reason = "killed by signal 9".into();
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
        state: state.into(),
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
    let v: serde_json::Value =
        serde_json::from_str(&report(&args(&["--json", "-j", "10"]), &all, now()).unwrap()).unwrap();
    assert_eq!(v["jobs"][0]["steps"][3]["step"], "10.2");
    assert_eq!(v["jobs"][0]["steps"][3]["exit_code"], "0:15");
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
    assert!(err(&["-S", "2024-03-02", "-E", "2024-03-01"]).contains("before"));
    assert!(err(&["-s", "XX"]).starts_with("--state: invalid job state 'XX'"));
}

#[test]
fn exit_code_is_code_colon_signal() {
    let j = jobs();
    assert_eq!(exit_code(&j[0]), "0:0");
    assert_eq!(exit_code(&j[1]), "2:0");
    assert_eq!(exit_code(&j[4]), "0:9");
    let mut launch = j[0].clone();
    launch.exit_code = -1;
    launch.reason = "launch failed: no such file".into();
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
fn json_has_every_job_field() {
    let out = report(&args(&["--json", "-j", "14"]), &jobs(), now()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["jobs"][0]["job_id"], 14);
    assert_eq!(v["jobs"][0]["exit_status"], "0:9");
    assert_eq!(v["jobs"][0]["elapsed_secs"], 600);
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
    let first = &v["jobs"][0];
    assert_eq!((first["user_cpu_us"].as_u64(), first["max_rss_kb"].as_u64()), (Some(61_250_000), Some(1234)));
    assert!(v["jobs"][1].get("user_cpu_us").is_none(), "a job without figures has none");
}
