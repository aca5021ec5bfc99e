//! Job changes pushed by `Cluster.Watch`, applied to a set in place: each
//! changed job replaces its record by id (or joins the set), and a job the
//! controller purged (MinJobAge) leaves it, so a submit or a pass shows
//! without re-reading 100,000 jobs. Column widths only grow
//! (a job leaving does not narrow a column), the memoised order and
//! lines are dropped, since any change may move rows, and the nodes on
//! loan are worked out again.

use super::{Class, Interner, JobRec, JobSet, Memo, compact, measure};
use spur_proto::v1 as pb;

/// The longest run of an ended job and the earliest start of a running one:
/// the Time column's width at any moment, for a read or after changes.
pub(super) fn run_bounds(recs: &[JobRec], now_ms: i64) -> (u64, Option<i64>) {
    let (mut longest_ended, mut earliest_running) = (0, None::<i64>);
    for r in recs {
        match r.class() {
            Class::Running if r.start_ms > 0 => {
                earliest_running = Some(earliest_running.map_or(r.start_ms, |e| e.min(r.start_ms)));
            }
            Class::Finished => longest_ended = longest_ended.max(r.run_secs(now_ms)),
            _ => {}
        }
    }
    (longest_ended, earliest_running)
}

impl JobSet {
    /// The set as read, reflecting change batches up to `seq`.
    pub fn at_seq(mut self, seq: u64) -> JobSet {
        self.seq = seq;
        self
    }

    /// Applies batch `seq` of changed jobs, received at `now_ms`. A batch
    /// the set already reflects (a listing read after it) changes nothing.
    pub fn apply(&mut self, changed: Vec<pb::Job>, seq: u64, now_ms: i64) {
        self.apply_all([(changed, vec![], seq)], now_ms);
    }

    /// Applies `(jobs, removed ids, seq)` batches in order, as [`Self::apply`]
    /// does one; the Time bounds and the order are redone once, after all of
    /// them, not per batch (up to a thousand may wait behind a read of 100,000 jobs).
    pub fn apply_all(
        &mut self,
        batches: impl IntoIterator<Item = (Vec<pb::Job>, Vec<u64>, u64)>,
        now_ms: i64,
    ) {
        let mut strings = Interner::default();
        let mut changed_any = false;
        for (changed, removed, seq) in batches {
            if seq <= self.seq {
                continue;
            }
            self.seq = seq;
            for id in removed {
                if let Ok(i) = self.jobs.binary_search_by_key(&id, |x| x.id) {
                    self.jobs.remove(i);
                    changed_any = true;
                }
            }
            for j in changed {
                let mut r = compact(j, &mut strings);
                r.text = measure(&r, &mut self.widths);
                match self.jobs.binary_search_by_key(&r.id, |x| x.id) {
                    Ok(i) => self.jobs[i] = r,
                    Err(i) => self.jobs.insert(i, r),
                }
                changed_any = true;
            }
        }
        if changed_any {
            (self.longest_ended, self.earliest_running) = run_bounds(&self.jobs, now_ms);
            self.fetched_ms = now_ms;
            self.arrays = super::arrays::count(&self.jobs);
            self.loans = super::Loans::of(&self.jobs);
            self.order = Memo::default();
            self.listing = Memo::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: u64, state: &str) -> pb::Job {
        pb::Job {
            id,
            user: "alice".into(),
            state: spur_proto::states::state_named(state),
            ..Default::default()
        }
    }

    #[test]
    fn changes_replace_by_id_add_new_jobs_and_skip_old_batches() {
        let mut set = JobSet::from_pb(vec![job(1, "PENDING"), job(3, "PENDING")], 0).at_seq(5);
        set.apply(vec![job(3, "RUNNING"), job(2, "PENDING"), job(9, "PENDING")], 6, 10);
        let states: Vec<(u64, &str)> = set.jobs.iter().map(|r| (r.id, r.state.as_str())).collect();
        assert_eq!(states, [(1, "PENDING"), (2, "PENDING"), (3, "RUNNING"), (9, "PENDING")]);
        assert_eq!(set.seq, 6);
        // A batch the listing already reflects is older than what the set shows.
        set.apply(vec![job(3, "PENDING")], 6, 20);
        assert_eq!(set.get(3).unwrap().state.as_str(), "RUNNING");
    }

    #[test]
    fn purged_jobs_leave_the_set() {
        let mut set = JobSet::from_pb(vec![job(1, "COMPLETED"), job(2, "PENDING")], 0).at_seq(1);
        set.apply_all([(vec![], vec![1, 7], 2)], 10);
        let ids: Vec<u64> = set.jobs.iter().map(|r| r.id).collect();
        assert_eq!((ids, set.seq), (vec![2], 2));
        // A removal the listing already reflects changes nothing.
        set.apply_all([(vec![], vec![2], 2)], 20);
        assert!(set.get(2).is_some());
    }
}
