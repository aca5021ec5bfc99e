//! `aftercorr` task by task: task N of an array that depends on another
//! array by `aftercorr` may start once task N of that array completed with
//! exit code 0 (Slurm's rule). The pending tasks stay one record, so the
//! pass is told how many of them are ready (the record's startable count)
//! and the start splits off the lowest ready task rather than the lowest
//! pending one. A corresponding task that does not exist, or is gone from
//! memory without a trace, counts as satisfied, as a vanished target does.

use super::queue::Queue;
use super::record::JobRecord;
use crate::sched::depend::Target;
use spur_vocab::JobState;
use spur_vocab::array::TaskSet;
use spur_vocab::depend::DepKind;
use std::collections::HashMap;

/// Where a pending array's tasks stand against the arrays they name by `aftercorr`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Corr {
    /// The arrays named by `aftercorr` (and by no other kind of item).
    pub targets: Vec<u64>,
    /// Pending tasks whose corresponding tasks all completed with 0, lowest first.
    pub ready: Vec<u32>,
    /// The state of a corresponding task not ended yet, if any task waits on one.
    pub waiting: Option<JobState>,
    /// How a corresponding task ended otherwise, if one did (that task can never start).
    pub never: Option<JobState>,
}

impl Corr {
    /// The one target the gate sees for each array in [`Corr::targets`]:
    /// satisfied while a task is ready, waiting while one may still be,
    /// never once none can.
    pub fn as_target(&self) -> Target {
        let (state, exit_code) = match (self.ready.is_empty(), self.waiting, self.never) {
            (false, _, _) => (JobState::Completed, 0),
            (true, Some(s), _) => (s, 0),
            (true, None, never) => (never.unwrap_or(JobState::Failed), 1),
        };
        Target { state, exit_code, start_ms: 0 }
    }
}

/// How one corresponding task stands.
enum Task {
    Ok,
    Waits(JobState),
    Never(JobState),
}

/// One array's tasks, by index: the started ones' states and the pending set.
struct Tasks {
    started: HashMap<u32, (JobState, i32)>,
    pending: TaskSet,
}

impl Tasks {
    fn get(&self, i: u32) -> Task {
        match self.started.get(&i) {
            Some((JobState::Completed, 0)) => Task::Ok,
            Some((s, _)) if s.is_active() => Task::Waits(*s),
            Some((s, _)) => Task::Never(*s),
            None if self.pending.contains(i) => Task::Waits(JobState::Pending),
            None => Task::Ok,
        }
    }
}

impl Queue {
    /// For the record of an array's pending tasks whose dependency names
    /// arrays by `aftercorr`: which of its tasks may start. None otherwise.
    pub fn corr(&self, j: &JobRecord) -> Option<Corr> {
        let pending = &j.array.as_deref().filter(|a| a.task.is_none())?.pending;
        let dep = j.extra.as_ref().filter(|x| x.dependency.contains("aftercorr"))?.dependency();
        let other: Vec<u64> =
            dep.items.iter().filter(|i| i.kind != DepKind::AfterCorr).map(|i| i.job).collect();
        let is_array = |t: &u64| self.jobs().get(t).is_some_and(|r| r.array_id() == Some(*t));
        let mut targets: Vec<u64> = (dep.items.iter())
            .filter(|i| i.kind == DepKind::AfterCorr)
            .map(|i| i.job)
            .filter(|t| !other.contains(t) && is_array(t))
            .collect();
        targets.dedup();
        if targets.is_empty() {
            return None;
        }
        let arrays: Vec<Tasks> = targets.iter().map(|&t| self.tasks_of(t)).collect();
        let mut c = Corr { targets, ..Corr::default() };
        for i in pending.iter() {
            let (mut waits, mut never) = (None, None);
            for a in &arrays {
                match a.get(i) {
                    Task::Ok => {}
                    Task::Waits(s) => waits = waits.or(Some(s)),
                    Task::Never(s) => never = never.or(Some(s)),
                }
            }
            match (never, waits) {
                (Some(s), _) => c.never = c.never.or(Some(s)),
                (None, Some(s)) => c.waiting = c.waiting.or(Some(s)),
                (None, None) => c.ready.push(i),
            }
        }
        Some(c)
    }

    /// Array `id`'s tasks in memory: one scan from its id on (its tasks' ids are higher).
    fn tasks_of(&self, id: u64) -> Tasks {
        let mut t = Tasks { started: HashMap::new(), pending: TaskSet::default() };
        for r in self.jobs().range(id..).map(|(_, r)| r).filter(|r| r.array_id() == Some(id)) {
            match r.array.as_deref().and_then(|a| a.task) {
                Some(task) => {
                    t.started.insert(task, (r.state, r.exit_code));
                }
                None => t.pending = r.array.as_deref().map(|a| a.pending.clone()).unwrap_or_default(),
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::parts::{ArrayInfo, Extras};
    use crate::jobs::tests::{NOW, pending, queue};
    use crate::sched;
    use crate::sched::depend::DepGate;

    /// A record of array `array`: task `task`, or (None) the pending `tasks`.
    fn rec(
        id: u64,
        array: u64,
        task: Option<u32>,
        tasks: &str,
        state: JobState,
        exit_code: i32,
    ) -> JobRecord {
        let set = if tasks.is_empty() { TaskSet::default() } else { TaskSet::parse(tasks).unwrap() };
        let info = ArrayInfo { job_id: array, task, pending: set, ..ArrayInfo::default() };
        JobRecord { state, exit_code, array: Some(Box::new(info)), ..pending(id) }
    }

    /// Array 10's tasks: 0 completed, 1 failed, 2 running, 3 pending; array 20 waits on it by aftercorr.
    fn arrays(dep: &str) -> Queue {
        let mut b = rec(20, 20, None, "0-4", JobState::Pending, 0);
        b.extra = Some(Box::new(Extras { dependency: dep.into(), ..Extras::default() }));
        queue([
            rec(10, 10, None, "3", JobState::Pending, 0),
            rec(11, 10, Some(0), "", JobState::Completed, 0),
            rec(12, 10, Some(1), "", JobState::Failed, 1),
            rec(13, 10, Some(2), "", JobState::Running, 0),
            b,
        ])
    }

    #[test]
    fn each_task_waits_on_its_own_corresponding_task() {
        let q = arrays("aftercorr:10");
        let c = q.corr(&q.jobs()[&20]).unwrap();
        // 0: its task completed; 4: array 10 has no task 4, which counts as satisfied.
        assert_eq!(c.ready, [0, 4]);
        assert_eq!((c.waiting, c.never), (Some(JobState::Running), Some(JobState::Failed)));
        assert_eq!(c.as_target().state, JobState::Completed, "the record may start: some task is ready");
        let gates = q.dependency_gates(NOW);
        assert_eq!(gates, [(20, DepGate::Clear, Some(2))], "two tasks may start");
        // Without a ready task the record waits, naming the state of one it waits on.
        let c = Corr { ready: vec![], ..c };
        assert_eq!(c.as_target().state, JobState::Running);
        let c = Corr { waiting: None, ..c };
        assert_eq!((c.as_target().state, c.as_target().exit_code), (JobState::Failed, 1), "never");
    }

    #[test]
    fn the_start_splits_off_the_lowest_ready_task_not_the_lowest_pending() {
        let q = arrays("aftercorr:10");
        let start = |job| sched::Start {
            job,
            nodes: vec!["n1".into()],
            borrowed: false,
            backfilled: false,
            priority: sched::PriorityFactors::new(1.0, 0.5, 0.1, 1),
            licenses: vec![],
            configuring: false,
            charge: vec![],
        };
        let mut ids = 30..;
        let fx = q.start(&[start(20), start(20), start(20)], &[], NOW, &mut || ids.next().unwrap(), &mut []);
        let tasks: Vec<(u64, Option<u32>, JobState)> =
            fx.persisted().iter().map(|j| (j.id, j.array.as_ref().and_then(|a| a.task), j.state)).collect();
        assert!(tasks.contains(&(30, Some(0), JobState::Running)), "{tasks:?}");
        assert!(tasks.contains(&(31, Some(4), JobState::Running)), "{tasks:?}");
        assert_eq!(
            tasks.iter().filter(|t| t.2 == JobState::Running).count(),
            2,
            "a third start finds no ready task"
        );
        let rest = fx.persisted().into_iter().find(|j| j.id == 20).unwrap();
        assert_eq!(rest.array.as_ref().unwrap().pending.to_string(), "1-3");
    }

    #[test]
    fn other_kinds_and_plain_targets_are_left_to_the_whole_array_rule() {
        // aftercorr on a job that is not an array, or an array also named by afterok: no per-task view.
        let q = arrays("aftercorr:10,afterok:10");
        assert!(q.corr(&q.jobs()[&20]).is_none());
        let q = arrays("aftercorr:11");
        assert!(q.corr(&q.jobs()[&20]).is_none());
        assert!(q.corr(&q.jobs()[&10]).is_none(), "no dependency");
    }
}
