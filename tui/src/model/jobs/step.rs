//! A job's steps as the Queue's detail view lists them.

use spur_proto::v1 as pb;
use spur_vocab::JobState;
use spur_vocab::hostlist;

/// One step of a job, as the detail view lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepLine {
    pub id: u32,
    pub name: Box<str>,
    pub state: JobState,
    pub nodes: Box<str>,
    pub start_ms: i64,
    pub end_ms: i64,
}

impl StepLine {
    pub(super) fn from_pb(s: &pb::Step) -> StepLine {
        StepLine {
            id: s.id,
            name: s.name.as_str().into(),
            state: s.job_state(),
            nodes: hostlist::compress(&s.nodes).into_boxed_str(),
            start_ms: s.start_ms,
            end_ms: s.end_ms,
        }
    }

    /// Seconds it ran: to its end, or to `now_ms` while it runs.
    pub fn run_secs(&self, now_ms: i64) -> u64 {
        let end = if self.end_ms > 0 { self.end_ms } else { now_ms };
        u64::try_from(end.saturating_sub(self.start_ms) / 1000).unwrap_or(0)
    }
}
