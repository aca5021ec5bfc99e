//! What an operator does to jobs (`scancel`, `scontrol hold|release|requeue`):
//! the words each dialog and status line uses, which jobs an operation
//! leaves out and the equivalent command line.

use super::{Class, JobRec};
use spur_vocab::JobState;

/// What an operator does to jobs: `scancel` and `scontrol hold|release|requeue`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobOp {
    Cancel,
    Hold,
    Release,
    Requeue,
}

impl JobOp {
    pub fn title(self) -> &'static str {
        match self {
            JobOp::Cancel => "Cancel",
            JobOp::Hold => "Hold",
            JobOp::Release => "Release",
            JobOp::Requeue => "Requeue",
        }
    }

    pub fn verb(self) -> &'static str {
        match self {
            JobOp::Cancel => "cancel jobs",
            JobOp::Hold => "hold jobs",
            JobOp::Release => "release jobs",
            JobOp::Requeue => "requeue jobs",
        }
    }

    /// The confirm button. Not "Cancel": that is the button that backs out.
    pub fn button(self) -> &'static str {
        match self {
            JobOp::Cancel => "scancel",
            other => other.title(),
        }
    }

    /// The past tense for the status line.
    pub fn done(self) -> &'static str {
        match self {
            JobOp::Cancel => "cancelled",
            JobOp::Hold => "held",
            JobOp::Release => "released",
            JobOp::Requeue => "requeued",
        }
    }

    /// `action=` of `UpdateJob` (cancel has its own call).
    pub fn action(self) -> &'static str {
        match self {
            JobOp::Cancel => "cancel",
            JobOp::Hold => "hold",
            JobOp::Release => "release",
            JobOp::Requeue => "requeue",
        }
    }

    /// What the change does, for the confirmation.
    pub fn effect(self) -> &'static str {
        match self {
            JobOp::Cancel => "Pending jobs never start; running jobs are killed.",
            JobOp::Hold => "The jobs stay pending and do not start until released.",
            JobOp::Release => "The jobs may start again when resources allow.",
            JobOp::Requeue => "The jobs are killed and queued to start again from the beginning.",
        }
    }

    /// Why the operation does not apply to `r`, or None when it does. Checked
    /// before the dialog, so it names only the jobs the controller would change.
    pub fn skip_reason(self, r: &JobRec) -> Option<&'static str> {
        match self {
            JobOp::Cancel if r.class() == Class::Finished => Some("already ended"),
            JobOp::Hold if r.state != JobState::Pending => Some("not pending"),
            JobOp::Release if !r.held => Some("not held"),
            JobOp::Requeue if r.state != JobState::Running => Some("not running"),
            _ => None,
        }
    }

    /// The equivalent command line, with at most `max` ids spelled out.
    pub fn command(self, ids: &[u64], max: usize) -> String {
        match self {
            JobOp::Cancel => format!("scancel {}", id_list(ids, " ", max)),
            op => format!("scontrol {} {}", op.action(), id_list(ids, ",", max)),
        }
    }
}

/// `12,13,14`, or the first `max` and how many more: a dialog naming a
/// thousand marked jobs must still fit on the screen.
pub fn id_list(ids: &[u64], sep: &str, max: usize) -> String {
    let shown: Vec<String> = ids.iter().take(max).map(u64::to_string).collect();
    let mut out = shown.join(sep);
    if ids.len() > max {
        out.push_str(&format!("{sep}… ({} more)", ids.len() - max));
    }
    out
}
