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
//! - [`multiprog`]: `--multi-prog`'s file, and `--task-prolog`/`--task-epilog`'s wrapper.

pub mod input;
pub mod multiprog;
mod nodes;
pub mod output;
pub mod session;

use super::family::{Family, why};
use super::getopt::{Arg, Mode, Opt, Spec, check, ignored, ignored_switch, join, maybe, switch, value};
use super::submit_opts::export;
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
  --multi-prog FILE        each task runs its line of FILE (RANKS PROGRAM ARGS; %t, %o)
  --mpi=none|list          Spur starts tasks without PMI
Outside an allocation also: -p PARTITION -A ACCOUNT -q QOS -t TIME -x LIST --exclusive.
srun exits with the highest exit code of its tasks (128+N for one killed by signal N).
Ctrl-C sends SIGINT to the tasks; a second one within a second cancels the step.
Every option of Slurm's srun is accepted; one Spur has no mechanism for prints one warning.";

static OPTIONS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Leading, noun: "option" };
const OPTS: &[Opt<Args>] = &join::<Args, { OWN.len() + Family::<Args>::OPTS.len() }>(OWN, Family::OPTS);
/// srun's own options; the family's ([`Family`]) are sbatch's and salloc's too.
const OWN: &[Opt<Args>] = &[
    switch("l/label", |a| a.label = true),
    value("o/output", |a, v| a.output = v),
    value("e/error", |a, v| a.error = v),
    switch("u/unbuffered", |_| {}),
    value("-/export", |a, v| a.export = Some(v)),
    maybe("K/kill-on-bad-exit", |a, v| {
        a.kill_on_bad_exit = Some(match v.as_deref().map(str::trim) {
            None | Some("1") => true,
            Some("0") => false,
            Some(o) => return Err(format!("--kill-on-bad-exit: '{o}' is not 0 or 1")),
        });
        Ok(())
    }),
    switch("O/overcommit", |a| a.overcommit = true),
    value("D/chdir", |a, v| a.chdir = Some(v)),
    check("-/jobid", |a, v| {
        v.trim()
            .parse::<u64>()
            .map(|id| a.jobid = Some(id))
            .map_err(|_| format!("--jobid: '{v}' is not a job id"))
    }),
    check("-/mpi", mpi),
    check("-/het-group", |_, v| {
        Err(format!("--het-group={v}: heterogeneous jobs are not supported by Spur"))
    }),
    // A single Ctrl-C already sends SIGINT to the tasks, which is what -X asks.
    switch("X/disable-status", |_| {}),
    switch("-/quit-on-interrupt", |a| a.quit_on_interrupt = true),
    // A step gets the CPUs its tasks ask, and may share the job's CPUs with other steps.
    switch("-/exact", |_| {}),
    switch("-/overlap", |_| {}),
    ignored_switch("E/preserve-env", "tasks get the SLURM_NTASKS and SLURM_NNODES of their step"),
    switch("Q/quiet", |a| a.quiet = true),
    switch("v/verbose", |a| a.verbose = a.verbose.saturating_add(1)),
    switch("V/version", |a| a.version = true),
    switch("h/help", |a| a.help = true),
    switch("-/usage", |a| a.help = true),
    value("-/controller", |a, v| a.controller = Some(v)),
    maybe("-/bcast", |_, _| Ok(())).noted(BCAST),
    ignored("-/bcast-exclude", BCAST),
    maybe("-/compress", |_, _| Ok(())).noted(BCAST),
    check("-/cpu-bind", |a, v| {
        spur_vocab::cpubind::cpus(&v, 0)?;
        a.cpu_bind = Some(v.trim().to_string());
        Ok(())
    }),
    value("-/epilog", |a, v| a.epilog = Some(v).filter(|v| v != "none")),
    value("-/prolog", |a, v| a.prolog = Some(v).filter(|v| v != "none")),
    value("-/task-epilog", |a, v| a.task_epilog = Some(v)),
    value("-/task-prolog", |a, v| a.task_prolog = Some(v)),
    ignored_switch("-/external-launcher", "steps are launched by Spur's node agents only"),
    maybe("I/immediate", |a, v| super::family::immediate(v).map(|n| a.immediate = Some(n))),
    check("i/input", |a, v| input::parse(&v).map(|i| a.input = i)),
    ignored("-/msg-timeout", TIMEOUTS),
    switch("-/multi-prog", |a| a.multi_prog = true),
    ignored_switch("Z/no-allocate", "steps run only inside an allocation"),
    maybe("-/propagate", |a, v| {
        a.propagate = Some(v.unwrap_or_default());
        Ok(())
    }),
    switch("-/pty", |a| a.pty = true),
    check("r/relative", |a, v| {
        let n = v.trim().parse::<u32>().map_err(|_| format!("--relative: '{v}' is not a node index"))?;
        a.relative = Some(n);
        Ok(())
    }),
    maybe("-/send-libs", |_, _| Ok(())).noted(BCAST),
    ignored("-/slurmd-debug", "the node agent's log level is set where it runs"),
    switch("-/test-only", |a| a.test_only = true),
    ignored("T/threads", TIMEOUTS),
    ignored("-/treewidth", TIMEOUTS),
    check("W/wait", |a, v| {
        let n = v.trim().parse::<u64>().map_err(|_| format!("--wait: '{v}' is not a number of seconds"))?;
        a.wait = (n > 0).then_some(n);
        Ok(())
    }),
    ignored_switch("-/wait-for-children", "a task ends when its process ends"),
    maybe("-/x11", |_, _| Ok(())).noted(why::X11),
    check("-/open-mode", |a, v| {
        a.append = super::submit_opts::open_mode(&v)? == "append";
        Ok(())
    }),
];

const BCAST: &str = "files are not copied to the nodes; the program must be on a shared file system";
const TIMEOUTS: &str = "srun talks to the controller only, over one stream";

/// `--mpi`: Spur starts tasks with no MPI plugin; `list` names what it has.
fn mpi(a: &mut Args, v: String) -> Result<(), String> {
    match v.trim() {
        "list" => a.mpi_list = true,
        "none" => {}
        other => {
            return Err(format!(
                "--mpi={other}: Spur supports only --mpi=none (tasks get SLURM_PROCID, SLURM_NTASKS and \
                 SLURM_NODEID; an MPI built for PMI2 or PMIx cannot start its ranks)"
            ));
        }
    }
    Ok(())
}

/// srun's command line, and the defaults its environment gave. The job's
/// shape and request are in `spec` (0 or empty: not given).
#[derive(Default)]
pub struct Args {
    pub spec: pb::JobSpec,
    pub begin: Option<String>,
    pub deadline: Option<String>,
    pub label: bool,
    pub output: String,
    /// `--open-mode=append` (or SLURM_OPEN_MODE=a): srun's own -o/-e files are appended to.
    pub append: bool,
    pub error: String,
    /// `-i/--input`: which tasks srun's stdin (or a file) feeds.
    pub input: input::Input,
    /// `--pty`: task 0 on a terminal; srun's own is raw while attached.
    pub pty: bool,
    pub export: Option<String>,
    pub kill_on_bad_exit: Option<bool>,
    pub overcommit: bool,
    pub chdir: Option<String>,
    pub jobid: Option<u64>,
    pub quiet: bool,
    /// `-v` (repeatable): Slurm's defined-options table, the job's nodes and each launch, on stderr.
    pub verbose: u8,
    pub quit_on_interrupt: bool,
    /// `--propagate[=...]` as given (empty: ALL).
    pub propagate: Option<String>,
    /// `--prolog`/`--epilog`: run by srun, where it runs, before and after the step.
    pub prolog: Option<String>,
    pub epilog: Option<String>,
    /// `--task-prolog`/`--task-epilog`: run on the node around each task.
    pub task_prolog: Option<String>,
    pub task_epilog: Option<String>,
    /// `-r`: the step's nodes start at this node of the job's.
    pub relative: Option<u32>,
    /// `--test-only`: when and where the allocation would start; nothing runs.
    pub test_only: bool,
    /// `-W`: seconds after the first task ends before the rest are ended (0: never).
    pub wait: Option<u64>,
    /// `-I`: seconds the allocation srun makes may pend before srun gives up.
    pub immediate: Option<u64>,
    /// `--cpu-bind` as given: `map_cpu:`/`mask_cpu:` bind the tasks; others warn.
    pub cpu_bind: Option<String>,
    /// `--multi-prog`: the command is a file mapping task ids to programs.
    pub multi_prog: bool,
    pub help: bool,
    pub version: bool,
    pub mpi_list: bool,
    pub controller: Option<String>,
    /// `-M`: checked against the controller's cluster before anything is submitted.
    pub clusters: Vec<String>,
    /// The command and its arguments.
    pub argv: Vec<String>,
    /// One line for each option given that has no effect on Spur.
    pub warnings: Vec<String>,
}

crate::cli::family::request_in_fields!(Args);

/// Parses srun's options only (no script, command or controller): what
/// they set and the warnings they print.
pub fn probe(args: &[String]) -> Result<crate::cli::getopt::Probe, String> {
    crate::cli::getopt::probe(&OPTIONS, "srun", args)
}

/// Parses srun's arguments over the defaults of `env` (srun's INPUT
/// ENVIRONMENT VARIABLES); the command line wins.
pub fn parse(argv: &[String], env: &[(String, String)]) -> Result<Args, String> {
    let get = |k: &str| env.iter().find(|(key, _)| key == k).map(|(_, v)| v.trim().to_string());
    let mut a = Args::default();
    let num = |k: &str| get(k).and_then(|v| v.parse::<u32>().ok()).filter(|n| *n > 0).unwrap_or(0);
    a.spec.ntasks = Some(num("SLURM_NTASKS")).filter(|n| *n > 0).unwrap_or_else(|| num("SLURM_NPROCS"));
    a.spec.cpus_per_task = num("SLURM_CPUS_PER_TASK");
    a.spec.ntasks_per_node = num("SLURM_NTASKS_PER_NODE");
    a.label = get("SLURM_LABELIO").is_some_and(|v| v == "1");
    a.overcommit = get("SLURM_OVERCOMMIT").is_some_and(|v| v == "1");
    a.kill_on_bad_exit = get("SLURM_KILL_BAD_EXIT").map(|v| v == "1");
    a.export = get("SRUN_EXPORT_ENV").or_else(|| get("SLURM_EXPORT_ENV"));
    a.jobid = get("SLURM_JOB_ID").and_then(|v| v.parse().ok());
    a.spec.distribution = nodes::env_distribution(&get)?;
    // A batch script's --open-mode=append reaches its sruns as SLURM_OPEN_MODE=a.
    a.append = get("SLURM_OPEN_MODE").is_some_and(|m| m == "a" || m == "append");
    let mut noted = vec![];
    for item in OPTIONS.items(argv).collect::<Result<Vec<_>, _>>()? {
        match item {
            Arg::Flag(o, v) => {
                o.apply(&mut a, v)?;
                noted.push(o);
            }
            Arg::Word(w) => a.argv.push(w),
        }
    }
    a.warnings = super::getopt::warnings("srun", noted);
    // The allocation srun makes shows it; its steps keep none.
    a.spec.submit_line = super::family::submit_line("srun", argv);
    // -m arbitrary: the nodes in task order come from SLURM_HOSTFILE, unless -w gives them.
    if nodes::arbitrary(&a.spec)
        && a.spec.nodelist.is_empty()
        && let Some(file) = get("SLURM_HOSTFILE").filter(|f| !f.is_empty())
    {
        a.spec.nodelist = nodes::hostfile(&file)?;
    }
    if a.append && [&a.output, &a.error].iter().any(|p| on_nodes(p)) {
        a.warnings.push(
            "srun: warning: --open-mode=append applies to the files srun writes; \
             those named with %t, %n or %N are truncated by the nodes"
                .into(),
        );
    }
    if let Some(b) = a.cpu_bind.as_deref().filter(|b| !binds(b)) {
        a.warnings.push(format!(
            "srun: warning: --cpu-bind={b} has no effect on Spur: tasks are bound only with map_cpu or mask_cpu"
        ));
    }
    if a.help || a.version || a.mpi_list {
        return Ok(a);
    }
    if a.test_only && a.argv.is_empty() {
        // Slurm's srun --test-only needs no command: nothing is run.
        return Ok(a);
    }
    if a.argv.is_empty() {
        return Err("no command given (srun [OPTIONS] COMMAND [ARGS...])".into());
    }
    Ok(a)
}

/// A `--cpu-bind` Spur acts on: map_cpu, mask_cpu, or none.
fn binds(b: &str) -> bool {
    let kind = b.rsplit(',').next().unwrap_or(b);
    ["none", "no"].contains(&kind) || matches!(spur_vocab::cpubind::cpus(b, 0), Ok(Some(_)))
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
    if !a.spec.name.is_empty() {
        return a.spec.name.clone();
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
    let mut vars = export(a.export.as_deref().unwrap_or(""), env)?;
    if let Some(p) = &a.propagate {
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
        for (k, v) in super::submit_opts::propagate(Some(p), &limits)? {
            vars.retain(|(ok, _)| *ok != k);
            vars.push((k, v));
        }
    }
    if let Some(b) = a.cpu_bind.as_deref().filter(|b| matches!(spur_vocab::cpubind::cpus(b, 0), Ok(Some(_))))
    {
        vars.retain(|(k, _)| !k.starts_with(spur_vocab::cpubind::BIND_ENV));
        vars.push((spur_vocab::cpubind::BIND_ENV.into(), b.to_string()));
    }
    let path = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_str());
    let mut argv = a.argv.clone();
    if a.multi_prog {
        let file = argv.first().cloned().unwrap_or_default();
        let text = std::fs::read_to_string(cwd.join(&file))
            .map_err(|e| format!("--multi-prog: cannot read '{file}': {e}"))?;
        argv = multiprog::argv(&file, &text, a.spec.ntasks)?;
    } else if let Some(p) = argv.first_mut() {
        *p = resolve(p, path, cwd);
    }
    let argv = multiprog::around(a.task_prolog.as_deref(), a.task_epilog.as_deref(), argv);
    let nodelist = match a.relative {
        Some(r) => nodes::relative(a, r, env)?,
        None => a.spec.nodelist.clone(),
    };
    let wd = workdir(a, cwd);
    let node_side = |p: &str| if on_nodes(p) { absolute(p, &wd) } else { String::new() };
    let size = if a.pty { input::window() } else { (0, 0) };
    Ok(pb::StepRequest {
        job_id,
        name: a.spec.name.clone(),
        ntasks: a.spec.ntasks,
        nodes: a.spec.num_nodes,
        ntasks_per_node: a.spec.ntasks_per_node,
        cpus_per_task: a.spec.cpus_per_task,
        mem_mb: a.spec.mem_mb,
        nodelist,
        argv,
        env: vars.into_iter().map(|(key, value)| pb::KeyValue { key, value }).collect(),
        workdir: wd.clone(),
        stdout_path: node_side(&a.output),
        // Without -e, stderr goes where -o sends stdout.
        stderr_path: if a.error.is_empty() { String::new() } else { node_side(&a.error) },
        kill_on_bad_exit: a.kill_on_bad_exit.unwrap_or(false),
        release,
        overcommit: a.overcommit,
        hold: false,
        // --pty: srun's stdin goes to task 0, its terminal's size once.
        input: if a.pty { String::new() } else { a.input.tasks.clone() },
        pty: a.pty,
        pty_rows: size.0,
        pty_cols: size.1,
        distribution: a.spec.distribution.clone(),
    })
}

fn absolute(p: &str, wd: &str) -> String {
    if p.starts_with('/') { p.to_string() } else { format!("{wd}/{p}") }
}

/// The allocation srun makes outside a job: no script, the request asked,
/// never requeued; `now` reads `--begin` and `--deadline`.
pub fn allocation(
    a: &Args,
    env: &[(String, String)],
    cwd: &Path,
    now: chrono::DateTime<chrono::Local>,
) -> Result<pb::JobSpec, String> {
    let when = |flag, v: &Option<String>| {
        v.as_deref().map(|v| super::submit_opts::parse_when(flag, v, now)).transpose()
    };
    let (begin_ms, deadline_ms) = (when("begin", &a.begin)?, when("deadline", &a.deadline)?);
    let vars = export(a.export.as_deref().unwrap_or(""), env)?;
    let mut spec = a.spec.clone();
    nodes::arbitrary_job(&mut spec)?;
    Ok(pb::JobSpec {
        name: name(a),
        requeue: Some(false),
        workdir: workdir(a, cwd),
        env: vars.into_iter().map(|(key, value)| pb::KeyValue { key, value }).collect(),
        allocation: true,
        overcommit: a.overcommit,
        begin_ms: begin_ms.unwrap_or(0),
        deadline_ms: deadline_ms.unwrap_or(0),
        ..spec
    })
}

/// Runs srun with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    let env: Vec<(String, String)> = std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        .collect();
    let a = match parse(argv, &env) {
        Ok(a) if a.help => return super::output::emit("srun", &format!("{USAGE}\n")),
        Ok(a) if a.version => return super::output::emit("srun", &super::family::version()),
        Ok(a) if a.mpi_list => return super::output::emit("srun", "MPI plugin types are...\n\tnone\n"),
        Ok(a) => a,
        Err(e) => {
            super::output::complain(&format!("srun: error: {e}"));
            return 1;
        }
    };
    for w in &a.warnings {
        super::output::complain(w);
    }
    super::family::say_defined_options("srun", &a.spec, a.verbose);
    match session::run(&a, &env).await {
        Ok(code) => code,
        Err(e) => {
            super::output::complain(&format!("srun: error: {}", e.replace('\n', " ")));
            1
        }
    }
}

#[cfg(test)]
mod tests;
