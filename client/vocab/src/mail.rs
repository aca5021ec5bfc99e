//! sbatch's `--mail-type` names and the mails a job's changes send: the
//! CLI checks the names with this table and the controller decides with it
//! which change is mailed, so both read a type list the same way. Also the
//! one check of a `--mail-user` address, made by the CLI and the controller.

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

/// What a `--mail-user` never holds besides whitespace and control
/// characters: the shell's metacharacters, quotes and globs. The address is
/// an argument of the site's mail program, which is often a script.
const NOT_IN_ADDRESS: &[char] = &[
    ';', '|', '&', '$', '`', '<', '>', '(', ')', '\'', '"', '\\', '*', '?', '[', ']', '{', '}', '!', '#', '~',
];

/// `--mail-user`/`MailUser=`: a user name or `name@host` (a comma list is
/// left to the mail program), trimmed. Refused: nothing after trimming, a
/// leading `-` (the mail program would read an option), whitespace, control
/// characters and `NOT_IN_ADDRESS`. The message names no flag; the caller does.
pub fn check_user(v: &str) -> Result<&str, String> {
    let t = v.trim();
    if t.is_empty() {
        return Err("needs an address (a user name or name@host)".into());
    }
    if t.starts_with('-') {
        return Err(format!("'{t}' starts with '-', which the mail program would read as an option"));
    }
    if let Some(c) = t.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "'{}' holds whitespace or a control character ({c:?}); give one address",
            t.escape_debug()
        ));
    }
    if let Some(c) = t.chars().find(|c| NOT_IN_ADDRESS.contains(c)) {
        return Err(format!(
            "'{t}' holds '{c}', which a mail address here may not (no shell metacharacters)"
        ));
    }
    Ok(t)
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

    #[test]
    fn mail_users_are_one_plain_address() {
        assert_eq!(check_user(" ops@example.org ").unwrap(), "ops@example.org");
        assert_eq!(check_user("alice").unwrap(), "alice");
        assert_eq!(check_user("a.b+tag@x.org,c@y.org").unwrap(), "a.b+tag@x.org,c@y.org");
        assert!(check_user("  ").unwrap_err().contains("needs an address"));
        assert!(check_user("-oProgram=x").unwrap_err().contains("starts with '-'"));
        assert!(check_user("a b@x").unwrap_err().contains("whitespace"));
        assert!(check_user("a\u{7}@x").unwrap_err().contains("control"));
        for bad in ["a;rm@x", "a|b", "a&b", "$(id)", "`id`", "a<b", "a>b", "a'b", "a\"b", "a\\b", "a*"] {
            assert!(check_user(bad).is_err(), "{bad}");
        }
    }
}
