//! `salloc` (also `spur alloc`): submits an allocation (no batch script, as
//! srun outside one does), waits for it to start, and runs a command here —
//! by default the user's `$SHELL` — with the job's `SLURM_*` variables, so
//! `srun` inside it runs steps in the allocation. The allocation is held by
//! a stream to the controller (a RunStep that is a hold, not a step): when
//! the command exits, salloc relinquishes it with the command's exit code
//! (COMPLETED, or FAILED) and exits with that code; if salloc goes away, the
//! controller cancels it. `--no-shell` leaves the allocation running with no
//! one holding it (it ends by scancel or its time limit).

pub mod hold;

use crate::cli::family::{Family, why};
use crate::cli::fmt::status;
use crate::cli::getopt::{Arg, Mode, Opt, Spec, check, join, maybe, switch, value};
use crate::conn::{self, Clients, Identity};
use spur_proto::v1 as pb;
use std::path::Path;
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};

pub const USAGE: &str = "\
usage: salloc [OPTIONS] [COMMAND [ARGS...]]
  -N, --nodes=N            -n, --ntasks=N           -c, --cpus-per-task=N
  -p, --partition=P        -A, --account=ACCOUNT    -q, --qos=QOS       -t, --time=LIMIT
  --mem=SIZE               -w, --nodelist=LIST      -x, --exclude=LIST  -J, --job-name=NAME
  --no-shell               allocate and exit, leaving the allocation running (scancel ends it)
Runs COMMAND (default: $SHELL) once the allocation starts, with SLURM_JOB_ID and its kin set,
so srun inside it runs steps there; the allocation ends when COMMAND exits, with its code.
Options of sbatch that describe the job (see sbatch --help) are salloc's too.";

static OPTIONS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Leading, noun: "option" };
const OPTS: &[Opt<Args>] = &join::<Args, { OWN.len() + Family::<Args>::OPTS.len() }>(OWN, Family::OPTS);
/// salloc's own options; the family's ([`Family`]) are sbatch's and srun's too.
const OWN: &[Opt<Args>] = &[
    switch("-/no-shell", |a| a.no_shell = true),
    value("D/chdir", |a, v| a.chdir = Some(v)),
    switch("Q/quiet", |a| a.quiet = true),
    switch("v/verbose", |_| {}),
    switch("V/version", |a| a.version = true),
    switch("h/help", |a| a.help = true),
    switch("-/usage", |a| a.help = true),
    value("-/controller", |a, v| a.controller = Some(v)),
    // Spur's salloc does not ring the bell, which is what --no-bell asks.
    switch("-/no-bell", |_| {}),
    switch("-/bell", |a| a.bell = true),
    switch("O/overcommit", |a| a.spec.overcommit = true),
    maybe("I/immediate", |a, v| crate::cli::family::immediate(v).map(|n| a.immediate = Some(n))),
    maybe("K/kill-command", |a, v| {
        let sig = v.as_deref().map(str::trim).filter(|v| !v.is_empty()).unwrap_or("TERM");
        let n = spur_vocab::signal::parse_signal(sig).map_err(|e| format!("--kill-command: {e}"))?;
        a.kill_command = Some(n);
        Ok(())
    }),
    maybe("-/x11", |_, _| Ok(())).noted(why::X11),
    check("-/wait-all-nodes", |_, v| crate::cli::family::wait_all_nodes(&v)),
];

/// salloc's command line.
#[derive(Default)]
pub struct Args {
    pub spec: pb::JobSpec,
    pub begin: Option<String>,
    pub deadline: Option<String>,
    pub no_shell: bool,
    pub chdir: Option<String>,
    pub quiet: bool,
    pub help: bool,
    pub version: bool,
    pub controller: Option<String>,
    /// `-M`: checked against the controller's cluster before anything is submitted.
    pub clusters: Vec<String>,
    /// `-K[SIGNAL]`: sent to the command when the allocation is revoked (SIGTERM by default).
    pub kill_command: Option<i32>,
    /// `--bell`: ring the terminal's bell when the allocation is granted.
    pub bell: bool,
    /// `-I`: seconds the allocation may pend before salloc gives up.
    pub immediate: Option<u64>,
    /// The command and its arguments (empty: the shell).
    pub argv: Vec<String>,
    pub warnings: Vec<String>,
}

crate::cli::family::request_in_fields!(Args);

/// Parses salloc's options only (no script, command or controller): what
/// they set and the warnings they print.
pub fn probe(args: &[String]) -> Result<crate::cli::getopt::Probe, String> {
    crate::cli::getopt::probe(&OPTIONS, "salloc", args)
}

/// Parses salloc's arguments; options stop at the command (getopt's `+`).
pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
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
    a.warnings = crate::cli::getopt::warnings("salloc", noted);
    a.spec.submit_line = crate::cli::family::submit_line("salloc", argv);
    if a.no_shell && !a.argv.is_empty() {
        return Err(format!("--no-shell runs no command ('{}')", a.argv[0]));
    }
    Ok(a)
}

/// The allocation to submit; `now` reads `--begin` and `--deadline`.
pub fn allocation(
    a: &Args,
    env: &[(String, String)],
    cwd: &Path,
    now: chrono::DateTime<chrono::Local>,
) -> Result<pb::JobSpec, String> {
    let when = |flag, v: &Option<String>| {
        v.as_deref().map(|v| crate::cli::submit_opts::parse_when(flag, v, now)).transpose()
    };
    let name = match (a.spec.name.as_str(), a.argv.first()) {
        ("", Some(p)) => Path::new(p).file_name().map_or(p.clone(), |n| n.to_string_lossy().into_owned()),
        ("", None) => "interactive".to_string(),
        (n, _) => n.to_string(),
    };
    let workdir = a.chdir.as_deref().map_or_else(|| cwd.to_path_buf(), |d| cwd.join(d));
    Ok(pb::JobSpec {
        name,
        requeue: Some(false),
        workdir: workdir.to_string_lossy().into_owned(),
        env: env.iter().map(|(key, value)| pb::KeyValue { key: key.clone(), value: value.clone() }).collect(),
        allocation: true,
        detached: a.no_shell,
        begin_ms: when("begin", &a.begin)?.unwrap_or(0),
        deadline_ms: when("deadline", &a.deadline)?.unwrap_or(0),
        ..a.spec.clone()
    })
}

/// The variables the command gets, as Slurm's salloc sets them.
pub fn job_env(
    a: &Args,
    job: u64,
    nodes: &[String],
    cluster: &str,
    url: Option<&str>,
) -> Vec<(String, String)> {
    let list = crate::vocab::hostlist::compress(nodes);
    let s = &a.spec;
    let mut v: Vec<(String, String)> = vec![
        ("SLURM_JOB_ID".into(), job.to_string()),
        ("SLURM_JOBID".into(), job.to_string()),
        ("SLURM_JOB_NODELIST".into(), list.clone()),
        ("SLURM_NODELIST".into(), list),
        ("SLURM_JOB_NUM_NODES".into(), nodes.len().to_string()),
        ("SLURM_NNODES".into(), nodes.len().to_string()),
        ("SLURM_CLUSTER_NAME".into(), cluster.to_string()),
    ];
    if !s.name.is_empty() {
        v.push(("SLURM_JOB_NAME".into(), s.name.clone()));
    }
    let mut num = |k: &str, n: u64| {
        if n > 0 {
            v.push((k.into(), n.to_string()));
        }
    };
    num("SLURM_NTASKS", s.ntasks.into());
    num("SLURM_NPROCS", s.ntasks.into());
    num("SLURM_CPUS_PER_TASK", s.cpus_per_task.into());
    num("SLURM_NTASKS_PER_NODE", s.ntasks_per_node.into());
    num("SLURM_MEM_PER_NODE", s.mem_mb);
    num("SLURM_MEM_PER_CPU", s.mem_per_cpu_mb);
    if s.overcommit {
        v.push(("SLURM_OVERCOMMIT".into(), "1".into()));
    }
    if let Ok(d) = crate::vocab::distribution::Distribution::parse(&s.distribution)
        && !s.distribution.is_empty()
    {
        v.extend(d.env_vars().into_iter().map(|(k, val)| (k.to_string(), val)));
    }
    if let Some(u) = url {
        // srun inside the allocation talks to the same controller.
        v.push((spur_proto::wire::CONTROLLER_ENV.into(), u.to_string()));
    }
    v
}

/// `salloc: Granted job allocation N`, with the bell when `--bell` asks.
fn granted(a: &Args, job: u64) {
    if a.bell {
        use std::io::Write;
        let _ = std::io::stderr().write_all(b"\x07");
    }
    say(a, &format!("salloc: Granted job allocation {job}"));
}

fn say(a: &Args, line: &str) {
    if !a.quiet {
        crate::cli::output::complain(line);
    }
}

/// Runs salloc with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    let a = match parse(argv) {
        Ok(a) if a.help => return crate::cli::output::emit("salloc", &format!("{USAGE}\n")),
        Ok(a) if a.version => return crate::cli::output::emit("salloc", &crate::cli::family::version()),
        Ok(a) => a,
        Err(e) => {
            crate::cli::output::complain(&format!("salloc: error: {e}"));
            return 1;
        }
    };
    for w in &a.warnings {
        crate::cli::output::complain(w);
    }
    match run(&a).await {
        Ok(code) => code,
        Err(e) => {
            crate::cli::output::complain(&format!("salloc: error: {}", e.replace('\n', " ")));
            1
        }
    }
}

async fn run(a: &Args) -> Result<i32, String> {
    let env: Vec<(String, String)> = std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        .collect();
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let mut c = conn::connect_flag(a.controller.as_deref(), Identity::local()).await?;
    crate::cli::cluster::resolve(&mut c, &a.clusters).await?;
    let spec = allocation(a, &env, &cwd, chrono::Local::now())?;
    let req = pb::SubmitRequest { spec: Some(spec) };
    let job = c
        .jobs
        .submit(req)
        .await
        .map_err(|e| format!("Job submit/allocate failed: {}", status(e)))?
        .into_inner()
        .job_id;
    say(a, &format!("salloc: Pending job allocation {job}"));
    if a.no_shell {
        return detached(a, &mut c, job).await;
    }
    hold::hold(a, &mut c, job, &cwd).await
}

/// `--no-shell`: waits for the start (Ctrl-C cancels the allocation), says
/// it is granted, and leaves it running.
async fn detached(a: &Args, c: &mut Clients, job: u64) -> Result<i32, String> {
    let mut int = signal(SignalKind::interrupt()).map_err(|e| format!("cannot watch signals: {e}"))?;
    let mut pause = Duration::from_millis(100);
    let mut told = false;
    let started = tokio::time::Instant::now();
    loop {
        let waited = started.elapsed();
        let filter = [("id", job.to_string()), ("view", "brief".to_string())];
        let filter = filter.into_iter().map(|(k, value)| pb::KeyValue { key: k.into(), value }).collect();
        let resp = c.jobs.list_jobs(pb::ListRequest { filter }).await.map_err(status)?.into_inner();
        match resp.jobs.iter().find(|j| j.id == job).map(|j| j.job_state()) {
            Some(crate::vocab::JobState::Running) => {
                granted(a, job);
                return Ok(0);
            }
            Some(s) if s.is_active() => {
                if !told {
                    told = true;
                    say(a, &format!("salloc: job {job} queued and waiting for resources"));
                }
                if let Some(secs) = a.immediate.filter(|n| waited >= Duration::from_secs(*n)) {
                    let _ = c.jobs.cancel(pb::CancelRequest { ids: vec![job], ..Default::default() }).await;
                    return Err(crate::cli::family::not_immediate(secs));
                }
            }
            Some(s) => return Err(format!("job {job} ended before it started ({})", s.as_str())),
            None => return Err(format!("job {job} is gone")),
        }
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = int.recv() => {
                let _ = c.jobs.cancel(pb::CancelRequest { ids: vec![job], ..Default::default() }).await;
                say(a, &format!("salloc: Job allocation {job} has been revoked."));
                return Ok(1);
            }
        }
        pause = (pause * 2).min(Duration::from_secs(2));
    }
}
