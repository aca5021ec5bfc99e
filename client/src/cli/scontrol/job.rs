//! scontrol's job commands: `show job [ID]`, `update JobId=ID Key=value...`
//! (or `update job ID ...`), and `hold|release|requeue ID[,ID]`. Updates are
//! checked here and sent with canonical keys, so the controller reads exactly
//! what was validated.

use super::command::{Command, Flags};
use crate::cli::fmt::status;
use crate::cli::jobfmt;
use crate::cli::jobjson;
use crate::cli::kv::{self, Pair};
use crate::cli::submit_opts::{check_mail_type, check_mail_user, parse_when};
use crate::conn::Clients;
use crate::vocab::TimeLimit;
use crate::vocab::constraint::Constraint;
use crate::vocab::depend::Dependency;
use crate::vocab::time::UNLIMITED;
use spur_proto::v1 as pb;

/// The keys `update job` takes.
const UPDATABLE: &str = "TimeLimit=, Priority=, QOS=, Account=, Partition=, Dependency=, BeginTime=, Nice=, Features=, MailType=, MailUser=, WCKey=, Comment=";

/// Whether `update ARGS` is about jobs: `update job ...` or any `JobId=`.
pub fn names_job(args: &[String]) -> bool {
    let jobid = |w: &String| w.split_once('=').is_some_and(|(k, _)| k.eq_ignore_ascii_case("jobid"));
    args.first().is_some_and(|w| w.eq_ignore_ascii_case("job") || w.eq_ignore_ascii_case("jobs"))
        || args.iter().any(jobid)
}

/// `hold 12,13 14` and `hold JobId=12` both name jobs.
pub fn parse_action(action: &'static str, rest: &[String]) -> Result<Command, String> {
    let words: Vec<&str> = rest.iter().map(|w| strip_jobid(w)).collect();
    let ids = jobfmt::parse_ids(&words).map_err(|e| format!("{action}: {e}"))?;
    if ids.is_empty() {
        return Err(format!("{action}: needs a job id"));
    }
    Ok(Command::JobAction { action, ids })
}

/// `show job` (every job) or `show job ID`.
pub fn parse_show(arg: Option<&str>) -> Result<Command, String> {
    let Some(id) = arg else { return Ok(Command::ShowJobs(None)) };
    if let Ok(crate::vocab::array::JobRef::Tasks(array, set)) =
        crate::vocab::array::JobRef::parse(strip_jobid(id))
    {
        return match (set.len(), set.first()) {
            (1, Some(t)) => Ok(Command::ShowTask(array, t)),
            _ => Err(format!("show job: give one array task, not '{id}'")),
        };
    }
    match jobfmt::parse_ids(&[strip_jobid(id)]).map_err(|e| format!("show job: {e}"))?.as_slice() {
        [one] => Ok(Command::ShowJobs(Some(*one))),
        _ => Err(format!("show job: give one job id, not '{id}'")),
    }
}

fn strip_jobid(w: &str) -> &str {
    match w.split_once('=') {
        Some((k, v)) if k.eq_ignore_ascii_case("jobid") => v,
        _ => w,
    }
}

/// `update JobId=ID[,ID] Key=value...`, or `update job ID Key=value...`.
pub fn parse_update(args: &[String]) -> Result<Command, String> {
    let (mut ids, rest) = match args.split_first() {
        Some((w, rest)) if w.eq_ignore_ascii_case("job") || w.eq_ignore_ascii_case("jobs") => {
            let (id, rest) = rest.split_first().ok_or("update job: needs a job id")?;
            (jobfmt::parse_ids(&[strip_jobid(id)])?, rest)
        }
        _ => (vec![], args),
    };
    let mut set = vec![];
    for Pair { key, value } in kv::pairs(rest)? {
        let v = value.trim();
        let (canon, v) = match key.to_ascii_lowercase().as_str() {
            "jobid" => {
                ids.extend(jobfmt::parse_ids(&[v]).map_err(|e| format!("JobId: {e}"))?);
                continue;
            }
            // Sent as minutes or UNLIMITED, so the controller reads exactly what was checked here.
            "timelimit" => match TimeLimit::parse(v).map_err(|e| format!("TimeLimit: {e}"))? {
                TimeLimit::Minutes(m) => ("TimeLimit", m.to_string()),
                TimeLimit::Unlimited => ("TimeLimit", UNLIMITED.to_string()),
            },
            "priority" => match v.parse::<u64>() {
                Ok(p) => ("Priority", p.to_string()),
                Err(_) => return Err(format!("Priority: '{v}' is not a whole number of zero or more")),
            },
            "qos" | "account" | "partition" if v.is_empty() => return Err(format!("{key}: needs a name")),
            "qos" => ("QOS", v.to_string()),
            "account" => ("Account", v.to_string()),
            "partition" => ("Partition", v.to_string()),
            "dependency" => {
                let d = Dependency::parse(v).map_err(|e| format!("Dependency: {e}"))?;
                ("Dependency", d.to_string())
            }
            // Sent as Unix ms: the date forms read in the caller's time zone.
            "begintime" | "starttime" => {
                let ms = parse_when("begin", v, chrono::Local::now())
                    .map_err(|e| e.replacen("--begin", "BeginTime", 1))?;
                ("BeginTime", ms.to_string())
            }
            "nice" => match v.parse::<i32>() {
                Ok(n) => ("Nice", n.to_string()),
                Err(_) => return Err(format!("Nice: '{v}' is not a whole number")),
            },
            "features" => {
                let c = Constraint::parse(v).map_err(|e| format!("Features: {e}"))?;
                ("Features", c.to_string())
            }
            "mailtype" => {
                ("MailType", check_mail_type(v).map_err(|e| e.replacen("--mail-type", "MailType", 1))?)
            }
            "mailuser" => {
                ("MailUser", check_mail_user(v).map_err(|e| e.replacen("--mail-user", "MailUser", 1))?)
            }
            "wckey" => ("WCKey", v.to_string()),
            "comment" => ("Comment", v.to_string()),
            "arraytaskthrottle" => match v.parse::<u32>() {
                Ok(n) => ("ArrayTaskThrottle", n.to_string()),
                Err(_) => {
                    return Err(format!("ArrayTaskThrottle: '{v}' is not a whole number of zero or more"));
                }
            },
            _ => {
                return Err(format!(
                    "update job: '{key}' cannot be changed in this Spur release (use {UPDATABLE})"
                ));
            }
        };
        set.push((canon.to_string(), v));
    }
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(*id));
    if ids.is_empty() {
        return Err("update job: say which job with JobId=ID".into());
    }
    if set.is_empty() {
        return Err(format!("update job: nothing to change (use {UPDATABLE})"));
    }
    Ok(Command::UpdateJobs { ids, set })
}

/// `scontrol show job`: records in job id order, or JSON.
pub fn show_jobs(all: &[pb::Job], id: Option<u64>, f: &Flags, now_ms: i64) -> Result<String, String> {
    let mut jobs: Vec<&pb::Job> = all.iter().filter(|j| id.is_none_or(|i| j.id == i)).collect();
    jobs.sort_by_key(|j| j.id);
    if let (Some(i), true) = (id, jobs.is_empty()) {
        return Err(format!("job {i} not found (Invalid job id specified)"));
    }
    if f.json {
        return Ok(jobjson::job_info_reply(&jobs, now_ms, None));
    }
    if jobs.is_empty() {
        return Ok("No jobs in the system\n".into());
    }
    Ok(jobs.iter().map(|j| jobfmt::job_record(j, now_ms, f.oneliner)).collect())
}

/// `show job [ID]` against the controller.
pub async fn show(id: Option<u64>, f: &Flags, c: &mut Clients) -> Result<String, String> {
    let filter = id.iter().map(|i| pb::KeyValue { key: "id".into(), value: i.to_string() }).collect();
    let jobs = c.jobs.list_jobs(pb::ListRequest { filter }).await.map_err(status)?.into_inner().jobs;
    show_jobs(&jobs, id, f, chrono::Utc::now().timestamp_millis())
}

/// `show job 12_3`: the task's own record once it has one, else the array's
/// record of pending tasks that holds it.
pub async fn show_task(array: u64, task: u32, f: &Flags, c: &mut Clients) -> Result<String, String> {
    let filter = vec![pb::KeyValue { key: "id".into(), value: array.to_string() }];
    let jobs = c.jobs.list_jobs(pb::ListRequest { filter }).await.map_err(status)?.into_inner().jobs;
    let holds = |j: &pb::Job| {
        j.array_task_id == Some(task)
            || (j.array_task_id.is_none()
                && crate::vocab::array::TaskSet::parse_bounded(
                    &j.array_pending,
                    crate::vocab::array::MAX_PENDING_RUNS,
                )
                .is_ok_and(|p| p.contains(task)))
    };
    match jobs.iter().filter(|j| j.array_job_id == array).find(|j| holds(j)) {
        Some(j) => show_jobs(std::slice::from_ref(j), Some(j.id), f, chrono::Utc::now().timestamp_millis()),
        None => Err(format!("job {array}_{task} not found (Invalid job id specified)")),
    }
}

/// Sends `set` to each job in turn (an update, or `action=hold|release|requeue`);
/// stops at the first job the controller refuses, naming it when several were given.
pub async fn update(ids: &[u64], set: &[(String, String)], c: &mut Clients) -> Result<String, String> {
    let set: Vec<pb::KeyValue> =
        set.iter().map(|(key, value)| pb::KeyValue { key: key.clone(), value: value.clone() }).collect();
    for &id in ids {
        let req = pb::UpdateJobRequest { id, set: set.clone() };
        c.jobs.update_job(req).await.map_err(|e| match ids.len() {
            1 => status(e),
            _ => format!("job {id}: {}", status(e)),
        })?;
    }
    Ok(String::new())
}
