//! The wire's `JobState` and `ReasonCode` to and from the vocabulary's
//! tables, by number: the proto enums list the same values in the same
//! order (a test below holds them in step), so converting is a cast and no
//! caller ever reads a state or a reason as text.

use crate::v1 as pb;
use spur_vocab::JobState;
use spur_vocab::reason::ReasonCode;
use std::borrow::Cow;

/// The state a wire value names; a number this build does not know
/// (a newer controller's state) reads as the first, PENDING.
pub fn job_state(raw: i32) -> JobState {
    usize::try_from(raw).ok().and_then(|i| JobState::ALL.get(i)).copied().unwrap_or_default()
}

/// The wire value of a state.
pub fn state_wire(s: JobState) -> i32 {
    s as i32
}

/// The code a wire value names; None for 0 (Slurm's "None") or a code this build does not know.
pub fn reason_code(raw: i32) -> Option<ReasonCode> {
    usize::try_from(raw).ok()?.checked_sub(1).and_then(|i| ReasonCode::ALL.get(i)).copied()
}

/// The wire value of a reason (0: none).
pub fn reason_wire(r: Option<ReasonCode>) -> i32 {
    r.map_or(0, |c| c as i32 + 1)
}

/// The wire value of a state named in Slurm's spelling (fixtures, foreign
/// text); a name Slurm lacks reads as PENDING, as an unknown number does.
pub fn state_named(name: &str) -> i32 {
    JobState::from_name(name).map_or(0, state_wire)
}

/// The wire value of a reason in Slurm's spelling; 0 (none) for "" or a
/// spelling the table lacks.
pub fn reason_named(name: &str) -> i32 {
    reason_wire(ReasonCode::parse(name).ok())
}

/// Typed reads of the messages that carry a state or a reason.
macro_rules! stated {
    ($($m:ty),*) => {$(
        impl $m {
            /// The state, from the vocabulary's table.
            pub fn job_state(&self) -> JobState {
                job_state(self.state)
            }
        }
    )*};
}

stated!(pb::Job, pb::JobPriority, pb::PastRun, pb::Step, pb::StepEnded);

impl pb::Job {
    /// Its id as squeue, sacct and the console print it: `12`, an array's
    /// task `12_3`, the record of its pending tasks `12_[3-99%10]`.
    pub fn display_id(&self) -> String {
        spur_vocab::array::display_id(spur_vocab::array::JobIdParts {
            id: self.id,
            array_job_id: self.array_job_id,
            array_task_id: self.array_task_id,
            array_pending: &self.array_pending,
            array_throttle: self.array_throttle,
            pending: self.job_state() == JobState::Pending,
        })
    }

    /// Why it waits or ended; None when nothing does.
    pub fn reason_code(&self) -> Option<ReasonCode> {
        reason_code(self.reason)
    }

    /// Slurm's spelling of the reason: `None` when there is none.
    pub fn reason_str(&self) -> &'static str {
        self.reason_code().map_or("None", ReasonCode::as_str)
    }

    /// The reason as squeue, sacct, scontrol and the console print it: the
    /// code's spelling, `RaisedSignal:N` for a signal's end, or the words of
    /// a failure recorded with no facts of its code's own (a launch error,
    /// a plugin's prolog message, a requeued run).
    pub fn reason_text(&self) -> Cow<'_, str> {
        match self.reason_code() {
            Some(ReasonCode::RaisedSignal) if self.exit_signal > 0 => {
                format!("RaisedSignal:{}", self.exit_signal).into()
            }
            _ if self.reason_in_words() => self.reason_detail.trim().into(),
            _ => self.reason_str().into(),
        }
    }

    /// The reason's facts, as scontrol's `Reason=Code (facts)` and the
    /// console's "Why" show them: none when the reason is told in words
    /// (they are the reason itself), and without the `Code: ` prefix a
    /// controller may repeat.
    pub fn reason_facts(&self) -> &str {
        if self.reason_in_words() {
            return "";
        }
        let d = self.reason_detail.trim();
        match self.reason_code().and_then(|c| d.strip_prefix(c.as_str())) {
            Some("") => "",
            Some(r) if r.starts_with(':') => r[1..].trim_start(),
            _ => d,
        }
    }

    /// The reason is told in words (the detail) rather than by a code and its facts.
    pub fn reason_in_words(&self) -> bool {
        matches!(self.reason_code(), None | Some(ReasonCode::JobLaunchFailure | ReasonCode::Prolog))
            && !self.reason_detail.trim().is_empty()
    }
}

impl pb::Reservation {
    /// Its window's length in whole seconds, as scontrol's `Duration=` and sinfo -T print it.
    pub fn duration_secs(&self) -> u64 {
        u64::try_from(self.end_ms.saturating_sub(self.start_ms) / 1000).unwrap_or(0)
    }
}

impl pb::Node {
    /// The node's state in parts, for Slurm's spellings (`sinfo`, `scontrol
    /// show node`, the console): busy as sinfo decides it (DRAINING rather
    /// than DRAINED), reserved while an active reservation holds it.
    pub fn node_state(&self) -> spur_vocab::nodestate::NodeState<'_> {
        spur_vocab::nodestate::NodeState {
            base: &self.base_state,
            drain: self.drain,
            not_responding: self.not_responding,
            busy: self.running_jobs > 0 || self.alloc_cpus > 0,
            reserved: !self.reservation.is_empty(),
            maint: self.maint,
            dynamic: spur_vocab::nodestate::Dynamic::parse(&self.dynamic),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_states_are_the_vocabulary_s_in_order() {
        for (i, s) in JobState::ALL.iter().enumerate() {
            let w = pb::JobState::try_from(i as i32).expect("a wire state for each of the table's");
            assert_eq!(w.as_str_name(), format!("JOB_STATE_{}", s.as_str()));
            assert_eq!((job_state(state_wire(*s)), state_wire(*s)), (*s, i as i32));
        }
        assert!(pb::JobState::try_from(JobState::ALL.len() as i32).is_err(), "no wire state the table lacks");
    }

    #[test]
    fn the_wire_reasons_are_the_vocabulary_s_in_order() {
        assert_eq!(pb::ReasonCode::try_from(0).map(|r| r.as_str_name()), Ok("REASON_CODE_None"));
        for (i, c) in ReasonCode::ALL.iter().enumerate() {
            let w = pb::ReasonCode::try_from(i as i32 + 1).expect("a wire reason for each of the table's");
            assert_eq!(w.as_str_name(), format!("REASON_CODE_{}", c.ident()));
            assert_eq!(reason_code(reason_wire(Some(*c))), Some(*c));
        }
        assert!(
            pb::ReasonCode::try_from(ReasonCode::ALL.len() as i32 + 1).is_err(),
            "no code the table lacks"
        );
        assert_eq!((reason_code(0), reason_code(-3), reason_code(9999)), (None, None, None));
    }

    #[test]
    fn an_unknown_state_reads_as_pending() {
        assert_eq!((job_state(-1), job_state(99)), (JobState::Pending, JobState::Pending));
    }
}
