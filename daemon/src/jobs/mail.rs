//! `--mail-type`/`--mail-user`: which installed change of a job is mailed
//! ([`notice`], pure, from the old and new record), and the sender that runs
//! `[mail] program` (Slurm's MailProg) as `program -s SUBJECT -- RECIPIENT`
//! with Slurm's `SLURM_JOB_*` variables, a few at a time, never holding up
//! a transition. The recipient comes after `--` and is checked again here
//! (`spur_vocab::mail::check_user`), so no stored address becomes an option
//! or a command of a wrapper script.

use super::record::JobRecord;
use spur_vocab::JobState;
use spur_vocab::mail::{MailTypes, check_user};
use spur_vocab::time::format_seconds;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// How many mail programs run at once; a burst of ends waits its turn.
const AT_ONCE: usize = 4;
/// Mails waiting beyond this are dropped with a warning rather than piling up.
const MAX_WAITING: usize = 1_000;
/// A mail program still running after this long is killed.
const TIMEOUT: Duration = Duration::from_secs(30);

/// One mail to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    /// Slurm's SLURM_JOB_MAIL_TYPE: Began, Ended, Failed, Requeued, Time limit reached.
    pub kind: &'static str,
    pub job: u64,
    pub name: String,
    pub user: String,
    pub state: String,
}

/// The mail the install of `new` over `old` sends, if its `--mail-type` asks for one.
pub fn notice(old: Option<&JobRecord>, new: &JobRecord) -> Option<Mail> {
    let x = new.extra.as_deref().filter(|x| !x.mail_type.is_empty())?;
    let types = MailTypes::parse(&x.mail_type).ok().filter(MailTypes::any)?;
    if new.array.as_ref().is_some_and(|a| a.task.is_some()) && !types.array_tasks {
        return None;
    }
    let was = old.map(|o| o.state)?;
    let head = format!("Slurm Job_id={} Name={}", new.id, new.name);
    let secs = |from: i64, to: i64| format_seconds(u64::try_from((to - from) / 1000).unwrap_or(0));
    let ran = |kind| {
        format!(
            "{head} {kind}, Run time {}, {}, ExitCode {}",
            secs(new.start_ms, new.end_ms),
            new.state.as_str(),
            new.exit_code
        )
    };
    let (kind, subject) = match (was, new.state) {
        (JobState::Pending, JobState::Running) if types.begin => {
            ("Began", format!("{head} Began, Queued time {}", secs(new.submit_ms, new.start_ms)))
        }
        (w, JobState::Pending) if w.is_placed() && types.requeue => ("Requeued", format!("{head} Requeued")),
        (w, n) if w.is_active() && !n.is_active() => {
            let failed = matches!(
                n,
                JobState::Failed | JobState::Timeout | JobState::NodeFail | JobState::OutOfMemory
            );
            if n == JobState::Timeout && types.time_limit && !types.end && !types.fail {
                ("Time limit reached", format!("{head} Reached time limit"))
            } else if failed && (types.fail || types.end) {
                ("Failed", ran("Failed"))
            } else if types.end {
                ("Ended", ran("Ended"))
            } else {
                return None;
            }
        }
        _ => return None,
    };
    let to = if x.mail_user.is_empty() { new.user.clone() } else { x.mail_user.clone() };
    if let Err(e) = check_user(&to) {
        // A record stored before addresses were checked at submit and update.
        tracing::warn!(job = new.id, "no mail sent: --mail-user {e}");
        return None;
    }
    Some(Mail {
        to,
        subject,
        kind,
        job: new.id,
        name: new.name.clone(),
        user: new.user.clone(),
        state: new.state.as_str().into(),
    })
}

/// Runs the mail program for each mail, `AT_ONCE` at a time.
#[derive(Clone)]
pub struct Mailer {
    program: Option<Arc<PathBuf>>,
    slots: Arc<Semaphore>,
    waiting: Arc<std::sync::atomic::AtomicUsize>,
}

impl Mailer {
    pub fn new(program: Option<PathBuf>) -> Mailer {
        Mailer {
            program: program.map(Arc::new),
            slots: Arc::new(Semaphore::new(AT_ONCE)),
            waiting: Arc::default(),
        }
    }

    /// Whether mail is sent at all (`[mail] program` set).
    pub fn enabled(&self) -> bool {
        self.program.is_some()
    }

    /// Sends `m` in the background; a failure is logged, never returned.
    pub fn send(&self, m: Mail) {
        use std::sync::atomic::Ordering::Relaxed;
        let Some(program) = self.program.clone() else { return };
        if self.waiting.fetch_add(1, Relaxed) >= MAX_WAITING {
            self.waiting.fetch_sub(1, Relaxed);
            tracing::warn!(job = m.job, to = m.to, "too many mails waiting; this one is dropped");
            return;
        }
        let (slots, waiting) = (self.slots.clone(), self.waiting.clone());
        tokio::spawn(async move {
            let _slot = slots.acquire().await;
            waiting.fetch_sub(1, Relaxed);
            let mut cmd = tokio::process::Command::new(program.as_ref());
            cmd.args(["-s", &m.subject, "--", &m.to])
                .env("SLURM_JOB_ID", m.job.to_string())
                .env("SLURM_JOB_NAME", &m.name)
                .env("SLURM_JOB_USER", &m.user)
                .env("SLURM_JOB_STATE", &m.state)
                .env("SLURM_JOB_MAIL_TYPE", m.kind)
                .stdin(std::process::Stdio::null())
                .kill_on_drop(true);
            match tokio::time::timeout(TIMEOUT, cmd.status()).await {
                Ok(Ok(s)) if s.success() => {}
                Ok(Ok(s)) => tracing::warn!(job = m.job, status = %s, "the mail program failed"),
                Ok(Err(e)) => tracing::warn!(job = m.job, error = %e, "could not run the mail program"),
                Err(_) => tracing::warn!(job = m.job, "the mail program took too long; killed"),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::parts::Extras;

    fn job(state: JobState, types: &str) -> JobRecord {
        let extra = Extras { mail_type: types.into(), ..Extras::default() };
        JobRecord {
            id: 12,
            name: "train".into(),
            user: "alice".into(),
            state,
            submit_ms: 1_000,
            start_ms: 6_000,
            end_ms: 3_727_000,
            extra: Some(Box::new(extra)),
            ..JobRecord::default()
        }
    }

    fn mail(from: JobState, to: JobState, types: &str) -> Option<Mail> {
        notice(Some(&job(from, types)), &job(to, types))
    }

    #[test]
    fn begin_end_and_fail_as_slurm_words_them() {
        let m = mail(JobState::Pending, JobState::Running, "BEGIN").unwrap();
        assert_eq!((m.to.as_str(), m.kind), ("alice", "Began"));
        assert_eq!(m.subject, "Slurm Job_id=12 Name=train Began, Queued time 00:00:05");
        let m = mail(JobState::Running, JobState::Completed, "END").unwrap();
        assert_eq!(m.subject, "Slurm Job_id=12 Name=train Ended, Run time 01:02:01, COMPLETED, ExitCode 0");
        let m = mail(JobState::Running, JobState::Failed, "FAIL").unwrap();
        assert_eq!((m.kind, m.state.as_str()), ("Failed", "FAILED"));
        assert!(m.subject.contains("Failed, Run time"), "{}", m.subject);
        assert_eq!(
            mail(JobState::Running, JobState::Timeout, "TIME_LIMIT").unwrap().kind,
            "Time limit reached"
        );
        assert_eq!(mail(JobState::Running, JobState::Pending, "ALL").unwrap().kind, "Requeued");
        assert_eq!(mail(JobState::Pending, JobState::Cancelled, "END").unwrap().kind, "Ended");
    }

    #[test]
    fn only_what_the_types_ask_and_only_changes() {
        assert!(mail(JobState::Running, JobState::Completed, "FAIL").is_none(), "a success is no failure");
        assert!(mail(JobState::Pending, JobState::Running, "END").is_none());
        assert!(mail(JobState::Running, JobState::Running, "ALL").is_none(), "no change, no mail");
        assert!(mail(JobState::Completed, JobState::Completed, "ALL").is_none());
        assert!(mail(JobState::Pending, JobState::Running, "NONE").is_none());
        assert!(notice(None, &job(JobState::Pending, "ALL")).is_none(), "a submit mails nothing");
        let mut user = job(JobState::Running, "BEGIN");
        user.extra.as_mut().unwrap().mail_user = "ops@example.org".into();
        assert_eq!(notice(Some(&job(JobState::Pending, "BEGIN")), &user).unwrap().to, "ops@example.org");
        // An address stored before the checks is never handed to the program.
        user.extra.as_mut().unwrap().mail_user = "-oQ/tmp;x".into();
        assert!(notice(Some(&job(JobState::Pending, "BEGIN")), &user).is_none());
    }

    #[test]
    fn an_array_task_mails_only_with_array_tasks() {
        let task = |types: &str| {
            let mut j = job(JobState::Running, types);
            j.array = Some(Box::new(crate::jobs::parts::ArrayInfo {
                job_id: 10,
                task: Some(3),
                ..Default::default()
            }));
            j
        };
        assert!(notice(Some(&job(JobState::Pending, "BEGIN")), &task("BEGIN")).is_none());
        assert!(notice(Some(&job(JobState::Pending, "BEGIN")), &task("BEGIN,ARRAY_TASKS")).is_some());
    }
}
