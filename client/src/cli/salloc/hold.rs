//! salloc's hold on its allocation: a RunStep stream whose request is a
//! hold (no tasks). The controller says pending, then started with the
//! job's nodes; salloc runs the command with the job's variables, and when
//! it exits sends its code up (the allocation ends COMPLETED or FAILED with
//! it). scancel or the time limit ending the allocation comes down as the
//! stream's end: salloc says it was revoked, sends `-K`'s signal to the
//! command if asked, and waits for it, as Slurm's does. Ctrl-C while waiting gives up
//! the allocation; while the command runs it is the command's (salloc
//! ignores it, as Slurm's does).

use super::{Args, granted, job_env, say};
use crate::cli::fmt::status;
use crate::conn::Clients;
use spur_proto::v1 as pb;
use std::path::Path;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

fn input(i: pb::step_input::Input) -> pb::StepInput {
    pb::StepInput { input: Some(i) }
}

/// Holds job `job` (just submitted) and runs the command in it; the command's exit code.
pub async fn hold(a: &Args, c: &mut Clients, job: u64, cwd: &Path) -> Result<i32, String> {
    let req = pb::StepRequest { job_id: job, release: true, hold: true, ..Default::default() };
    let (tx, rx) = mpsc::channel(4);
    tx.send(input(pb::step_input::Input::Step(req))).await.map_err(|_| "cannot send the hold".to_string())?;
    let mut events = match c.steps.run_step(tokio_stream::wrappers::ReceiverStream::new(rx)).await {
        Ok(r) => r.into_inner(),
        Err(e) => {
            let _ = c.jobs.cancel(pb::CancelRequest { ids: vec![job], ..Default::default() }).await;
            return Err(format!("Unable to hold job allocation {job}: {}", status(e)));
        }
    };
    let mut int = signal(SignalKind::interrupt()).map_err(|e| format!("cannot watch signals: {e}"))?;
    // Wait for the start; Ctrl-C gives the allocation up (dropping the stream cancels it).
    // -I: from the first "pending", the allocation may wait this long.
    let mut give_up: Option<tokio::time::Instant> = None;
    let nodes = loop {
        let deadline = give_up.unwrap_or_else(tokio::time::Instant::now);
        tokio::select! {
            ev = events.message() => match ev {
                Ok(Some(pb::StepEvent { event: Some(pb::step_event::Event::Pending(_)) })) => {
                    say(a, &format!("salloc: job {job} queued and waiting for resources"));
                    give_up = a.immediate.map(|n| tokio::time::Instant::now() + std::time::Duration::from_secs(n));
                }
                Ok(Some(pb::StepEvent { event: Some(pb::step_event::Event::Started(s)) })) => break s.nodes,
                Ok(Some(pb::StepEvent { event: Some(pb::step_event::Event::Ended(e)) })) => {
                    return Err(format!("job {job}: {}", e.message));
                }
                Ok(Some(_)) => {}
                Ok(None) => return Err(format!("job {job}: the controller closed the allocation's stream")),
                Err(s) => return Err(format!("Job allocation {job} failed: {}", status(s))),
            },
            _ = tokio::time::sleep_until(deadline), if give_up.is_some() => {
                drop(tx);
                let _ = c.jobs.cancel(pb::CancelRequest { ids: vec![job], ..Default::default() }).await;
                return Err(crate::cli::family::not_immediate(a.immediate.unwrap_or(1)));
            }
            _ = int.recv() => {
                drop(tx);
                let _ = c.jobs.cancel(pb::CancelRequest { ids: vec![job], ..Default::default() }).await;
                say(a, &format!("salloc: Job allocation {job} has been revoked."));
                return Ok(1);
            }
        }
    };
    granted(a, job);
    let cluster = match c.session.who_am_i(pb::WhoAmIRequest {}).await {
        Ok(w) => w.into_inner().cluster_name,
        Err(_) => String::new(),
    };
    let url = a.controller.clone().or_else(|| std::env::var(spur_proto::wire::CONTROLLER_ENV).ok());
    let argv = if a.argv.is_empty() {
        vec![std::env::var("SHELL").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "/bin/sh".into())]
    } else {
        a.argv.clone()
    };
    let dir = a.chdir.as_deref().map_or_else(|| cwd.to_path_buf(), |d| cwd.join(d));
    let spawned = tokio::process::Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(&dir)
        .envs(job_env(a, job, &nodes, &cluster, url.as_deref()))
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            let _ = tx.send(input(pb::step_input::Input::Relinquish(127))).await;
            return Err(format!("cannot run '{}': {e} (job allocation {job} is relinquished)", argv[0]));
        }
    };
    let mut revoked = false;
    let code = loop {
        tokio::select! {
            st = child.wait() => {
                use std::os::unix::process::ExitStatusExt;
                let st = st.map_err(|e| format!("cannot wait for '{}': {e}", argv[0]))?;
                break st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0));
            }
            ev = events.message(), if !revoked => match ev {
                Ok(Some(pb::StepEvent { event: Some(pb::step_event::Event::Ended(_)) })) | Ok(None) | Err(_) => {
                    // Slurm's: the command is told only with -K; salloc waits for it either way.
                    say(a, &format!("salloc: Job allocation {job} has been revoked."));
                    revoked = true;
                    if let (Some(sig), Some(pid)) = (a.kill_command, child.id()) {
                        let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX));
                        if let Ok(sig) = nix::sys::signal::Signal::try_from(sig) {
                            let _ = nix::sys::signal::kill(pid, sig);
                        }
                    }
                }
                Ok(Some(_)) => {}
            },
            // The command's: the terminal sent it to the whole foreground group.
            _ = int.recv() => {}
        }
    };
    if revoked {
        return Ok(code);
    }
    say(a, &format!("salloc: Relinquishing job allocation {job}"));
    if tx.send(input(pb::step_input::Input::Relinquish(code))).await.is_ok() {
        // The controller ends the job with the code, then says so.
        while let Ok(Some(ev)) = events.message().await {
            if matches!(ev.event, Some(pb::step_event::Event::Ended(_))) {
                break;
            }
        }
    }
    Ok(code)
}
