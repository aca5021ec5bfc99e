//! The job supervisor, Spur's slurmstepd: `spurd __stepd STATE_DIR JOB_ID`.
//! The agent starts one per job. It leaves the agent's session, so neither
//! the agent's death nor its terminal's hangup reaches the job; it writes the
//! script to a file and executes it (its `#!` line picks the interpreter,
//! [`super::script`]) in a process group of its own (the unit that signals
//! and kills reach); it waits for it, kills whatever the script left behind,
//! and records the end, with what the job's processes used, in the state
//! directory for whichever agent is running by then. Synchronous: it is one
//! small process per job.

use super::cgroup::JobCgroup;
use super::hres::Hres;
use super::script::{self, ScriptFile};
use super::state::{Ended, LaunchFile, RunRecord, Rusage, StateDir, start_time, write_atomic};
use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::fs::File;
use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};

/// Run as `sh -c ENTER_CGROUP PROCS ARGV...`: the shell writes itself into
/// the job's cgroup (`0` is the writer), then becomes the script.
pub(crate) const ENTER_CGROUP: &str = r#"echo 0 2>/dev/null > "$0"; exec "$@""#;

/// The first argument that makes spurd (or spur-console, for the demo) a supervisor.
pub const STEPD_ARG: &str = "__stepd";

/// Runs the supervisor if `args` (argv without argv[0]) ask for it; returns its exit code.
/// Also runs `__hres_task` (a user task prolog, then the task).
pub fn dispatch(args: &[String]) -> Option<i32> {
    if let Some(code) = crate::hres_lua::node::dispatch(args) {
        return Some(code);
    }
    if args.first().map(String::as_str) != Some(STEPD_ARG) {
        return None;
    }
    let (Some(dir), Some(id)) = (args.get(1), args.get(2).and_then(|s| s.parse().ok())) else {
        return Some(2);
    };
    Some(main(Path::new(dir), id))
}

fn main(dir: &Path, job_id: u64) -> i32 {
    // Not a group leader (the agent spawned us in its own group), so this succeeds.
    let _ = nix::unistd::setsid();
    // Log lines (the HRES plugin's node functions) go to the agent, which
    // relays them into its log; a closed pipe only loses them.
    let filter = tracing_subscriber::EnvFilter::try_from_env("SPUR_LOG").unwrap_or_else(|_| "info".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .without_time()
        .with_ansi(false)
        .with_target(false)
        .with_writer(std::io::stdout)
        .try_init();
    let state = StateDir(dir.to_path_buf());
    let end = match run(&state, job_id) {
        Ok(end) => end,
        Err(message) => {
            say(&format!("failed {message}"));
            Ended::failed(job_id, message)
        }
    };
    match write_atomic(&state.end_path(job_id), &end) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// One line to the agent, which waits for it before it reports the job running.
/// The agent may have died meanwhile: a closed pipe is not an error here.
fn say(line: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn run(state: &StateDir, job_id: u64) -> Result<Ended, String> {
    let path = state.launch_path(job_id);
    let text = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let _ = std::fs::remove_file(&path);
    let l: LaunchFile = serde_json::from_slice(&text).map_err(|e| format!("bad launch file: {e}"))?;
    let err_path = if l.stderr_path.is_empty() { &l.stdout_path } else { &l.stderr_path };
    let mut stderr = open_output(err_path, l.append_output || err_path == &l.stdout_path)?;
    if let Err(message) = script::check(&l.script, Path::new(&l.workdir)) {
        // Where the user looks first; the job's reason says it too.
        note(&mut stderr, job_id, &message);
        return Err(message);
    }
    let mut env = l.env.clone();
    let hres = Hres::install(&state.hres_path(job_id, &l.node), &l.hres_prep, &mut env)?;
    let Some(hres) = hres else { return supervise(state, job_id, &l, &env, None, stderr) };
    // The job prolog: a failure ends the run before the script (the controller requeues it).
    if let Some(f) = hres.job_prolog() {
        note(&mut stderr, job_id, &f.message);
        hres.remove();
        let mut end = Ended::failed(job_id, f.message.clone());
        end.hres = Some(f);
        return Ok(end);
    }
    let mut end = match hres.task_prolog(0, 0, &env) {
        Ok(()) => {
            let err = stderr.as_ref().and_then(|f| f.try_clone().ok());
            supervise(state, job_id, &l, &env, Some(&hres), err)?
        }
        Err(message) => {
            note(&mut stderr, job_id, &message);
            Ended { exit_code: 1, state: "exited".into(), message, ..Ended::failed(job_id, String::new()) }
        }
    };
    hres.task_epilog(0, 0, &env);
    // Epilogs run even when the job failed; a failure drains the node.
    if let Some(f) = hres.job_epilog() {
        note(&mut stderr, job_id, &f.message);
        end.hres = Some(f);
    }
    hres.remove();
    Ok(end)
}

/// A line in the job's stderr, where the user looks first.
fn note(stderr: &mut Option<File>, job_id: u64, message: &str) {
    if let Some(f) = stderr.as_mut() {
        let _ = writeln!(f, "spurd: error: job {job_id}: {message}");
    }
}

/// Runs the script (through the user task prolog when the job has plugins) and waits for it.
fn supervise(
    state: &StateDir,
    job_id: u64,
    l: &LaunchFile,
    env: &[(String, String)],
    hres: Option<&Hres>,
    stderr: Option<File>,
) -> Result<Ended, String> {
    let stdout = open_output(&l.stdout_path, l.append_output)?;
    let file = state.script_path(job_id);
    let mut script = ScriptFile::write(&file, &l.script)
        .map_err(|e| format!("cannot write the script to {}: {e}", file.display()))?;
    if let Some(h) = hres {
        let argv = script.argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        script.argv = h.wrap(0, 0, argv).into_iter().map(Into::into).collect();
    }
    let me = std::process::id() as i32;
    let cgroup = JobCgroup::create(&format!("spur-job{job_id}-{me}"));
    let mut cmd = match &cgroup {
        // The job enters its cgroup before it runs a line of the script.
        Some(cg) => {
            let mut c = Command::new("/bin/sh");
            c.arg("-c").arg(ENTER_CGROUP).arg(cg.procs_file()).args(&script.argv);
            c
        }
        None => {
            let mut c = Command::new(&script.argv[0]);
            c.args(&script.argv[1..]);
            c
        }
    };
    cmd.stdin(Stdio::null()).stdout(stdio(stdout)).stderr(stdio(stderr));
    if !l.workdir.is_empty() {
        cmd.current_dir(&l.workdir);
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let spawned = cmd.process_group(0).spawn();
    let mut child = spawned.map_err(|e| {
        cgroup.iter().for_each(JobCgroup::remove);
        format!("cannot run the script {}: {e}", script.path().display())
    })?;
    let pgid = child.id() as i32;
    let rec = RunRecord {
        job_id,
        node: l.node.clone(),
        stepd_pid: me,
        stepd_start: start_time(me).unwrap_or(0),
        pgid,
        job_start: start_time(pgid).unwrap_or(0),
        cgroup: cgroup.as_ref().map(|c| c.0.clone()),
    };
    if let Err(e) = write_atomic(&state.run_path(job_id), &rec) {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        let _ = child.wait();
        cgroup.iter().for_each(JobCgroup::remove);
        return Err(format!("cannot record the job in {}: {e}", state.0.display()));
    }
    say(&format!("started {pgid}"));
    let status = child.wait();
    // Read before anything else is waited for: the script's process tree alone.
    let usage = children_usage();
    // As in Slurm, a batch job ends with its script: what it left running goes too.
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    cgroup.iter().for_each(JobCgroup::remove);
    drop(script);
    let s = status.map_err(|e| format!("wait failed: {e}"))?;
    Ok(Ended {
        job_id,
        state: "exited".into(),
        exit_code: s.code().unwrap_or(-1),
        signal: s.signal().unwrap_or(0),
        message: String::new(),
        usage,
        hres: None,
    })
}

/// The job's stdout or stderr file (None: `/dev/null`), appended to, its
/// missing directories made first rather than failing the job.
/// Opens an output file for appending, so stdout and stderr sharing one file
/// never write over each other; unless `append`, it is emptied first
/// (Slurm's default `--open-mode=truncate`, each run's output alone).
fn open_output(p: &str, append: bool) -> Result<Option<File>, String> {
    if p.is_empty() {
        return Ok(None);
    }
    if let Some(dir) = Path::new(p).parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create the directory {} for {p}: {e}", dir.display()))?;
    }
    if !append {
        std::fs::File::create(p).map_err(|e| format!("cannot open {p}: {e}"))?;
    }
    let f = std::fs::OpenOptions::new().create(true).append(true).open(p);
    f.map(Some).map_err(|e| format!("cannot open {p}: {e}"))
}

fn stdio(f: Option<File>) -> Stdio {
    f.map_or_else(Stdio::null, Stdio::from)
}

/// What the processes this supervisor has waited for used: the script, and
/// every descendant that was waited for in turn.
fn children_usage() -> Rusage {
    let Ok(u) = getrusage(UsageWho::RUSAGE_CHILDREN) else { return Rusage::default() };
    let us = |t: nix::sys::time::TimeVal| {
        let secs = u64::try_from(t.tv_sec()).unwrap_or(0);
        secs.saturating_mul(1_000_000).saturating_add(u64::try_from(t.tv_usec()).unwrap_or(0))
    };
    Rusage {
        user_cpu_us: us(u.user_time()),
        sys_cpu_us: us(u.system_time()),
        max_rss_kb: u64::try_from(u.max_rss()).unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_waited_for_child_used_is_read() {
        let busy = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done";
        assert!(Command::new("/bin/sh").arg("-c").arg(busy).status().unwrap().success());
        let u = children_usage();
        assert!(u.user_cpu_us + u.sys_cpu_us > 0 && u.max_rss_kb > 0, "{u:?}");
    }

    #[test]
    fn an_output_file_s_missing_directories_are_made() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/out.txt");
        let p = path.display().to_string();
        assert!(open_output(&p, true).unwrap().is_some() && path.exists());
        assert!(open_output("", false).unwrap().is_none(), "no path: /dev/null");
        std::fs::write(dir.path().join("file"), "").unwrap();
        let blocked = dir.path().join("file/sub/out.txt").display().to_string();
        let e = open_output(&blocked, true).unwrap_err();
        assert!(e.starts_with("cannot create the directory ") && e.contains(&blocked), "{e}");
    }
}
