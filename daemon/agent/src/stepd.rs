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
use super::runas::{self, ExecSpec, Output, RunAs};
use super::script::{self, ScriptFile};
use super::state::{Ended, LaunchFile, RunRecord, Rusage, StateDir, start_time, write_atomic};
use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::Stdio;

/// The first argument that makes spurd (or spur-console, for the demo) a supervisor.
pub const STEPD_ARG: &str = "__stepd";

/// Runs the supervisor if `args` (argv without `argv[0]`) ask for it; returns its exit code.
/// Also runs `__hres_task` (a user task prolog, then the task).
pub fn dispatch(args: &[String]) -> Option<i32> {
    if let Some(code) = spur_hres_lua::node::dispatch(args) {
        return Some(code);
    }
    if let Some(code) = runas::dispatch(args) {
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
    let launch = read_launch(&state, job_id);
    let run_id = launch.as_ref().map(|l| l.run_id.clone()).unwrap_or_default();
    if let Ok(l) = &launch {
        // Recorded before the prologs, so an agent restarted meanwhile adopts
        // this supervisor (no job process yet: pgid 0) instead of losing the job.
        if let Err(e) = write_atomic(&state.run_path(job_id), &record(job_id, l, 0, None)) {
            say(&format!("failed cannot record the job in {}: {e}", state.0.display()));
            return 1;
        }
    }
    let mut end = match launch.and_then(|l| run(&state, job_id, &l)) {
        Ok(end) => end,
        Err(message) => {
            say(&format!("failed {message}"));
            Ended::failed(job_id, message)
        }
    };
    // The end names its run, so it is never taken for another run's.
    end.run_id = run_id;
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

/// This supervisor's record of run `l` of job `job_id`: its job's process
/// group and cgroup once it runs (`pgid` 0 before, while the prologs run).
fn record(job_id: u64, l: &LaunchFile, pgid: i32, cgroup: Option<&JobCgroup>) -> RunRecord {
    let me = std::process::id() as i32;
    RunRecord {
        job_id,
        run_id: l.run_id.clone(),
        node: l.node.clone(),
        stepd_pid: me,
        stepd_start: start_time(me).unwrap_or(0),
        pgid,
        job_start: if pgid > 0 { start_time(pgid).unwrap_or(0) } else { 0 },
        cgroup: cgroup.map(|c| c.0.clone()),
        records_opened: true,
        opened: None,
    }
}

/// The launch the agent left for this supervisor, removed once read: it holds
/// the job's environment, which nobody else may read.
fn read_launch(state: &StateDir, job_id: u64) -> Result<LaunchFile, String> {
    let path = state.launch_path(job_id);
    let text =
        super::state::read_private(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let _ = std::fs::remove_file(&path);
    serde_json::from_slice(&text).map_err(|e| format!("bad launch file: {e}"))
}

fn run(state: &StateDir, job_id: u64, l: &LaunchFile) -> Result<Ended, String> {
    // Before anything of the job's is touched: who it runs as here.
    let run_as = RunAs::resolve(l.uid, l.gid, &l.user, &l.node)?;
    let job = Job { state, id: job_id, l, run_as: run_as.as_ref() };
    if let Err(message) = script::check(&l.script, Path::new(&l.workdir)) {
        // Where the user looks first; the job's reason says it too.
        job.note(&message);
        return Err(message);
    }
    let mut env = l.env.clone();
    let hres = Hres::install(&state.hres_path(job_id, &l.node), &l.hres_prep, &mut env)?;
    let Some(hres) = hres else { return job.supervise(&env, None) };
    // The job prolog: a failure ends the run before the script (the controller requeues it).
    if let Some(f) = hres.job_prolog() {
        job.note(&f.message);
        hres.remove();
        let mut end = Ended::failed(job_id, f.message.clone());
        end.hres = Some(f);
        return Ok(end);
    }
    let mut end = match hres.task_prolog(0, 0, &env) {
        Ok(()) => job.supervise(&env, Some(&hres))?,
        Err(message) => {
            job.note(&message);
            Ended { exit_code: 1, state: "exited".into(), message, ..Ended::failed(job_id, String::new()) }
        }
    };
    hres.task_epilog(0, 0, &env);
    // Epilogs run even when the job failed; a failure drains the node.
    if let Some(f) = hres.job_epilog() {
        job.note(&f.message);
        end.hres = Some(f);
    }
    hres.remove();
    Ok(end)
}

/// One run of a batch job, as its supervisor holds it.
struct Job<'a> {
    state: &'a StateDir,
    id: u64,
    l: &'a LaunchFile,
    run_as: Option<&'a RunAs>,
}

impl Job<'_> {
    fn err_path(&self) -> &str {
        if self.l.stderr_path.is_empty() { &self.l.stdout_path } else { &self.l.stderr_path }
    }

    /// A line in the job's stderr, where the user looks first. Only when the
    /// job runs as this process's user: a file of another user's is opened
    /// by the trampoline alone, after the drop; the job's reason says it too.
    fn note(&self, message: &str) {
        if self.run_as.is_none()
            && let Ok(mut f) = runas::open_output(self.err_path(), true)
        {
            let _ = writeln!(f, "spurd: error: job {}: {message}", self.id);
        }
    }

    /// Runs the script (through the user task prolog when the job has
    /// plugins) as the job's user, and waits for it.
    fn supervise(&self, env: &[(String, String)], hres: Option<&Hres>) -> Result<Ended, String> {
        let (state, job_id, l) = (self.state, self.id, self.l);
        let owner = self.run_as.map(|u| (u.uid, u.gid));
        let file = state.script_path(job_id, owner.is_some());
        let mut script = ScriptFile::write(&file, &l.script, owner)
            .map_err(|e| format!("cannot write the script to {}: {e}", file.display()))?;
        // sbatch's script arguments follow the script, as $1, $2, ...
        script.argv.extend(l.script_args.iter().map(Into::into));
        if let Some(h) = hres {
            let argv = script.argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
            script.argv = h.wrap(0, 0, argv).into_iter().map(Into::into).collect();
        }
        let me = std::process::id() as i32;
        let cgroup = JobCgroup::create(&format!("spur-job{job_id}-{me}"));
        let spec = ExecSpec {
            user: self.run_as.cloned(),
            cgroup_procs: cgroup.as_ref().map(JobCgroup::procs_file),
            // --input, opened after the drop as the job's user; else nothing to read.
            stdin: Some(if l.stdin_path.is_empty() { "/dev/null".into() } else { l.stdin_path.clone() }),
            stdout: Some(Output { path: l.stdout_path.clone(), append: l.append_output }),
            stderr: Some(Output { path: self.err_path().to_string(), append: l.append_output }),
            workdir: l.workdir.clone(),
            argv: script.argv.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
            tty: None,
            say_opened: true,
        };
        let mut cmd = spec.command(env.iter().cloned(), true)?;
        // The trampoline's stderr says why it could not exec; it closes at the exec.
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let spawned = cmd.process_group(0).spawn();
        let mut child = spawned.map_err(|e| {
            cgroup.iter().for_each(JobCgroup::remove);
            format!("cannot run the script {}: {e}", script.path().display())
        })?;
        let pgid = child.id() as i32;
        let mut rec = record(job_id, l, pgid, cgroup.as_ref());
        let stop = |child: &mut std::process::Child| {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
            let _ = child.wait();
            cgroup.iter().for_each(JobCgroup::remove);
        };
        if let Err(e) = write_atomic(&state.run_path(job_id), &rec) {
            stop(&mut child);
            return Err(format!("cannot record the job in {}: {e}", state.0.display()));
        }
        let mut said = String::new();
        if let Some(mut pipe) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut (&mut pipe).take(64 * 1024), &mut said);
        }
        if let Some(why) = said.lines().find_map(|l| l.strip_prefix("spurd: error: ")) {
            // Nothing of the job ran: its files could not be opened as its user, say.
            let why = why.to_string();
            stop(&mut child);
            return Err(why);
        }
        // The files as the trampoline opened them, before the script ran: spur
        // tail reads this run's output in them and no earlier run's. Without
        // them the record says nothing is known, and the files are read as they are.
        rec.opened =
            said.lines().find_map(|l| serde_json::from_str(l.strip_prefix(runas::OPENED_LINE)?).ok());
        rec.records_opened = rec.opened.is_some();
        if let Err(e) = write_atomic(&state.run_path(job_id), &rec) {
            stop(&mut child);
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
            run_id: String::new(),
        })
    }
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
        assert!(std::process::Command::new("/bin/sh").arg("-c").arg(busy).status().unwrap().success());
        let u = children_usage();
        assert!(u.user_cpu_us + u.sys_cpu_us > 0 && u.max_rss_kb > 0, "{u:?}");
    }
}
