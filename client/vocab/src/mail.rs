//! sbatch's `--mail-type` names and the mails a job's changes send: the
//! CLI checks the names with this table and the controller decides with it
//! which change is mailed, so both read a type list the same way.

/// Slurm's `--mail-type` names.
pub const MAIL_TYPES: &[&str] = &[
    "NONE",
    "BEGIN",
    "END",
    "FAIL",
    "REQUEUE",
    "ALL",
    "INVALID_DEPEND",
    "STAGE_OUT",
    "TIME_LIMIT",
    "TIME_LIMIT_90",
    "TIME_LIMIT_80",
    "TIME_LIMIT_50",
    "ARRAY_TASKS",
];

/// A parsed `--mail-type` list: which of a job's changes are mailed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MailTypes {
    /// The job started.
    pub begin: bool,
    /// The job ended, however it ended.
    pub end: bool,
    /// The job ended in failure (FAILED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY).
    pub fail: bool,
    /// The job went back to the queue.
    pub requeue: bool,
    /// The job reached its time limit (ended in TIMEOUT).
    pub time_limit: bool,
    /// Each task of an array mails for itself; without it an array's tasks send none.
    pub array_tasks: bool,
}

impl MailTypes {
    /// `END,FAIL` (any case). `ALL` is BEGIN, END, FAIL, REQUEUE (and
    /// INVALID_DEPEND and STAGE_OUT, which are accepted and mail nothing
    /// more here); `NONE` alone is none.
    pub fn parse(v: &str) -> Result<MailTypes, String> {
        let mut m = MailTypes::default();
        for t in v.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let up = t.to_ascii_uppercase();
            if !MAIL_TYPES.contains(&up.as_str()) {
                return Err(format!("'{t}' is not one of {}", MAIL_TYPES.join(", ")));
            }
            match up.as_str() {
                "BEGIN" => m.begin = true,
                "END" => m.end = true,
                "FAIL" => m.fail = true,
                "REQUEUE" => m.requeue = true,
                "ALL" => (m.begin, m.end, m.fail, m.requeue) = (true, true, true, true),
                "TIME_LIMIT" => m.time_limit = true,
                "ARRAY_TASKS" => m.array_tasks = true,
                _ => {}
            }
        }
        Ok(m)
    }

    /// Whether any change is mailed at all.
    pub fn any(&self) -> bool {
        self.begin || self.end || self.fail || self.requeue || self.time_limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_all_and_none() {
        let m = MailTypes::parse("end, fail").unwrap();
        assert!(m.end && m.fail && !m.begin && m.any());
        let all = MailTypes::parse("ALL").unwrap();
        assert!(all.begin && all.end && all.fail && all.requeue && !all.time_limit);
        assert!(!MailTypes::parse("NONE").unwrap().any() && !MailTypes::parse("").unwrap().any());
        assert!(!MailTypes::parse("TIME_LIMIT_90,STAGE_OUT").unwrap().any());
        assert!(MailTypes::parse("ARRAY_TASKS,BEGIN").unwrap().array_tasks);
    }

    #[test]
    fn an_unknown_name_is_named() {
        let e = MailTypes::parse("END,SOMETIMES").unwrap_err();
        assert!(e.starts_with("'SOMETIMES' is not one of NONE, BEGIN"), "{e}");
    }
}
