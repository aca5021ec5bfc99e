//! A step's tasks on this node (srun's `LaunchStep`): started by the agent
//! itself, each in a process group of its own (in the job's cgroup where it
//! has one here, so ending the job reaches them), with Slurm's per-task
//! variables over the step's environment. Their output goes to the
//! controller over one StepIo stream per step (bounded: a slow srun slows the
//! tasks' writes, nothing piles up here), or to the files the `-o/-e`
//! patterns name; then each task's end.
//!
//! A step does not survive its agent: its tasks are recorded in the state
//! directory (`step-JOB-STEP.json`, their process groups and start times),
//! and a restarted agent kills what is left of them. A stream the controller
//! breaks or refuses kills the step's tasks too: nothing is left behind.

use super::cgroup::JobCgroup;
use super::link::Link;
use super::runas::{ExecSpec, RunAs};
use super::state::{StateDir, alive, start_time, write_atomic};
use super::stdin::Feeds;
use super::task_files::{Outputs, relay};
use crate::task_env::task_env;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use spur_hres_lua::node::PREP_ENV;
use spur_proto::v1 as pb;
use spur_vocab::jobs::{PathVars, StepVars};
use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// Reports queued for the controller before a task's output waits.
const REPORTS: usize = 16;
/// How long a task's output may trail its end (a process that left its group holds the pipe).
const DRAIN: Duration = Duration::from_secs(2);

/// A step's tasks here, as the state directory records them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepFile {
    pub job_id: u64,
    pub step_id: u32,
    /// The node the tasks are on; empty in a file from before nodes were recorded.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node: String,
    /// (process group, its leader's start time) of each task.
    pub tasks: Vec<(i32, u64)>,
}

impl StepFile {
    fn kill(&self) {
        for &(pgid, start) in &self.tasks {
            if alive(pgid, start) {
                let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
            }
        }
    }
}

/// A step's file on one node: one agent may host several of the step's nodes.
fn step_path(state: &StateDir, job: u64, step: u32, node: &str) -> std::path::PathBuf {
    match node {
        "" => state.0.join(format!("step-{job}-{step}.json")),
        n => state.0.join(format!("step-{job}-{step}-{n}.json")),
    }
}

/// Every step file in the state directory.
pub fn recorded(state: &StateDir) -> Vec<StepFile> {
    let Ok(dir) = std::fs::read_dir(&state.0) else { return vec![] };
    (dir.flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with("step-"))
        .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
        .collect()
}

/// Kills what the step files record and removes them.
pub fn kill_recorded(state: &StateDir) -> Vec<(u64, u32)> {
    let mut out = vec![];
    for f in recorded(state) {
        f.kill();
        let _ = std::fs::remove_file(step_path(state, f.job_id, f.step_id, &f.node));
        if !out.contains(&(f.job_id, f.step_id)) {
            out.push((f.job_id, f.step_id));
        }
    }
    out
}

/// Each running step's tasks here by (job, step, node): (task id, process group).
/// By node too: an agent hosting several nodes runs a step's tasks on each.
type Placed = HashMap<(u64, u32, String), Vec<(u32, i32)>>;

#[derive(Clone)]
pub struct StepTasks {
    state: StateDir,
    placed: Arc<Mutex<Placed>>,
    /// srun's stdin for the steps here that take it.
    pub feeds: Feeds,
}

impl StepTasks {
    pub fn new(state: StateDir) -> StepTasks {
        StepTasks { state, placed: Arc::default(), feeds: Feeds::default() }
    }

    fn placed(&self) -> std::sync::MutexGuard<'_, Placed> {
        self.placed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// sstat: the use of each task of job `job`'s step `step` (every step when None) on `node`,
    /// read from `/proc` now. Blocking: call it off the async threads.
    pub fn sample(&self, job: u64, step: Option<u32>, node: &str) -> Vec<pb::TaskUse> {
        let hit: Vec<(_, Vec<(u32, i32)>)> = (self.placed().iter())
            .filter(|((j, s, n), _)| *j == job && step.is_none_or(|want| want == *s) && n == node)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if hit.is_empty() {
            return vec![];
        }
        let (procs, tick) = (super::usage::processes(), super::usage::ticks_per_sec());
        let mut out = vec![];
        for ((job_id, step_id, node), tasks) in hit {
            for (task, pgid) in tasks {
                let u = super::usage::task_use(&procs, pgid, tick);
                out.push(pb::TaskUse { job_id, step_id, node: node.clone(), task, ..u });
            }
        }
        out
    }

    /// The process groups of job `job`'s step `step` here (every step when None), by (job, step, node).
    fn groups(&self, job: u64, step: Option<u32>) -> Vec<((u64, u32, String), Vec<i32>)> {
        (self.placed().iter())
            .filter(|((j, s, _), _)| *j == job && step.is_none_or(|want| want == *s))
            .map(|(k, v)| (k.clone(), v.iter().map(|t| t.1).collect()))
            .collect()
    }

    /// `signal` to the tasks of step `step` of `job` here (every step of the
    /// job when None); with `kill_wait`, SIGKILL to what is left that much
    /// later. False when none runs here.
    pub fn signal(&self, job: u64, step: Option<u32>, signal: i32, kill_wait: Duration) -> bool {
        let Ok(sig) = Signal::try_from(signal) else { return false };
        let hit = self.groups(job, step);
        for (_, groups) in &hit {
            for &g in groups {
                if sig == Signal::SIGTERM {
                    let _ = killpg(Pid::from_raw(g), Signal::SIGCONT);
                }
                let _ = killpg(Pid::from_raw(g), sig);
            }
        }
        let any = !hit.is_empty();
        if !kill_wait.is_zero() && sig != Signal::SIGKILL && any {
            let me = self.clone();
            tokio::spawn(async move {
                tokio::time::sleep(kill_wait).await;
                for (key, groups) in hit {
                    let now: Option<Vec<i32>> =
                        me.placed().get(&key).map(|t| t.iter().map(|t| t.1).collect());
                    if now.is_some_and(|g| g == groups) {
                        for g in &groups {
                            let _ = killpg(Pid::from_raw(*g), Signal::SIGKILL);
                        }
                    }
                }
            });
        }
        any
    }

    /// Starts the tasks of `l` and relays them until they end.
    pub fn launch(&self, l: pb::LaunchStep, cgroup: Option<JobCgroup>, link: Link) {
        let me = self.clone();
        // Opened now: srun's first piece may be the next command.
        let feed =
            (!l.stdin_tasks.is_empty()).then(|| self.feeds.open((l.job_id, l.step_id, l.node.clone())));
        tokio::spawn(async move { me.run(l, cgroup, link, feed).await });
    }

    async fn run(
        &self,
        l: pb::LaunchStep,
        cgroup: Option<JobCgroup>,
        link: Link,
        feed: Option<mpsc::Receiver<Vec<u8>>>,
    ) {
        let (tx, rx) = mpsc::channel::<pb::StepReport>(REPORTS);
        let mut client = link.client.clone();
        let mut call =
            tokio::spawn(
                async move { client.step_io(tokio_stream::wrappers::ReceiverStream::new(rx)).await },
            );
        let head = pb::StepReport {
            agent_id: link.agent_id.clone(),
            agent_key: link.agent_key.clone(),
            job_id: l.job_id,
            step_id: l.step_id,
            node: l.node.clone(),
            ..Default::default()
        };
        if tx.send(head).await.is_err() {
            return;
        }
        self.feeds.attach(&(l.job_id, l.step_id, l.node.clone()), tx.downgrade());
        let mut waits = vec![];
        let mut placed = vec![];
        let mut file = StepFile { job_id: l.job_id, step_id: l.step_id, node: l.node.clone(), tasks: vec![] };
        let mut outputs = Outputs::default();
        let mut pipes = vec![];
        let mut tty = None;
        let hres = match super::hres::Hres::for_step(&self.state.hres_path(l.job_id, &l.node), &l) {
            Ok(h) => h.map(std::sync::Arc::new),
            Err(f) => {
                fail_all(&l, &tx, &format!("hres_node_job_prolog: {}", f.message)).await;
                super::hres::report_failed(&link, l.job_id, &l.node, &f).await;
                None
            }
        };
        let hres_failed = !l.hres_prep.is_empty() && hres.is_none();
        for (local, &task) in l.tasks.iter().enumerate().filter(|_| !hres_failed) {
            let local = u32::try_from(local).unwrap_or(u32::MAX);
            match self.spawn(&l, local, task, cgroup.as_ref(), &mut outputs, hres.as_deref()) {
                Ok((mut child, master)) => {
                    pipes.extend(child.stdin.take());
                    // --pty: the master is read for the task's output and written with srun's stdin.
                    let master = master.and_then(|m| Some((m.try_clone().ok()?, m)));
                    let out = master.map(|(r, w)| {
                        tty = Some(tokio::fs::File::from_std(std::fs::File::from(w)));
                        tokio::fs::File::from_std(std::fs::File::from(r))
                    });
                    let pgid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
                    file.tasks.push((pgid, start_time(pgid).unwrap_or(0)));
                    placed.push((task, pgid));
                    let (h, env) = (hres.clone(), step_env(&self.state, &l));
                    let watched = watch(child, pgid, task, tx.clone(), out);
                    waits.push(tokio::spawn(async move {
                        watched.await;
                        // The task epilog, once the task exited; failures are logged.
                        if let Some(h) = h {
                            let _ =
                                tokio::task::spawn_blocking(move || h.task_epilog(local, task, &env)).await;
                        }
                    }));
                }
                Err(message) => {
                    let code = message.1;
                    let report = |r: pb::StepReport| pb::StepReport { task, ..r };
                    let _ = tx
                        .send(report(pb::StepReport { stderr: message.0.into(), ..Default::default() }))
                        .await;
                    let exit = Some(pb::TaskExit { exit_code: code, signal: 0 });
                    let _ = tx.send(report(pb::StepReport { exit, ..Default::default() })).await;
                }
            }
        }
        let path = step_path(&self.state, l.job_id, l.step_id, &l.node);
        if let Err(e) = write_atomic(&path, &file) {
            tracing::warn!(job = l.job_id, step = l.step_id, error = %e, "cannot record the step's tasks");
        }
        let where_ = (l.job_id, l.step_id, l.node.clone());
        self.placed().insert(where_.clone(), placed);
        if let Some(feed) = feed {
            tokio::spawn(super::stdin::write(feed, pipes, tty, tx.downgrade()));
        }
        drop(tx);
        let all = futures_util::future::join_all(waits);
        tokio::pin!(all);
        tokio::select! {
            _ = &mut all => {
                // Every end is queued: the stream closes, and the controller has them once it answers.
                if let Ok(Err(s)) = (&mut call).await {
                    tracing::warn!(job = l.job_id, step = l.step_id, error = %s.message(), "the step's report failed");
                }
            }
            r = &mut call => {
                // The controller broke the stream or refused it: the tasks go.
                let why = match r {
                    Ok(Err(s)) => s.message().to_string(),
                    _ => "the stream ended".into(),
                };
                tracing::warn!(job = l.job_id, step = l.step_id, error = %why, "lost the step's stream; killing its tasks");
                file.kill();
                all.await;
            }
        }
        self.placed().remove(&where_);
        self.feeds.close(&where_);
        let _ = std::fs::remove_file(path);
    }

    /// Starts task `task` (the `local`th here), and with `--pty` for task 0
    /// the terminal's master; an error is what its stderr says and its exit
    /// code (the errno, as Slurm's exec failure).
    fn spawn(
        &self,
        l: &pb::LaunchStep,
        local: u32,
        task: u32,
        cgroup: Option<&JobCgroup>,
        outputs: &mut Outputs,
        hres: Option<&super::hres::Hres>,
    ) -> Result<(tokio::process::Child, Option<std::os::fd::OwnedFd>), (String, i32)> {
        let prog = l.argv.first().cloned().unwrap_or_default();
        let argv = match hres {
            // The task prolog as root first; the user task prolog runs in the task's process.
            Some(h) => {
                h.task_prolog(local, task, &step_env(&self.state, l))
                    .map_err(|m| (format!("spurd: error: {m}\n"), 1))?;
                h.wrap(local, task, l.argv.clone())
            }
            None => l.argv.clone(),
        };
        let vars =
            PathVars { job_id: l.job_id, user: &l.user, name: &l.job_name, node: &l.node, array: None };
        let at = StepVars { step: l.step_id, task, node_index: l.node_index };
        let err_pattern = if l.stderr_path.is_empty() { &l.stdout_path } else { &l.stderr_path };
        let fail = |m: String| (format!("spurd: error: {m}\n"), 1);
        let run_as = RunAs::resolve(l.uid, l.gid, &l.user, &l.node).map_err(fail)?;
        let mut spec = ExecSpec {
            cgroup_procs: cgroup.map(JobCgroup::procs_file),
            workdir: l.workdir.clone(),
            argv,
            ..ExecSpec::default()
        };
        let (stdout, stderr) = match &run_as {
            // The agent's own user: the agent opens the files (each emptied once).
            None => (
                outputs.open(&l.stdout_path, &vars, &at, &l.workdir)?,
                outputs.open(err_pattern, &vars, &at, &l.workdir)?,
            ),
            // Another user's files are opened by the trampoline, as that user.
            Some(_) => {
                spec.stdout = outputs.spec(&l.stdout_path, &vars, &at, &l.workdir);
                spec.stderr = outputs.spec(err_pattern, &vars, &at, &l.workdir);
                (None, None)
            }
        };
        let piped = |f: Option<std::fs::File>, named: bool| match (f, named) {
            (Some(f), _) => Stdio::from(f),
            (None, true) => Stdio::null(),
            (None, false) => Stdio::piped(),
        };
        let out_named = spec.stdout.is_some();
        let pty = if l.pty && task == 0 {
            Some(super::pty::open(l.pty_rows, l.pty_cols).map_err(fail)?)
        } else {
            None
        };
        spec.tty = pty.as_ref().map(|p| p.path.clone());
        spec.user = run_as;
        let mut std_cmd = spec.command(step_env(&self.state, l), false).map_err(fail)?;
        std_cmd.envs(task_env(l.node_index, &l.node, local, task, &l.tasks));
        let mut cmd = tokio::process::Command::from(std_cmd);
        cmd.kill_on_drop(false);
        match &pty {
            // The terminal is all three; the trampoline's setsid makes its process group.
            Some(p) => {
                let io = || p.slave.try_clone().map(Stdio::from).map_err(|e| fail(format!("pty: {e}")));
                cmd.stdin(io()?).stdout(io()?).stderr(io()?);
            }
            None => {
                // srun's stdin feeds the tasks LaunchStep names (through the trampoline, which keeps it).
                let stdin = if l.stdin_tasks.contains(&task) { Stdio::piped() } else { Stdio::null() };
                cmd.stdin(stdin)
                    .stdout(piped(stdout, out_named))
                    // The trampoline's own errors reach srun through it when the task's stderr is a file.
                    .stderr(piped(stderr, false))
                    .process_group(0);
            }
        }
        let child = cmd
            .spawn()
            .map_err(|e| (format!("spurd: error: execve(): {prog}: {e}\n"), e.raw_os_error().unwrap_or(1)))?;
        Ok((child, pty.map(|p| p.master)))
    }
}

/// The step's environment, with `SPUR_HRES_PREP` when the job has plugins.
fn step_env(state: &StateDir, l: &pb::LaunchStep) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = l.env.iter().map(|kv| (kv.key.clone(), kv.value.clone())).collect();
    if !l.hres_prep.is_empty() {
        env.push((PREP_ENV.to_string(), state.hres_path(l.job_id, &l.node).display().to_string()));
    }
    env
}

/// Every task of the step fails with `message` (its job prolog failed here).
async fn fail_all(l: &pb::LaunchStep, tx: &mpsc::Sender<pb::StepReport>, message: &str) {
    for &task in &l.tasks {
        let stderr = format!("spurd: error: {message}\n").into_bytes();
        let _ = tx.send(pb::StepReport { task, stderr, ..Default::default() }).await;
        let exit = Some(pb::TaskExit { exit_code: 1, signal: 0 });
        let _ = tx.send(pb::StepReport { task, exit, ..Default::default() }).await;
    }
}

/// Relays a task's output until it ends, then its end. What the task left
/// running in its process group goes with it.
/// `tty`: the master of `--pty`'s terminal, the task's output.
async fn watch(
    mut child: tokio::process::Child,
    pgid: i32,
    task: u32,
    tx: mpsc::Sender<pb::StepReport>,
    tty: Option<tokio::fs::File>,
) {
    let out = match (child.stdout.take(), tty) {
        (Some(r), _) => Some(tokio::spawn(relay(r, task, false, tx.clone()))),
        (None, Some(t)) => Some(tokio::spawn(relay(t, task, false, tx.clone()))),
        (None, None) => None,
    };
    let err = child.stderr.take().map(|r| tokio::spawn(relay(r, task, true, tx.clone())));
    let status = child.wait().await;
    if pgid > 0 {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
    let _ = tokio::time::timeout(DRAIN, async {
        for h in [out, err].into_iter().flatten() {
            let _ = h.await;
        }
    })
    .await;
    let (exit_code, signal) = match status {
        Ok(s) => (s.code().unwrap_or(0), s.signal().unwrap_or(0)),
        Err(_) => (1, 0),
    };
    let exit = Some(pb::TaskExit { exit_code, signal });
    let _ = tx.send(pb::StepReport { task, exit, ..Default::default() }).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn recorded_tasks_are_killed_and_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::open(&dir.path().join("state")).unwrap();
        let mut child = std::process::Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
        let mut other = std::process::Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
        let (pgid, pgid2) = (child.id() as i32, other.id() as i32);
        // An older agent's file (no node), and the same step's file of a second node this agent hosts.
        let f = StepFile {
            job_id: 4,
            step_id: 1,
            node: String::new(),
            tasks: vec![(pgid, start_time(pgid).unwrap())],
        };
        write_atomic(&step_path(&state, 4, 1, ""), &f).unwrap();
        let f2 =
            StepFile { node: "n2".into(), tasks: vec![(pgid2, start_time(pgid2).unwrap())], ..f.clone() };
        write_atomic(&step_path(&state, 4, 1, "n2"), &f2).unwrap();
        let mut files = recorded(&state);
        files.sort_by(|a, b| a.node.cmp(&b.node));
        assert_eq!(files, [f, f2]);
        assert_eq!(kill_recorded(&state), [(4, 1)]);
        assert_eq!(child.wait().unwrap().signal(), Some(9));
        assert_eq!(other.wait().unwrap().signal(), Some(9));
        assert!(recorded(&state).is_empty());
    }

    #[test]
    fn output_files_are_emptied_once_per_node_and_name_the_task() {
        let dir = tempfile::tempdir().unwrap();
        let wd = dir.path().display().to_string();
        let vars = PathVars { job_id: 9, user: "u", name: "x", node: "n1", array: None };
        let mut o = Outputs::default();
        let mut a = o
            .open("out-%j.%s-%t.txt", &vars, &StepVars { step: 2, task: 5, node_index: 0 }, &wd)
            .unwrap()
            .unwrap();
        std::io::Write::write_all(&mut a, b"a").unwrap();
        let mut b = o
            .open("logs/%N.txt", &vars, &StepVars { step: 2, task: 5, node_index: 0 }, &wd)
            .unwrap()
            .unwrap();
        std::io::Write::write_all(&mut b, b"one").unwrap();
        let mut c = o
            .open("logs/%N.txt", &vars, &StepVars { step: 2, task: 6, node_index: 0 }, &wd)
            .unwrap()
            .unwrap();
        std::io::Write::write_all(&mut c, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("out-9.2-5.txt")).unwrap(), "a");
        assert_eq!(std::fs::read_to_string(dir.path().join("logs/n1.txt")).unwrap(), "onetwo");
        assert!(o.open("", &vars, &StepVars { step: 0, task: 0, node_index: 0 }, &wd).unwrap().is_none());
    }
}
