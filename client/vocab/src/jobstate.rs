//! Job states (long names and `squeue %t` codes), hold kinds and partition
//! states: the one table each, used by the controller, the CLI and the console.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! states {
    ($($v:ident => $long:literal, $code:literal;)*) => {
        /// A Slurm job state, in Slurm's numeric order (so `-S t` sorts by
        /// position: pending jobs before running ones).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
        #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
        #[allow(missing_docs)]
        pub enum JobState { #[default] $($v,)* }

        impl JobState {
            /// Every state, in Slurm's order.
            pub const ALL: &'static [JobState] = &[$(JobState::$v,)*];

            /// The long name: `PENDING`, `RUNNING`, ...
            pub const fn as_str(self) -> &'static str {
                match self { $(JobState::$v => $long,)* }
            }

            /// The compact code of `squeue %t`: `PD`, `R`, ...
            pub fn code(self) -> &'static str {
                match self { $(JobState::$v => $code,)* }
            }
        }
    };
}

states! {
    Pending => "PENDING", "PD";
    Running => "RUNNING", "R";
    Suspended => "SUSPENDED", "S";
    Completed => "COMPLETED", "CD";
    Cancelled => "CANCELLED", "CA";
    Failed => "FAILED", "F";
    Timeout => "TIMEOUT", "TO";
    NodeFail => "NODE_FAIL", "NF";
    Preempted => "PREEMPTED", "PR";
    BootFail => "BOOT_FAIL", "BF";
    Deadline => "DEADLINE", "DL";
    OutOfMemory => "OUT_OF_MEMORY", "OOM";
    Completing => "COMPLETING", "CG";
    Configuring => "CONFIGURING", "CF";
    Requeued => "REQUEUED", "RQ";
    RequeueHold => "REQUEUE_HOLD", "RH";
    Resizing => "RESIZING", "RS";
    Revoked => "REVOKED", "RV";
    Signaling => "SIGNALING", "SI";
    SpecialExit => "SPECIAL_EXIT", "SE";
    StageOut => "STAGE_OUT", "SO";
    Stopped => "STOPPED", "ST";
}

impl JobState {
    /// What `squeue` shows without `-t`: states of jobs that have not finished.
    pub const ACTIVE: &'static [JobState] = &[
        JobState::Pending,
        JobState::Running,
        JobState::Suspended,
        JobState::Completing,
        JobState::Configuring,
        JobState::Requeued,
    ];

    /// A long name as stored or sent (any case); None for a name Slurm lacks.
    pub fn from_name(name: &str) -> Option<JobState> {
        Self::ALL.iter().copied().find(|s| s.as_str().eq_ignore_ascii_case(name))
    }

    /// A state typed by a user, long or compact, any case: `pd`, `Running`.
    pub fn parse(tok: &str) -> Result<JobState, String> {
        Self::ALL
            .iter()
            .copied()
            .find(|s| s.as_str().eq_ignore_ascii_case(tok) || s.code().eq_ignore_ascii_case(tok))
            .ok_or_else(|| {
                format!(
                    "invalid job state '{tok}' (use PD, R, S, CG, CD, CA, F, TO, NF, PR, RQ or long names)"
                )
            })
    }

    /// Pending, running or suspended: the states the controller keeps scheduling.
    pub fn is_active(self) -> bool {
        matches!(self, JobState::Pending | JobState::Running | JobState::Suspended | JobState::Configuring)
    }

    /// Holds nodes: running, suspended, or configuring (an HRES plugin's
    /// asynchronous pre-run has not ended; the job is not launched yet).
    pub fn is_placed(self) -> bool {
        matches!(self, JobState::Running | JobState::Suspended | JobState::Configuring)
    }

    /// Position for `-S t`.
    pub fn rank(self) -> usize {
        self as usize
    }
}

impl fmt::Display for JobState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl JobState {
    /// Whether squeue's `%R` shows `(Reason)` for a job in this state rather
    /// than its nodes: waiting, or ended by a fault (as Slurm).
    pub fn shows_reason(self) -> bool {
        use JobState::*;
        matches!(self, Pending | Requeued | Failed | Timeout | OutOfMemory | Deadline)
    }

    /// The console's [`Class`] of the state.
    pub fn class(self) -> Class {
        use JobState::*;
        match self {
            Pending | Requeued | RequeueHold => Class::Pending,
            Running | Completing | Suspended | Configuring | Signaling | StageOut | Resizing => {
                Class::Running
            }
            _ => Class::Finished,
        }
    }

    /// A job in this state has not started its current run (pending, or
    /// requeued): a start or end it shows belongs to an earlier run.
    pub fn waiting(self) -> bool {
        self.class() == Class::Pending
    }
}

/// The console's three kinds of state: waiting, holding nodes, ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Waiting to run (pending, requeued).
    Pending,
    /// Holding nodes (running, suspended, completing, ...).
    Running,
    /// Ended, or a state Spur does not know.
    Finished,
}

/// Who holds a pending job: nobody, its user, or an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Hold {
    /// Not held (stored as the empty string).
    #[default]
    #[serde(rename = "")]
    None,
    /// Held by its user (`scontrol hold`, `sbatch -H`): the user may release it.
    User,
    /// Held by an operator: only an operator may release it.
    Admin,
}

impl Hold {
    /// The stored spelling: `""`, `user`, `admin`.
    pub fn as_str(self) -> &'static str {
        match self {
            Hold::None => "",
            Hold::User => "user",
            Hold::Admin => "admin",
        }
    }

    /// A stored spelling; anything else is no hold.
    pub fn from_name(name: &str) -> Hold {
        match name {
            "user" => Hold::User,
            "admin" => Hold::Admin,
            _ => Hold::None,
        }
    }
}

/// A partition's state, as `scontrol update partitionname=X state=` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PartitionState {
    /// Takes and runs jobs.
    #[default]
    Up,
    /// Takes jobs, runs none.
    Down,
    /// Runs what it has, takes no new jobs.
    Drain,
    /// Neither takes nor runs jobs.
    Inactive,
}

impl PartitionState {
    /// Every state, for error messages and completion.
    pub const ALL: [PartitionState; 4] =
        [PartitionState::Up, PartitionState::Down, PartitionState::Drain, PartitionState::Inactive];

    /// `UP`, `DOWN`, `DRAIN`, `INACTIVE`.
    pub fn as_str(self) -> &'static str {
        match self {
            PartitionState::Up => "UP",
            PartitionState::Down => "DOWN",
            PartitionState::Drain => "DRAIN",
            PartitionState::Inactive => "INACTIVE",
        }
    }

    /// Any case.
    pub fn parse(raw: &str) -> Result<PartitionState, String> {
        Self::ALL.into_iter().find(|s| s.as_str().eq_ignore_ascii_case(raw.trim())).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|s| s.as_str()).collect();
            format!("invalid partition state '{raw}' (use {})", names.join(", "))
        })
    }

    /// sinfo's lower-case spelling.
    pub fn sinfo(self) -> &'static str {
        match self {
            PartitionState::Up => "up",
            PartitionState::Down => "down",
            PartitionState::Drain => "drain",
            PartitionState::Inactive => "inactive",
        }
    }
}

impl fmt::Display for PartitionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde_as_slurm_spells_them() {
        for s in JobState::ALL {
            let json = serde_json::to_string(s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(serde_json::from_str::<JobState>(&json).unwrap(), *s);
        }
        assert_eq!(serde_json::to_string(&Hold::None).unwrap(), "\"\"");
        assert_eq!(serde_json::from_str::<Hold>("\"admin\"").unwrap(), Hold::Admin);
    }

    #[test]
    fn parse_takes_codes_and_names_in_any_case_and_names_the_bad_token() {
        assert_eq!(JobState::parse("pd"), Ok(JobState::Pending));
        assert_eq!(JobState::parse("Running"), Ok(JobState::Running));
        assert_eq!(JobState::parse("oom"), Ok(JobState::OutOfMemory));
        assert!(JobState::parse("zz").unwrap_err().contains("'zz'"));
        assert_eq!(JobState::NodeFail.code(), "NF");
        assert!(JobState::Pending.rank() < JobState::Running.rank());
        assert!(JobState::Pending.shows_reason() && JobState::Timeout.shows_reason());
        assert!(!JobState::Running.shows_reason());
        assert_eq!(JobState::RequeueHold.class(), Class::Pending);
        assert_eq!(JobState::Completing.class(), Class::Running);
        assert_eq!(JobState::Cancelled.class(), Class::Finished);
        assert!(JobState::Requeued.waiting() && !JobState::Running.waiting());
    }

    #[test]
    fn partition_states_parse_in_any_case() {
        assert_eq!(PartitionState::parse("drain"), Ok(PartitionState::Drain));
        assert!(PartitionState::parse("half").unwrap_err().contains("UP, DOWN, DRAIN, INACTIVE"));
    }
}
