//! Runs a plugin's command (console.toml's `[[plugins]]`): the argv as
//! given, no shell, stdin closed, `SPUR_CONTROLLER_ADDR` set to the
//! console's controller (so `scontrol` in a plugin asks the same cluster), stdout and stderr read as they come and
//! sent to the output view as `Msg::Output` pieces of the view's `sub`.
//! Bounded both ways: after [`CAP`] bytes the rest is not read and the
//! process is killed, and after [`TIMEOUT`] it is killed too, so a plugin
//! that hangs (an ssh asking for a password) never holds the console.

use crate::model::action::Msg;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::sync::mpsc::{Sender, UnboundedSender, channel};

/// Output kept of one run: stdout and stderr together.
pub const CAP: usize = 1 << 20;
/// How long a run may take.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Starts the run in the background; its pieces and end come back on `msgs`.
pub fn spawn(sub: u64, argv: Vec<String>, controller: String, msgs: UnboundedSender<Msg>) {
    tokio::spawn(async move {
        let env = [("SPUR_CONTROLLER_ADDR", controller.as_str())];
        let error = run(sub, &argv, &env, &msgs, CAP, TIMEOUT).await.err();
        let _ = msgs.send(Msg::OutputEnded { sub, error });
    });
}

fn piece(sub: u64, data: Vec<u8>, note: &str) -> Msg {
    Msg::Output { sub, data, note: note.to_string() }
}

/// Runs `argv` to its end: Ok when it exits 0, else why not (its status,
/// the timeout, the cap, or why it could not start).
pub async fn run(
    sub: u64,
    argv: &[String],
    env: &[(&str, &str)],
    msgs: &UnboundedSender<Msg>,
    cap: usize,
    timeout: Duration,
) -> Result<(), String> {
    let (program, args) = argv.split_first().ok_or("the command is empty")?;
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{program}: {e}"))?;
    // Bounded: a fast writer waits for the view instead of filling memory.
    let (tx, mut rx) = channel::<Vec<u8>>(16);
    if let Some(out) = child.stdout.take() {
        tokio::spawn(pump(out, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        tokio::spawn(pump(err, tx));
    }
    let read = async {
        let mut total = 0usize;
        // Ends when both pipes close (the process and its children are done with them).
        while let Some(mut data) = rx.recv().await {
            if total + data.len() > cap {
                data.truncate(cap - total);
                let _ = msgs.send(piece(sub, data, ""));
                return Err(format!("output cut at {cap} bytes; the command was stopped"));
            }
            total += data.len();
            let _ = msgs.send(piece(sub, data, ""));
        }
        Ok(())
    };
    let outcome = match tokio::time::timeout(timeout, read).await {
        Ok(Ok(())) => match tokio::time::timeout(timeout, child.wait()).await {
            Ok(Ok(status)) if status.success() => Ok(()),
            Ok(Ok(status)) => Err(format!("exited with {status}")),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("still running after {}s; stopped", timeout.as_secs())),
        },
        Ok(Err(cut)) => Err(cut),
        Err(_) => Err(format!("still running after {}s; stopped", timeout.as_secs())),
    };
    if outcome.is_err() {
        let _ = child.start_kill();
    }
    outcome
}

async fn pump(mut from: impl AsyncRead + Unpin, to: Sender<Vec<u8>>) {
    let mut buf = vec![0u8; 8192];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 || to.send(buf[..n].to_vec()).await.is_err() {
            break;
        }
    }
}
