//! Job arrays: `--array` expressions (`0-99`, `1,3,5`, `0-15:4`, `0-99%10`),
//! the set of task indexes an array still has pending (kept as ranges, so a
//! 100,000-task array is a few bytes), and job references with task and
//! step parts (`12`, `12_3`, `12_[1-5]`, `12.0`, `12.batch`) that scancel,
//! scontrol and sacct read.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The largest task index Spur accepts (Slurm's MaxArraySize caps the count; this the index).
pub const MAX_TASK_ID: u32 = 4_000_000;

/// Task indexes as sorted, disjoint runs `(first, last, step)`; every run's
/// members are `first, first+step, ..., last`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TaskSet {
    runs: Vec<(u32, u32, u32)>,
}

impl TaskSet {
    /// Parses `0-99`, `1,3,5`, `0-15:4` (no throttle). The error names the part.
    pub fn parse(raw: &str) -> Result<TaskSet, String> {
        let mut ids = TaskSet::default();
        let s = raw.trim();
        if s.is_empty() {
            return Err("no task ids".into());
        }
        for part in s.split(',') {
            let part = part.trim();
            let (range, step) = match part.split_once(':') {
                Some((r, st)) => (
                    r,
                    st.parse::<u32>()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| format!("'{part}': ':{st}' is not a step"))?,
                ),
                None => (part, 1),
            };
            let num = |t: &str| {
                t.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|n| *n <= MAX_TASK_ID)
                    .ok_or_else(|| format!("'{part}': '{t}' is not a task id (0 to {MAX_TASK_ID})"))
            };
            let (a, b) = match range.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => (num(range)?, num(range)?),
            };
            if b < a {
                return Err(format!("'{part}': the range ends before it starts"));
            }
            ids.add_run(a, a + (b - a) / step * step, step);
        }
        Ok(ids)
    }

    /// A set of the indexes `first..=last`.
    pub fn range(first: u32, last: u32) -> TaskSet {
        let mut t = TaskSet::default();
        if first <= last {
            t.add_run(first, last, 1);
        }
        t
    }

    fn add_run(&mut self, first: u32, last: u32, step: u32) {
        let step = if first == last { 1 } else { step };
        // Runs stay disjoint in their members: a run that crosses a stepped
        // one (rare: `0-15:4,2-6`) goes in as the single members not present.
        let crosses = self.runs.iter().any(|&(a, b, s)| a <= last && first <= b && (s != 1 || step != 1));
        if crosses {
            let fresh: Vec<u32> =
                (first..=last).step_by(step as usize).filter(|i| !self.contains(*i)).collect();
            self.runs.extend(fresh.into_iter().map(|i| (i, i, 1)));
        } else {
            self.runs.push((first, last, step));
        }
        self.normalise();
    }

    fn normalise(&mut self) {
        self.runs.sort_unstable();
        let mut out: Vec<(u32, u32, u32)> = Vec::with_capacity(self.runs.len());
        for r in self.runs.drain(..) {
            match out.last_mut() {
                // Adjacent plain ranges (or singles) join.
                Some(l) if l.2 == 1 && r.2 == 1 && r.0 <= l.1.saturating_add(1) => l.1 = l.1.max(r.1),
                _ => out.push(r),
            }
        }
        self.runs = out;
    }

    /// How many indexes.
    pub fn len(&self) -> u64 {
        self.runs.iter().map(|(a, b, s)| u64::from((b - a) / s) + 1).sum()
    }

    /// None at all.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Whether `i` is a member.
    pub fn contains(&self, i: u32) -> bool {
        self.runs.iter().any(|&(a, b, s)| i >= a && i <= b && (i - a).is_multiple_of(s))
    }

    /// The lowest member.
    pub fn first(&self) -> Option<u32> {
        self.runs.first().map(|r| r.0)
    }

    /// The highest member.
    pub fn last(&self) -> Option<u32> {
        self.runs.iter().map(|r| r.1).max()
    }

    /// Takes out the lowest member.
    pub fn pop_first(&mut self) -> Option<u32> {
        let i = self.first()?;
        self.remove(i);
        Some(i)
    }

    /// Takes out `i`; false when it was not a member.
    pub fn remove(&mut self, i: u32) -> bool {
        let Some(at) = self.runs.iter().position(|&(a, b, s)| i >= a && i <= b && (i - a).is_multiple_of(s))
        else {
            return false;
        };
        let (a, b, s) = self.runs.remove(at);
        if i > a {
            self.runs.push((a, i - s, if i - s == a { 1 } else { s }));
        }
        if i < b {
            self.runs.push((i + s, b, if i + s == b { 1 } else { s }));
        }
        self.normalise();
        true
    }

    /// The members, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs.iter().flat_map(|&(a, b, s)| (a..=b).step_by(s as usize))
    }

    /// The members not in `other`.
    pub fn minus(&self, other: &TaskSet) -> TaskSet {
        let mut out = TaskSet::default();
        let mut run: Option<(u32, u32)> = None;
        // Consecutive survivors gather into one run before they are added.
        for i in self.iter().filter(|i| !other.contains(*i)) {
            run = match run {
                Some((a, b)) if b.checked_add(1) == Some(i) => Some((a, i)),
                Some((a, b)) => {
                    out.add_run(a, b, 1);
                    Some((i, i))
                }
                None => Some((i, i)),
            };
        }
        if let Some((a, b)) = run {
            out.add_run(a, b, 1);
        }
        out
    }

    /// The members also in `other`.
    pub fn intersect(&self, other: &TaskSet) -> TaskSet {
        let mut out = TaskSet::default();
        for i in self.iter().filter(|i| other.contains(*i)) {
            out.add_run(i, i, 1);
        }
        out
    }
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
                let t = t.trim().parse::<u32>().map_err(|_| format!("'%{t}' is not a task limit"))?;
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
        let bad = || format!("invalid job id '{t}'");
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
                .map_err(|e| format!("invalid job id '{t}': {e}"))?;
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
