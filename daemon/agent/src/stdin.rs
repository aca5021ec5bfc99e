//! srun's standard input for a step's tasks here (`srun -i/--input`): the
//! tasks LaunchStep names get a pipe as stdin, and the StepStdin pieces the
//! controller passes on are written to each of them in order; the end of
//! srun's stdin (or of the step) closes the pipes.
//!
//! Bounded end to end, and the command stream never waits on it: a step's
//! pieces wait in a queue of [`WINDOW`] (at most 64 KiB each), taken with
//! `try_send` only. The writer reports on the step's StepIo stream how many
//! pieces it has written (`stdin_written`, a credit); the controller sends
//! a node no more than the window beyond that, and otherwise stops reading
//! srun's stream, so srun blocks as Slurm's does. A piece beyond the window
//! is the controller's protocol error: the step's stdin is closed and its
//! output says so, nothing more is buffered.

use spur_proto::v1 as pb;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::fs::File;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::mpsc;

/// Pieces of srun's stdin a step's tasks here may have waiting: the
/// controller's window (its `stdin::WINDOW`) must not exceed it.
pub const WINDOW: usize = 16;

/// A step on a node: (job, step, node).
pub type Key = (u64, u32, String);

/// A step's report stream, held weakly: the feed does not keep it open.
pub type Reports = mpsc::WeakSender<pb::StepReport>;

struct Feed {
    tx: mpsc::Sender<Vec<u8>>,
    reports: Option<Reports>,
}

/// The open feeds of the steps running here.
#[derive(Clone, Default)]
pub struct Feeds(Arc<Mutex<HashMap<Key, Feed>>>);

impl Feeds {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Feed>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the feed of a step's tasks here, before its launch returns, so
    /// no piece finds it missing; the receiver goes to [`write()`].
    pub fn open(&self, key: Key) -> mpsc::Receiver<Vec<u8>> {
        let (tx, rx) = mpsc::channel(WINDOW);
        self.map().insert(key, Feed { tx, reports: None });
        rx
    }

    /// The step's report stream, once it is open: where an overrun is told.
    pub fn attach(&self, key: &Key, reports: Reports) {
        if let Some(f) = self.map().get_mut(key) {
            f.reports = Some(reports);
        }
    }

    /// The feed ends: what is queued is still written, then the pipes close.
    pub fn close(&self, key: &Key) {
        self.map().remove(key);
    }

    /// A StepStdin command. Never waits: the agent's commands (every job's
    /// here, and signals) come on the same stream.
    pub fn piece(&self, s: pb::StepStdin) {
        let key = (s.job_id, s.step_id, s.node);
        if s.eof {
            return self.close(&key);
        }
        let mut map = self.map();
        let Some(feed) = map.get(&key) else {
            tracing::debug!(job = key.0, step = key.1, "stdin for a step not running here");
            return;
        };
        match feed.tx.try_send(s.data) {
            Ok(()) => {}
            // The writer has gone: the step is ending.
            Err(mpsc::error::TrySendError::Closed(_)) => {
                map.remove(&key);
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                let feed = map.remove(&key);
                drop(map);
                tracing::warn!(job = key.0, step = key.1, "srun's stdin overran its window; closed");
                let text = format!(
                    "spurd: error: {}: srun's stdin: a piece beyond the window of {WINDOW} unwritten; \
                     the step's stdin is closed\n",
                    key.2
                );
                if let Some(r) = feed.and_then(|f| f.reports?.upgrade()) {
                    let m = pb::StepReport { stderr: text.into(), ..Default::default() };
                    tokio::spawn(async move { r.send(m).await });
                }
            }
        }
    }
}

/// Writes the feed's pieces to each pipe (and `--pty`'s terminal) in order
/// until the feed closes, and after each piece credits it on the step's
/// report stream. A pipe whose task has gone (or closed its stdin) is
/// dropped; the feed is still read (and credited), so srun is never held up
/// by a task that has gone. At the end the pipes close; the terminal gets
/// its end-of-file character (^D), as a terminal's reader sees the end of its input.
pub async fn write(
    mut rx: mpsc::Receiver<Vec<u8>>,
    mut pipes: Vec<ChildStdin>,
    mut tty: Option<File>,
    reports: Reports,
) {
    let mut written = 0u64;
    while let Some(data) = rx.recv().await {
        let mut kept = Vec::with_capacity(pipes.len());
        for mut p in pipes {
            if p.write_all(&data).await.is_ok() {
                kept.push(p);
            }
        }
        pipes = kept;
        if let Some(t) = tty.as_mut()
            && (t.write_all(&data).await.is_err() || t.flush().await.is_err())
        {
            tty = None;
        }
        written += 1;
        if let Some(r) = reports.upgrade() {
            let _ = r.send(pb::StepReport { stdin_written: written, ..Default::default() }).await;
        }
    }
    drop(pipes);
    if let Some(mut t) = tty {
        let _ = t.write_all(&[EOF_CHAR]).await;
        let _ = t.flush().await;
    }
}

/// A terminal's VEOF (^D).
const EOF_CHAR: u8 = 4;

#[cfg(test)]
mod tests {
    use super::*;
    use spur_proto::v1::StepStdin;
    use std::process::Stdio;
    use tokio::io::AsyncReadExt;

    fn piece(step: u32, data: &[u8], eof: bool) -> StepStdin {
        StepStdin { job_id: 7, step_id: step, node: "n1".into(), data: data.to_vec(), eof }
    }

    #[tokio::test]
    async fn pieces_reach_the_task_in_order_are_credited_and_the_end_closes_its_stdin() {
        let feeds = Feeds::default();
        let key: Key = (7, 0, "n1".into());
        let rx = feeds.open(key.clone());
        let mut child = tokio::process::Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("cat");
        let pipe = child.stdin.take().unwrap();
        let (reports, mut credits) = mpsc::channel(8);
        let writer = tokio::spawn(write(rx, vec![pipe], None, reports.downgrade()));
        feeds.piece(piece(0, b"a\n", false));
        feeds.piece(piece(0, b"b\n", false));
        // Another step's piece goes nowhere.
        feeds.piece(piece(1, b"x\n", false));
        feeds.piece(piece(0, b"", true));
        let mut out = String::new();
        child.stdout.take().unwrap().read_to_string(&mut out).await.unwrap();
        assert_eq!(out, "a\nb\n", "cat ends: its stdin closed");
        assert!(child.wait().await.unwrap().success());
        writer.await.unwrap();
        let got: Vec<u64> = [credits.recv().await, credits.recv().await]
            .into_iter()
            .map(|r| r.expect("a credit").stdin_written)
            .collect();
        assert_eq!(got, [1, 2], "a running total, one a piece written");
    }

    #[tokio::test]
    async fn a_producer_that_never_stops_fills_the_window_and_is_cut_off_without_waiting() {
        let feeds = Feeds::default();
        let key: Key = (7, 0, "n1".into());
        // Nothing writes: the task never reads its stdin.
        let mut rx = feeds.open(key.clone());
        let (reports, mut told) = mpsc::channel(8);
        feeds.attach(&key, reports.downgrade());
        // Synchronous: the command stream cannot block on it, however much comes.
        for _ in 0..10_000 {
            feeds.piece(piece(0, &[b'y'; 1024], false));
        }
        assert_eq!(rx.len(), WINDOW, "the step's queue holds the window, no more");
        let said = told.recv().await.expect("the overrun is told in the step's output");
        let said = String::from_utf8(said.stderr).unwrap();
        assert!(said.contains("window of 16") && said.contains("n1"), "{said}");
        // Its stdin is closed: the queued pieces, then the end.
        for _ in 0..WINDOW {
            assert!(rx.recv().await.is_some());
        }
        assert!(rx.recv().await.is_none(), "the feed was closed");
    }
}
