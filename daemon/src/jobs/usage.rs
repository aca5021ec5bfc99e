//! sreport's figures: the CPU time jobs were allocated inside a window, per
//! (account, user). Slurm's sreport reads slurmdbd's hourly rollups; Spur
//! computes the same sums from the jobs themselves: the ones in memory
//! (running, pending, recently ended) and the ended jobs the store keeps,
//! read a page at a time ([`JobService::ended_page`]), each run counted as its
//! allocated CPUs times the part of it inside the window.

use super::JobService;
use super::record::JobRecord;
use crate::error::Result;
use std::collections::{BTreeMap, HashSet};

/// Stored jobs one report reads at most; past it the figures are a lower
/// bound and the answer says so (`truncated`). A read of this many rows takes
/// a few seconds; a site that needs a longer history reports shorter windows.
pub const MAX_USAGE_SCAN: usize = 200_000;

/// (account, user) rows one report returns at most (a row is some 30 bytes on the wire).
pub const MAX_USAGE_ROWS: usize = 50_000;

/// Milliseconds of `[from, to)` inside `[start, end)`.
fn overlap_ms(from: i64, to: i64, start: i64, end: i64) -> i64 {
    (to.min(end) - from.max(start)).max(0)
}

/// CPU-seconds of the job's runs (its current one and those requeued or
/// preempted before it) inside `[start, end)`; a run still going counts to `now`.
pub fn cpu_secs(j: &JobRecord, start: i64, end: i64, now: i64) -> u64 {
    let per_node = u64::from(j.alloc.0);
    let mut ms: u128 = 0;
    if j.start_ms > 0 {
        let stop = if j.end_ms > 0 {
            j.end_ms
        } else if j.is_placed() {
            now
        } else {
            j.start_ms
        };
        let cpus = per_node * j.nodes.len().max(1) as u64;
        ms += u128::from(cpus) * overlap_ms(j.start_ms, stop, start, end) as u128;
    }
    for r in &j.past_runs {
        let cpus = per_node * r.nodes.len().max(1) as u64;
        ms += u128::from(cpus) * overlap_ms(r.start_ms, r.end_ms, start, end) as u128;
    }
    u64::try_from(ms / 1000).unwrap_or(u64::MAX)
}

/// The sums: CPU-seconds per (account, user), and whether the scan was cut short.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub rows: BTreeMap<(String, String), u64>,
    /// With sizes asked for: (CPU-seconds, jobs) per (account, job CPUs).
    pub sizes: Option<BTreeMap<(String, u32), (u64, u64)>>,
    pub truncated: bool,
}

/// A job's allocated CPUs on all its nodes.
fn job_cpus(j: &JobRecord) -> u32 {
    j.alloc.0.saturating_mul(u32::try_from(j.nodes.len().max(1)).unwrap_or(u32::MAX))
}

impl Usage {
    fn add(&mut self, j: &JobRecord, start: i64, end: i64, now: i64) {
        let secs = cpu_secs(j, start, end, now);
        if secs > 0 {
            self.add_secs((j.account.clone().unwrap_or_default(), j.user.clone()), secs, job_cpus(j));
        }
    }

    fn add_secs(&mut self, key: (String, String), secs: u64, cpus: u32) {
        if let Some(sizes) = &mut self.sizes {
            let by = (key.0.clone(), cpus);
            if sizes.len() < MAX_USAGE_ROWS || sizes.contains_key(&by) {
                let e = sizes.entry(by).or_default();
                (e.0, e.1) = (e.0 + secs, e.1 + 1);
            } else {
                self.truncated = true;
            }
        }
        if self.rows.len() >= MAX_USAGE_ROWS && !self.rows.contains_key(&key) {
            self.truncated = true;
            return;
        }
        *self.rows.entry(key).or_default() += secs;
    }
}

impl JobService {
    /// CPU time allocated inside `[start, end)` as of `now`, per (account, user).
    pub async fn usage(&self, start: i64, end: i64, now: i64, by_size: bool) -> Result<Usage> {
        let mut u = Usage { sizes: by_size.then(BTreeMap::new), ..Default::default() };
        // Memory first, under one lock; the store's pages skip the jobs memory holds.
        // A job purged between the two reads is not counted twice.
        let mut seen = HashSet::new();
        for (id, used) in self.select(None, |j| {
            let secs = cpu_secs(j, start, end, now);
            let key = || (j.account.clone().unwrap_or_default(), j.user.clone());
            Some((j.id, (secs > 0).then(|| (key(), secs, job_cpus(j)))))
        }) {
            seen.insert(id);
            if let Some((key, secs, cpus)) = used {
                u.add_secs(key, secs, cpus);
            }
        }
        let mut scanned = 0usize;
        let cut = self
            .ended_page(
                0,
                |j| !seen.contains(&j.id),
                |j| {
                    if scanned >= MAX_USAGE_SCAN {
                        return false;
                    }
                    scanned += 1;
                    u.add(j, start, end, now);
                    true
                },
            )
            .await?;
        u.truncated |= cut.is_some();
        Ok(u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::parts::PastRun;
    use spur_vocab::JobState;

    /// Times in the tests are after this, as a run's start is never 0.
    const T: i64 = 1_000_000_000;

    /// A run from `T + start_ms` to `T + end_ms` (still running when `end_ms` is 0).
    fn job(start_ms: i64, end_ms: i64, cpus: u32, nodes: usize) -> JobRecord {
        JobRecord {
            state: if end_ms > 0 { JobState::Completed } else { JobState::Running },
            start_ms: T + start_ms,
            end_ms: if end_ms > 0 { T + end_ms } else { 0 },
            alloc: (cpus, 0, 0),
            nodes: (0..nodes).map(|i| format!("n{i}")).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_run_counts_its_cpus_times_the_part_inside_the_window() {
        // 2 nodes x 4 CPUs for 100 s, of which 60 s are inside [40 s, 200 s).
        let j = job(0, 100_000, 4, 2);
        assert_eq!(cpu_secs(&j, T + 40_000, T + 200_000, T + 500_000), 8 * 60);
        // Wholly outside: nothing.
        assert_eq!(cpu_secs(&j, T + 100_000, T + 200_000, T + 500_000), 0);
        // Still running: counted to now, not past the window's end.
        let r = job(0, 0, 2, 1);
        assert_eq!(cpu_secs(&r, T, T + 1_000_000, T + 30_000), 2 * 30);
        assert_eq!(cpu_secs(&r, T, T + 10_000, T + 30_000), 2 * 10);
        // Never started: nothing.
        let p = JobRecord { state: JobState::Pending, ..job(0, 0, 2, 1) };
        assert_eq!(cpu_secs(&p, T, T + 10_000, T + 30_000), 0);
    }

    #[test]
    fn an_earlier_run_of_a_requeued_job_counts_too() {
        let mut j = job(50_000, 60_000, 1, 1);
        j.past_runs.push(PastRun {
            start_ms: T,
            end_ms: T + 20_000,
            nodes: vec!["a".into(), "b".into()],
            preempted_by: 0,
            borrowed: false,
            reclaim: false,
        });
        assert_eq!(cpu_secs(&j, T, T + 100_000, T + 100_000), 10 + 2 * 20);
    }

    #[test]
    fn rows_sum_per_account_and_user() {
        let mut u = Usage::default();
        let mine = |acct: &str, user: &str| JobRecord {
            account: Some(acct.into()),
            user: user.into(),
            ..job(0, 10_000, 1, 1)
        };
        u.add(&mine("ml", "ann"), T, T + 100_000, T + 100_000);
        u.add(&mine("ml", "ann"), T, T + 100_000, T + 100_000);
        u.add(&mine("ml", "bob"), T, T + 100_000, T + 100_000);
        assert_eq!(u.rows[&("ml".to_string(), "ann".to_string())], 20);
        assert_eq!(u.rows.len(), 2);
        assert!(!u.truncated);
        assert!(u.sizes.is_none(), "only when asked for");
        let mut u = Usage { sizes: Some(BTreeMap::new()), ..Default::default() };
        u.add(&mine("ml", "ann"), T, T + 100_000, T + 100_000);
        u.add(&JobRecord { alloc: (4, 0, 0), ..mine("ml", "bob") }, T, T + 100_000, T + 100_000);
        u.add(&mine("ml", "bob"), T, T + 100_000, T + 100_000);
        let sizes = u.sizes.unwrap();
        assert_eq!(sizes[&("ml".to_string(), 1)], (20, 2));
        assert_eq!(sizes[&("ml".to_string(), 4)], (40, 1));
    }
}
