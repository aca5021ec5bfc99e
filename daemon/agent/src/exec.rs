//! Running jobs on a node through their supervisors ([`super::stepd`]):
//! launch, signal the job's process group (with Slurm's KillWait escalation),
//! adopt the jobs of a previous agent process after a restart, and report
//! how each one ended. A job's signals reach its steps' tasks here too
//! ([`super::tasks`]), and its end kills them.

use super::cgroup::JobCgroup;
use super::output::{Fence, Fences, Opened, Runs};
use super::state::{self, Ended, LaunchFile, RunRecord, StateDir};
use super::tasks::StepTasks;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use spur_proto::v1 as pb;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

/// How often an adopted job's supervisor, which is not our child, is checked.
const ADOPTED_POLL: Duration = Duration::from_millis(250);

#[derive(Debug, Clone)]
struct Run {
    node: String,
    pgid: i32,
    cgroup: Option<JobCgroup>,
    /// The controller's id of this run (empty from before run ids).
    run_id: String,
}

impl Run {
    /// To the process group, and to every process of the cgroup (those that left the group too).
    fn signal(&self, sig: Signal) {
        // 0 is no group yet (the supervisor is in the prologs): killpg(0) would be our own group.
        if self.pgid > 0 {
            let _ = killpg(Pid::from_raw(self.pgid), sig);
        }
        if let Some(cg) = &self.cgroup {
            if sig == Signal::SIGKILL { cg.kill() } else { cg.signal(sig) }
        }
    }
}

#[derive(Clone)]
pub struct Executor {
    state: StateDir,
    /// The supervisor program: this binary, run as `__stepd`.
    stepd: PathBuf,
    running: Arc<Mutex<HashMap<u64, Run>>>,
    /// The steps' tasks running here (srun).
    pub tasks: StepTasks,
    /// The output reads in progress (spur tail), which a later run's launch ends.
    fences: Fences,
    /// What the last runs whose ends the controller has took as their output
    /// files (job, run, opened), newest last.
    forgotten: Arc<Mutex<VecDeque<(u64, String, Opened)>>>,
}

/// The runs whose opened files are kept after their end: a read of one comes
/// seconds after it ended, and each takes a few hundred bytes.
const FORGOTTEN: usize = 256;

/// What a restarted agent found in its state directory.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Still running under their supervisors: adopted.
    pub adopted: Vec<u64>,
    /// Ended while no agent was there to report them.
    pub ended: Vec<Ended>,
    /// Their supervisor is gone without a word: their process group was killed.
    pub vanished: Vec<u64>,
    /// Steps' tasks the previous agent ran: killed (a step does not outlive its agent).
    pub steps: Vec<(u64, u32)>,
}

impl Executor {
    pub fn new(state: StateDir, stepd: PathBuf) -> Executor {
        Executor {
            tasks: StepTasks::new(state.clone()),
            state,
            stepd,
            running: Arc::default(),
            fences: Fences::default(),
            forgotten: Arc::default(),
        }
    }

    /// The state directory.
    pub fn state(&self) -> &StateDir {
        &self.state
    }

    /// Whether run `run_id` of `job` (any run when empty) is here now
    /// (spur tail follows its output while it is).
    pub fn runs(&self, job: u64, run_id: &str) -> bool {
        self.lock().get(&job).is_some_and(|r| run_id.is_empty() || r.run_id == run_id)
    }

    /// The jobs running here, for registration.
    pub fn running(&self) -> Vec<pb::RunningJob> {
        let r = self.lock();
        let entry = |(id, run): (&u64, &Run)| pb::RunningJob {
            job_id: *id,
            node: run.node.clone(),
            run_id: run.run_id.clone(),
        };
        r.iter().map(entry).collect()
    }

    /// Takes over what a previous agent process on `nodes` left: live jobs
    /// are adopted (their ends arrive on `ended`), recorded ends are returned
    /// for the registration, and a job whose supervisor vanished is killed.
    pub fn recover(&self, nodes: &[String], ended: &mpsc::Sender<Ended>) -> Recovered {
        let mut out = Recovered { steps: super::tasks::kill_recorded(&self.state), ..Recovered::default() };
        for rec in self.state.runs().into_iter().filter(|r| nodes.contains(&r.node)) {
            let id = rec.job_id;
            if let Some(end) = self.state.ended(id) {
                out.ended.push(end);
            } else if state::alive(rec.stepd_pid, rec.stepd_start) {
                let cgroup = rec.cgroup.as_deref().map(JobCgroup::at);
                let run_id = rec.run_id.clone();
                let run = Run { node: rec.node.clone(), pgid: rec.pgid, cgroup, run_id };
                self.lock().insert(id, run);
                self.watch_adopted(rec, ended.clone());
                out.adopted.push(id);
            } else {
                rec.kill_job();
                self.state.forget(id);
                out.vanished.push(id);
            }
        }
        out
    }

    /// Starts the job under a supervisor; its end arrives on `ended`.
    pub async fn launch(&self, l: pb::Launch, ended: mpsc::Sender<Ended>) {
        let id = l.job_id;
        let held = self.lock().get(&id).cloned();
        if let Some(old) = held {
            if l.run_id.is_empty() || old.run_id == l.run_id {
                // The controller sent it twice (a retried pass): one copy runs.
                tracing::warn!(job = id, run = l.run_id, "launch for a run already running here; ignored");
                return;
            }
            // Another run of this job id: an earlier run, or another
            // controller's job (a fresh store). It is not this run: it goes.
            tracing::warn!(
                job = id,
                stale = old.run_id,
                run = l.run_id,
                "ending a stale run of the job before its new run"
            );
            self.end_stale(id, &old);
        }
        // Before the new run's supervisor can open the job's files: reads of an earlier run end.
        self.fences.launched(id, &l.run_id);
        let child = match self.spawn_supervisor(&l) {
            Ok(child) => child,
            Err(message) => {
                let _ = ended.send(Ended { run_id: l.run_id.clone(), ..Ended::failed(id, message) }).await;
                return;
            }
        };
        // Held from now (no group yet: the supervisor runs the prologs), so a
        // signal that follows finds it; the session goes on meanwhile, and a
        // long prolog never holds up its heartbeats or other commands.
        let run_id = l.run_id.clone();
        let run = Run { node: l.node.clone(), pgid: 0, cgroup: None, run_id: run_id.clone() };
        self.lock().insert(id, run);
        let me = self.clone();
        tokio::spawn(async move { me.supervise(id, run_id, child, ended).await });
    }

    /// Waits for the supervisor's word, then for its end.
    async fn supervise(
        &self,
        id: u64,
        run_id: String,
        child: tokio::process::Child,
        ended: mpsc::Sender<Ended>,
    ) {
        match self.await_word(id, child).await {
            Ok((pgid, mut child)) => {
                // The supervisor recorded the run (its cgroup too) before it said "started".
                let cgroup = self.state.runs_of(id).and_then(|r| r.cgroup).map(|p| JobCgroup::at(&p));
                if let Some(run) = self.lock().get_mut(&id).filter(|r| r.run_id == run_id) {
                    (run.pgid, run.cgroup) = (pgid, cgroup);
                }
                let _ = child.wait().await;
                self.ended(id, &run_id, ended).await;
            }
            Err(message) => {
                let mine = self.lock().get(&id).is_some_and(|r| r.run_id == run_id);
                if mine {
                    let end = self.state.ended(id).unwrap_or_else(|| Ended::failed(id, message));
                    // Queued before it leaves the running list, as every end is.
                    let _ = ended.send(Ended { run_id: run_id.clone(), ..end }).await;
                    self.lock().remove(&id);
                }
            }
        }
    }

    /// Hands the launch to a new supervisor (its launch file first).
    fn spawn_supervisor(&self, l: &pb::Launch) -> Result<tokio::process::Child, String> {
        let id = l.job_id;
        state::write_atomic(&self.state.launch_path(id), &LaunchFile::from(l))
            .map_err(|e| format!("cannot write the launch to {}: {e}", self.state.0.display()))?;
        tokio::process::Command::new(&self.stepd)
            .arg(super::stepd::STEPD_ARG)
            .arg(&self.state.0)
            .arg(id.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(false)
            .spawn()
            .map_err(|e| format!("cannot start the supervisor {}: {e}", self.stepd.display()))
    }

    /// The supervisor's word: "started PGID" once the job runs, or "failed
    /// WHY"; the job's process group and the supervisor, or why not.
    async fn await_word(
        &self,
        id: u64,
        mut child: tokio::process::Child,
    ) -> Result<(i32, tokio::process::Child), String> {
        // Until its word, and after it, other lines are its log (the HRES
        // plugin's node functions), relayed into this agent's.
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let mut lines = BufReader::new(out).lines();
            while let Ok(Some(l)) = lines.next_line().await {
                if l.starts_with("started ") || l.starts_with("failed ") {
                    line = l;
                    break;
                }
                relay(id, &l);
            }
            tokio::spawn(async move {
                while let Ok(Some(l)) = lines.next_line().await {
                    relay(id, &l);
                }
            });
        }
        match line.trim().strip_prefix("started ").and_then(|p| p.parse().ok()) {
            Some(pgid) => Ok((pgid, child)),
            None => {
                let _ = child.wait().await;
                let said = line.trim().strip_prefix("failed ").unwrap_or("the supervisor exited at once");
                Err(said.to_string())
            }
        }
    }

    /// Kills a stale run of job `id` and forgets it: its supervisor first, so
    /// it records no end that could be taken for the next run's, then the
    /// job's processes and steps.
    fn end_stale(&self, id: u64, old: &Run) {
        if let Some(rec) = self.state.runs_of(id).filter(|r| r.run_id == old.run_id)
            && state::alive(rec.stepd_pid, rec.stepd_start)
        {
            let _ = nix::sys::signal::kill(Pid::from_raw(rec.stepd_pid), Signal::SIGKILL);
        }
        old.signal(Signal::SIGKILL);
        self.tasks.signal(id, None, Signal::SIGKILL as i32, Duration::ZERO);
        self.lock().remove(&id);
        self.state.forget(id);
    }

    /// Run `run_id` of job `id` is over (its supervisor is gone): its
    /// recorded end goes to the session. Nothing when the job runs here as
    /// another run by now (this one was stale and ended for it).
    async fn ended(&self, id: u64, run_id: &str, ended: mpsc::Sender<Ended>) {
        if self.lock().get(&id).is_none_or(|r| r.run_id != run_id) {
            return;
        }
        let end = self.state.ended(id).unwrap_or_else(|| Ended {
            job_id: id,
            state: "exited".into(),
            exit_code: -1,
            signal: 9,
            message: "the job's supervisor died before recording its end".into(),
            usage: state::Rusage::default(),
            hres: None,
            run_id: run_id.to_string(),
        });
        // Queued before it leaves the running list, so a re-registration
        // always finds the job in one of the two.
        let _ = ended.send(end).await;
        self.lock().remove(&id);
        // As in Slurm, the job's end is its steps' end.
        self.tasks.signal(id, None, Signal::SIGKILL as i32, Duration::ZERO);
    }

    /// The cgroup of job `id` here, for its steps' tasks to join.
    pub fn cgroup_of(&self, id: u64) -> Option<JobCgroup> {
        self.lock().get(&id).and_then(|r| r.cgroup.clone())
    }

    fn watch_adopted(&self, rec: RunRecord, ended: mpsc::Sender<Ended>) {
        let me = self.clone();
        tokio::spawn(async move {
            while state::alive(rec.stepd_pid, rec.stepd_start) {
                tokio::time::sleep(ADOPTED_POLL).await;
            }
            me.ended(rec.job_id, &rec.run_id, ended).await;
        });
    }

    /// Sends `signal` to the job's batch shell alone (the leader of its
    /// group), as `--signal=B:` asks: its children and steps are left be.
    /// False when the job is not running here.
    pub fn signal_shell(&self, job_id: u64, signal: i32) -> bool {
        let Some(pgid) = self.lock().get(&job_id).map(|r| r.pgid) else { return false };
        if pgid <= 0 {
            // No batch shell yet (the prologs run): kill(0) would be our own group.
            return true;
        }
        match Signal::try_from(signal) {
            Ok(sig) => {
                let _ = nix::sys::signal::kill(Pid::from_raw(pgid), sig);
            }
            Err(_) => tracing::warn!(job = job_id, signal, "not a signal number"),
        }
        true
    }

    /// Sends `signal` to the job's process group; with `kill_wait` above
    /// zero, SIGKILLs what is left of it after that long. False when the job
    /// is not running here.
    pub fn signal(&self, job_id: u64, signal: i32, kill_wait: Duration) -> bool {
        // Its steps' tasks here get it too (an allocation srun made has nothing else).
        let steps = self.tasks.signal(job_id, None, signal, kill_wait);
        let Some(mut run) = self.lock().get(&job_id).cloned() else { return steps };
        if run.pgid == 0 {
            // Adopted while its supervisor was in the prologs: the group may exist by now.
            match self.state.runs_of(job_id).filter(|r| r.run_id == run.run_id) {
                Some(r) if r.pgid > 0 => {
                    run.pgid = r.pgid;
                    run.cgroup = r.cgroup.as_deref().map(JobCgroup::at);
                    if let Some(held) = self.lock().get_mut(&job_id) {
                        *held = run.clone();
                    }
                }
                // Still in the prologs: the supervisor is the job so far.
                Some(r) if state::alive(r.stepd_pid, r.stepd_start) => {
                    if let Ok(sig) = Signal::try_from(signal) {
                        let _ = nix::sys::signal::kill(Pid::from_raw(r.stepd_pid), sig);
                    }
                    return true;
                }
                _ => {}
            }
        }
        let pgid = run.pgid;
        let Ok(sig) = Signal::try_from(signal) else {
            tracing::warn!(job = job_id, signal, "not a signal number");
            return true;
        };
        if sig == Signal::SIGTERM {
            // Slurm's order: a stopped job could not act on the TERM.
            run.signal(Signal::SIGCONT);
        }
        run.signal(sig);
        if !kill_wait.is_zero() && sig != Signal::SIGKILL {
            let me = self.clone();
            tokio::spawn(async move {
                tokio::time::sleep(kill_wait).await;
                // The same run still: a requeued job's next run has another group.
                if me.lock().get(&job_id).is_some_and(|r| r.pgid == pgid) {
                    run.signal(Signal::SIGKILL);
                }
            });
        }
        true
    }

    /// The controller has the end of run `run_id` of job `job_id`: its files
    /// go, and none of a next run's, which may be starting here already (its
    /// launch can come before the last run's end is taken); that run's
    /// files are forgotten with its own end. What the run opened is kept a
    /// while (the last `FORGOTTEN` runs), for a read of it that comes after its end.
    pub fn forget(&self, job_id: u64, run_id: &str) {
        let other = |r: &str| !run_id.is_empty() && r != run_id;
        let rec = self.state.runs_of(job_id);
        let next_here = self.lock().get(&job_id).is_some_and(|r| other(&r.run_id));
        if next_here || rec.as_ref().is_some_and(|r| other(&r.run_id)) {
            if self.state.ended(job_id).is_some_and(|e| !other(&e.run_id)) {
                let _ = std::fs::remove_file(self.state.end_path(job_id));
            }
            return;
        }
        if let Some(rec) = rec {
            let mut kept = self.forgotten.lock().unwrap_or_else(|p| p.into_inner());
            if kept.len() >= FORGOTTEN {
                kept.pop_front();
            }
            kept.push_back((job_id, rec.run_id.clone(), opened(Some(rec), false)));
        }
        self.state.forget(job_id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Run>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Runs for Executor {
    fn runs(&self, job: u64, run: &str) -> bool {
        Executor::runs(self, job, run)
    }

    /// From the run's record, which its supervisor writes: the files once its
    /// trampoline has opened them. A record outlives its run until the
    /// controller has the run's end.
    fn opened(&self, job: u64, run: &str) -> Opened {
        let here = self.runs(job, run);
        let rec = self.state.runs_of(job).filter(|r| run.is_empty() || r.run_id == run);
        if rec.is_none() && !here {
            let kept = self.forgotten.lock().unwrap_or_else(|p| p.into_inner());
            let mine = kept.iter().rev().find(|(j, r, _)| *j == job && (run.is_empty() || r == run));
            return mine.map_or(Opened::Unknown, |(_, _, o)| o.clone());
        }
        opened(rec, here)
    }

    fn fence(&self, job: u64, run: &str) -> Arc<Fence> {
        self.fences.watch(job, run)
    }
}

/// What a run's record says it opened; `here`: the run runs here.
fn opened(rec: Option<RunRecord>, here: bool) -> Opened {
    match rec {
        Some(RunRecord { opened: Some(files), .. }) => Opened::Files(files),
        // A supervisor of an older spurd says nothing of the files once the job runs.
        Some(r) if !r.records_opened && r.pgid > 0 => Opened::Unrecorded,
        _ if here => Opened::Pending,
        Some(_) => Opened::Never,
        None => Opened::Unknown,
    }
}

/// One line of a supervisor's log, in this agent's log.
fn relay(job: u64, line: &str) {
    let line = line.trim();
    match line.split_once(' ') {
        Some(("ERROR", msg)) => tracing::error!(job, "stepd: {}", msg.trim()),
        Some(("WARN", msg)) => tracing::warn!(job, "stepd: {}", msg.trim()),
        _ => tracing::info!(job, "stepd: {line}"),
    }
}

#[cfg(test)]
mod tests;
