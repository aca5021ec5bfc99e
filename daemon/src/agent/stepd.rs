//! The job supervisor, Spur's slurmstepd: `spurd __stepd STATE_DIR JOB_ID`.
//! The agent starts one per job. It leaves the agent's session, so neither
//! the agent's death nor its terminal's hangup reaches the job; it runs the
//! script in a process group of its own (the unit that signals and kills
//! reach); it waits for it, kills whatever the script left behind, and
//! records the end in the state directory for whichever agent is running
//! by then. Synchronous: it is one small process per job.

use super::cgroup::JobCgroup;
use super::state::{Ended, LaunchFile, RunRecord, StateDir, start_time, write_atomic};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};

/// Run as `sh -c ENTER_CGROUP PROCS SCRIPT`: the shell writes itself into
/// the job's cgroup (`0` is the writer), then becomes the job's shell.
const ENTER_CGROUP: &str = r#"echo 0 2>/dev/null > "$0"; exec /bin/sh -c "$1""#;

/// The first argument that makes spurd (or spur-console, for the demo) a supervisor.
pub const STEPD_ARG: &str = "__stepd";

/// Runs the supervisor if `args` (argv without argv[0]) ask for it; returns its exit code.
pub fn dispatch(args: &[String]) -> Option<i32> {
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
    let open = |p: &str| -> Result<Stdio, String> {
        if p.is_empty() {
            return Ok(Stdio::null());
        }
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .map(Stdio::from)
            .map_err(|e| format!("cannot open {p}: {e}"))
    };
    let me = std::process::id() as i32;
    let cgroup = JobCgroup::create(&format!("spur-job{job_id}-{me}"));
    let mut cmd = Command::new("/bin/sh");
    match &cgroup {
        // The job's shell enters its cgroup before it runs a line of the script.
        Some(cg) => cmd.arg("-c").arg(ENTER_CGROUP).arg(cg.procs_file()).arg(&l.script),
        None => cmd.arg("-c").arg(&l.script),
    };
    cmd.stdin(Stdio::null()).stdout(open(&l.stdout_path)?);
    let err_path = if l.stderr_path.is_empty() { &l.stdout_path } else { &l.stderr_path };
    cmd.stderr(open(err_path)?);
    if !l.workdir.is_empty() {
        cmd.current_dir(&l.workdir);
    }
    cmd.envs(l.env.iter().map(|(k, v)| (k, v)));
    let spawned = cmd.process_group(0).spawn();
    let mut child = spawned.map_err(|e| {
        cgroup.iter().for_each(JobCgroup::remove);
        format!("cannot start /bin/sh: {e}")
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
    // As in Slurm, a batch job ends with its script: what it left running goes too.
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    cgroup.iter().for_each(JobCgroup::remove);
    let s = status.map_err(|e| format!("wait failed: {e}"))?;
    Ok(Ended {
        job_id,
        state: "exited".into(),
        exit_code: s.code().unwrap_or(-1),
        signal: s.signal().unwrap_or(0),
        message: String::new(),
    })
}
