//! Job arrays, as Slurm keeps them: one submit makes one record, which
//! holds the tasks not yet started (their indexes as ranges, so 100,000
//! pending tasks cost one row); each task is split off into a record of its
//! own as it starts (or is cancelled alone), under a new job id, and the
//! last one left takes the array's record itself. Limits count each task
//! as a job: the record of the pending tasks weighs as many jobs as it holds.

pub use super::parts::ArrayInfo;
use super::record::JobRecord;
use spur_vocab::array::TaskSet;

impl JobRecord {
    /// The array this record belongs to, if any.
    pub fn array_id(&self) -> Option<u64> {
        self.array.as_ref().map(|a| a.job_id)
    }

    /// The record of an array's pending tasks.
    pub fn is_array_pending(&self) -> bool {
        self.array.as_ref().is_some_and(|a| a.task.is_none())
    }

    /// How many jobs this record counts as for limits: its pending tasks, or one.
    pub fn weight(&self) -> u64 {
        match &self.array {
            Some(a) if a.task.is_none() => a.pending.len().max(1),
            _ => 1,
        }
    }
}

impl super::JobService {
    /// `--array` at submit: the record of all its tasks pending, or None
    /// for a job that is no array. The indexes stay below MaxArraySize.
    pub(crate) fn array_of(&self, raw: &str) -> crate::error::Result<Option<Box<ArrayInfo>>> {
        if raw.trim().is_empty() {
            return Ok(None);
        }
        let max = self.retention.max_array_size;
        let bad = |m: String| crate::error::Error::invalid("array", m);
        let a = spur_vocab::array::ArraySpec::parse(raw, u64::from(max)).map_err(bad)?;
        let (min, top) = (a.tasks.first().unwrap_or(0), a.tasks.last().unwrap_or(0));
        if top >= max {
            return Err(bad(format!(
                "task id {top} is past the largest this controller takes ({}, [scheduler] max_array_size - 1)",
                max - 1
            )));
        }
        let count = a.tasks.len();
        Ok(Some(Box::new(ArrayInfo {
            job_id: 0,
            task: None,
            pending: a.tasks,
            throttle: a.throttle,
            count,
            min,
            max: top,
        })))
    }
}

/// Splits the lowest pending task off `meta` (the record of an array's
/// pending tasks): the task's record, under `new_id`, and what is left of
/// `meta`; the last task takes `meta`'s own id and there is nothing left.
pub fn split_first(meta: &JobRecord, new_id: impl FnOnce() -> u64) -> Option<(JobRecord, Option<JobRecord>)> {
    let info = meta.array.as_deref()?;
    let mut pending = info.pending.clone();
    let task = pending.pop_first()?;
    Some(split(meta, task, pending, new_id))
}

/// Splits task `task` off `meta`; None when it is not pending there.
pub fn split_task(
    meta: &JobRecord,
    task: u32,
    new_id: impl FnOnce() -> u64,
) -> Option<(JobRecord, Option<JobRecord>)> {
    let info = meta.array.as_deref()?;
    let mut pending = info.pending.clone();
    pending.remove(task).then(|| split(meta, task, pending, new_id))
}

fn split(
    meta: &JobRecord,
    task: u32,
    pending: TaskSet,
    new_id: impl FnOnce() -> u64,
) -> (JobRecord, Option<JobRecord>) {
    let info = meta.array.as_deref().cloned().unwrap_or_default();
    let task_info = ArrayInfo { task: Some(task), pending: TaskSet::default(), ..info.clone() };
    if pending.is_empty() {
        let mut last = meta.clone();
        last.array = Some(Box::new(task_info));
        return (last, None);
    }
    let mut t = meta.clone();
    t.id = new_id();
    t.array = Some(Box::new(task_info));
    let mut rest = meta.clone();
    rest.array = Some(Box::new(ArrayInfo { pending, ..info }));
    (t, Some(rest))
}

impl super::JobService {
    /// `ids` with every task of the arrays among them (`squeue -j 12`,
    /// `scancel 12` name the whole array), sorted and without repeats.
    pub fn with_array_tasks(&self, mut ids: Vec<u64>) -> Vec<u64> {
        ids.sort_unstable();
        ids.dedup();
        let q = self.lock();
        let arrays: Vec<u64> = ids
            .iter()
            .copied()
            .filter(|id| q.jobs().get(id).is_some_and(|j| j.array_id() == Some(*id)))
            .collect();
        if let Some(&lo) = arrays.first() {
            // Tasks take ids after their array's: the scan starts there.
            let tasks = (q.jobs().range(lo..))
                .filter(|(_, j)| j.array_id().is_some_and(|a| arrays.binary_search(&a).is_ok()))
                .map(|(id, _)| *id);
            ids.extend(tasks);
            ids.sort_unstable();
            ids.dedup();
        }
        ids
    }

    /// `scancel 12_3`, `12_[1-5]`: the ids of the named tasks that run (or
    /// wait) in records of their own, to cancel as jobs; the named tasks
    /// still pending in their array's record leave it now, gathered into one
    /// cancelled record whatever their number (or the whole record is
    /// cancelled when they are all it holds), whose ids are returned beside.
    pub async fn cancel_tasks(
        &self,
        role: crate::auth::Role,
        caller: &crate::accounting::Caller,
        refs: &[(u64, TaskSet)],
        now: i64,
    ) -> crate::error::Result<(Vec<u64>, Vec<u64>)> {
        let mut split_ids = vec![];
        // One scan of the queue for every array named: tasks take ids after their array's.
        let (mut own, pending_metas) = {
            let q = self.lock();
            let mut pending = vec![];
            for (array, _) in refs {
                let meta = q.get(*array)?;
                super::queue::owns(role, caller, meta)?;
                if meta.is_array_pending() && meta.state == spur_vocab::JobState::Pending {
                    pending.push(*array);
                }
            }
            let lo = refs.iter().map(|r| r.0).min().unwrap_or(0);
            let mut by_array: std::collections::HashMap<u64, Vec<&TaskSet>> = Default::default();
            refs.iter().for_each(|(id, set)| by_array.entry(*id).or_default().push(set));
            let named = |j: &JobRecord| {
                let Some(a) = j.array.as_deref() else { return false };
                let sets = by_array.get(&a.job_id);
                a.task.is_some_and(|t| sets.is_some_and(|s| s.iter().any(|set| set.contains(t))))
            };
            let own: Vec<u64> = q.jobs().range(lo..).filter(|(_, j)| named(j)).map(|(id, _)| *id).collect();
            (own, pending)
        };
        own.sort_unstable();
        for (array, tasks) in refs {
            let pending_meta = pending_metas.contains(array);
            if !pending_meta {
                continue;
            }
            let next = &self.next_id;
            let mut made = vec![];
            self.transit(&[*array], |q| {
                let Some(meta) = q.jobs().get(array) else { return Ok(Default::default()) };
                let pending = meta.array.as_ref().map(|a| a.pending.clone()).unwrap_or_default();
                let wanted = pending.intersect(tasks);
                if wanted.is_empty() {
                    return Ok(Default::default());
                }
                let cancelled =
                    |j: &JobRecord| super::ending::ended(j, spur_vocab::JobState::Cancelled, 0, None, now);
                if wanted == pending {
                    made.push(meta.id);
                    return Ok(super::effect::Effect::Persist(cancelled(meta)).into());
                }
                // One record for the cancelled tasks, however many: `12_[4-99]` CANCELLED.
                let mut gone = meta.clone();
                gone.id = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let info = |p: TaskSet| {
                    meta.array.as_deref().map(|a| Box::new(ArrayInfo { pending: p, ..a.clone() }))
                };
                gone.array = info(wanted.clone());
                let mut rest = meta.clone();
                rest.array = info(pending.minus(&wanted));
                made.push(gone.id);
                let mut fx = super::effect::Effects::default();
                fx.persist(cancelled(&gone));
                fx.persist(rest);
                Ok(fx)
            })
            .await?;
            split_ids.extend(made);
        }
        Ok((own, split_ids))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(ids: &str) -> JobRecord {
        let pending = TaskSet::parse(ids).unwrap();
        let info =
            ArrayInfo { job_id: 12, count: pending.len(), pending, throttle: 2, ..ArrayInfo::default() };
        JobRecord { id: 12, array: Some(Box::new(info)), ..JobRecord::default() }
    }

    #[test]
    fn tasks_split_off_lowest_first_and_the_last_keeps_the_id() {
        let m = meta("3-5");
        assert_eq!(m.weight(), 3);
        let (t, rest) = split_first(&m, || 40).unwrap();
        assert_eq!((t.id, t.array.as_ref().unwrap().task, t.weight()), (40, Some(3), 1));
        let rest = rest.unwrap();
        assert_eq!((rest.id, rest.array.as_ref().unwrap().pending.to_string()), (12, "4-5".to_string()));
        let (t, rest) = split_task(&rest, 5, || 41).unwrap();
        assert_eq!(t.array.as_ref().unwrap().task, Some(5));
        let (last, none) = split_first(&rest.unwrap(), || unreachable!()).unwrap();
        assert_eq!((last.id, last.array.as_ref().unwrap().task, none), (12, Some(4), None));
        assert!(split_task(&meta("1,3"), 2, || 0).is_none());
        assert!(split_first(&JobRecord::default(), || 0).is_none());
    }
}
