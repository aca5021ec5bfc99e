//! A finished job's efficiency for the Queue pane's Eff column (shown in the
//! Finished filter): the CPU and memory it used against what it asked for,
//! reckoned by `spur_vocab::efficiency` as `seff` reckons them, so the
//! column and `seff JOBID` agree. Worked out once when a read is compacted;
//! a job that used under a quarter of what it asked for is marked [`WASTE_MARK`].

use spur_proto::v1 as pb;

/// The mark before the Eff cell of a job that used under a quarter of its
/// CPU or of the memory it asked for, so it reads without colour.
pub const WASTE_MARK: &str = "↓";

/// What the column shows of one ended job: whole percentages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Eff {
    pub cpu: f32,
    /// None: it asked for no memory.
    pub mem: Option<f32>,
    pub wasteful: bool,
}

impl Eff {
    /// An ended job's figures; None while it runs, for one that never ran,
    /// or for one whose use was not recorded. Call before the spec is taken.
    pub fn of(j: &pb::Job) -> Option<Eff> {
        let ended = j.end_ms > 0 && j.start_ms > 0 && !j.job_state().is_active();
        let used = j.usage.filter(|_| ended)?;
        let elapsed_secs = u64::try_from(j.end_ms.saturating_sub(j.start_ms) / 1000).unwrap_or(0);
        let u = spur_client::efficiency::usage(j, Some(used), elapsed_secs);
        Some(Eff {
            cpu: u.cpu_percent() as f32,
            mem: (u.mem_asked_kb() > 0).then(|| u.mem_percent() as f32),
            wasteful: u.wasteful(),
        })
    }

    /// `↓ 3%/12%`: CPU, then memory (`-` when none was asked).
    pub fn cell(&self) -> String {
        let mem = self.mem.map_or("-".to_string(), |m| format!("{m:.0}%"));
        let mark = if self.wasteful { format!("{WASTE_MARK} ") } else { String::new() };
        format!("{mark}{:.0}%/{mem}", self.cpu)
    }

    /// The sort key: CPU efficiency in hundredths of a percent.
    pub fn key(&self) -> u64 {
        (f64::from(self.cpu) * 100.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spur_proto::states;
    use spur_vocab::JobState;

    fn job(state: JobState, cpu_s: u64, rss_kb: u64, mem_mb: u64) -> pb::Job {
        pb::Job {
            state: states::state_wire(state),
            start_ms: 1_000,
            end_ms: if state.is_active() { 0 } else { 101_000 },
            num_cpus: 1,
            num_nodes: 1,
            usage: Some(pb::JobUsage { user_cpu_us: cpu_s * 1_000_000, sys_cpu_us: 0, max_rss_kb: rss_kb }),
            spec: Some(Box::new(pb::JobSpec { mem_mb, ..Default::default() })),
            ..Default::default()
        }
    }

    #[test]
    fn an_ended_job_shows_cpu_and_memory_and_is_marked_under_a_quarter() {
        let busy = Eff::of(&job(JobState::Completed, 90, 80 * 1024, 100)).unwrap();
        assert_eq!(busy.cell(), "90%/80%");
        let idle = Eff::of(&job(JobState::Completed, 1, 80 * 1024, 100)).unwrap();
        assert_eq!(idle.cell(), "↓ 1%/80%");
        let no_mem = Eff::of(&job(JobState::Failed, 50, 1024, 0)).unwrap();
        assert_eq!(no_mem.cell(), "50%/-");
    }

    #[test]
    fn running_and_unmeasured_jobs_have_none() {
        assert_eq!(Eff::of(&job(JobState::Running, 1, 1, 1)), None);
        let unmeasured = pb::Job { usage: None, ..job(JobState::Completed, 1, 1, 1) };
        assert_eq!(Eff::of(&unmeasured), None);
    }
}
