//! A job's id as squeue and sacct print it, from the parts a job record
//! carries: `12`, an array's task `12_3`, and the record of an array's tasks
//! not started yet `12_[3-99%10]`. The CLI and the console both print it, so
//! it is spelled here once.

/// What printing a job's id needs of its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobIdParts<'a> {
    /// The record's own id.
    pub id: u64,
    /// The array's id; 0 for a job outside any array.
    pub array_job_id: u64,
    /// The task this record holds; None for the record of the tasks not started yet.
    pub array_task_id: Option<u32>,
    /// The pending task indexes as the controller lists them (`3-99`).
    pub array_pending: &'a str,
    /// The array's `%N` limit; 0 for none.
    pub array_throttle: u32,
    /// Whether the record is PENDING: only then is its throttle shown.
    pub pending: bool,
}

/// The id as squeue's `%i` prints it.
pub fn display_id(p: JobIdParts<'_>) -> String {
    match (p.array_job_id, p.array_task_id, p.array_pending) {
        (0, ..) => p.id.to_string(),
        (a, Some(t), _) => format!("{a}_{t}"),
        (a, None, r) if p.array_throttle > 0 && p.pending => format!("{a}_[{r}%{}]", p.array_throttle),
        (a, None, r) if r.contains([',', '-']) => format!("{a}_[{r}]"),
        (a, None, r) => format!("{a}_{r}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(task: Option<u32>, pending: &str, throttle: u32, is_pending: bool) -> JobIdParts<'_> {
        JobIdParts {
            id: 15,
            array_job_id: 12,
            array_task_id: task,
            array_pending: pending,
            array_throttle: throttle,
            pending: is_pending,
        }
    }

    #[test]
    fn prints_squeue_spellings() {
        let plain = JobIdParts { array_job_id: 0, ..parts(None, "", 0, true) };
        assert_eq!(display_id(plain), "15");
        assert_eq!(display_id(parts(Some(3), "", 0, false)), "12_3");
        assert_eq!(display_id(parts(None, "3-99", 10, true)), "12_[3-99%10]");
        // A throttle is only shown while the tasks wait.
        assert_eq!(display_id(parts(None, "3-99", 10, false)), "12_[3-99]");
        assert_eq!(display_id(parts(None, "4,7", 0, true)), "12_[4,7]");
        assert_eq!(display_id(parts(None, "9", 0, true)), "12_9");
    }
}
