//! scontrol's job commands without a controller: parsing `show job`,
//! `update job`/`update JobId=`, `hold|release|requeue`, and the
//! `scontrol show job` record (Slurm's layout, the pending reason's facts,
//! `-o`, `--json`). Also scancel's parsing and request plan.

use spur_client::cli::jobfmt::{job_record, parse_signal};
use spur_client::cli::scancel::{self, Plan};
use spur_client::cli::scontrol::job::show_jobs;
use spur_client::cli::scontrol::{Command, Flags, parse};
use spur_client::vocab::txn::format_time;
use spur_proto::v1 as pb;

const NOW: i64 = 1_709_294_400_000;

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

fn cmd(w: &[&str]) -> Result<Command, String> {
    parse(&words(w)).map(|(_, c)| c)
}

fn pending() -> pb::Job {
    pb::Job {
        id: 102,
        name: "big".into(),
        user: "bob".into(),
        account: "ml".into(),
        qos: "gpu".into(),
        partition: "gpu".into(),
        state: spur_proto::states::state_named("PENDING"),
        reason: spur_proto::states::reason_named("QOSGrpNodeLimit"),
        reason_detail: "QOS gpu is at 4/4 nodes".into(),
        priority: 2000.0,
        time_limit_minutes: Some(90),
        submit_ms: NOW - 60_000,
        num_nodes: 2,
        num_cpus: 8,
        spec: Some(Box::new(pb::JobSpec {
            ntasks: 4,
            cpus_per_task: 2,
            mem_mb: 1000,
            gpus_per_node: 2,
            stdout_path: "/home/bob/slurm-%j.out".into(),
            workdir: "/home/bob".into(),
            requeue: Some(true),
            ..Default::default()
        })),
        ..Default::default()
    }
}

#[test]
fn job_commands_parse() {
    assert_eq!(cmd(&["show", "job"]).unwrap(), Command::ShowJobs(None));
    assert_eq!(cmd(&["sho", "j", "12"]).unwrap(), Command::ShowJobs(Some(12)));
    assert_eq!(cmd(&["show", "jobs", "JobId=12"]).unwrap(), Command::ShowJobs(Some(12)));
    let set =
        |kv: &[(&str, &str)]| kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
    assert_eq!(
        cmd(&["update", "JobId=5,6", "timelimit=1:30:00", "priority=10", "qos=high", "PARTITION=gpu"])
            .unwrap(),
        Command::UpdateJobs {
            ids: vec![5, 6],
            set: set(&[("TimeLimit", "90"), ("Priority", "10"), ("QOS", "high"), ("Partition", "gpu")])
        }
    );
    assert_eq!(
        cmd(&["update", "jobid=5", "account=phys", "mailuser=ops@example.org"]).unwrap(),
        Command::UpdateJobs {
            ids: vec![5],
            set: set(&[("Account", "phys"), ("MailUser", "ops@example.org")])
        }
    );
    assert_eq!(
        cmd(&["update", "job", "7", "TimeLimit=UNLIMITED"]).unwrap(),
        Command::UpdateJobs { ids: vec![7], set: set(&[("TimeLimit", "UNLIMITED")]) }
    );
    assert_eq!(
        cmd(&["hold", "1,2", "3"]).unwrap(),
        Command::JobAction { action: "hold", ids: vec![1, 2, 3] }
    );
    assert_eq!(cmd(&["rel", "JobId=4"]).unwrap(), Command::JobAction { action: "release", ids: vec![4] });
    assert_eq!(cmd(&["requeue", "9"]).unwrap(), Command::JobAction { action: "requeue", ids: vec![9] });
}

#[test]
fn job_command_errors_name_the_problem() {
    let err = |w: &[&str]| cmd(w).unwrap_err();
    assert!(err(&["show", "job", "x"]).contains("'x'"));
    assert!(err(&["show", "job", "1", "2"]).contains("'2'"));
    assert!(err(&["update", "jobid=5", "timelimit=abc"]).contains("'abc'"));
    assert!(err(&["update", "jobid=5", "priority=-3"]).contains("'-3'"));
    assert!(err(&["update", "jobid=5", "colour=x"]).contains("'colour'"));
    // A Slurm key Spur keeps fixed: nothing to send, and one warning.
    assert_eq!(cmd(&["update", "jobid=5", "jobname=x"]), Ok(Command::Nothing));
    assert!(err(&["update", "jobid=5"]).contains("nothing to change"));
    assert!(err(&["update", "job"]).contains("needs a job id"));
    assert!(err(&["update", "jobid=x", "priority=1"]).contains("'x'"));
    assert!(err(&["update", "jobid=5", "qos="]).contains("needs a name"));
    assert!(err(&["update", "jobid=5", "account="]).contains("needs a name"));
    assert!(err(&["update", "jobid=5", "mailuser=-oX"]).starts_with("MailUser: '-oX' starts with '-'"));
    assert!(err(&["update", "jobid=5", "mailuser="]).starts_with("MailUser: needs an address"));
    assert!(err(&["hold"]).contains("needs a job id"));
    assert!(err(&["release", "12_1"]).contains("arrays"));
    assert!(err(&["suspend", "5"]).contains("suspend is not available"));
    assert!(err(&["show", "topology"]).contains("topology is not available"));
    assert!(err(&["show", "step", "12.batch"]).contains("names no srun step"));
}

#[test]
fn show_job_uses_slurms_layout_with_the_reason_facts() {
    let out = job_record(&pending(), NOW, false);
    let want = format!(
        "JobId=102 JobName=big
   UserId=bob GroupId=(null)
   Priority=2000 Nice=0 Account=ml QOS=gpu
   JobState=PENDING Reason=QOSGrpNodeLimit (QOS gpu is at 4/4 nodes) Dependency=(null)
   Requeue=1 Restarts=0 BatchFlag=1 ExitCode=0:0
   RunTime=00:00:00 TimeLimit=01:30:00
   SubmitTime={}
   StartTime=Unknown EndTime=Unknown
   Partition=gpu
   ReqNodeList=(null) ExcNodeList=(null)
   NodeList=(null)
   NumNodes=2 NumCPUs=8 NumTasks=4 CPUs/Task=2
   TRES=cpu=8,mem=2000M,node=2,gres/gpu=4
   MinMemoryNode=1000M
   OverSubscribe=OK Licenses=(null) LicensesAlloc=(null)
   Command=(null)
   SubmitLine=(null)
   WorkDir=/home/bob
   StdErr=/home/bob/slurm-102.out
   StdOut=/home/bob/slurm-102.out
   TresPerNode=gres/gpu:2
   Features=(null)

",
        format_time(NOW - 60_000)
    );
    assert_eq!(out, want);
}

#[test]
fn show_job_s_command_is_the_script_s_path_without_its_arguments() {
    let mut j = pending();
    if let Some(s) = j.spec.as_mut() {
        s.command = "/home/bob/run.sh".into();
        s.script_args = vec!["one".into(), "two words".into()];
    }
    let out = job_record(&j, NOW, false);
    assert!(
        out.contains("\n   Command=/home/bob/run.sh\n   SubmitLine=(null)\n   WorkDir=/home/bob\n"),
        "{out}"
    );
}

#[test]
fn show_job_names_the_uid_and_gid_the_job_runs_as() {
    let line = |j: &pb::Job| job_record(j, NOW, false).lines().nth(1).unwrap_or_default().to_string();
    // Vouched for (MUNGE) or given with --uid/--gid: Slurm's name(number).
    let mut j = pending();
    (j.uid, j.gid, j.group) = (Some(1001), Some(1001), "bob".into());
    assert_eq!(line(&j), "   UserId=bob(1001) GroupId=bob(1001)");
    // A gid the controller has no name for is named by its number, as it records it.
    j.group = String::new();
    assert_eq!(line(&j), "   UserId=bob(1001) GroupId=1001(1001)");
    // Plugins none and jwt: no uid, the job runs as the agent's user; an
    // Operator's --gid alone still gives the group.
    (j.uid, j.gid, j.group) = (None, Some(10), "wheel".into());
    assert_eq!(line(&j), "   UserId=bob GroupId=wheel(10)");
    assert_eq!(line(&pending()), "   UserId=bob GroupId=(null)");
}

#[test]
fn show_job_json_has_the_ids_only_when_known() {
    let mut j = pending();
    (j.uid, j.gid, j.group) = (Some(0), Some(0), "root".into());
    let json = Flags { json: true, ..Flags::default() };
    let parse = |jobs: &[pb::Job]| -> serde_json::Value {
        serde_json::from_str(&show_jobs(jobs, Some(102), &json, NOW).unwrap()).unwrap()
    };
    let v = parse(std::slice::from_ref(&j));
    let got = &v["jobs"][0];
    assert_eq!(
        (&got["user_id"], &got["group_id"], &got["group_name"]),
        (&0.into(), &0.into(), &"root".into())
    );
    assert_eq!(got["user_name"], "bob");
    // Unknown ids are left out (a 0 would claim root); the group's name is empty.
    let v = parse(&[pending()]);
    let got = &v["jobs"][0];
    assert!(got.get("user_id").is_none() && got.get("group_id").is_none(), "{got}");
    assert_eq!(got["group_name"], "");
}

#[test]
fn a_detail_repeating_its_code_is_shown_once() {
    let mut j = pending();
    j.reason = spur_proto::states::reason_named("JobHeldUser");
    j.reason_detail = "JobHeldUser: held by its user".into();
    assert!(
        job_record(&j, NOW, true)
            .contains(" Reason=JobHeldUser (held by its user) Dependency=(null) Requeue=")
    );
    j.reason_detail = "JobHeldUser".into();
    assert!(job_record(&j, NOW, true).contains(" Reason=JobHeldUser Dependency=(null) Requeue="));
}

#[test]
fn running_jobs_show_nodes_times_and_one_line_form() {
    let mut j = pending();
    j.state = spur_proto::states::state_named("RUNNING");
    j.reason = 0;
    j.reason_detail = String::new();
    j.nodes = vec!["gpu1".into(), "gpu2".into()];
    j.start_ms = NOW - 90_061_000;
    j.time_limit_minutes = None;
    let out = job_record(&j, NOW, true);
    assert_eq!(out.lines().count(), 1);
    assert!(out.contains(" JobState=RUNNING Reason=None Dependency=(null) Requeue=1"), "{out}");
    assert!(out.contains(" RunTime=1-01:01:01 TimeLimit=UNLIMITED "), "{out}");
    assert!(out.contains(&format!(" StartTime={} EndTime=Unknown ", format_time(NOW - 90_061_000))), "{out}");
    assert!(out.contains(" NodeList=gpu[1-2] "), "{out}");
}

#[test]
fn show_jobs_finds_lists_and_renders_json() {
    let mut other = pending();
    other.id = 7;
    let all = vec![pending(), other];
    let f = Flags::default();
    let out = show_jobs(&all, None, &f, NOW).unwrap();
    assert!(out.starts_with("JobId=7 ") && out.contains("\n\nJobId=102 "), "{out}");
    assert!(show_jobs(&all, Some(5), &f, NOW).unwrap_err().contains("job 5 not found"));
    assert_eq!(show_jobs(&[], None, &f, NOW).unwrap(), "No jobs in the system\n");
    let json = Flags { json: true, ..Flags::default() };
    let v: serde_json::Value =
        serde_json::from_str(&show_jobs(&all, Some(102), &json, NOW).unwrap()).unwrap();
    // Slurm's job_info, as squeue --json prints it.
    let j = &v["jobs"][0];
    assert_eq!(
        (&j["state_reason"], &j["job_state"]),
        (&"QOSGrpNodeLimit".into(), &serde_json::json!(["PENDING"]))
    );
    assert_eq!(j["state_description"], "QOS gpu is at 4/4 nodes");
    assert_eq!(
        (&j["standard_output"], &j["stdout_expanded"]),
        (&"/home/bob/slurm-%j.out".into(), &"/home/bob/slurm-102.out".into())
    );
    assert_eq!(j["memory_per_node"], serde_json::json!({ "set": true, "infinite": false, "number": 1000 }));
    assert_eq!((&j["tres_per_node"], &j["tasks"]["number"]), (&"gres/gpu:2".into(), &4.into()));
    assert_eq!(v["last_update"]["number"], NOW / 1000);
}

#[test]
fn scancel_parses_and_plans() {
    let p = |w: &[&str]| scancel::parse(&words(w));
    let a = p(&["5", "6,7", "-s", "USR1"]).unwrap();
    assert_eq!(a.ids, vec![5, 6, 7]);
    assert_eq!(a.signal, 10);
    assert_eq!(
        scancel::plan(&a, "me"),
        Plan::Cancel(pb::CancelRequest { ids: vec![5, 6, 7], signal: 10, ..Default::default() })
    );
    let a = p(&["-u", "bob", "-t", "pd,RUNNING", "-n", "big"]).unwrap();
    let Plan::Cancel(req) = scancel::plan(&a, "me") else { panic!("filters alone go in one Cancel") };
    let kv: Vec<(&str, &str)> = req.filter.iter().map(|k| (k.key.as_str(), k.value.as_str())).collect();
    assert_eq!(kv, [("user", "bob"), ("name", "big"), ("state", "PENDING,RUNNING")]);
    // Ids with filters: Slurm cancels only the named jobs that match.
    let a = p(&["--me", "12"]).unwrap();
    let Plan::ListThenCancel { list, signal: 0 } = scancel::plan(&a, "me") else { panic!("list first") };
    assert_eq!((list.filter[0].key.as_str(), list.filter[0].value.as_str()), ("id", "12"));
    assert_eq!((list.filter[1].key.as_str(), list.filter[1].value.as_str()), ("user", "me"));
    assert_eq!(scancel::leftovers(&[1, 2], &[1], false).len(), 1);
    assert!(scancel::leftovers(&[1, 2], &[1], true).is_empty());
}

#[test]
fn scancel_errors_name_the_argument() {
    let e = |w: &[&str]| scancel::parse(&words(w)).unwrap_err();
    assert!(e(&[]).contains("No job identification provided"));
    assert!(e(&["x"]).contains("'x'"));
    assert!(e(&["-s", "BOGUS", "1"]).contains("'BOGUS'"));
    assert!(e(&["-t", "CD", "1"]).contains("'CD'"));
    assert!(e(&["--frob", "1"]).contains("'--frob'"));
    assert_eq!(scancel::parse(&words(&["-M", "spur", "5"])).unwrap().clusters, ["spur"]);
    assert_eq!(e(&["--clusters=", "5"]), "--clusters: '' names no cluster");
    assert_eq!(parse_signal("SIGTERM"), Ok(15));
    assert_eq!(parse_signal("kill"), Ok(9));
    assert!(parse_signal("0").is_err() && parse_signal("65").is_err());
}

#[test]
fn a_reclaimed_job_shows_its_reclaimer_and_a_borrowed_run_says_so() {
    let mut j = pending();
    assert!(!job_record(&j, NOW, true).contains("Borrowed="), "nothing for a job idle-fill never touched");
    j.reclaims = 1;
    j.preempted_by = 77;
    let out = job_record(&j, NOW, true);
    assert!(out.contains(" Borrowed=no Reclaims=1 PreemptedBy=77 PreemptMode=REQUEUE "), "{out}");
    j.state = spur_proto::states::state_named("RUNNING");
    j.borrowed = true;
    assert!(job_record(&j, NOW, true).contains(" Borrowed=yes Reclaims=1 "));
}

/// A job a signal ended: Slurm's `ExitCode=0:SIGNAL` and `RaisedSignal:N`,
/// as sacct shows them; a launch that failed shows its words as the reason.
#[test]
fn ended_jobs_show_their_signal_and_their_failure_s_words() {
    let mut j = pending();
    j.state = spur_proto::states::state_named("FAILED");
    (j.reason, j.exit_code, j.exit_signal) = (spur_proto::states::reason_named("RaisedSignal"), -1, 9);
    j.reason_detail = String::new();
    let shown = job_record(&j, NOW, true);
    assert!(
        shown.contains(" Reason=RaisedSignal:9 Dependency=") && shown.contains(" ExitCode=0:9"),
        "{shown}"
    );
    (j.reason, j.exit_signal) = (spur_proto::states::reason_named("JobLaunchFailure"), 0);
    j.reason_detail = "launch failed: /nonexistent/interp: No such file".into();
    let shown = job_record(&j, NOW, true);
    assert!(
        shown.contains(" Reason=launch failed: /nonexistent/interp: No such file Dependency="),
        "{shown}"
    );
    assert!(shown.contains(" ExitCode=-1:0"), "{shown}");
}
