//! `scontrol show config`: the Slurm keys Spur has an equivalent for,
//! spelled and valued as slurmctld prints them, so tools that read them
//! (MinJobAge, KillWait, MaxJobCount, SchedulerType, ...) work unchanged.

use crate::config::Config;
use spur_vocab::time::format_seconds;

/// `(key, value)` in Slurm's alphabetical order.
pub fn entries(cfg: &Config) -> Vec<(&'static str, String)> {
    let s = &cfg.scheduler;
    let port = cfg.controller.listen_addr.rsplit(':').next().unwrap_or("6817").to_string();
    let accounting = if cfg.accounting.database_url.is_empty() { "none" } else { "spur" };
    let halflife = format_seconds((s.fairshare_halflife_days.max(0.0) * 86_400.0) as u64);
    let mut out = vec![
        ("AccountingStorageType", format!("accounting_storage/{accounting}")),
        ("ClusterName", cfg.cluster_name.clone()),
        ("JobCompType", "jobcomp/none".into()),
        ("KillWait", format!("{} sec", s.kill_wait_secs)),
        ("MaxArraySize", s.max_array_size.to_string()),
        ("MaxJobCount", s.max_job_count.to_string()),
        ("MinJobAge", format!("{} sec", s.min_job_age_secs)),
        ("PreemptMode", if s.preemption_enabled { "REQUEUE" } else { "OFF" }.into()),
        ("PreemptType", if s.preemption_enabled { "preempt/qos" } else { "preempt/none" }.into()),
        ("PriorityDecayHalfLife", halflife),
        ("PriorityType", "priority/multifactor".into()),
        ("SchedulerParameters", format!("default_queue_depth={}", s.queue_depth)),
        ("SchedulerTimeSlice", format!("{} sec", s.interval)),
        ("SchedulerType", if s.backfill_enabled { "sched/backfill" } else { "sched/builtin" }.into()),
        ("SelectType", "select/cons_tres".into()),
        ("SlurmctldPort", port),
    ];
    out.sort_by_key(|(k, _)| *k);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_tools_read_carry_the_running_values() {
        let mut cfg = Config::default();
        cfg.scheduler.min_job_age_secs = 60;
        cfg.controller.listen_addr = "127.0.0.1:7001".into();
        let e = entries(&cfg);
        let get = |k: &str| e.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
        assert_eq!(get("MinJobAge").as_deref(), Some("60 sec"));
        assert_eq!(get("KillWait").as_deref(), Some("30 sec"));
        assert_eq!(get("MaxJobCount").as_deref(), Some("100000"));
        assert_eq!(get("SchedulerType").as_deref(), Some("sched/backfill"));
        assert_eq!(get("SlurmctldPort").as_deref(), Some("7001"));
        assert_eq!(get("PriorityDecayHalfLife").as_deref(), Some("7-00:00:00"));
        assert!(e.windows(2).all(|w| w[0].0 < w[1].0), "alphabetical, as Slurm prints them");
    }
}
