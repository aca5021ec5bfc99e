//! `[scheduler]`: pass cadence, backfill, fair share, and the preemption
//! knobs of spec/fuzzball-provisioners.md ("Scheduler Parameters") and
//! spec/spur-accounting-qos.md (preempt_type, preempt_exempt_time).

use serde::Deserialize;
pub use spur_vocab::time::Seconds;

/// Which preemptions the gap rule may fire (spec: "QOS preemption hierarchy").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreemptType {
    /// The effective-priority gap alone decides.
    #[default]
    None,
    /// The pending job's QOS must also list the running job's QOS in `preempt`.
    QosPriority,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulerConfig {
    /// Seconds between scheduling passes (a submit, a job's end or a node change also starts one).
    #[serde(default = "default_interval")]
    pub interval: u64,
    /// EASY backfill.
    #[serde(default = "yes")]
    pub backfill_enabled: bool,
    /// How many jobs a pass tries behind the first blocked one.
    #[serde(default = "default_queue_depth")]
    pub queue_depth: usize,
    /// Half-life of the decayed usage behind fair share.
    #[serde(default = "default_halflife")]
    pub fairshare_halflife_days: f64,
    /// The preemption pass; off by default as in the provisioner spec.
    #[serde(default)]
    pub preemption_enabled: bool,
    #[serde(default)]
    pub preempt_type: PreemptType,
    /// Seconds a job runs before it may be preempted, below partition and QOS overrides.
    #[serde(default)]
    pub preempt_exempt_time: u64,
    /// Percent of the blocked job's pool in use at or above which eviction may happen; 0 is unset.
    #[serde(default = "default_threshold")]
    pub preemption_threshold: f64,
    /// An absolute minimum priority delta, on top of the 2× rule; unset by default.
    #[serde(default)]
    pub preemption_gap: Option<f64>,
    #[serde(default = "default_min_runtime")]
    pub min_preemption_runtime: Seconds,
    #[serde(default)]
    pub preemption_multi_victim_enabled: bool,
    #[serde(default = "default_max_evictions")]
    pub max_evictions_per_tick: u32,
    #[serde(default = "default_drain_timeout")]
    pub preemption_drain_timeout: Seconds,
    /// Slurm's KillWait: seconds between the SIGTERM that ends a job
    /// (scancel, time limit, requeue, preemption) and the SIGKILL of what is left.
    #[serde(default = "default_kill_wait")]
    pub kill_wait_secs: u32,
    /// Slurm's MinJobAge: seconds an ended job stays in the controller's
    /// memory (squeue, scontrol show job) before only the store keeps it (sacct).
    #[serde(default = "default_min_job_age")]
    pub min_job_age_secs: u64,
    /// Slurm's MaxJobCount: jobs held in memory (pending, running and ended
    /// but not yet purged) past which a submit is refused.
    #[serde(default = "default_max_job_count")]
    pub max_job_count: usize,
    /// Slurm's MaxArraySize: an array's task indexes are below this, so it
    /// has at most this many tasks.
    #[serde(default = "default_max_array_size")]
    pub max_array_size: u32,
    /// Idle-fill: lend idle nodes to jobs held only by their QOS group node cap.
    #[serde(default)]
    pub idle_fill_enabled: bool,
    /// Seconds a borrowed run is safe from reclaim (doubling per reclaim, capped at an hour).
    #[serde(default = "default_idle_fill_exempt")]
    pub idle_fill_exempt_secs: u64,
    /// Nodes a QOS may hold on loan as a multiple of its group node cap; 0 is unbounded.
    #[serde(default)]
    pub idle_fill_max_borrow_factor: f64,
    /// Nodes a QOS may hold on loan as a share of the registered nodes; 0 is unbounded.
    #[serde(default)]
    pub idle_fill_max_cluster_fraction: f64,
}

/// Slurm's MinJobAge default.
pub const DEFAULT_MIN_JOB_AGE_SECS: u64 = 300;
/// Ten times Slurm's 10,000: the benchmarks hold 100,000 jobs.
pub const DEFAULT_MAX_JOB_COUNT: usize = 100_000;

/// Slurm's MaxArraySize default.
pub const DEFAULT_MAX_ARRAY_SIZE: u32 = 1001;

/// The provisioner spec's default threshold, also used for an explicit 0.
pub const DEFAULT_THRESHOLD: f64 = 75.0;

fn default_halflife() -> f64 {
    7.0
}
fn default_interval() -> u64 {
    2
}
fn yes() -> bool {
    true
}
fn default_queue_depth() -> usize {
    64
}
fn default_threshold() -> f64 {
    DEFAULT_THRESHOLD
}
fn default_min_runtime() -> Seconds {
    Seconds::Whole(60)
}
fn default_max_evictions() -> u32 {
    8
}
fn default_kill_wait() -> u32 {
    30
}
fn default_min_job_age() -> u64 {
    DEFAULT_MIN_JOB_AGE_SECS
}
fn default_max_job_count() -> usize {
    DEFAULT_MAX_JOB_COUNT
}
fn default_max_array_size() -> u32 {
    DEFAULT_MAX_ARRAY_SIZE
}
fn default_idle_fill_exempt() -> u64 {
    60
}
fn default_drain_timeout() -> Seconds {
    Seconds::Whole(30)
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            interval: default_interval(),
            backfill_enabled: true,
            queue_depth: default_queue_depth(),
            fairshare_halflife_days: default_halflife(),
            preemption_enabled: false,
            preempt_type: PreemptType::None,
            preempt_exempt_time: 0,
            preemption_threshold: DEFAULT_THRESHOLD,
            preemption_gap: None,
            min_preemption_runtime: default_min_runtime(),
            preemption_multi_victim_enabled: false,
            max_evictions_per_tick: default_max_evictions(),
            preemption_drain_timeout: default_drain_timeout(),
            kill_wait_secs: default_kill_wait(),
            min_job_age_secs: DEFAULT_MIN_JOB_AGE_SECS,
            max_job_count: DEFAULT_MAX_JOB_COUNT,
            max_array_size: DEFAULT_MAX_ARRAY_SIZE,
            idle_fill_enabled: false,
            idle_fill_exempt_secs: default_idle_fill_exempt(),
            idle_fill_max_borrow_factor: 0.0,
            idle_fill_max_cluster_fraction: 0.0,
        }
    }
}

impl SchedulerConfig {
    /// MinJobAge in milliseconds (validation keeps the seconds far below overflow).
    pub fn min_job_age_ms(&self) -> i64 {
        i64::try_from(self.min_job_age_secs.saturating_mul(1000)).unwrap_or(i64::MAX)
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.interval == 0 {
            return Err("key 'scheduler.interval': must be at least 1 second".into());
        }
        if self.max_job_count == 0 {
            return Err("key 'scheduler.max_job_count': must be at least 1 job".into());
        }
        if self.max_array_size == 0 || self.max_array_size > spur_vocab::array::MAX_TASK_ID + 1 {
            return Err(format!(
                "key 'scheduler.max_array_size': {} is not from 1 to {}",
                self.max_array_size,
                spur_vocab::array::MAX_TASK_ID + 1
            ));
        }
        if self.min_job_age_secs > (i64::MAX / 1000) as u64 {
            return Err(format!(
                "key 'scheduler.min_job_age_secs': {} seconds is too long to count in milliseconds",
                self.min_job_age_secs
            ));
        }
        let f = self.idle_fill_max_borrow_factor;
        if !f.is_finite() || f < 0.0 {
            return Err(format!(
                "key 'scheduler.idle_fill_max_borrow_factor': {f} must be zero (unbounded) or more"
            ));
        }
        let f = self.idle_fill_max_cluster_fraction;
        if !(0.0..=1.0).contains(&f) {
            return Err(format!(
                "key 'scheduler.idle_fill_max_cluster_fraction': {f} is not a fraction from 0 (unbounded) to 1"
            ));
        }
        if self.idle_fill_exempt_secs > 3600 {
            return Err(format!(
                "key 'scheduler.idle_fill_exempt_secs': {} is past the one-hour cap of the reclaim window",
                self.idle_fill_exempt_secs
            ));
        }
        let t = self.preemption_threshold;
        if !(0.0..=100.0).contains(&t) {
            return Err(format!("key 'scheduler.preemption_threshold': {t} is not a percentage (0-100)"));
        }
        if let Some(g) = self.preemption_gap.filter(|g| !g.is_finite() || *g < 0.0) {
            return Err(format!("key 'scheduler.preemption_gap': {g} must be zero or more"));
        }
        self.min_preemption_runtime
            .secs()
            .map_err(|e| format!("key 'scheduler.min_preemption_runtime': {e}"))?;
        self.preemption_drain_timeout
            .secs()
            .map_err(|e| format!("key 'scheduler.preemption_drain_timeout': {e}"))?;
        Ok(())
    }

    /// The threshold in effect: 0 means the default.
    pub fn threshold(&self) -> f64 {
        if self.preemption_threshold <= 0.0 { DEFAULT_THRESHOLD } else { self.preemption_threshold }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_accept_seconds_and_suffixes() {
        assert_eq!(Seconds::Whole(60).secs(), Ok(60));
        assert_eq!(Seconds::Text("5m".into()).secs(), Ok(300));
        assert_eq!(Seconds::Text("30s".into()).secs(), Ok(30));
        assert_eq!(Seconds::Text("00:01:00".into()).secs(), Ok(60));
        assert!(Seconds::Text("soon".into()).secs().unwrap_err().contains("'soon'"));
    }

    #[test]
    fn bad_knobs_name_their_key() {
        let c = SchedulerConfig { preemption_threshold: 140.0, ..SchedulerConfig::default() };
        assert!(c.validate().unwrap_err().contains("scheduler.preemption_threshold"));
        let c = SchedulerConfig { preemption_gap: Some(-1.0), ..SchedulerConfig::default() };
        assert!(c.validate().unwrap_err().contains("scheduler.preemption_gap"));
        let c = SchedulerConfig {
            preemption_drain_timeout: Seconds::Text("x".into()),
            ..SchedulerConfig::default()
        };
        assert!(c.validate().unwrap_err().contains("scheduler.preemption_drain_timeout"));
        let c = SchedulerConfig { max_job_count: 0, ..SchedulerConfig::default() };
        assert!(c.validate().unwrap_err().contains("scheduler.max_job_count"));
        let c = SchedulerConfig { min_job_age_secs: u64::MAX, ..SchedulerConfig::default() };
        assert!(c.validate().unwrap_err().contains("scheduler.min_job_age_secs"));
        let c = SchedulerConfig { preemption_threshold: 0.0, ..SchedulerConfig::default() };
        assert_eq!(c.threshold(), DEFAULT_THRESHOLD);
    }

    #[test]
    fn idle_fill_ceilings_are_checked_by_key() {
        let bad = |c: SchedulerConfig| c.validate().unwrap_err();
        let d = SchedulerConfig::default;
        assert!(
            bad(SchedulerConfig { idle_fill_max_borrow_factor: -1.0, ..d() })
                .contains("idle_fill_max_borrow_factor")
        );
        assert!(bad(SchedulerConfig { idle_fill_max_borrow_factor: f64::NAN, ..d() }).contains("NaN"));
        let e = bad(SchedulerConfig { idle_fill_max_cluster_fraction: 1.5, ..d() });
        assert!(e.starts_with("key 'scheduler.idle_fill_max_cluster_fraction': 1.5"), "{e}");
        assert!(bad(SchedulerConfig { idle_fill_max_cluster_fraction: f64::NAN, ..d() }).contains("NaN"));
        assert!(
            bad(SchedulerConfig { idle_fill_exempt_secs: 3601, ..d() }).contains("idle_fill_exempt_secs")
        );
        let ok =
            SchedulerConfig { idle_fill_max_borrow_factor: 2.0, idle_fill_max_cluster_fraction: 0.25, ..d() };
        assert!(ok.validate().is_ok());
        assert!((!d().idle_fill_enabled) && d().idle_fill_exempt_secs == 60);
    }
}
