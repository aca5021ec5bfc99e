//! HRES plugins (hres/lua) with the real binaries: a recording script
//! (`tests/lua/recorder.lua`) logs every call with what it received, and the
//! jobs' plugin arguments pick which callback fails and how. The page's qpu
//! example runs end to end: the job reads its payload on its node.

use spur_tests::cluster::Cluster;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{conf, links_dir, run_with, wait_for};
use std::path::Path;

const RECORDER: &str = include_str!("../lua/recorder.lua");

/// An asynchronous pre-run that waits for the file `go-JOBID` in the log
/// directory, then fails (fail=async) or replaces the payload.
const ASYNC: &str = r#"
function hres_controller_job_async_prerun(ctx, job, prep)
  log(ctx.config, "async_prerun " .. ctx.name .. " job=" .. job.job_id .. " payload=" .. (prep.payload or ""))
  local go = ctx.config.log:gsub("calls.log$", "go-" .. job.job_id)
  while not io.open(go, "r") do os.execute("sleep 0.05") end
  if prep.plugin_args.fail == "async" then return slurm.ERROR end
  return slurm.SUCCESS, "async=" .. job.job_id
end
"#;

/// resources.yaml for `qpu` (infinite, node[01-02]) with the recorder,
/// logging to `dir/calls.log`, maintenance driven by `dir/maint`.
fn resources(dir: &Path, cycle: u64) -> String {
    format!(
        "- resource: qpu\n  mode: MODE_1\n  plugin:\n    type: hres/lua\n    config:\n      \
         - name: path\n        value: recorder.lua\n      - name: log\n        value: {d}/calls.log\n      \
         - name: maint\n        value: {d}/maint\n    maintenance_cycle: {cycle}\n    maintenance_timeout: 5\n  \
         layers:\n    - layer_name: qpu1\n      nodes:\n        - \"node[01-02]\"\n      count: -1\n",
        d = dir.display()
    )
}

fn start(logs: &Path, cycle: u64, more: impl FnOnce(ClusterToml) -> ClusterToml) -> Cluster {
    start_script(logs, cycle, more, RECORDER)
}

fn start_script(
    logs: &Path,
    cycle: u64,
    more: impl FnOnce(ClusterToml) -> ClusterToml,
    script: &str,
) -> Cluster {
    let yaml = resources(logs, cycle);
    Cluster::two_nodes(more, &[("resources.yaml", &yaml), ("recorder.lua", script)])
}

fn calls(logs: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(logs.join("calls.log")).unwrap_or_default();
    text.lines().map(str::to_string).collect()
}

/// Waits until a logged call starts with `prefix`; returns every call so far.
fn wait_call(logs: &Path, prefix: &str) -> Vec<String> {
    wait_for(&format!("a call '{prefix}'"), || {
        let c = calls(logs);
        c.iter().any(|l| l.starts_with(prefix)).then_some(c)
    })
}

/// Waits until `n` logged calls start with `prefix`.
fn wait_calls(logs: &Path, prefix: &str, n: usize) {
    wait_for(&format!("{n} calls '{prefix}'"), || {
        (calls(logs).iter().filter(|l| l.starts_with(prefix)).count() >= n).then_some(())
    });
}

fn index(calls: &[String], prefix: &str) -> usize {
    calls.iter().position(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no '{prefix}' in {calls:#?}"))
}

fn show_job(e: &Cluster, id: u64) -> String {
    e.ok("scontrol", &format!("show job {id}"))
}

#[test]
fn every_callback_runs_with_its_tables_in_order() {
    let logs = tempfile::tempdir().unwrap();
    let e = start(logs.path(), 0, |t| t);
    let first = calls(logs.path());
    assert_eq!(first, ["create_context qpu qpu1:0/-1"], "create context sees nothing used");

    // Validate arguments refuses at submit, with the plugin's message.
    let out = e.fails("sbatch", &["-L", "qpu:1[bad=1]", "--wrap=true"]);
    assert!(out.contains("argument bad=1 is not allowed"), "{out}");

    let out = e.dir.path().join("ok.out");
    let script = "#!/bin/sh\ngrep -o 'token=[0-9]*' \"$SPUR_HRES_PREP\"\n";
    let sh = e.dir.path().join("ok.sh");
    std::fs::write(&sh, script).unwrap();
    let (o, sh) = (out.display().to_string(), sh.display().to_string());
    let id = e.sbatch(&["-L", "qpu:1[mode=fast,shots=10]", "-o", &o, &sh]);
    e.wait_field(id, "%T", "COMPLETED");
    let c = wait_call(logs.path(), "controller_epilog");
    let order = [
        "validate_args qpu mode=fast,shots=10",
        &format!("prerun qpu job={id} sluid={id}."),
        &format!("job_prolog qpu job={id} payload=token={id}"),
        &format!("task_prolog qpu job={id} tid=0/0 prep_env=true"),
        &format!("user_task_prolog qpu job={id} tid=0/0"),
        &format!("task_epilog qpu job={id} tid=0/0"),
        &format!("job_epilog qpu job={id}"),
        &format!("controller_epilog qpu job={id} payload=token={id}"),
    ];
    let at: Vec<usize> = order.iter().map(|p| index(&c, p)).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "out of order: {c:#?}");
    let prerun = &c[at[1]];
    assert!(prerun.contains("user=0 part=batch nodes=node0"), "{prerun}");
    assert!(prerun.contains("args=mode=fast,shots=10 layers=qpu1*1@node0"), "{prerun}");
    let printed = std::fs::read_to_string(&out).unwrap();
    assert_eq!(printed, format!("user task prolog of qpu\ntoken={id}\n"), "the job reads its payload");
    assert!(show_job(&e, id).contains("Licenses=qpu:1[mode=fast,shots=10]"));

    // ERROR from the pre-run holds the job with the plugin's message.
    let held = e.sbatch(&["-L", "qpu:1[fail=prerun]", "--wrap=true"]);
    e.wait_field(held, "%r", "HresPluginHeld");
    let shown = show_job(&e, held);
    assert!(shown.contains(&format!("the service refused job {held}")), "{shown}");
    // REMOTE_FAIL leaves it pending, tried again each pass, not held.
    let remote = e.sbatch(&["-L", "qpu:1[fail=remote]", "--wrap=true"]);
    e.wait_field(remote, "%r", "HresRemoteFail");
    wait_calls(logs.path(), &format!("prerun qpu job={remote} "), 2);
    assert_eq!(e.field(remote, "%T"), "PENDING");
    e.ok("scancel", &remote.to_string());

    // A job prolog failing with REMOTE_FAIL requeues the job; the node stays up.
    let requeued = e.sbatch(&["-L", "qpu:1[fail=prolog_remote]", "--wrap=true"]);
    wait_calls(logs.path(), &format!("job_prolog qpu job={requeued} "), 2);
    e.ok("scancel", &requeued.to_string());
    assert!(!e.ok("sinfo", "-h -o %t").contains("drain"), "{}", e.ok("sinfo", "-R"));

    // An epilog failing with ERROR drains the node; the job itself completed.
    let ended = e.sbatch(&["-L", "qpu:1[fail=epilog]", "--wrap=true"]);
    e.wait_field(ended, "%T", "COMPLETED");
    wait_for("the node drained", || {
        let r = e.ok("sinfo", "-R -h -o %E");
        r.contains("HRES plugin job epilog failed").then_some(())
    });
}

#[test]
fn a_slow_pre_run_hits_its_deadline_and_a_changed_script_is_reloaded() {
    let logs = tempfile::tempdir().unwrap();
    let e = start(logs.path(), 0, |t| t.set("hres", "callback_timeout_ms", 200));
    let slow = e.sbatch(&["-L", "qpu:1[fail=slow]", "--wrap=true"]);
    e.wait_field(slow, "%r", "HresPluginHeld");
    let shown = show_job(&e, slow);
    assert!(shown.contains("timed out after 200 ms"), "{shown}");

    // A new payload from a changed script, without create context again.
    let script = e.dir.path().join("recorder.lua");
    let text = RECORDER.replace("\"token=\" .. job.job_id", "\"token2=\" .. job.job_id");
    std::fs::write(&script, text).unwrap();
    let out = e.dir.path().join("reload.out");
    let id = e.sbatch(&[
        "-L",
        "qpu:1",
        "-o",
        &out.display().to_string(),
        "--wrap=grep -o 'token2=[0-9]*' $SPUR_HRES_PREP",
    ]);
    e.wait_field(id, "%T", "COMPLETED");
    let printed = std::fs::read_to_string(&out).unwrap();
    assert!(printed.ends_with(&format!("\ntoken2={id}\n")), "{printed}");
    let creates = calls(logs.path()).iter().filter(|l| l.starts_with("create_context")).count();
    assert_eq!(creates, 1, "a reload does not call create context");

    // A script that no longer loads: the controller keeps the last good one
    // (the pre-run still runs), while on the node it fails the job prolog,
    // so the job goes back to the queue and the node is drained.
    std::fs::write(&script, "this is not lua").unwrap();
    let kept = e.sbatch(&["-L", "qpu:1", "--wrap=true"]);
    wait_call(logs.path(), &format!("prerun qpu job={kept} "));
    wait_for("a node drained", || {
        let r = e.ok("sinfo", "-R -h -o %E");
        (r.contains("HRES plugin job prolog failed") && r.contains("recorder.lua: cannot load")).then_some(())
    });
    e.ok("scancel", &kept.to_string());
}

#[test]
fn an_async_pre_run_keeps_the_job_configuring_and_its_payload_wins() {
    let logs = tempfile::tempdir().unwrap();
    let script = format!("{RECORDER}{ASYNC}");
    let e = start_script(logs.path(), 0, |t| t, &script);
    let go = |id: u64| std::fs::write(logs.path().join(format!("go-{id}")), "").unwrap();

    let out = e.dir.path().join("async.out");
    let cmd = "--wrap=grep -o 'async=[0-9]*' $SPUR_HRES_PREP";
    let id = e.sbatch(&["-L", "qpu:1", "-o", &out.display().to_string(), cmd]);
    e.wait_field(id, "%T", "CONFIGURING");
    let c = wait_call(logs.path(), &format!("async_prerun qpu job={id} payload=token={id}"));
    assert!(
        !c.iter().any(|l| l.starts_with(&format!("job_prolog qpu job={id}"))),
        "not launched yet: {c:#?}"
    );
    go(id);
    e.wait_field(id, "%T", "COMPLETED");
    assert!(std::fs::read_to_string(&out).unwrap().ends_with(&format!("async={id}\n")));

    // Cancelled while CONFIGURING: the epilog says the async pre-run still
    // runs; its result, when it comes, is dropped and revoked.
    let gone = e.sbatch(&["-L", "qpu:1", "--wrap=true"]);
    e.wait_field(gone, "%T", "CONFIGURING");
    e.ok("scancel", &gone.to_string());
    wait_call(
        logs.path(),
        &format!("controller_epilog qpu job={gone} payload=token={gone} async_running=true"),
    );
    go(gone);
    wait_call(logs.path(), &format!("revoke qpu job={gone} async_running=false"));

    // A failing async pre-run requeues the job.
    let failed = e.sbatch(&["-L", "qpu:1[fail=async]", "--requeue", "--wrap=true"]);
    e.wait_field(failed, "%T", "CONFIGURING");
    go(failed);
    wait_calls(logs.path(), &format!("async_prerun qpu job={failed} "), 2);
    e.ok("scancel", &failed.to_string());
}

#[test]
fn maintenance_disables_and_downs_layers() {
    let logs = tempfile::tempdir().unwrap();
    let e = start(logs.path(), 1, |t| t);
    let running = e.sbatch(&["-L", "qpu:1", "--requeue", "--wrap=sleep 300"]);
    e.wait_field(running, "%T", "RUNNING");
    std::fs::write(logs.path().join("maint"), "down qpu1\n").unwrap();
    // Down requeues the job on the layer, and disables the layer.
    wait_for("the job requeued", || (e.field(running, "%T") == "PENDING").then_some(()));
    wait_for("the layer marked down", || {
        let s = e.ok("scontrol", "show license qpu");
        (s.contains("DisableLayer=true") && s.contains("PluginMark=down")).then_some(s)
    });
    let s = e.ok("scontrol", "show license qpu");
    assert!(s.contains("Plugin=hres/lua") && s.contains("maintenance saw 'down qpu1'"), "{s}");
    // Cleared: the layer is enabled again and the job runs.
    std::fs::write(logs.path().join("maint"), "").unwrap();
    e.wait_field(running, "%T", "RUNNING");
    assert!(e.ok("scontrol", "show license qpu").contains("DisableLayer=false"));
}

#[test]
fn a_script_missing_a_function_stops_the_controller_from_starting() {
    let dir = tempfile::tempdir().unwrap();
    let broken = RECORDER.replace("function hres_node_task_epilog", "function not_the_task_epilog");
    std::fs::write(dir.path().join("recorder.lua"), broken).unwrap();
    std::fs::write(dir.path().join("resources.yaml"), resources(dir.path(), 0)).unwrap();
    let toml = ClusterToml::new().nodes("node[01-02]", 4, 8192).partition("batch", "node[01-02]").build();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let path = dir.path().join("spur.conf");
    std::fs::write(&path, conf(&db, &toml)).unwrap();
    let out = std::process::Command::new(spur_tests::proc::bin("spurctld"))
        .arg("--config")
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("function hres_node_task_epilog is not defined"), "{err}");
    assert!(err.contains("recorder.lua"), "{err}");
}

#[test]
fn the_pages_qpu_example_hands_the_job_its_token() {
    let yaml = include_str!("../../examples/hres-plugin/resources.yaml");
    let lua = include_str!("../../examples/hres-plugin/qpu.lua");
    let e = Cluster::two_nodes(|t| t, &[("resources.yaml", yaml), ("qpu.lua", lua)]);
    let out = e.dir.path().join("qpu.out");
    let cmd = "--wrap=grep -o 'token=[0-9]*' $SPUR_HRES_PREP";
    let id = e.sbatch(&["-L", "qpu:1[mode=fast]", "-o", &out.display().to_string(), cmd]);
    e.wait_field(id, "%T", "COMPLETED");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), format!("token={id}\n"));
    let shown = e.ok("scontrol", "show license qpu");
    let path = e.dir.path().join("qpu.lua").display().to_string();
    assert!(shown.contains(&format!("Plugin=hres/lua PluginPath={path} ")), "{shown}");
}

#[test]
fn a_step_node_runs_the_job_prolog_before_its_first_step_and_the_epilog_at_the_end() {
    let logs = tempfile::tempdir().unwrap();
    let e = start(logs.path(), 0, |t| t);
    let script = "#!/bin/sh\nsrun -N 2 -n 2 true\nsrun -N 2 -n 2 true\n";
    let file = e.dir.path().join("steps.sh");
    std::fs::write(&file, script).unwrap();
    let path = format!("{}:{}", links_dir().display(), std::env::var("PATH").unwrap_or_default());
    let (dir, file) = (e.dir.path().display().to_string(), file.display().to_string());
    let args = ["--parsable", "-D", &dir, "-N", "2", "-L", "qpu:1", &file];
    let out = run_with("sbatch", &e.c.url, &args, &[("PATH", &path)]);
    let id: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().expect("a job id");
    e.wait_field(id, "%T", "COMPLETED");
    // node01's supervisor before the script, node02 before its first step only.
    wait_calls(logs.path(), &format!("job_epilog qpu job={id}"), 2);
    let c = calls(logs.path());
    let n = |p: &str| c.iter().filter(|l| l.starts_with(&format!("{p} qpu job={id}"))).count();
    assert_eq!((n("job_prolog"), n("task_prolog"), n("task_epilog")), (2, 5, 5), "{c:#?}");
}

#[test]
fn every_array_task_started_in_one_pass_gets_its_own_run() {
    let logs = tempfile::tempdir().unwrap();
    let e = start(logs.path(), 0, |t| t);
    let out = e.dir.path().join("a-%a.out").display().to_string();
    e.sbatch(&["-a", "1-3", "-L", "qpu:1", "-o", &out, "--wrap=grep -c token= $SPUR_HRES_PREP"]);
    wait_for("three tasks done", || {
        let done = (1..=3).filter(|t| {
            std::fs::read_to_string(e.dir.path().join(format!("a-{t}.out")))
                .is_ok_and(|s| s.ends_with("qpu\n1\n"))
        });
        (done.count() == 3).then_some(())
    });
    wait_calls(logs.path(), "controller_epilog qpu", 3);
}

/// A job prolog that waits for `hold-JOBID` in the log directory.
const SLOW_PROLOG: &str = r#"
function hres_node_job_prolog(prep, job)
  log(prep.config, "job_prolog " .. prep.name .. " job=" .. job.job_id)
  local hold = prep.config.log:gsub("calls.log$", "hold-" .. job.job_id)
  while not io.open(hold, "r") do os.execute("sleep 0.05") end
end
"#;

#[test]
fn an_agent_restarted_during_a_job_prolog_adopts_the_job_which_runs_once() {
    let logs = tempfile::tempdir().unwrap();
    let mut e = start_script(logs.path(), 0, |t| t, &format!("{RECORDER}\n{SLOW_PROLOG}"));
    let ran = logs.path().join("ran");
    let id = e.sbatch(&["-L", "qpu:1", &format!("--wrap=echo x >> {}", ran.display())]);
    wait_call(logs.path(), &format!("job_prolog qpu job={id}"));
    e.restart_agent();
    // The new agent registered and reconciled with the job still in its prolog.
    let probe = e.sbatch(&["--wrap=true"]);
    e.wait_field(probe, "%T", "COMPLETED");
    assert_eq!(e.field(id, "%T"), "RUNNING", "adopted, not lost and requeued");
    std::fs::write(logs.path().join(format!("hold-{id}")), "").unwrap();
    e.wait_field(id, "%T", "COMPLETED");
    assert_eq!(std::fs::read_to_string(&ran).unwrap(), "x\n", "the script ran once");
}

#[test]
fn a_long_job_prolog_holds_up_no_other_launch_on_its_node() {
    let logs = tempfile::tempdir().unwrap();
    let e = start_script(logs.path(), 0, |t| t, &format!("{RECORDER}\n{SLOW_PROLOG}"));
    let held = e.sbatch(&["-L", "qpu:1", "-w", "node01", "--wrap=true"]);
    wait_call(logs.path(), &format!("job_prolog qpu job={held}"));
    // The same agent launches and finishes another job while the prolog waits.
    let other = e.sbatch(&["-w", "node02", "--wrap=true"]);
    e.wait_field(other, "%T", "COMPLETED");
    assert_eq!(e.field(held, "%T"), "RUNNING");
    std::fs::write(logs.path().join(format!("hold-{held}")), "").unwrap();
    e.wait_field(held, "%T", "COMPLETED");
}
