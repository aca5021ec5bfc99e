//! The scheduler's figures over the last hour, for the console's Overview
//! sparklines and `sdiag --json`: one sample a minute in a ring of 60. A
//! sample is a handful of numbers (no per-job state), so the ring is a few
//! kilobytes whatever the queue holds. Sampling is driven by the scheduling
//! loop's `now`, never a clock of its own: a pass at or past the next
//! minute takes the sample, from counters that only grow (sdiag's own are
//! zeroed by `--reset`, which must not make a minute look idle).

use std::collections::VecDeque;

/// Samples kept: an hour of minutes.
pub const SAMPLES: usize = 60;
/// Time between samples.
pub const PERIOD_MS: i64 = 60_000;

/// The counters a sample is the difference of; each only grows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub started: u64,
    pub backfilled: u64,
    pub rpcs: u64,
}

/// One minute of the scheduler.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sample {
    /// When it was taken (Unix ms).
    pub at_ms: i64,
    /// The last pass's duration when it was taken (microseconds).
    pub last_pass_us: u64,
    /// Jobs started since the previous sample.
    pub started: u64,
    /// Of them, started by backfill.
    pub backfilled: u64,
    /// RPCs answered per second since the previous sample.
    pub rpcs_per_sec: f64,
    pub pending: u64,
    pub running: u64,
}

/// The ring and where the next sample is due.
#[derive(Debug, Default)]
pub struct Pulse {
    samples: VecDeque<Sample>,
    /// The totals and time of the previous sample (None: not started).
    prev: Option<(i64, Totals)>,
}

impl Pulse {
    /// A pass at `now_ms`: takes a sample when a minute has passed since the
    /// last one (the first call only starts the clock). `queue` gives the
    /// pending and running counts; it is called only when a sample is taken,
    /// so the queue is walked once a minute, not once a pass.
    pub fn tick(
        &mut self,
        now_ms: i64,
        totals: Totals,
        last_pass_us: u64,
        queue: impl FnOnce() -> (u64, u64),
    ) {
        let Some((at, prev)) = self.prev else {
            self.prev = Some((now_ms, totals));
            return;
        };
        let elapsed = now_ms - at;
        if elapsed < PERIOD_MS {
            return;
        }
        let (pending, running) = queue();
        let rpcs = totals.rpcs.saturating_sub(prev.rpcs);
        let sample = Sample {
            at_ms: now_ms,
            last_pass_us,
            started: totals.started.saturating_sub(prev.started),
            backfilled: totals.backfilled.saturating_sub(prev.backfilled),
            rpcs_per_sec: rpcs as f64 * 1000.0 / elapsed as f64,
            pending,
            running,
        };
        if self.samples.len() == SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back(sample);
        self.prev = Some((now_ms, totals));
    }

    /// The samples, oldest first.
    pub fn samples(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(started: u64, backfilled: u64, rpcs: u64) -> Totals {
        Totals { started, backfilled, rpcs }
    }

    #[test]
    fn a_sample_is_a_minute_s_difference_of_the_counters() {
        let mut p = Pulse::default();
        let never = || -> (u64, u64) { panic!("the queue is walked only for a sample") };
        p.tick(1_000, totals(5, 1, 100), 700, never);
        // Passes within the minute take nothing.
        p.tick(30_000, totals(7, 1, 400), 800, never);
        assert_eq!(p.samples().count(), 0);
        p.tick(61_000, totals(9, 3, 1_300), 900, || (4, 2));
        let s: Vec<Sample> = p.samples().copied().collect();
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].at_ms, s[0].last_pass_us, s[0].started, s[0].backfilled), (61_000, 900, 4, 2));
        assert_eq!((s[0].pending, s[0].running), (4, 2));
        assert!((s[0].rpcs_per_sec - 20.0).abs() < 1e-9, "1,200 RPCs in 60 s: {}", s[0].rpcs_per_sec);
        // A late pass (the loop was busy) divides by the time that really passed.
        p.tick(181_000, totals(9, 3, 1_300 + 1_200), 100, || (0, 0));
        let last = *p.samples().last().unwrap();
        assert_eq!((last.started, last.backfilled), (0, 0));
        assert!((last.rpcs_per_sec - 10.0).abs() < 1e-9);
    }

    #[test]
    fn the_ring_keeps_the_last_sixty_minutes() {
        let mut p = Pulse::default();
        for minute in 0..=75u64 {
            p.tick(minute as i64 * PERIOD_MS, totals(minute * 2, 0, 0), minute, || (minute, 0));
        }
        let s: Vec<Sample> = p.samples().copied().collect();
        assert_eq!(s.len(), SAMPLES);
        // Minutes 16..=75 remain, oldest first, each with its two starts.
        assert_eq!((s[0].pending, s[59].pending), (16, 75));
        assert!(s.iter().all(|x| x.started == 2));
        assert_eq!(s[0].at_ms, 16 * PERIOD_MS);
    }
}
