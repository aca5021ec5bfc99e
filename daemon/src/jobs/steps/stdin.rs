//! srun's standard input (`-i/--input`): which of a step's tasks it feeds
//! (task 0 by default, as Slurm's srun; one task; all; none), and its pieces
//! on their way to the agents of those tasks' nodes. Nothing is kept here:
//! srun's RunStep stream is read only as fast as the agents' command queues
//! take the pieces, so a task that reads slowly slows srun's reading.

use super::layout::Shape;
use crate::error::{Error, Result};
use spur_proto::v1 as pb;

/// The largest piece of srun's stdin in one message.
pub const MAX_STDIN_CHUNK: usize = 64 << 10;

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
            .filter(|&i| shape.task_ids(i).any(|t| self.takes(t)))
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
}
