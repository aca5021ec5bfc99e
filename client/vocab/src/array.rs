//! Job arrays: `--array` expressions (`0-99`, `1,3,5`, `0-15:4`, `0-99%10`),
//! the set of task indexes an array still has pending (kept as ranges, so a
//! 100,000-task array is a few bytes), and job references with task and
//! step parts (`12`, `12_3`, `12_[1-5]`, `12.0`, `12.batch`) that scancel,
//! scontrol and sacct read.

use crate::hostlist_impl::shown;
use crate::taskruns_impl::{self as runs, Budget, Refused, Run};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The largest task index Spur accepts (Slurm's MaxArraySize caps the count; this the index).
pub const MAX_TASK_ID: u32 = 4_000_000;

/// The most comma-separated parts an array expression (`--array`,
/// `scancel 12_[...]`) may have, counted before any is read; also the most
/// runs its task ids may make once merged.
pub const MAX_ARRAY_PARTS: usize = 10_000;

/// The most runs a controller's listing of an array's pending tasks can
/// hold (one per index): what a client reading that listing passes to
/// [`TaskSet::parse_bounded`], since cancels can fragment a large array.
pub const MAX_PENDING_RUNS: usize = MAX_TASK_ID as usize + 1;

/// The most steps merging an expression's overlapping stepped ranges may
/// take (`0-99:2,1-99:3`): each one's period is worked out once, in a bitmap.
pub const MAX_MERGE_STEPS: u64 = 1 << 24;

/// Task indexes as sorted runs `(first, last, step)` whose spans never
/// overlap; every run's members are `first, first+step, ..., last`. So
/// `contains` and `remove` are binary searches, `len` is a sum over the
/// runs, and no operation walks the indexes a run stands for.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(try_from = "StoredRuns")]
pub struct TaskSet {
    runs: Vec<Run>,
}

/// A set as stored: records written before spans were kept apart (or by
/// hand) are merged again as they are read.
#[derive(Deserialize)]
struct StoredRuns {
    #[serde(default)]
    runs: Vec<Run>,
}

impl TryFrom<StoredRuns> for TaskSet {
    type Error = String;

    fn try_from(s: StoredRuns) -> Result<TaskSet, String> {
        if runs::is_normal(&s.runs) {
            return Ok(TaskSet { runs: s.runs });
        }
        let mut progs = Vec::with_capacity(s.runs.len());
        for (a, b, st) in s.runs {
            if st == 0 || b < a {
                return Err(format!("task run ({a}, {b}, {st}) is not a range"));
            }
            progs.extend(runs::clip((a, b, st), a, b));
        }
        let all = Budget { runs: usize::MAX, work: u64::MAX };
        runs::union(progs, all).map(|runs| TaskSet { runs }).map_err(|_| "task runs do not merge".into())
    }
}

/// Two sets are equal when they have the same members, however kept.
impl PartialEq for TaskSet {
    fn eq(&self, other: &TaskSet) -> bool {
        self.runs == other.runs
            || (self.len() == other.len() && runs::canonical(&self.runs) == runs::canonical(&other.runs))
    }
}

impl Eq for TaskSet {}

impl TaskSet {
    /// Parses `0-99`, `1,3,5`, `0-15:4` (no throttle), of at most
    /// [`MAX_ARRAY_PARTS`] parts. The error names the part.
    pub fn parse(raw: &str) -> Result<TaskSet, String> {
        TaskSet::parse_bounded(raw, MAX_ARRAY_PARTS)
    }

    /// Parses a set of at most `max_parts` parts and runs: a client reading
    /// the controller's own listing of an array's pending tasks (which can
    /// be longer than anyone types) passes [`MAX_PENDING_RUNS`].
    pub fn parse_bounded(raw: &str, max_parts: usize) -> Result<TaskSet, String> {
        let s = raw.trim();
        if s.is_empty() {
            return Err("no task ids".into());
        }
        let parts = s.bytes().filter(|b| *b == b',').count() + 1;
        if parts > max_parts {
            return Err(format!(
                "'{}': {parts} comma-separated parts, more than the {max_parts} an array expression may have",
                shown(s)
            ));
        }
        let mut progs = Vec::with_capacity(parts);
        for part in s.split(',') {
            progs.push(parse_part(part.trim())?);
        }
        match runs::union(progs, Budget { runs: max_parts, work: MAX_MERGE_STEPS }) {
            Ok(runs) => Ok(TaskSet { runs }),
            Err(Refused::Runs) => Err(format!(
                "'{}': its overlapping ranges make more than {max_parts} runs of task ids once merged",
                shown(s)
            )),
            Err(Refused::Work) => Err(format!(
                "'{}': its overlapping stepped ranges take more than {MAX_MERGE_STEPS} steps to merge",
                shown(s)
            )),
        }
    }

    /// A set of the indexes `first..=last`.
    pub fn range(first: u32, last: u32) -> TaskSet {
        let runs = if first <= last { vec![(first, last, 1)] } else { vec![] };
        TaskSet { runs }
    }

    /// How many indexes.
    pub fn len(&self) -> u64 {
        self.runs.iter().map(|(a, b, s)| u64::from((b - a) / s) + 1).sum()
    }

    /// None at all.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The run whose span holds `i`, if one does.
    fn run_at(&self, i: u32) -> Option<usize> {
        let at = self.runs.partition_point(|r| r.1 < i);
        self.runs.get(at).filter(|r| r.0 <= i && (i - r.0).is_multiple_of(r.2)).map(|_| at)
    }

    /// Whether `i` is a member.
    pub fn contains(&self, i: u32) -> bool {
        self.run_at(i).is_some()
    }

    /// The lowest member.
    pub fn first(&self) -> Option<u32> {
        self.runs.first().map(|r| r.0)
    }

    /// The highest member.
    pub fn last(&self) -> Option<u32> {
        self.runs.last().map(|r| r.1)
    }

    /// Takes out the lowest member.
    pub fn pop_first(&mut self) -> Option<u32> {
        let i = self.first()?;
        self.remove(i);
        Some(i)
    }

    /// Takes out `i`; false when it was not a member.
    pub fn remove(&mut self, i: u32) -> bool {
        let Some(at) = self.run_at(i) else { return false };
        let (a, b, s) = self.runs[at];
        let mut pieces = Vec::with_capacity(2);
        if i > a {
            pieces.extend(runs::clip((a, b, s), a, i - 1));
        }
        if i < b {
            pieces.extend(runs::clip((a, b, s), i + 1, b));
        }
        self.runs.splice(at..=at, pieces);
        true
    }

    /// The members, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs.iter().flat_map(|&(a, b, s)| (a..=b).step_by(s as usize))
    }

    /// The members not in `other`.
    pub fn minus(&self, other: &TaskSet) -> TaskSet {
        TaskSet { runs: runs::minus(&self.runs, &other.runs) }
    }

    /// The members also in `other`.
    pub fn intersect(&self, other: &TaskSet) -> TaskSet {
        TaskSet { runs: runs::intersect(&self.runs, &other.runs) }
    }
}

/// One part of an expression, `7`, `0-99` or `0-15:4`, as a progression
/// ending on its last member.
fn parse_part(part: &str) -> Result<Run, String> {
    let (range, step) = match part.split_once(':') {
        Some((r, st)) => (
            r,
            st.parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("'{}': ':{}' is not a step", shown(part), shown(st)))?,
        ),
        None => (part, 1),
    };
    let num =
        |t: &str| {
            t.trim().parse::<u32>().ok().filter(|n| *n <= MAX_TASK_ID).ok_or_else(|| {
                format!("'{}': '{}' is not a task id (0 to {MAX_TASK_ID})", shown(part), shown(t))
            })
        };
    let (a, b) = match range.split_once('-') {
        Some((a, b)) => (num(a)?, num(b)?),
        None => (num(range)?, num(range)?),
    };
    if b < a {
        return Err(format!("'{}': the range ends before it starts", shown(part)));
    }
    Ok(if a == b { (a, a, 1) } else { runs::clip((a, b, step), a, b).unwrap_or((a, a, 1)) })
}

/// Slurm's compact form: `3-99`, `1,3,5`, `0-12:4`.
impl fmt::Display for TaskSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, &(a, b, s)) in self.runs.iter().enumerate() {
            if n > 0 {
                f.write_str(",")?;
            }
            match (a == b, s) {
                (true, _) => write!(f, "{a}")?,
                (false, 1) => write!(f, "{a}-{b}")?,
                (false, s) => write!(f, "{a}-{b}:{s}")?,
            }
        }
        Ok(())
    }
}

/// A whole `--array` value: the indexes and the `%N` limit on how many run at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArraySpec {
    /// The task indexes.
    pub tasks: TaskSet,
    /// `%N`: at most N tasks running at once; 0 is no limit.
    pub throttle: u32,
}

impl ArraySpec {
    /// Parses `--array`; `max_tasks` is the controller's MaxArraySize-like cap on the count.
    pub fn parse(raw: &str, max_tasks: u64) -> Result<ArraySpec, String> {
        let (ids, throttle) = match raw.trim().split_once('%') {
            Some((ids, t)) => {
                let t =
                    t.trim().parse::<u32>().map_err(|_| format!("'%{}' is not a task limit", shown(t)))?;
                (ids, t)
            }
            None => (raw.trim(), 0),
        };
        let tasks = TaskSet::parse(ids)?;
        if tasks.len() > max_tasks {
            return Err(format!("{} tasks, more than the {max_tasks} an array may have", tasks.len()));
        }
        Ok(ArraySpec { tasks, throttle })
    }
}

/// A job named on a command line: a job, some tasks of an array, or one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobRef {
    /// `12`: the job, or every task of array 12.
    Job(u64),
    /// `12_3`, `12_[1-5,7]`: tasks of array 12.
    Tasks(u64, TaskSet),
    /// `12.0`, `12.batch`, `12.extern`.
    Step(u64, StepRef),
}

/// A step of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepRef {
    /// The batch script.
    Batch,
    /// The extern step.
    Extern,
    /// `srun` step N.
    Id(u32),
}

impl JobRef {
    /// Parses one reference; the error names it.
    pub fn parse(raw: &str) -> Result<JobRef, String> {
        let t = raw.trim();
        let bad = || format!("invalid job id '{}'", shown(t));
        let num = |s: &str| s.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(bad);
        if let Some((job, step)) = t.split_once('.') {
            let step = match step {
                "batch" => StepRef::Batch,
                "extern" => StepRef::Extern,
                n => StepRef::Id(n.parse::<u32>().map_err(|_| bad())?),
            };
            return Ok(JobRef::Step(num(job)?, step));
        }
        if let Some((job, tasks)) = t.split_once('_') {
            let inner = tasks.strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap_or(tasks);
            let set = TaskSet::parse(inner.split('%').next().unwrap_or(inner))
                .map_err(|e| format!("invalid job id '{}': {e}", shown(t)))?;
            return Ok(JobRef::Tasks(num(job)?, set));
        }
        Ok(JobRef::Job(num(t)?))
    }

    /// The job (or array) id.
    pub fn job(&self) -> u64 {
        match self {
            JobRef::Job(j) | JobRef::Tasks(j, _) | JobRef::Step(j, _) => *j,
        }
    }
}

/// Splits a command line's words into references: `12,13 14_[1-3]` (commas
/// outside brackets separate them).
pub fn parse_refs<S: AsRef<str>>(words: &[S]) -> Result<Vec<JobRef>, String> {
    let mut out = vec![];
    for w in words {
        let (mut depth, mut start) = (0, 0);
        let s = w.as_ref();
        for (i, c) in s.char_indices() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                ',' if depth == 0 => {
                    if !s[start..i].trim().is_empty() {
                        out.push(JobRef::parse(&s[start..i])?);
                    }
                    start = i + 1;
                }
                _ => {}
            }
        }
        if !s[start..].trim().is_empty() {
            out.push(JobRef::parse(&s[start..])?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_expressions_parse_count_and_print() {
        let a = ArraySpec::parse("0-99%10", 1001).unwrap();
        assert_eq!((a.tasks.len(), a.throttle, a.tasks.to_string()), (100, 10, "0-99".to_string()));
        let a = ArraySpec::parse("1,3,5", 1001).unwrap();
        assert_eq!((a.tasks.len(), a.tasks.to_string()), (3, "1,3,5".to_string()));
        let a = ArraySpec::parse("0-15:4", 1001).unwrap();
        assert_eq!(a.tasks.iter().collect::<Vec<_>>(), [0, 4, 8, 12]);
        assert_eq!(a.tasks.to_string(), "0-12:4");
        let a = ArraySpec::parse("0-3,2-6", 1001).unwrap();
        assert_eq!((a.tasks.len(), a.tasks.to_string()), (7, "0-6".to_string()));
        assert_eq!(ArraySpec::parse("0-99999", 100_000).unwrap().tasks.len(), 100_000);
    }

    #[test]
    fn bad_array_expressions_name_the_part() {
        let e = |s: &str| ArraySpec::parse(s, 1001).unwrap_err();
        assert!(e("").contains("no task ids"));
        assert!(e("5-1").contains("ends before"));
        assert!(e("0-9:0").contains("':0' is not a step"));
        assert!(e("x").contains("'x' is not a task id"));
        assert!(e("0-9%y").contains("'%y'"));
        assert!(e("0-2000").contains("more than the 1001"));
        assert!(e("99999999").contains("not a task id"));
    }

    #[test]
    fn tasks_leave_the_set_one_at_a_time() {
        let mut t = TaskSet::parse("0-9").unwrap();
        assert_eq!(t.pop_first(), Some(0));
        assert!(t.remove(5) && !t.remove(5));
        assert_eq!(t.to_string(), "1-4,6-9");
        let mut s = TaskSet::parse("0-12:4").unwrap();
        assert!(s.remove(4));
        assert_eq!(s.iter().collect::<Vec<_>>(), [0, 8, 12]);
        assert_eq!((s.first(), s.last(), s.len()), (Some(0), Some(12), 3));
        let big = TaskSet::parse("0-99999").unwrap();
        assert_eq!(big.intersect(&TaskSet::parse("5,7,200000").unwrap()).to_string(), "5,7");
        assert_eq!(big.minus(&TaskSet::parse("1-99998").unwrap()).to_string(), "0,99999");
    }

    #[test]
    fn overlapping_stepped_ranges_merge_by_their_runs() {
        // 40 bytes that once took about 2x10^12 steps: three stepped ranges over four million ids.
        let r = JobRef::parse("1_[0-4000000:2,1-4000000:2,1-4000000:2]").unwrap();
        assert_eq!(r, JobRef::Tasks(1, TaskSet::range(0, 4_000_000)));
        let JobRef::Tasks(_, set) = r else { unreachable!() };
        assert_eq!((set.len(), set.to_string()), (4_000_001, "0-4000000".to_string()));
        let t = |s: &str| TaskSet::parse(s).unwrap();
        // Overlapping plain and stepped ranges, and duplicates.
        assert_eq!(t("0-15:4,2-6").iter().collect::<Vec<_>>(), [0, 2, 3, 4, 5, 6, 8, 12]);
        assert_eq!(t("0-15:4,2-6").to_string(), "0,2-6,8-12:4");
        assert_eq!(t("5,5,5,1-3,2").to_string(), "1-3,5");
        assert_eq!(t("0-99:3,0-99:3").to_string(), "0-99:3");
        // Steps 2 and 3 repeat every 6: the union of multiples of 2 or 3.
        let u = t("0-29:2,0-29:3");
        assert_eq!(u.len(), 20);
        assert!(u.contains(9) && u.contains(28) && !u.contains(25) && !u.contains(1));
        assert_eq!(t("0-4000000:4,2-4000000:4").to_string(), "0-4000000:2");
        // Throttles ride along.
        let a = ArraySpec::parse("0-4000000:2,1-4000000:2%16", 4_000_001).unwrap();
        assert_eq!((a.tasks.len(), a.throttle), (4_000_001, 16));
        assert!(ArraySpec::parse("0-9%4%2", 1001).unwrap_err().contains("'%4%2'"));
    }

    #[test]
    fn expressions_past_the_caps_are_refused_by_name() {
        let many = vec!["7"; MAX_ARRAY_PARTS + 1].join(",");
        let e = TaskSet::parse(&many).unwrap_err();
        assert!(e.contains("10001 comma-separated parts, more than the 10000"), "{e}");
        assert!(e.chars().count() < 200, "the expression is cut in the error: {e}");
        assert_eq!(TaskSet::parse_bounded(&many, 20_000).unwrap().to_string(), "7");
        // Two ids in every four across the range: a million runs.
        let e = TaskSet::parse("0-4000000:4,1-4000000:4").unwrap_err();
        assert!(e.contains("more than 10000 runs"), "{e}");
        // Coprime large steps: one bitmap over the range, cheap enough.
        assert!(TaskSet::parse("0-4000000:65521,0-4000000:65519,1-4000000:999983").is_ok());
        // Two hundred steps over four million ids: more bits to set than allowed.
        let steps: Vec<String> = (2..=200).map(|k| format!("0-4000000:{k}")).collect();
        let e = TaskSet::parse(&steps.join(",")).unwrap_err();
        assert!(e.contains(&format!("more than {MAX_MERGE_STEPS} steps")), "{e}");
    }

    #[test]
    fn operations_keep_runs_apart_and_equality_is_by_members() {
        let big = TaskSet::parse("0-3999999").unwrap();
        let odd = TaskSet::parse("1-3999999:2").unwrap();
        let even = big.minus(&odd);
        assert_eq!(even.to_string(), "0-3999998:2");
        assert_eq!(big.intersect(&odd), odd);
        assert_eq!(TaskSet::parse("0-8:4").unwrap(), TaskSet::parse("0,4,8").unwrap());
        assert_ne!(TaskSet::parse("0-8:4").unwrap(), TaskSet::parse("0,4").unwrap());
        let thirds = big.minus(&TaskSet::parse("0-3999999:3").unwrap());
        assert_eq!(
            (thirds.len(), thirds.contains(3_999_998), thirds.contains(3_999_999)),
            (2_666_666, true, false)
        );
        let mut s = TaskSet::parse("0-4000000:2").unwrap();
        assert!(s.remove(2_000_000) && !s.contains(2_000_000) && s.contains(2_000_002));
        assert_eq!(s.to_string(), "0-1999998:2,2000002-4000000:2");
    }

    #[test]
    fn stored_sets_of_crossing_runs_are_merged_as_read() {
        // What the old parse kept for `0-15:4,2-6`: a stepped run with singles inside its span.
        let old: TaskSet = serde_json::from_str(r#"{"runs":[[0,12,4],[2,3,1],[5,6,1]]}"#).unwrap();
        assert_eq!(old.iter().collect::<Vec<_>>(), [0, 2, 3, 4, 5, 6, 8, 12]);
        assert!(old.contains(8) && !old.contains(7));
        let same: TaskSet = serde_json::from_str(&serde_json::to_string(&old).unwrap()).unwrap();
        assert_eq!(same, old);
        assert!(serde_json::from_str::<TaskSet>(r#"{"runs":[[0,9,0]]}"#).is_err());
    }

    #[test]
    fn job_references_take_tasks_and_steps() {
        assert_eq!(JobRef::parse("12").unwrap(), JobRef::Job(12));
        assert_eq!(JobRef::parse("12_3").unwrap(), JobRef::Tasks(12, TaskSet::parse("3").unwrap()));
        assert_eq!(JobRef::parse("12_[1-5]").unwrap(), JobRef::Tasks(12, TaskSet::parse("1-5").unwrap()));
        assert_eq!(JobRef::parse("12.0").unwrap(), JobRef::Step(12, StepRef::Id(0)));
        assert_eq!(JobRef::parse("12.batch").unwrap(), JobRef::Step(12, StepRef::Batch));
        let refs = parse_refs(&["12,13_[1-3,5]", "14.batch"]).unwrap();
        assert_eq!(refs.len(), 3);
        assert_eq!(refs[1], JobRef::Tasks(13, TaskSet::parse("1-3,5").unwrap()));
        for bad in ["x", "0", "12.x", "12_", "_3", "12_[a]"] {
            assert!(JobRef::parse(bad).is_err(), "{bad}");
        }
    }
}
