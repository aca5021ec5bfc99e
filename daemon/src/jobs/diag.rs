//! sdiag's figures of the job side: jobs submitted, started and ended, and
//! the scheduler's passes, since the controller started or an Administrator
//! last ran `sdiag --reset`. Plain atomics, bumped where the change is
//! installed or the pass ends, so counting takes no lock. `/metrics` keeps its
//! own pass counters (`run::PassStats`): a Prometheus counter must never go
//! back to 0, and sdiag's do.

use super::pulse::{Pulse, Sample, Totals};
use super::record::JobRecord;
use spur_vocab::JobState;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// The counters; [`Diag::read`] copies them out.
#[derive(Debug)]
pub struct Diag {
    since_ms: AtomicI64,
    submitted: AtomicU64,
    started: AtomicU64,
    completed: AtomicU64,
    canceled: AtomicU64,
    failed: AtomicU64,
    cycle_last: AtomicU64,
    cycle_max: AtomicU64,
    cycles: AtomicU64,
    cycle_sum: AtomicU64,
    depth_sum: AtomicU64,
    queue_len: AtomicU64,
    last_pass_ms: AtomicI64,
    /// Since the controller started: Slurm keeps this one across a reset.
    backfilled_total: AtomicU64,
    backfilled: AtomicU64,
    /// Since the controller started, for the history's minute deltas.
    started_total: AtomicU64,
    /// RPCs answered since the controller started; the gate counts into it.
    rpcs_total: Arc<AtomicU64>,
    /// The last hour, a sample a minute.
    pulse: Mutex<Pulse>,
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Figures {
    pub since_ms: i64,
    pub submitted: u64,
    pub started: u64,
    pub completed: u64,
    pub canceled: u64,
    pub failed: u64,
    pub cycle_last: u64,
    pub cycle_max: u64,
    pub cycles: u64,
    pub cycle_sum: u64,
    pub depth_sum: u64,
    pub queue_len: u64,
    pub last_pass_ms: i64,
    pub backfilled_total: u64,
    pub backfilled: u64,
}

impl Diag {
    pub fn new(now_ms: i64) -> Self {
        let z = || AtomicU64::new(0);
        Diag {
            since_ms: AtomicI64::new(now_ms),
            submitted: z(),
            started: z(),
            completed: z(),
            canceled: z(),
            failed: z(),
            cycle_last: z(),
            cycle_max: z(),
            cycles: z(),
            cycle_sum: z(),
            depth_sum: z(),
            queue_len: z(),
            last_pass_ms: AtomicI64::new(0),
            backfilled_total: z(),
            backfilled: z(),
            started_total: z(),
            rpcs_total: Arc::default(),
            pulse: Mutex::default(),
        }
    }

    /// The counter every answered RPC bumps (shared with the gate's per-RPC figures).
    pub fn rpc_counter(&self) -> Arc<AtomicU64> {
        self.rpcs_total.clone()
    }

    /// After a pass at `now_ms`: a sample of the last minute when one is due
    /// (`queue` counts pending and running jobs, and is called only then).
    pub fn sample(&self, now_ms: i64, queue: impl FnOnce() -> (u64, u64)) {
        let totals = Totals {
            started: self.started_total.load(Relaxed),
            backfilled: self.backfilled_total.load(Relaxed),
            rpcs: self.rpcs_total.load(Relaxed),
        };
        let last = self.cycle_last.load(Relaxed);
        self.pulse.lock().unwrap_or_else(|e| e.into_inner()).tick(now_ms, totals, last, queue);
    }

    /// The last hour's samples, oldest first.
    pub fn history(&self) -> Vec<Sample> {
        self.pulse.lock().unwrap_or_else(|e| e.into_inner()).samples().copied().collect()
    }

    /// One installed change of a job, from its old record (none: a new job) to its new.
    pub fn note_change(&self, old: Option<&JobRecord>, new: &JobRecord) {
        let Some(old) = old else {
            self.submitted.fetch_add(1, Relaxed);
            return;
        };
        if !old.is_placed() && new.is_placed() {
            self.started.fetch_add(1, Relaxed);
            self.started_total.fetch_add(1, Relaxed);
        }
        if old.state.is_active() && !new.state.is_active() {
            let counter = match new.state {
                JobState::Completed => &self.completed,
                JobState::Cancelled => &self.canceled,
                _ => &self.failed,
            };
            counter.fetch_add(1, Relaxed);
        }
    }

    /// One pass: its duration, the jobs it looked at, how many it backfilled, and when it ran.
    pub fn note_pass(&self, took_us: u64, depth: u64, backfilled: u64, now_ms: i64) {
        self.cycle_last.store(took_us, Relaxed);
        self.cycle_max.fetch_max(took_us, Relaxed);
        self.cycles.fetch_add(1, Relaxed);
        self.cycle_sum.fetch_add(took_us, Relaxed);
        self.depth_sum.fetch_add(depth, Relaxed);
        self.queue_len.store(depth, Relaxed);
        self.last_pass_ms.store(now_ms, Relaxed);
        self.backfilled_total.fetch_add(backfilled, Relaxed);
        self.backfilled.fetch_add(backfilled, Relaxed);
    }

    /// `sdiag --reset`: every counter but the backfilled total starts again, as of `now_ms`.
    pub fn reset(&self, now_ms: i64) {
        for c in [
            &self.submitted,
            &self.started,
            &self.completed,
            &self.canceled,
            &self.failed,
            &self.cycle_last,
            &self.cycle_max,
            &self.cycles,
            &self.cycle_sum,
            &self.depth_sum,
            &self.backfilled,
        ] {
            c.store(0, Relaxed);
        }
        self.since_ms.store(now_ms, Relaxed);
    }

    pub fn read(&self) -> Figures {
        let g = |a: &AtomicU64| a.load(Relaxed);
        Figures {
            since_ms: self.since_ms.load(Relaxed),
            submitted: g(&self.submitted),
            started: g(&self.started),
            completed: g(&self.completed),
            canceled: g(&self.canceled),
            failed: g(&self.failed),
            cycle_last: g(&self.cycle_last),
            cycle_max: g(&self.cycle_max),
            cycles: g(&self.cycles),
            cycle_sum: g(&self.cycle_sum),
            depth_sum: g(&self.depth_sum),
            queue_len: g(&self.queue_len),
            last_pass_ms: self.last_pass_ms.load(Relaxed),
            backfilled_total: g(&self.backfilled_total),
            backfilled: g(&self.backfilled),
        }
    }
}

impl super::JobService {
    /// Jobs pending and running now (sdiag's "Jobs pending"/"Jobs running"), one walk under the lock.
    pub fn pending_running(&self) -> (u64, u64) {
        let q = self.lock();
        let (mut pending, mut running) = (0, 0);
        for j in q.jobs().values() {
            match j.state {
                JobState::Pending => pending += 1,
                JobState::Running => running += 1,
                _ => {}
            }
        }
        (pending, running)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(state: JobState) -> JobRecord {
        JobRecord { state, ..Default::default() }
    }

    #[test]
    fn a_job_is_counted_once_at_each_step_of_its_life() {
        let d = Diag::new(5);
        let (pending, running) = (job(JobState::Pending), job(JobState::Running));
        d.note_change(None, &pending);
        d.note_change(Some(&pending), &running);
        // A change that keeps it running (a time limit update) counts nothing.
        d.note_change(Some(&running), &running);
        d.note_change(Some(&running), &job(JobState::Completed));
        d.note_change(Some(&pending), &job(JobState::Cancelled));
        d.note_change(Some(&running), &job(JobState::Timeout));
        d.note_change(Some(&running), &job(JobState::Failed));
        let f = d.read();
        assert_eq!((f.submitted, f.started, f.completed, f.canceled, f.failed), (1, 1, 1, 1, 2));
        assert_eq!(f.since_ms, 5);
    }

    #[test]
    fn the_history_samples_starts_backfills_and_rpcs_a_minute_at_a_time_across_a_reset() {
        let d = Diag::new(0);
        let rpcs = d.rpc_counter();
        let (pending, running) = (job(JobState::Pending), job(JobState::Running));
        d.sample(0, || (0, 0));
        d.note_change(Some(&pending), &running);
        d.note_change(Some(&pending), &running);
        d.note_pass(2_000, 5, 1, 30_000);
        rpcs.fetch_add(120, Relaxed);
        // sdiag --reset zeroes sdiag's counters, not the minute's.
        d.reset(40_000);
        d.sample(30_000, || panic!("not a minute yet"));
        d.note_pass(3_000, 5, 0, 60_000);
        d.sample(60_000, || (3, 2));
        let h = d.history();
        assert_eq!(h.len(), 1);
        assert_eq!((h[0].started, h[0].backfilled, h[0].pending, h[0].running), (2, 1, 3, 2));
        assert!((h[0].rpcs_per_sec - 2.0).abs() < 1e-9, "{}", h[0].rpcs_per_sec);
        assert_eq!(h[0].last_pass_us, 3_000, "the pass that took the sample");
    }

    #[test]
    fn a_reset_zeroes_all_but_the_backfilled_total() {
        let d = Diag::new(0);
        d.note_pass(300, 7, 2, 1_000);
        d.note_pass(100, 3, 1, 2_000);
        let f = d.read();
        assert_eq!((f.cycle_last, f.cycle_max, f.cycles, f.cycle_sum), (100, 300, 2, 400));
        assert_eq!((f.depth_sum, f.queue_len, f.last_pass_ms), (10, 3, 2_000));
        assert_eq!((f.backfilled_total, f.backfilled), (3, 3));
        d.reset(9_000);
        let f = d.read();
        assert_eq!((f.cycles, f.cycle_max, f.backfilled, f.since_ms), (0, 0, 0, 9_000));
        assert_eq!(f.backfilled_total, 3);
    }
}
