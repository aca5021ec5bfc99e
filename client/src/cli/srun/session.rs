//! The step's stream with the controller: outside an allocation, the job is
//! submitted first (no script; it ends with the step, or when this stream
//! goes away); then the step goes up as the stream's first message, and the
//! events come down: queued, started, output, task ends, the step's end.
//! srun's signals go up the same stream: Ctrl-C sends SIGINT to the tasks,
//! a second within a second cancels the step; SIGTERM, SIGHUP, SIGQUIT,
//! SIGUSR1 and SIGUSR2 are forwarded as they come. So is srun's stdin, once
//! the step has started (see [`super::input`]).

use super::output::{self, Dest, Sink};
use super::{Args, allocation, step, workdir};
use crate::cli::fmt::status;
use crate::conn::{self, Clients, Identity};
use crate::vocab::jobs::PathVars;
use spur_proto::v1 as pb;
use std::time::{Duration, Instant};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;
use tonic::Streaming;

/// How a task's end reads in srun's message: Slurm's words for the usual signals.
pub fn task_end(node: &str, task: u32, code: i32, sig: i32) -> String {
    let what = match sig {
        0 => format!("Exited with exit code {code}"),
        2 => "Interrupt".into(),
        6 => "Aborted".into(),
        9 => "Killed".into(),
        11 => "Segmentation fault".into(),
        15 => "Terminated".into(),
        n => format!("Killed by signal {n}"),
    };
    format!("srun: error: {node}: task {task}: {what}")
}

/// `-v`: where the step's tasks go, in Slurm's words.
pub fn verbose(s: &pb::StepStarted) -> Vec<String> {
    let nodes = crate::vocab::hostlist::compress(&s.nodes);
    let mut out =
        vec![format!("srun: jobid {}: nodes({}):`{nodes}', tasks {}", s.job_id, s.nodes.len(), s.ntasks)];
    for (node, ids) in s.nodes.iter().zip(crate::cli::sattach::node_ids(s)) {
        let shown: Vec<String> = ids.iter().map(u32::to_string).collect();
        out.push(format!(
            "srun: launching StepId={}.{} on host {node}, {} tasks: [{}]",
            s.job_id,
            s.step_id,
            ids.len(),
            shown.join(",")
        ));
    }
    out
}

fn say(a: &Args, line: &str) {
    if !a.quiet {
        crate::cli::output::complain(line);
    }
}

/// Runs the step; srun's exit code.
pub async fn run(a: &Args, env: &[(String, String)]) -> Result<i32, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let me = Identity::local();
    let mut c = conn::connect_flag(a.controller.as_deref(), me.clone()).await?;
    crate::cli::cluster::resolve(&mut c, &a.clusters).await?;
    if a.test_only {
        // Slurm's: an estimate for a new allocation of this shape, even inside a job.
        let req = pb::SubmitRequest { spec: Some(allocation(a, env, &cwd, chrono::Local::now())?) };
        let r = c
            .jobs
            .test_submit(req)
            .await
            .map_err(|e| format!("Unable to allocate resources: {}", status(e)))?;
        crate::cli::output::complain(&crate::cli::family::expected_start("srun", &r.into_inner()));
        return Ok(0);
    }
    let (job, release) = match a.jobid {
        Some(id) => (id, false),
        None => {
            let req = pb::SubmitRequest { spec: Some(allocation(a, env, &cwd, chrono::Local::now())?) };
            let r = c
                .jobs
                .submit(req)
                .await
                .map_err(|e| format!("Unable to allocate resources: {}", status(e)))?;
            (r.into_inner().job_id, true)
        }
    };
    let req = match step(a, env, &cwd, job, release) {
        Ok(r) => r,
        Err(e) => {
            if release {
                revoke(&mut c, job).await;
            }
            return Err(e);
        }
    };
    if let Some(p) = &a.prolog {
        // Slurm's: the prolog gets the step's command line; a failure runs no step.
        let code = local(p, &a.argv).await?;
        if code != 0 {
            if release {
                revoke(&mut c, job).await;
            }
            return Err(format!("--prolog: '{p}' exited with code {code}; the step was not run"));
        }
    }
    let (tx, rx) = mpsc::channel(8);
    let first = pb::StepInput { input: Some(pb::step_input::Input::Step(req)) };
    tx.send(first).await.map_err(|_| "cannot send the step".to_string())?;
    let events = match c.steps.run_step(tokio_stream::wrappers::ReceiverStream::new(rx)).await {
        Ok(r) => r.into_inner(),
        Err(e) => {
            if release {
                revoke(&mut c, job).await;
            }
            return Err(format!("Unable to create step for job {job}: {}", status(e)));
        }
    };
    let ctx = Ctx { a, user: me.user, job, release, workdir: workdir(a, &cwd) };
    let ended = ctx.drive(&mut c, tx, events).await;
    if let Some(p) = &a.epilog {
        // Its code changes nothing: the step has ended.
        let _ = local(p, &a.argv).await;
    }
    ended
}

/// Runs srun's `--prolog`/`--epilog` here with the step's command line; its exit code.
async fn local(prog: &str, argv: &[String]) -> Result<i32, String> {
    use std::os::unix::process::ExitStatusExt;
    let st = tokio::process::Command::new(prog)
        .args(argv)
        .stdin(std::process::Stdio::null())
        .status()
        .await
        .map_err(|e| format!("cannot run '{prog}': {e}"))?;
    Ok(st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0)))
}

/// Cancels the allocation srun made (the controller would, once the stream is gone).
async fn revoke(c: &mut Clients, job: u64) {
    let _ = c.jobs.cancel(pb::CancelRequest { ids: vec![job], ..Default::default() }).await;
}

struct Ctx<'a> {
    a: &'a Args,
    user: String,
    job: u64,
    release: bool,
    workdir: String,
}

impl Ctx<'_> {
    /// srun's own `-o/-e` files, once the step's id is known.
    fn sink(&self, step: u32, ntasks: u32) -> Result<Sink, String> {
        let name = super::name(self.a);
        let vars = PathVars { job_id: self.job, user: &self.user, name: &name, node: "", array: None };
        let mine = |p: &str| {
            if super::on_nodes(p) {
                Ok(Some(Dest::Nowhere))
            } else {
                output::open(p, &vars, step, &self.workdir, self.a.append)
            }
        };
        let out = mine(&self.a.output)?;
        let err = if self.a.error.is_empty() {
            // Without -e, stderr goes where -o sends stdout.
            match &out {
                Some(Dest::File(f)) => Some(Dest::File(f.try_clone().map_err(|e| format!("--output: {e}"))?)),
                Some(Dest::Nowhere) => Some(Dest::Nowhere),
                _ => None,
            }
        } else {
            mine(&self.a.error)?
        };
        Ok(Sink::new(out.unwrap_or(Dest::Stdout), err.unwrap_or(Dest::Stderr), self.a.label, ntasks))
    }

    /// srun's stdin (or `--input`'s file) to the tasks, once the step has started.
    fn feed(&self, step: u32, tx: &mpsc::Sender<pb::StepInput>) -> Result<(), String> {
        let name = super::name(self.a);
        let vars = PathVars { job_id: self.job, user: &self.user, name: &name, node: "", array: None };
        self.a.input.start(&vars, step, &self.workdir, tx)
    }

    async fn drive(
        &self,
        c: &mut Clients,
        tx: mpsc::Sender<pb::StepInput>,
        mut events: Streaming<pb::StepEvent>,
    ) -> Result<i32, String> {
        let signal_of = |k: SignalKind| signal(k).map_err(|e| format!("cannot watch signals: {e}"));
        let mut int = signal_of(SignalKind::interrupt())?;
        let mut term = signal_of(SignalKind::terminate())?;
        let mut hup = signal_of(SignalKind::hangup())?;
        let mut quit = signal_of(SignalKind::quit())?;
        let mut usr1 = signal_of(SignalKind::user_defined1())?;
        let mut usr2 = signal_of(SignalKind::user_defined2())?;
        let mut sink: Option<Sink> = None;
        // --pty: the terminal is raw from the step's start until this returns.
        let mut _raw: Option<super::input::Raw> = None;
        let mut last_int: Option<Instant> = None;
        // -I: from the first "pending", the allocation srun made may wait this long.
        let mut give_up: Option<tokio::time::Instant> = None;
        // -W: from the first task's end, the rest may run this long.
        let (mut wait_end, mut waited): (Option<tokio::time::Instant>, bool) = (None, false);
        let send = |i: pb::step_input::Input| {
            let tx = tx.clone();
            async move { tx.send(pb::StepInput { input: Some(i) }).await.is_ok() }
        };
        loop {
            let deadline = give_up.unwrap_or_else(tokio::time::Instant::now);
            let forwarded = tokio::select! {
                ev = events.message() => {
                    let e = match ev {
                        Ok(Some(pb::StepEvent { event: Some(e) })) => e,
                        Ok(Some(_)) => continue,
                        Ok(None) => return Err(format!("job {}: the controller closed the step's stream before its end", self.job)),
                        Err(s) if sink.is_none() => {
                            return Err(format!("Unable to create step for job {}: {}", self.job, status(s)));
                        }
                        Err(s) => return Err(format!("job {}: lost the step's stream: {}", self.job, status(s))),
                    };
                    if matches!(e, pb::step_event::Event::Pending(_)) && self.release && give_up.is_none() {
                        give_up = self.a.immediate.map(|n| tokio::time::Instant::now() + Duration::from_secs(n));
                    }
                    if matches!(e, pb::step_event::Event::TaskEnded(_)) && !waited {
                        waited = true;
                        wait_end = self.a.wait.map(|n| tokio::time::Instant::now() + Duration::from_secs(n));
                    }
                    if let pb::step_event::Event::Started(s) = &e {
                        if self.a.pty {
                            _raw = super::input::Raw::enter();
                        }
                        self.feed(s.step_id, &tx)?;
                    }
                    if let Some(code) = self.event(e, &mut sink)? {
                        return Ok(code);
                    }
                    continue;
                }
                _ = tokio::time::sleep_until(wait_end.unwrap_or_else(tokio::time::Instant::now)), if wait_end.is_some() => {
                    let n = self.a.wait.unwrap_or(0);
                    say(self.a, &format!("srun: First task exited {n}s ago; terminating the step (--wait)"));
                    wait_end = None;
                    send(pb::step_input::Input::Cancel(true)).await
                }
                _ = tokio::time::sleep_until(deadline), if give_up.is_some() && sink.is_none() => {
                    revoke(c, self.job).await;
                    return Err(crate::cli::family::not_immediate(self.a.immediate.unwrap_or(1)));
                }
                _ = int.recv() => {
                    if sink.is_none() {
                        if self.release {
                            revoke(c, self.job).await;
                        }
                        say(self.a, &format!("srun: Job allocation {} has been revoked", self.job));
                        return Ok(1);
                    }
                    if self.a.quit_on_interrupt || last_int.is_some_and(|t| t.elapsed() < Duration::from_secs(1)) {
                        say(self.a, "srun: cancelling the step");
                        send(pb::step_input::Input::Cancel(true)).await
                    } else {
                        say(self.a, "srun: interrupt (one more within 1 sec to abort)");
                        last_int = Some(Instant::now());
                        send(pb::step_input::Input::Signal(2)).await
                    }
                }
                _ = term.recv() => send(pb::step_input::Input::Signal(15)).await,
                _ = hup.recv() => send(pb::step_input::Input::Signal(1)).await,
                _ = quit.recv() => send(pb::step_input::Input::Signal(3)).await,
                _ = usr1.recv() => send(pb::step_input::Input::Signal(10)).await,
                _ = usr2.recv() => send(pb::step_input::Input::Signal(12)).await,
            };
            if !forwarded {
                return Err(format!("job {}: the controller no longer takes the step's signals", self.job));
            }
        }
    }

    /// One event; Some(code) once the step has ended.
    fn event(&self, e: pb::step_event::Event, sink: &mut Option<Sink>) -> Result<Option<i32>, String> {
        use pb::step_event::Event;
        match e {
            Event::Pending(id) => say(self.a, &format!("srun: job {id} queued and waiting for resources")),
            Event::Started(s) => {
                if self.release {
                    say(self.a, &format!("srun: job {} has been allocated resources", s.job_id));
                }
                if self.a.verbose > 0 {
                    verbose(&s).iter().for_each(|l| crate::cli::output::complain(l));
                }
                *sink = Some(self.sink(s.step_id, s.ntasks)?);
            }
            // --pty: the other tasks' output is discarded, as Slurm's.
            Event::Output(o) if self.a.pty && o.task != 0 => {}
            Event::Output(o) => {
                if let Some(s) = sink.as_mut() {
                    s.write(o.task, false, &o.stdout);
                    s.write(o.task, true, &o.stderr);
                }
            }
            Event::TaskEnded(t) if t.exit_code != 0 || t.signal != 0 => {
                crate::cli::output::complain(&task_end(&t.node, t.task, t.exit_code, t.signal));
            }
            Event::TaskEnded(_) => {}
            Event::Ended(end) => {
                if let Some(s) = sink.as_mut() {
                    s.finish();
                }
                if end.job_state() != crate::vocab::JobState::Completed && !end.message.is_empty() {
                    crate::cli::output::complain(&format!("srun: error: {}", end.message));
                }
                return Ok(Some(end.exit_code));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ends_read_as_slurm_s() {
        assert_eq!(task_end("n1", 0, 3, 0), "srun: error: n1: task 0: Exited with exit code 3");
        assert_eq!(task_end("n2", 4, 0, 9), "srun: error: n2: task 4: Killed");
        assert_eq!(task_end("n2", 4, 0, 15), "srun: error: n2: task 4: Terminated");
        assert_eq!(task_end("n2", 4, 0, 7), "srun: error: n2: task 4: Killed by signal 7");
    }
}
