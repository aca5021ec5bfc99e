//! Job arrays in the Queue pane. The controller keeps an array as records
//! that share `array_job_id`: one holding the tasks not started yet (their
//! indexes as ranges, `12_[3-99]`) and one per task split off as it started
//! (`12_3`). squeue lists every record; on a busy cluster a few arrays then
//! bury every other job, so the console folds each array into one line
//! ([`Line::Array`]) and an operator opens one to see its records beneath
//! it ([`Line::Task`]).
//!
//! Grouping comes after the `t` and `/` filters and the sort: the records
//! that pass are grouped, an array stands where its first record would, and
//! its records keep the sorted order beneath it. So an array's line counts
//! only the tasks the filters let through.

use super::{Class, JobRec, JobSet, OrderKey, failed};
use crate::model::format::width;
use spur_proto::v1 as pb;
use spur_vocab::array::TaskSet;
use spur_vocab::jobs::JobState;
use std::collections::{BTreeSet, HashMap};
use std::fmt;

/// Which array a record belongs to and which of its tasks it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayPart {
    /// As squeue names the record: `12_[3-99%10]` (tasks not started) or `12_3`.
    pub name: Box<str>,
    /// The array's id (its first record's).
    pub job: u64,
    /// None for the record of the tasks not started yet.
    pub task: Option<u32>,
    /// The tasks the record stands for: its pending indexes, else one.
    pub tasks: u64,
}

impl ArrayPart {
    pub fn of(j: &pb::Job) -> ArrayPart {
        let tasks = match j.array_task_id {
            Some(_) => 1,
            // Unreadable indexes still make a record, which is at least one job.
            None => TaskSet::parse_bounded(&j.array_pending, spur_vocab::array::MAX_PENDING_RUNS)
                .map_or(1, |s| s.len().max(1)),
        };
        ArrayPart { name: j.display_id().into(), job: j.array_job_id, task: j.array_task_id, tasks }
    }
}

/// Which arrays show their records beneath their line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expanded {
    /// Every array: to find a marked record whose array is folded.
    pub all: bool,
    pub arrays: BTreeSet<u64>,
}

impl Expanded {
    pub fn all() -> Expanded {
        Expanded { all: true, arrays: BTreeSet::new() }
    }

    pub fn contains(&self, array: u64) -> bool {
        self.all || self.arrays.contains(&array)
    }

    /// Open a folded array, or fold an open one.
    pub fn toggle(&mut self, array: u64) {
        if !self.arrays.remove(&array) {
            self.arrays.insert(array);
        }
    }
}

/// What a Queue row's key names: a job (`12`; an array's record too) or a
/// whole array (`12_*`, which no job id can be mistaken for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKey {
    Job(u64),
    Array(u64),
}

impl RowKey {
    pub fn parse(key: &str) -> Option<RowKey> {
        match key.strip_suffix("_*") {
            Some(array) => array.parse().ok().map(RowKey::Array),
            None => key.parse().ok().map(RowKey::Job),
        }
    }

    /// The job id the row stands for; an array's is its own id, as in Slurm.
    pub fn job(self) -> u64 {
        match self {
            RowKey::Job(id) | RowKey::Array(id) => id,
        }
    }
}

impl fmt::Display for RowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowKey::Job(id) => write!(f, "{id}"),
            RowKey::Array(id) => write!(f, "{id}_*"),
        }
    }
}

/// One line of a queue with arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// A job that is no array's (an index into the set's jobs).
    Job(u32),
    /// An array (an index into [`Listing::groups`]).
    Array(u32),
    /// A record of an open array, beneath it; the last one draws `└─`.
    Task { job: u32, last: bool },
}

/// An array as one listing shows it, and what its line says of its
/// records: gathered when the listing is built, since an array may hold
/// 100,000 ended tasks and a frame must not count them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Group {
    pub id: u64,
    /// Its records that pass the filters, in display order.
    pub members: Vec<u32>,
    pub open: bool,
    /// The record whose state the line shows: the most active one (running,
    /// then pending), else one that failed, so trouble is not hidden.
    pub lead: u32,
    /// `100 tasks: 20 R, 80 PD (Priority)`: the tasks in each state, most
    /// active first, and why the pending ones wait, as their record's `%R` says.
    pub tasks: Box<str>,
    /// The nodes its running tasks hold.
    pub nodes: u64,
    pub failed: bool,
    /// Every record has ended.
    pub ended: bool,
    started: Option<i64>,
    longest_ended: u64,
}

/// The lines of a queue with arrays, for one filter, sort and set of open arrays.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Listing {
    pub lines: Vec<Line>,
    pub groups: Vec<Group>,
    /// The widest [`Group::tasks`], for the column it is shown in.
    pub tasks_width: u16,
}

impl fmt::Debug for Listing {
    // A listing of 100,000 lines in a test failure message helps nobody.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Listing {{ {} lines, {} arrays }}", self.lines.len(), self.groups.len())
    }
}

/// What a listing is memoised by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingKey {
    pub order: OrderKey,
    pub expanded: Expanded,
}

impl Listing {
    /// Group the records of `set` in `order` (indexes into its jobs).
    pub fn build(set: &JobSet, order: impl IntoIterator<Item = u32>, expanded: &Expanded) -> Listing {
        let mut slots: HashMap<u64, u32> = HashMap::with_capacity(set.arrays.len());
        let (mut lines, mut groups) = (Vec::with_capacity(set.jobs.len()), Vec::<Group>::new());
        for i in order {
            let Some(a) = set.jobs[i as usize].array.as_deref() else {
                lines.push(Line::Job(i));
                continue;
            };
            let g = *slots.entry(a.job).or_insert_with(|| {
                let g = groups.len() as u32;
                groups.push(Group { id: a.job, open: expanded.contains(a.job), ..Group::default() });
                lines.push(Line::Array(g));
                g
            });
            groups[g as usize].members.push(i);
        }
        for g in &mut groups {
            g.summarize(set);
        }
        let tasks_width = groups.iter().map(|g| width(&g.tasks)).max().unwrap_or(0);
        if groups.iter().any(|g| g.open) {
            let mut open = Vec::with_capacity(lines.len());
            for line in lines {
                open.push(line);
                let Line::Array(g) = line else { continue };
                let group = &groups[g as usize];
                if group.open {
                    let last = group.members.len() - 1;
                    let tasks = group.members.iter().enumerate();
                    open.extend(tasks.map(|(k, &job)| Line::Task { job, last: k == last }));
                }
            }
            lines = open;
        }
        Listing { lines, groups, tasks_width }
    }

    /// The line a row key names, if it is shown.
    pub fn find(&self, set: &JobSet, key: RowKey) -> Option<usize> {
        self.lines.iter().position(|&line| match (line, key) {
            (Line::Job(i) | Line::Task { job: i, .. }, RowKey::Job(id)) => set.jobs[i as usize].id == id,
            (Line::Array(g), RowKey::Array(id)) => self.groups[g as usize].id == id,
            _ => false,
        })
    }
}

/// States in order of activity: what runs, then what waits, then what ended.
fn activity(c: Class) -> u8 {
    match c {
        Class::Running => 0,
        Class::Pending => 1,
        Class::Finished => 2,
    }
}

/// One count per state, by its rank.
const SLOTS: usize = JobState::ALL.len();

fn slot(r: &JobRec) -> usize {
    r.state.rank()
}

impl Group {
    fn summarize(&mut self, set: &JobSet) {
        let (mut tasks, mut first) = ([0u64; SLOTS], [None::<&JobRec>; SLOTS]);
        let (mut lead, mut why) = (None::<(u8, bool, usize)>, None::<&JobRec>);
        self.ended = true;
        for &i in &self.members {
            let r = &set.jobs[i as usize];
            let s = slot(r);
            tasks[s] += r.array.as_ref().map_or(1, |a| a.tasks);
            first[s].get_or_insert(r);
            let bad = failed(r.state);
            self.failed |= bad;
            let rank = (activity(r.class()), !bad, r.state.rank());
            if lead.is_none_or(|l| rank < l) {
                (lead, self.lead) = (Some(rank), i);
            }
            match r.class() {
                Class::Running => {
                    self.nodes += u64::from(r.num_nodes);
                    if r.start_ms > 0 {
                        self.started = Some(self.started.map_or(r.start_ms, |s| s.min(r.start_ms)));
                    }
                }
                Class::Finished => self.longest_ended = self.longest_ended.max(r.run_secs(set.fetched_ms)),
                Class::Pending => {
                    // The record of the tasks not started says why they wait; a requeued task's is next best.
                    if why.is_none() || r.array.as_ref().is_some_and(|a| a.task.is_none()) {
                        why = Some(r);
                    }
                }
            }
            self.ended &= r.class() == Class::Finished;
        }
        let mut shown: Vec<(&JobRec, u64)> =
            first.iter().zip(tasks).filter_map(|(r, n)| r.map(|r| (r, n))).collect();
        shown.sort_by_key(|(r, _)| (activity(r.class()), r.state.rank()));
        let parts: Vec<String> = (shown.iter())
            .map(|&(r, n)| match why {
                Some(w) if slot(w) == slot(r) => format!("{n} {} {}", r.state.code(), w.where_),
                _ => format!("{n} {}", r.state.code()),
            })
            .collect();
        let total: u64 = tasks.iter().sum();
        let plural = if total == 1 { "" } else { "s" };
        self.tasks = format!("{total} task{plural}: {}", parts.join(", ")).into();
    }

    /// The Time cell: the longest any of its tasks has run, at `now_ms`.
    pub fn run_secs(&self, now_ms: i64) -> u64 {
        let running = self.started.map_or(0, |s| u64::try_from((now_ms - s) / 1000).unwrap_or(0));
        self.longest_ended.max(running)
    }
}

/// How many records each array has among `recs`.
pub(super) fn count(recs: &[JobRec]) -> HashMap<u64, u32> {
    let mut arrays = HashMap::new();
    for a in recs.iter().filter_map(|r| r.array.as_deref()) {
        *arrays.entry(a.job).or_insert(0) += 1;
    }
    arrays
}

impl JobSet {
    pub fn has_arrays(&self) -> bool {
        !self.arrays.is_empty()
    }

    /// The lines an unfiltered queue shows: each array folds its records into one.
    pub fn line_count(&self, expanded: &Expanded) -> usize {
        let in_arrays: usize = self.arrays.values().map(|&n| n as usize).sum();
        let open: usize = match expanded.all {
            true => in_arrays,
            false => expanded.arrays.iter().filter_map(|id| self.arrays.get(id)).map(|&n| n as usize).sum(),
        };
        self.jobs.len() - in_arrays + self.arrays.len() + open
    }

    /// The ids of array `id`'s records, ascending.
    pub fn array_records(&self, id: u64) -> Vec<u64> {
        let of = |r: &&JobRec| r.array.as_ref().is_some_and(|a| a.job == id);
        self.jobs.iter().filter(of).map(|r| r.id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Array 12: tasks 0-9, task 0 running (record 13), task 1 done (record 14), 2-9 pending (record 12).
    fn set() -> JobSet {
        let job = |id, state: &str| pb::Job {
            id,
            state: spur_proto::states::state_named(state),
            ..Default::default()
        };
        let task = |id, t, state| pb::Job { array_job_id: 12, array_task_id: Some(t), ..job(id, state) };
        let rest = pb::Job { array_job_id: 12, array_pending: "2-9".into(), ..job(12, "PENDING") };
        let jobs = vec![
            job(10, "RUNNING"),
            rest,
            task(13, 0, "RUNNING"),
            task(14, 1, "COMPLETED"),
            job(20, "PENDING"),
        ];
        JobSet::from_pb(jobs, 0)
    }

    fn ids(set: &JobSet, l: &Listing) -> Vec<String> {
        let id = |i: u32| set.jobs[i as usize].id;
        (l.lines.iter())
            .map(|&line| match line {
                Line::Job(i) => id(i).to_string(),
                Line::Array(g) => RowKey::Array(l.groups[g as usize].id).to_string(),
                Line::Task { job, last } => format!("{}{}", if last { "└" } else { "├" }, id(job)),
            })
            .collect()
    }

    #[test]
    fn records_know_their_array_and_how_many_tasks_they_hold() {
        let set = set();
        let part = |id| set.get(id).and_then(|r| r.array.as_deref()).map(|a| (&*a.name, a.task, a.tasks));
        assert_eq!(part(12), Some(("12_[2-9]", None, 8)));
        assert_eq!(part(13), Some(("12_0", Some(0), 1)));
        assert_eq!(part(10), None);
        assert_eq!(set.array_records(12), [12, 13, 14]);
    }

    #[test]
    fn an_array_folds_into_one_line_and_opens_beneath_it() {
        let set = set();
        let all = 0..set.jobs.len() as u32;
        let folded = Listing::build(&set, all.clone(), &Expanded::default());
        assert_eq!(ids(&set, &folded), ["10", "12_*", "20"]);
        assert_eq!(folded.groups[0].members.len(), 3);
        assert_eq!(set.line_count(&Expanded::default()), 3);
        let mut open = Expanded::default();
        open.toggle(12);
        let listing = Listing::build(&set, all.clone(), &open);
        assert_eq!(ids(&set, &listing), ["10", "12_*", "├12", "├13", "└14", "20"]);
        assert_eq!(set.line_count(&open), 6);
        assert_eq!(listing.find(&set, RowKey::Job(14)), Some(4));
        assert_eq!(listing.find(&set, RowKey::Array(12)), Some(1));
        // Folded again, the records are not shown, so not found.
        open.toggle(12);
        let folded = Listing::build(&set, all, &open);
        assert_eq!(ids(&set, &folded), ["10", "12_*", "20"]);
        assert_eq!(folded.find(&set, RowKey::Job(14)), None);
    }

    #[test]
    fn an_array_stands_where_its_first_record_sorts_and_counts_what_passes() {
        let set = set();
        let order = [4u32, 3, 0, 2]; // 20, 14, 10, 13: record 12 filtered out
        let listing = Listing::build(&set, order, &Expanded::all());
        assert_eq!(ids(&set, &listing), ["20", "12_*", "├14", "└13", "10"]);
        assert_eq!(listing.groups[0].members, [3, 2]);
    }

    #[test]
    fn keys_name_jobs_and_arrays_apart() {
        assert_eq!(RowKey::parse("12"), Some(RowKey::Job(12)));
        assert_eq!(RowKey::parse("12_*"), Some(RowKey::Array(12)));
        assert_eq!(RowKey::parse("12_3"), None);
        assert_eq!(RowKey::Array(12).to_string(), "12_*");
        assert_eq!(RowKey::Array(12).job(), 12);
    }
}
