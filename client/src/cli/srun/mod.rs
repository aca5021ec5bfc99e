//! `srun` (also `spur run`): runs a job step. Inside an allocation
//! (`SLURM_JOB_ID` set, or `--jobid`) the step runs on the job's nodes;
//! outside one, srun first submits an allocation with no batch script,
//! waits for it to start, runs the command as its step 0, and the job ends
//! with the step. Options stop at the command (getopt's `+`), and the input
//! environment variables of srun's man page give the defaults the command
//! line overrides (`SLURM_NTASKS`, `SLURM_CPUS_PER_TASK`, ...).
//!
//! - this file: the options, and the request they make (pure).
//! - [`output`]: the tasks' output on srun's stdout/stderr (`-l` labels) or in `-o/-e` files.
//! - [`session`]: the step's stream: events in, Ctrl-C and other signals out.

pub mod output;
pub mod session;

use super::getopt::{Mode, Opt, Spec, check, switch, value};
use super::submit_opts::{export, parse_mem};
use crate::vocab::TimeLimit;
use crate::vocab::hostlist;
use spur_proto::v1 as pb;
use std::path::Path;

pub const USAGE: &str = "\
usage: srun [OPTIONS] COMMAND [ARGS...]
  -n, --ntasks=N           tasks in the step         -N, --nodes=N         nodes of the step
  --ntasks-per-node=N      -c, --cpus-per-task=N     --mem=SIZE            per node (MB, or K/M/G/T)
  -w, --nodelist=LIST      nodes of the job to run on
  -l, --label              prefix each line of output with its task id (0: ...)
  -o, --output=PATTERN     -e, --error=PATTERN   %j %J %s %t %n %N %u %x %%; with %t, %n or %N
                           the file is written on the task's node, else by srun; `none` discards
  -u, --unbuffered         accepted (output is relayed as it comes)
  --export=ALL|NONE|VAR,...  which of srun's variables the tasks get (default ALL)
  -K, --kill-on-bad-exit[=0|1]   a task exiting non-zero ends the step
  -J, --job-name=NAME      the step's name (outside an allocation: the job's too)
  -O, --overcommit         more tasks x CPUs than the job has on a node
  -D, --chdir=DIR          --jobid=ID   -Q, --quiet
Outside an allocation also: -p PARTITION -A ACCOUNT -q QOS -t TIME -x LIST --exclusive.
srun exits with the highest exit code of its tasks (128+N for one killed by signal N).
Ctrl-C sends SIGINT to the tasks; a second one within a second cancels the step.";

static OPTIONS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Leading, noun: "option" };
const OPTS: &[Opt<Args>] = &[
    check("n/ntasks", |a, v| count("ntasks", &v).map(|n| a.ntasks = Some(n))),
    check("N/nodes", |a, v| count("nodes", &v).map(|n| a.nodes = Some(n))),
    check("-/ntasks-per-node", |a, v| count("ntasks-per-node", &v).map(|n| a.ntasks_per_node = Some(n))),
    check("c/cpus-per-task", |a, v| count("cpus-per-task", &v).map(|n| a.cpus_per_task = Some(n))),
    check("-/mem", |a, v| parse_mem("mem", &v).map(|m| a.mem_mb = Some(m))),
    check("w/nodelist", |a, v| hosts("nodelist", &v).map(|h| a.nodelist = h)),
    check("x/exclude", |a, v| hosts("exclude", &v).map(|h| a.exclude = h)),
    switch("l/label", |a| a.label = true),
    value("o/output", |a, v| a.output = v),
    value("e/error", |a, v| a.error = v),
    switch("u/unbuffered", |_| {}),
    value("-/export", |a, v| a.export = Some(v)),
    switch("K/kill-on-bad-exit", |a| a.kill_on_bad_exit = Some(true)),
    // `-K0`/`--kill-on-bad-exit=0`, rewritten before parsing (the value is optional).
    switch("-/no-kill-on-bad-exit", |a| a.kill_on_bad_exit = Some(false)),
    value("J/job-name", |a, v| a.name = v),
    switch("O/overcommit", |a| a.overcommit = true),
    value("D/chdir", |a, v| a.chdir = Some(v)),
    check("-/jobid", |a, v| {
        v.trim()
            .parse::<u64>()
            .map(|id| a.jobid = Some(id))
            .map_err(|_| format!("--jobid: '{v}' is not a job id"))
    }),
    value("p/partition", |a, v| a.partition = v),
    value("A/account", |a, v| a.account = v),
    value("q/qos", |a, v| a.qos = v),
    check("t/time", |a, v| {
        TimeLimit::parse_request(&v).map(|t| a.time = t.minutes()).map_err(|e| format!("--time: {e}"))
    }),
    switch("-/exclusive", |a| a.exclusive = true),
    switch("Q/quiet", |a| a.quiet = true),
    switch("v/verbose", |_| {}),
    switch("h/help", |a| a.help = true),
    switch("-/usage", |a| a.help = true),
    value("-/controller", |a, v| a.controller = Some(v)),
];

/// srun's command line, and the defaults its environment gave.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    pub ntasks: Option<u32>,
    pub nodes: Option<u32>,
    pub ntasks_per_node: Option<u32>,
    pub cpus_per_task: Option<u32>,
    pub mem_mb: Option<u64>,
    pub nodelist: String,
    pub exclude: String,
    pub label: bool,
    pub output: String,
    pub error: String,
    pub export: Option<String>,
    pub kill_on_bad_exit: Option<bool>,
    pub name: String,
    pub overcommit: bool,
    pub chdir: Option<String>,
    pub jobid: Option<u64>,
    pub partition: String,
    pub account: String,
    pub qos: String,
    pub time: Option<u64>,
    pub exclusive: bool,
    pub quiet: bool,
    pub help: bool,
    pub controller: Option<String>,
    /// The command and its arguments.
    pub argv: Vec<String>,
}

fn count(name: &str, v: &str) -> Result<u32, String> {
    match v.trim().parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("--{name}: '{v}' is not a positive whole number")),
    }
}

fn hosts(flag: &str, v: &str) -> Result<String, String> {
    hostlist::count(v).map(|_| v.to_string()).map_err(|e| format!("--{flag}: {e}"))
}

/// `-K0`, `-K1`, `--kill-on-bad-exit=N`: an optional value getopt's table cannot hold.
fn optional_values(argv: &[String]) -> Vec<String> {
    let mut out = vec![];
    let mut words = false;
    for a in argv {
        if words || !a.starts_with('-') || a == "--" {
            words = words || !a.starts_with('-') || a == "--";
            out.push(a.clone());
            continue;
        }
        let v =
            a.strip_prefix("--kill-on-bad-exit=").or_else(|| a.strip_prefix("-K").filter(|r| !r.is_empty()));
        out.push(match v {
            Some("0") => "--no-kill-on-bad-exit".into(),
            Some(_) => "--kill-on-bad-exit".into(),
            None => a.clone(),
        });
    }
    out
}

/// Parses srun's arguments over the defaults of `env` (srun's INPUT
/// ENVIRONMENT VARIABLES); the command line wins.
pub fn parse(argv: &[String], env: &[(String, String)]) -> Result<Args, String> {
    let get = |k: &str| env.iter().find(|(key, _)| key == k).map(|(_, v)| v.trim().to_string());
    let mut a = Args::default();
    let num = |k: &str| get(k).and_then(|v| v.parse::<u32>().ok()).filter(|n| *n > 0);
    a.ntasks = num("SLURM_NTASKS").or_else(|| num("SLURM_NPROCS"));
    a.cpus_per_task = num("SLURM_CPUS_PER_TASK");
    a.ntasks_per_node = num("SLURM_NTASKS_PER_NODE");
    a.label = get("SLURM_LABELIO").is_some_and(|v| v == "1");
    a.kill_on_bad_exit = get("SLURM_KILL_BAD_EXIT").map(|v| v == "1");
    a.export = get("SRUN_EXPORT_ENV").or_else(|| get("SLURM_EXPORT_ENV"));
    a.jobid = get("SLURM_JOB_ID").and_then(|v| v.parse().ok());
    a.argv = OPTIONS.parse(&optional_values(argv), &mut a)?;
    if a.help {
        return Ok(a);
    }
    if a.argv.is_empty() {
        return Err("no command given (srun [OPTIONS] COMMAND [ARGS...])".into());
    }
    Ok(a)
}

/// The directory the step runs in.
pub fn workdir(a: &Args, cwd: &Path) -> String {
    a.chdir.as_deref().map_or_else(|| cwd.to_path_buf(), |d| cwd.join(d)).to_string_lossy().into_owned()
}

/// A pattern the nodes expand (one file per task or node); the others srun writes itself.
pub fn on_nodes(pattern: &str) -> bool {
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            let code = chars.by_ref().find(|c| !c.is_ascii_digit());
            if matches!(code, Some('t' | 'n' | 'N')) {
                return true;
            }
        }
    }
    false
}

/// The command's program found as srun's man page says: a path as given,
/// else the first match on srun's PATH; unchanged when none is found (the
/// node then says why it cannot run it).
pub fn resolve(prog: &str, path: Option<&str>, cwd: &Path) -> String {
    if prog.contains('/') {
        return prog.to_string();
    }
    let hit =
        path.unwrap_or("").split(':').filter(|d| !d.is_empty()).map(|d| cwd.join(d).join(prog)).find(|p| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        });
    hit.map_or_else(|| prog.to_string(), |p| p.to_string_lossy().into_owned())
}

/// The step's name: `-J`, else its program's.
pub fn name(a: &Args) -> String {
    if !a.name.is_empty() {
        return a.name.clone();
    }
    let prog = a.argv.first().map_or("", String::as_str);
    Path::new(prog).file_name().map_or(prog.to_string(), |n| n.to_string_lossy().into_owned())
}

/// The step to run in job `job_id` (`release`: the allocation srun made for it).
pub fn step(
    a: &Args,
    env: &[(String, String)],
    cwd: &Path,
    job_id: u64,
    release: bool,
) -> Result<pb::StepRequest, String> {
    let vars = export(a.export.as_deref().unwrap_or(""), env)?;
    let path = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_str());
    let mut argv = a.argv.clone();
    if let Some(p) = argv.first_mut() {
        *p = resolve(p, path, cwd);
    }
    let wd = workdir(a, cwd);
    let node_side = |p: &str| if on_nodes(p) { absolute(p, &wd) } else { String::new() };
    Ok(pb::StepRequest {
        job_id,
        name: if a.name.is_empty() { String::new() } else { a.name.clone() },
        ntasks: a.ntasks.unwrap_or(0),
        nodes: a.nodes.unwrap_or(0),
        ntasks_per_node: a.ntasks_per_node.unwrap_or(0),
        cpus_per_task: a.cpus_per_task.unwrap_or(0),
        mem_mb: a.mem_mb.unwrap_or(0),
        nodelist: a.nodelist.clone(),
        argv,
        env: vars.into_iter().map(|(key, value)| pb::KeyValue { key, value }).collect(),
        workdir: wd.clone(),
        stdout_path: node_side(&a.output),
        // Without -e, stderr goes where -o sends stdout.
        stderr_path: if a.error.is_empty() { String::new() } else { node_side(&a.error) },
        kill_on_bad_exit: a.kill_on_bad_exit.unwrap_or(false),
        release,
        overcommit: a.overcommit,
    })
}

fn absolute(p: &str, wd: &str) -> String {
    if p.starts_with('/') { p.to_string() } else { format!("{wd}/{p}") }
}

/// The allocation srun makes outside a job: no script, the shape asked, never requeued.
pub fn allocation(a: &Args, env: &[(String, String)], cwd: &Path) -> Result<pb::JobSpec, String> {
    let vars = export(a.export.as_deref().unwrap_or(""), env)?;
    Ok(pb::JobSpec {
        name: name(a),
        account: a.account.clone(),
        partition: a.partition.clone(),
        qos: a.qos.clone(),
        num_nodes: a.nodes.unwrap_or(0),
        ntasks: a.ntasks.unwrap_or(0),
        cpus_per_task: a.cpus_per_task.unwrap_or(0),
        mem_mb: a.mem_mb.unwrap_or(0),
        ntasks_per_node: a.ntasks_per_node.unwrap_or(0),
        time_limit_minutes: a.time,
        nodelist: a.nodelist.clone(),
        exclude: a.exclude.clone(),
        exclusive: a.exclusive,
        requeue: Some(false),
        workdir: workdir(a, cwd),
        env: vars.into_iter().map(|(key, value)| pb::KeyValue { key, value }).collect(),
        allocation: true,
        ..Default::default()
    })
}

/// Runs srun with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    let env: Vec<(String, String)> = std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        .collect();
    let a = match parse(argv, &env) {
        Ok(a) if a.help => return super::output::emit("srun", &format!("{USAGE}\n")),
        Ok(a) => a,
        Err(e) => {
            super::output::complain(&format!("srun: error: {e}"));
            return 1;
        }
    };
    match session::run(&a, &env).await {
        Ok(code) => code,
        Err(e) => {
            super::output::complain(&format!("srun: error: {}", e.replace('\n', " ")));
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn options_stop_at_the_command_and_the_environment_gives_defaults() {
        let env = kv(&[("SLURM_JOB_ID", "12"), ("SLURM_NTASKS", "4"), ("SLURM_CPUS_PER_TASK", "2")]);
        let a = parse(&v(&["-l", "hostname", "-n", "2"]), &env).unwrap();
        assert_eq!((a.jobid, a.ntasks, a.cpus_per_task, a.label), (Some(12), Some(4), Some(2), true));
        assert_eq!(a.argv, ["hostname", "-n", "2"]);
        let a = parse(&v(&["-n2", "-c", "1", "-K", "--", "sh", "-c", "x"]), &env).unwrap();
        assert_eq!((a.ntasks, a.cpus_per_task, a.kill_on_bad_exit), (Some(2), Some(1), Some(true)));
        assert_eq!(a.argv, ["sh", "-c", "x"]);
        assert_eq!(parse(&v(&["-K0", "true"]), &[]).unwrap().kill_on_bad_exit, Some(false));
        assert_eq!(parse(&v(&["--kill-on-bad-exit=1", "true"]), &[]).unwrap().kill_on_bad_exit, Some(true));
        assert_eq!(parse(&v(&["true", "-K0"]), &[]).unwrap().argv, ["true", "-K0"], "the command's own");
        let e = |args: &[&str]| parse(&v(args), &[]).unwrap_err();
        assert_eq!(e(&["-n", "x", "true"]), "--ntasks: 'x' is not a positive whole number");
        assert_eq!(e(&["--bogus", "true"]), "unrecognised option '--bogus'");
        assert!(e(&["-n", "2"]).starts_with("no command given"));
        assert!(e(&["--mem=lots", "true"]).starts_with("--mem: "));
        assert!(parse(&v(&["--help"]), &[]).unwrap().help);
    }

    #[test]
    fn the_step_request_carries_the_shape_the_environment_and_node_side_files() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let prog = bin.join("tool");
        std::fs::write(&prog, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
        let env = kv(&[("PATH", &bin.display().to_string()), ("HOME", "/h"), ("SLURM_JOB_ID", "7")]);
        let a = parse(&v(&["-n", "3", "-o", "out-%t.txt", "--export=NONE", "tool", "x"]), &env).unwrap();
        let r = step(&a, &env, dir.path(), 7, false).unwrap();
        assert_eq!((r.job_id, r.ntasks, r.nodes), (7, 3, 0));
        assert_eq!(r.argv, [prog.display().to_string(), "x".to_string()]);
        assert_eq!(r.stdout_path, format!("{}/out-%t.txt", dir.path().display()));
        assert!(r.env.iter().all(|kv| kv.key.starts_with("SLURM_")), "--export=NONE");
        let a = parse(&v(&["-o", "all-%j.txt", "nosuch"]), &env).unwrap();
        let r = step(&a, &env, dir.path(), 7, true).unwrap();
        assert_eq!((r.stdout_path.as_str(), r.argv[0].as_str(), r.release), ("", "nosuch", true));
        assert!(on_nodes("%N.log") && on_nodes("x-%3t") && !on_nodes("%j-%s.out") && !on_nodes("100%%"));
        let spec =
            allocation(&parse(&v(&["-N2", "-J", "hi", "hostname"]), &[]).unwrap(), &env, dir.path()).unwrap();
        assert_eq!(
            (spec.num_nodes, spec.name.as_str(), spec.allocation, spec.requeue),
            (2, "hi", true, Some(false))
        );
        assert_eq!(name(&parse(&v(&["/bin/hostname"]), &[]).unwrap()), "hostname");
    }
}
