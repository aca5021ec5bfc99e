//! srun's standard input for a step's tasks here (`srun -i/--input`): the
//! tasks LaunchStep names get a pipe as stdin, and the StepStdin pieces the
//! controller passes on are written to each of them in order; the end of
//! srun's stdin (or of the step) closes the pipes.
//!
//! Bounded: a step's pieces wait in a queue of [`QUEUE`] (at most 64 KiB
//! each); a full queue holds up the command stream, so the controller stops
//! reading srun's stream and srun stops reading its stdin. A task that never
//! reads its stdin while srun has more for it delays this agent's later
//! commands until it ends (its pipe then fails, and its pieces are dropped).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::fs::File;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::mpsc;

/// Pieces of srun's stdin waiting for a step's tasks here.
pub const QUEUE: usize = 16;

/// A step on a node: (job, step, node).
pub type Key = (u64, u32, String);

/// The open feeds of the steps running here.
#[derive(Clone, Default)]
pub struct Feeds(Arc<Mutex<HashMap<Key, mpsc::Sender<Vec<u8>>>>>);

impl Feeds {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<Key, mpsc::Sender<Vec<u8>>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the feed of a step's tasks here, before its launch returns, so
    /// no piece finds it missing; the receiver goes to [`write`].
    pub fn open(&self, key: Key) -> mpsc::Receiver<Vec<u8>> {
        let (tx, rx) = mpsc::channel(QUEUE);
        self.map().insert(key, tx);
        rx
    }

    /// The feed ends: what is queued is still written, then the pipes close.
    pub fn close(&self, key: &Key) {
        self.map().remove(key);
    }

    /// A StepStdin command, awaited while the step's queue is full.
    pub async fn piece(&self, s: spur_proto::v1::StepStdin) {
        let key = (s.job_id, s.step_id, s.node);
        if s.eof {
            return self.close(&key);
        }
        let Some(tx) = self.map().get(&key).cloned() else {
            tracing::debug!(job = key.0, step = key.1, "stdin for a step not running here");
            return;
        };
        if tx.send(s.data).await.is_err() {
            self.close(&key);
        }
    }
}

/// Writes the feed's pieces to each pipe (and `--pty`'s terminal) in order
/// until the feed closes. A pipe whose task has gone (or closed its stdin)
/// is dropped; the feed is still read, so the agent's commands never wait on
/// it. At the end the pipes close; the terminal gets its end-of-file
/// character (^D), as a terminal's reader sees the end of its input.
pub async fn write(mut rx: mpsc::Receiver<Vec<u8>>, mut pipes: Vec<ChildStdin>, mut tty: Option<File>) {
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

    #[tokio::test]
    async fn pieces_reach_the_task_in_order_and_the_end_closes_its_stdin() {
        let feeds = Feeds::default();
        let key: Key = (7, 0, "n1".into());
        let rx = feeds.open(key.clone());
        let mut child = tokio::process::Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("cat");
        let pipe = child.stdin.take().unwrap();
        let writer = tokio::spawn(write(rx, vec![pipe], None));
        let piece = |data: &[u8], eof| StepStdin {
            job_id: 7,
            step_id: 0,
            node: "n1".into(),
            data: data.to_vec(),
            eof,
        };
        feeds.piece(piece(b"a\n", false)).await;
        feeds.piece(piece(b"b\n", false)).await;
        // Another step's piece goes nowhere.
        feeds.piece(StepStdin { step_id: 1, ..piece(b"x\n", false) }).await;
        feeds.piece(piece(b"", true)).await;
        let mut out = String::new();
        child.stdout.take().unwrap().read_to_string(&mut out).await.unwrap();
        assert_eq!(out, "a\nb\n", "cat ends: its stdin closed");
        assert!(child.wait().await.unwrap().success());
        writer.await.unwrap();
    }
}
