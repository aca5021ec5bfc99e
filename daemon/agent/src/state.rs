//! The agent's state directory: what survives a restart of spurd. Each job
//! has up to four files; the records are written atomically (a temporary
//! file, then a rename), so a reader never sees half of one:
//!
//! - `job-ID.launch.json`: the launch, from the agent to its supervisor (mode 0600: it
//!   holds the job's environment); the supervisor removes it once read.
//! - `job-ID.script`: the batch script, written by the supervisor (mode 0700) and
//!   executed as a file, so the kernel runs its `#!` interpreter; it stays while
//!   the job runs (the interpreter reads it by name) and goes when the job ends.
//!   Not a record: a restarted agent never reads it.
//! - `job-ID.json`: the supervisor's pid and start time, the job's process group
//!   and its start time, so a restarted agent can tell a live job from a
//!   recycled pid (`/proc/PID/stat`, field 22).
//! - `job-ID.end.json`: how the job ended, written by the supervisor. It stays
//!   until the controller has the report, so no end is lost to a restart.
//!
//! And one file per step with tasks here, `step-JOB-STEP.json` ([`super::tasks`]):
//! their process groups and start times, so a restarted agent kills them.

use serde::{Deserialize, Serialize};
use spur_proto::v1 as pb;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// A job running under its supervisor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    pub job_id: u64,
    /// The run (Launch.run_id); empty in records from before run ids.
    #[serde(default)]
    pub run_id: String,
    pub node: String,
    /// The supervisor (`spurd __stepd`), which waits for the job.
    pub stepd_pid: i32,
    pub stepd_start: u64,
    /// The job's process group: its shell's pid.
    pub pgid: i32,
    pub job_start: u64,
    /// The job's cgroup v2, where the host offers one.
    #[serde(default)]
    pub cgroup: Option<PathBuf>,
    /// This supervisor records [`Self::opened`]: false in records of an older
    /// spurd, whose runs' output files are read as they are.
    #[serde(default)]
    pub records_opened: bool,
    /// The output files as this run opened them (spur tail reads these and
    /// no earlier run's); None until the job's trampoline has opened them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened: Option<Vec<super::runas::OpenedFile>>,
}

impl RunRecord {
    /// SIGKILLs the job: its process group (if it is still the job's) and its cgroup.
    pub fn kill_job(&self) {
        use nix::sys::signal::{Signal, killpg};
        if alive(self.pgid, self.job_start) {
            let _ = killpg(nix::unistd::Pid::from_raw(self.pgid), Signal::SIGKILL);
        }
        if let Some(cg) = &self.cgroup {
            super::cgroup::JobCgroup::at(cg).remove();
        }
    }
}

/// How a job ended, or that it could not start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ended {
    pub job_id: u64,
    /// "exited" or "failed" (could not start).
    pub state: String,
    pub exit_code: i32,
    pub signal: i32,
    pub message: String,
    /// Zero in end files written before usage was recorded, and for a job that never started.
    #[serde(default)]
    pub usage: Rusage,
    /// An HRES plugin's node job prolog or epilog failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hres: Option<super::hres::HresFailed>,
    /// The run that ended; empty in end files from before run ids.
    #[serde(default)]
    pub run_id: String,
}

/// What a job's process tree used: the supervisor's `getrusage(RUSAGE_CHILDREN)`
/// once the script has been waited for (so every descendant the script
/// itself waited for counts; what it left running is killed, not counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Rusage {
    pub user_cpu_us: u64,
    pub sys_cpu_us: u64,
    /// The largest resident set of one process, in KiB (Linux's `ru_maxrss`).
    pub max_rss_kb: u64,
}

impl Ended {
    pub fn failed(job_id: u64, message: String) -> Ended {
        Ended {
            job_id,
            state: "failed".into(),
            exit_code: -1,
            signal: 0,
            message,
            usage: Rusage::default(),
            hres: None,
            run_id: String::new(),
        }
    }
}

/// Launch, as handed to the supervisor.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaunchFile {
    pub job_id: u64,
    pub node: String,
    pub script: String,
    pub env: Vec<(String, String)>,
    pub stdout_path: String,
    pub stderr_path: String,
    pub workdir: String,
    /// `--open-mode=append`; otherwise the files are truncated first.
    #[serde(default)]
    pub append_output: bool,
    /// The HRES plugins' data for the nodes (JSON), empty without plugins.
    #[serde(default)]
    pub hres_prep: String,
    /// Who the job runs as; None: the agent's own user.
    #[serde(default)]
    pub uid: Option<u32>,
    #[serde(default)]
    pub gid: Option<u32>,
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub run_id: String,
    /// `--input`: the script's standard input; empty: /dev/null.
    #[serde(default)]
    pub stdin_path: String,
    /// sbatch's script arguments, after the script on its command line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub script_args: Vec<String>,
}

impl From<&pb::Launch> for LaunchFile {
    fn from(l: &pb::Launch) -> Self {
        LaunchFile {
            job_id: l.job_id,
            node: l.node.clone(),
            script: l.script.clone(),
            env: l.env.iter().map(|kv| (kv.key.clone(), kv.value.clone())).collect(),
            stdout_path: l.stdout_path.clone(),
            stderr_path: l.stderr_path.clone(),
            workdir: l.workdir.clone(),
            append_output: l.append_output,
            hres_prep: l.hres_prep.clone(),
            uid: l.uid,
            gid: l.gid,
            user: l.user.clone(),
            run_id: l.run_id.clone(),
            stdin_path: l.stdin_path.clone(),
            script_args: l.script_args.clone(),
        }
    }
}

/// The directory and the paths of one job's files.
#[derive(Debug, Clone)]
pub struct StateDir(pub PathBuf);

impl StateDir {
    /// Opens the directory, creating it (mode 0700: launches hold
    /// environments) and its sibling for job scripts ([`Self::jobs_dir`],
    /// 0711) where missing. One that exists must be a directory of this
    /// process's user that no one else can read or write (the script
    /// directory: write); otherwise the agent does not start, naming it.
    pub fn open(path: &Path) -> std::io::Result<StateDir> {
        let dir = StateDir(path.to_path_buf());
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            // Parents as any spool directory (0755): users reach their scripts through them.
            std::fs::create_dir_all(parent)?;
        }
        private_dir(path, 0o700, 0o077)?;
        private_dir(&dir.jobs_dir(), 0o711, 0o022)?;
        Ok(dir)
    }

    /// Where scripts of jobs that run as another user live: beside the
    /// state directory, searchable but not listable, each script owned by
    /// its job's user (Slurm's spool `jobNNNNN/slurm_script`).
    pub fn jobs_dir(&self) -> PathBuf {
        let mut name = self.0.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| "spurd".into());
        name.push(".jobs");
        self.0.with_file_name(name)
    }

    pub fn launch_path(&self, id: u64) -> PathBuf {
        self.0.join(format!("job-{id}.launch.json"))
    }
    pub fn run_path(&self, id: u64) -> PathBuf {
        self.0.join(format!("job-{id}.json"))
    }
    pub fn end_path(&self, id: u64) -> PathBuf {
        self.0.join(format!("job-{id}.end.json"))
    }
    /// The job's HRES plugin data on `node`, readable by the job (`SPUR_HRES_PREP`).
    pub fn hres_path(&self, id: u64, node: &str) -> PathBuf {
        self.0.join(format!("job-{id}.{node}.hres.json"))
    }
    /// The script of job `id`: in the state directory when the job runs as
    /// the agent's user, in [`Self::jobs_dir`] when it runs as another.
    pub fn script_path(&self, id: u64, other_user: bool) -> PathBuf {
        let dir = if other_user { self.jobs_dir() } else { self.0.clone() };
        dir.join(format!("job-{id}.script"))
    }

    /// Every job with a run record, in id order.
    pub fn runs(&self) -> Vec<RunRecord> {
        let Ok(dir) = std::fs::read_dir(&self.0) else { return vec![] };
        let mut runs: Vec<RunRecord> = dir
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let id = name.strip_prefix("job-")?.strip_suffix(".json")?;
                read(&self.run_path(id.parse().ok()?))
            })
            .collect();
        runs.sort_by_key(|r| r.job_id);
        runs
    }

    /// The run record of job `id`.
    pub fn runs_of(&self, id: u64) -> Option<RunRecord> {
        read(&self.run_path(id))
    }

    pub fn ended(&self, id: u64) -> Option<Ended> {
        read(&self.end_path(id))
    }

    /// Kills every recorded job and its supervisor: for an agent whose
    /// jobs must not outlive it (the demo, tests). Start times are checked,
    /// so a recycled pid is left alone.
    pub fn kill_all(&self) {
        use nix::sys::signal::{Signal, kill};
        use nix::unistd::Pid;
        for r in self.runs() {
            // The supervisor first: it must not record the kill as the job's end.
            if alive(r.stepd_pid, r.stepd_start) {
                let _ = kill(Pid::from_raw(r.stepd_pid), Signal::SIGKILL);
            }
            r.kill_job();
        }
        // And the steps' tasks, which the agent ran itself.
        super::tasks::kill_recorded(self);
    }

    /// Removes every file of a job whose end the controller has.
    pub fn forget(&self, id: u64) {
        let (run, end) = (self.run_path(id), self.end_path(id));
        for p in [self.launch_path(id), run, end, self.script_path(id, false), self.script_path(id, true)] {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Creates `path` with `mode`, or checks the one there: a directory (not a
/// link) of this process's user with none of `forbidden`'s bits.
fn private_dir(path: &Path, mode: u32, forbidden: u32) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    match std::fs::DirBuilder::new().mode(mode).create(path) {
        Ok(()) => return std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)),
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        Err(_) => {}
    }
    let m = std::fs::symlink_metadata(path)?;
    let me = nix::unistd::geteuid().as_raw();
    let refuse = |why: String| Err(std::io::Error::other(format!("{} {why}", path.display())));
    if !m.is_dir() {
        return refuse("is not a directory (a link or a file)".into());
    }
    if m.uid() != me {
        return refuse(format!("is owned by uid {}, not by spurd's uid {me}", m.uid()));
    }
    if m.mode() & forbidden != 0 {
        return refuse(format!(
            "has mode {:04o}; it must be {mode:04o} at most (chmod {mode:o} it)",
            m.mode() & 0o7777
        ));
    }
    Ok(())
}

/// A file of the state directory, never through a link.
pub fn read_private(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)?;
    Ok(buf)
}

fn read<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    let text = read_private(path).ok()?;
    match serde_json::from_slice(&text) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!(file = %path.display(), error = %e, "unreadable agent state file; ignored");
            None
        }
    }
}

/// Writes `value` to `path` through a temporary file and a rename.
pub fn write_atomic<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    let nofollow = nix::fcntl::OFlag::O_NOFOLLOW.bits();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(nofollow)
        .open(&tmp)?;
    f.write_all(&serde_json::to_vec(value).map_err(std::io::Error::other)?)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// A process's state letter and start time in clock ticks since boot
/// (`/proc/PID/stat`, fields 3 and 22): one read tells a live process from
/// a zombie and from a later one with its pid.
fn stat(pid: i32) -> Option<(String, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from its end.
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = rest.next()?.to_string();
    Some((state, rest.nth(18)?.parse().ok()?))
}

/// A process's start time, recorded so a restarted agent can check it.
pub fn start_time(pid: i32) -> Option<u64> {
    stat(pid).map(|(_, start)| start)
}

/// Whether `pid` is the process that started at `start`, and has not
/// ended: a zombie (killed, not yet reaped by its new parent) has.
pub fn alive(pid: i32, start: u64) -> bool {
    pid > 0 && stat(pid).is_some_and(|(state, s)| s == start && !matches!(state.as_str(), "Z" | "X"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        let s = StateDir::open(&dir.path().join("state")).unwrap();
        let r = RunRecord {
            job_id: 7,
            run_id: "7.1".into(),
            node: "n1".into(),
            stepd_pid: 1,
            stepd_start: 2,
            pgid: 3,
            job_start: 4,
            cgroup: None,
            records_opened: true,
            opened: None,
        };
        write_atomic(&s.run_path(7), &r).unwrap();
        write_atomic(&s.end_path(7), &Ended::failed(7, "x".into())).unwrap();
        std::fs::write(s.0.join("job-8.json"), "not json").unwrap();
        std::fs::write(s.script_path(7, false), "#!/bin/sh\n").unwrap();
        assert_eq!(s.runs(), [r], "a script is not a run record");
        assert_eq!(s.ended(7).unwrap().message, "x");
        s.forget(7);
        assert!(s.runs().is_empty() && s.ended(7).is_none());
        assert!(!s.script_path(7, false).exists());
    }

    #[test]
    fn a_state_directory_others_can_reach_is_refused_by_name() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spool/node01");
        let s = StateDir::open(&path).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&path), mode(&s.jobs_dir())), (0o700, 0o711));
        assert_eq!(s.jobs_dir(), dir.path().join("spool/node01.jobs"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = StateDir::open(&path).unwrap_err().to_string();
        assert!(e.contains(&path.display().to_string()) && e.contains("mode 0755"), "{e}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = dir.path().join("spool/link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        let e = StateDir::open(&link).unwrap_err().to_string();
        assert!(e.contains("is not a directory"), "{e}");
        std::fs::write(path.join("job-1.json"), "{}").unwrap();
        std::os::unix::fs::symlink(path.join("job-1.json"), path.join("job-2.json")).unwrap();
        assert!(read_private(&path.join("job-2.json")).is_err(), "never through a link");
    }

    #[test]
    fn end_files_written_before_usage_was_recorded_still_load() {
        let old = r#"{"job_id":5,"state":"exited","exit_code":0,"signal":0,"message":""}"#;
        let e: Ended = serde_json::from_str(old).unwrap();
        assert_eq!((e.job_id, e.usage), (5, Rusage::default()));
        let usage = Rusage { user_cpu_us: 1_500_000, sys_cpu_us: 20, max_rss_kb: 4096 };
        let e = Ended { usage, ..e };
        let back: Ended = serde_json::from_slice(&serde_json::to_vec(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn our_own_start_time_is_read_and_checked() {
        let me = std::process::id() as i32;
        let start = start_time(me).expect("own /proc stat");
        assert!(alive(me, start));
        assert!(!alive(me, start + 1));
        assert!(!alive(0, start));
    }
}
