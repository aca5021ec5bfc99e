//! srun's standard input (`-i/--input`): which of a step's tasks it feeds
//! (task 0 by default, as Slurm's srun; one task; all; none), and its pieces
//! on their way to the agents of those tasks' nodes. Nothing is kept here:
//! each step has a [`Window`] per node of pieces sent and not yet written
//! into the tasks' pipes (the agent's `stdin_written` credits); srun's
//! RunStep stream is read only while every node has room, so a task that
//! reads slowly (or never) slows srun's reading, not the agent's commands.

use super::layout::Shape;
use crate::error::{Error, Result};
use crate::jobs::JobService;
use spur_proto::v1 as pb;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;

/// The largest piece of srun's stdin in one message.
pub const MAX_STDIN_CHUNK: usize = 64 << 10;
/// Pieces a node may have unwritten: the agent's queue (its `stdin::WINDOW`)
/// holds this many, and takes one beyond it as a protocol error.
pub const WINDOW: u64 = 16;

/// A step's pieces per node of its stdin: (sent, written).
pub struct Window {
    nodes: Vec<String>,
    counts: Mutex<Vec<(u64, u64)>>,
    /// A credit came: the RunStep loop looks at its room again.
    pub more: Notify,
}

impl Window {
    fn counts(&self) -> MutexGuard<'_, Vec<(u64, u64)>> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every node can take a piece more.
    pub fn room(&self) -> bool {
        self.counts().iter().all(|&(sent, written)| sent.saturating_sub(written) < WINDOW)
    }

    fn credit(&self, node: &str, written: u64) {
        if let Some(i) = self.nodes.iter().position(|n| n == node) {
            let c = &mut self.counts()[i];
            c.1 = c.1.max(written);
            self.more.notify_one();
        }
    }
}

type Windows = HashMap<(u64, u32), Arc<Window>>;

/// The windows of the steps srun is feeding, by (job, step).
#[derive(Default)]
pub struct Credits(Arc<Mutex<Windows>>);

impl Credits {
    fn map(&self) -> MutexGuard<'_, Windows> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The window of a step fed to `nodes`, until the guard is dropped.
    pub fn open(&self, key: (u64, u32), nodes: &[String]) -> Open {
        let w = Arc::new(Window {
            nodes: nodes.to_vec(),
            counts: Mutex::new(vec![(0, 0); nodes.len()]),
            more: Notify::new(),
        });
        self.map().insert(key, w.clone());
        Open { credits: Credits(self.0.clone()), key, window: w }
    }

    /// An agent's running total of the step's pieces written on `node`.
    pub fn written(&self, (job, step): (u64, u32), node: &str, total: u64) {
        if let Some(w) = self.map().get(&(job, step)) {
            w.credit(node, total);
        }
    }
}

/// A step's open window; dropping it forgets it.
pub struct Open {
    credits: Credits,
    key: (u64, u32),
    pub window: Arc<Window>,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.credits.map().remove(&self.key);
    }
}

impl JobService {
    /// A piece of srun's stdin (or its end) to each node of the window,
    /// counted as in flight there once its agent's queue has it.
    pub(super) async fn stdin(&self, (job, step): (u64, u32), w: &Window, data: Vec<u8>, eof: bool) {
        for (i, node) in w.nodes.iter().enumerate() {
            match self.link.send(node, piece(job, step, node, data.clone(), eof)).await {
                Ok(()) if !eof => w.counts()[i].0 += 1,
                Ok(()) => {}
                Err(e) => tracing::debug!(job, step, node, error = %e, "srun's stdin not delivered"),
            }
        }
    }
}

/// The tasks srun's stdin feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    None,
    All,
    Task(u32),
}

impl Feed {
    /// StepRequest.input for a step of `ntasks` tasks.
    pub fn parse(input: &str, ntasks: u32) -> Result<Feed> {
        let bad = |m: String| Error::invalid("input", m);
        match input.trim() {
            "" => Ok(Feed::Task(0)),
            "none" => Ok(Feed::None),
            "all" => Ok(Feed::All),
            n => {
                let t = n
                    .parse::<u32>()
                    .map_err(|_| bad(format!("'{n}': give a task id, \"all\" or \"none\"")))?;
                if t >= ntasks {
                    return Err(bad(format!(
                        "task {t}: the step has {ntasks} tasks (0-{})",
                        ntasks.max(1) - 1
                    )));
                }
                Ok(Feed::Task(t))
            }
        }
    }

    pub fn takes(self, task: u32) -> bool {
        match self {
            Feed::None => false,
            Feed::All => true,
            Feed::Task(t) => t == task,
        }
    }

    /// The nodes of `shape` hosting a task this feeds, in order.
    pub fn nodes(self, shape: &Shape) -> Vec<String> {
        (0..shape.nodes.len())
            .filter(|&i| shape.task_ids(i).iter().any(|&t| self.takes(t)))
            .map(|i| shape.nodes[i].clone())
            .collect()
    }
}

/// A piece of srun's stdin (or its end) for step `step` of `job` on `node`.
pub fn piece(job: u64, step: u32, node: &str, data: Vec<u8>, eof: bool) -> pb::AgentCommand {
    let s = pb::StepStdin { job_id: job, step_id: step, node: node.to_string(), data, eof };
    pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::StepStdin(s)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_names_task_zero_by_default_one_task_all_or_none() {
        assert_eq!(Feed::parse("", 4).unwrap(), Feed::Task(0));
        assert_eq!(Feed::parse("3", 4).unwrap(), Feed::Task(3));
        assert_eq!(Feed::parse("all", 4).unwrap(), Feed::All);
        assert_eq!(Feed::parse("none", 4).unwrap(), Feed::None);
        let e = Feed::parse("4", 4).unwrap_err().to_string();
        assert!(e.contains("input") && e.contains("task 4"), "{e}");
        assert!(Feed::parse("x", 4).unwrap_err().to_string().contains("input"));
        assert!(Feed::All.takes(7) && !Feed::None.takes(0) && !Feed::Task(1).takes(0));
    }

    #[test]
    fn a_node_takes_a_window_of_pieces_beyond_what_its_agent_has_written() {
        let credits = Credits::default();
        let open = credits.open((7, 0), &["n1".into(), "n2".into()]);
        let w = &open.window;
        for _ in 0..WINDOW {
            assert!(w.room());
            w.counts().iter_mut().for_each(|c| c.0 += 1);
        }
        assert!(!w.room(), "both nodes have the window in flight");
        credits.written((7, 0), "n1", 3);
        assert!(!w.room(), "n2 has none written yet");
        credits.written((7, 0), "n2", 1);
        assert!(w.room());
        // A stale total takes nothing back; another step's credit goes nowhere.
        credits.written((7, 0), "n2", 0);
        credits.written((7, 1), "n1", 99);
        assert!(w.room() && w.counts()[1] == (WINDOW, 1));
        drop(open);
        assert!(credits.map().is_empty(), "the step's window is forgotten with its guard");
    }
}
