//! Jobs as JSON in the shapes of Slurm's data_parser (v0.0.40 and later), so
//! a script written against Slurm's `squeue --json`, `scontrol show job
//! --json` or `sacct --json` reads Spur's: the reply `{"jobs": [...], "meta",
//! "errors", "warnings"}`; numbers that may be unset or unlimited as
//! `{"set", "infinite", "number"}`; states as lists of flags; exit codes as
//! status, return code and signal; times in Unix seconds. squeue and scontrol
//! print Slurm's job_info, sacct its accounting record with the steps inside.
//! What Spur does not keep (an administrator's comment, a system comment) is
//! empty, as Slurm prints it unset; nothing is made up.

use super::fmt::json_pairs;
use super::jobfmt::{self, is_active};
use super::stepfmt::Row;
use crate::vocab::signal::SIGNALS;
use crate::vocab::tres::TRES_MEM;
use serde_json::{Map, Value, json};
use spur_proto::v1 as pb;

/// An object from its keys in order (the `json!` macro's recursion limit
/// caps how many keys one literal may have).
fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map<_, _>>())
}

/// Slurm's number that may be unset: `{"set": false, ...}` for `None`.
pub fn number(v: Option<u64>) -> Value {
    json!({ "set": v.is_some(), "infinite": false, "number": v.unwrap_or(0) })
}

/// A time limit in minutes; none is Slurm's INFINITE.
pub fn limit(minutes: Option<u64>) -> Value {
    match minutes {
        Some(m) => number(Some(m)),
        None => json!({ "set": false, "infinite": true, "number": 0 }),
    }
}

/// Unix seconds of a time in ms; 0 for an unset one, as Slurm prints it.
pub fn secs(ms: i64) -> u64 {
    u64::try_from(ms / 1000).unwrap_or(0)
}

/// A job_info time: Slurm always sets it, to 0 when unknown.
fn stamp(ms: i64) -> Value {
    number(Some(secs(ms)))
}

/// A positive count, or unset.
fn given(n: u64) -> Value {
    number((n > 0).then_some(n))
}

/// The exit code of a job or step (a [`Row`] reads as its job): pending
/// until it ends, then a success, an error with its code, or the signal
/// that killed it.
pub fn exit_code(j: &pb::Job) -> Value {
    let name = |sig: i32| SIGNALS.iter().find(|(_, n)| *n == sig).map_or("", |(s, _)| *s);
    let (status, code, signal) = match jobfmt::exit_signal(j) {
        _ if is_active(j) => ("PENDING", None, None),
        Some(sig) => ("SIGNALED", None, Some(sig)),
        None if j.exit_code == 0 => ("SUCCESS", Some(0), None),
        None if j.exit_code > 0 => ("ERROR", u64::try_from(j.exit_code).ok(), None),
        // The job's shell never ran (the controller's -1): no code of its own.
        None => ("INVALID", None, None),
    };
    obj([
        ("status", json!([status])),
        ("return_code", number(code)),
        (
            "signal",
            json!({ "id": number(signal.and_then(|s| u64::try_from(s).ok())), "name": signal.map_or("", name) }),
        ),
    ])
}

/// The reply around the jobs, with Slurm's keys; `cluster` when the command
/// asked the controller for it (`-M`).
pub fn reply(jobs: Vec<Value>, cluster: Option<&str>, extra: Vec<(&str, Value)>) -> String {
    serde_json::to_string_pretty(&reply_value("jobs", jobs, cluster, extra)).unwrap_or_default() + "\n"
}

/// A data_parser document: `key`'s records, the `extra` keys, then Slurm's
/// `meta`, `errors` and `warnings` (squeue, sacct and sinfo share it; `--yaml`
/// is the same value in YAML).
pub fn reply_value(
    key: &str,
    records: Vec<Value>,
    cluster: Option<&str>,
    extra: Vec<(&str, Value)>,
) -> Value {
    let meta = json!({
        "plugin": { "type": "", "name": "spur", "data_parser": "spur", "accounting_storage": "spur" },
        "slurm": { "cluster": cluster.unwrap_or("") },
        "spur": { "version": env!("CARGO_PKG_VERSION") },
    });
    let mut out = Map::new();
    out.insert(key.into(), Value::Array(records));
    out.extend(extra.into_iter().map(|(k, v)| (k.to_string(), v)));
    out.insert("meta".into(), meta);
    out.insert("errors".into(), json!([]));
    out.insert("warnings".into(), json!([]));
    Value::Object(out)
}

/// The effective priority as Slurm's whole number.
fn priority(j: &pb::Job) -> Value {
    number(Some(j.priority.max(0.0).round_ties_even() as u64))
}

/// A comma list as a JSON list (Slurm's flag lists: mail types).
fn flags(v: &str) -> Value {
    v.split(',').map(str::trim).filter(|s| !s.is_empty()).collect()
}

/// One job as squeue and scontrol show it: Slurm's job_info.
pub fn job_info(j: &pb::Job, cluster: Option<&str>) -> Value {
    let spec = j.spec.clone().unwrap_or_default();
    let stdout = spec.stdout_path.clone();
    let stderr = if spec.stderr_path.is_empty() { stdout.clone() } else { spec.stderr_path.clone() };
    let eligible = if spec.begin_ms > 0 { spec.begin_ms } else { j.submit_ms };
    let mut v = obj([
        ("account", j.account.clone().into()),
        ("admin_comment", "".into()),
        // Spur's own: the `--annotation KEY=VALUE` pairs, as an object.
        ("annotations", json_pairs(&spec.annotations)),
        ("array_job_id", number(Some(j.array_job_id))),
        ("array_task_id", number(j.array_task_id.map(u64::from))),
        ("array_max_tasks", number(Some(u64::from(j.array_throttle)))),
        ("array_task_string", j.array_pending.clone().into()),
        ("batch_flag", (!spec.allocation).into()),
        // Spur's own: idle-fill lent this run its nodes (spur-idle-fill.md).
        ("borrowed", j.borrowed.into()),
        ("comment", spec.comment.clone().into()),
        ("cpus", number(Some(u64::from(j.num_cpus)))),
        ("cpus_per_task", number(Some(u64::from(spec.cpus_per_task.max(1))))),
        ("current_working_directory", spec.workdir.clone().into()),
        ("deadline", stamp(spec.deadline_ms)),
        ("dependency", spec.dependency.clone().into()),
        ("eligible_time", stamp(eligible)),
        ("end_time", stamp(jobfmt::end_ms(j).unwrap_or(0))),
        ("excluded_nodes", spec.exclude.clone().into()),
        ("exit_code", exit_code(j)),
        ("features", spec.constraint.clone().into()),
        ("group_name", jobfmt::group_name(j).into()),
        ("hold", spec.hold.into()),
        ("job_id", j.id.into()),
        ("job_state", json!([j.job_state().as_str()])),
        ("licenses", spec.licenses.clone().into()),
        ("licenses_allocated", j.licenses_alloc.clone().into()),
        ("mail_type", flags(&spec.mail_type)),
        ("mail_user", spec.mail_user.clone().into()),
        ("memory_per_cpu", given(spec.mem_per_cpu_mb)),
        ("memory_per_node", given(spec.mem_mb)),
        ("name", j.name.clone().into()),
        ("nice", spec.nice.into()),
        ("node_count", number(Some(u64::from(j.num_nodes)))),
        ("nodes", jobfmt::nodelist(j).into()),
        ("partition", j.partition.clone().into()),
        ("priority", priority(j)),
        ("qos", j.qos.clone().into()),
        ("required_nodes", spec.nodelist.clone().into()),
        ("requeue", spec.requeue.unwrap_or(true).into()),
        ("standard_error", stderr.clone().into()),
        ("standard_output", stdout.clone().into()),
        ("stderr_expanded", jobfmt::expand_path(j, &stderr).into()),
        ("stdout_expanded", jobfmt::expand_path(j, &stdout).into()),
        ("start_time", stamp(j.start_ms)),
        ("state_description", j.reason_facts().into()),
        ("state_reason", j.reason_text().into()),
        ("submit_time", stamp(j.submit_ms)),
        ("system_comment", "".into()),
        ("tasks", number(Some(u64::from(spec.ntasks.max(j.num_nodes).max(1))))),
        ("tasks_per_node", given(u64::from(spec.ntasks_per_node))),
        ("time_limit", limit(j.time_limit_minutes)),
        ("time_minimum", number(spec.time_min_minutes)),
        ("tres_per_node", tres_per_node(&spec).into()),
        ("tres_req_str", jobfmt::tres(j).into()),
        ("user_name", j.user.clone().into()),
        ("wckey", spec.wckey.clone().into()),
    ]);
    if let Value::Object(m) = &mut v {
        // Only the ids the controller knows: a job without them (plugins
        // none, jwt) runs as the agent's user, and a 0 would claim root.
        let ids = [("user_id", j.uid), ("group_id", j.gid)];
        m.extend(ids.into_iter().filter_map(|(k, id)| Some((k.to_string(), id?.into()))));
        if let Some(c) = cluster {
            m.insert("cluster".into(), c.into());
        }
    }
    v
}

/// squeue's and scontrol's reply: the jobs' job_info, with when it was
/// listed (Spur has no backfill pass, so its time is unset).
pub fn job_info_reply(jobs: &[&pb::Job], now_ms: i64, cluster: Option<&str>) -> String {
    serde_json::to_string_pretty(&job_info_value(jobs, now_ms, cluster)).unwrap_or_default() + "\n"
}

/// [`job_info_reply`]'s document as a value (squeue's `--yaml` writes it in YAML).
pub fn job_info_value(jobs: &[&pb::Job], now_ms: i64, cluster: Option<&str>) -> Value {
    let v = jobs.iter().map(|j| job_info(j, cluster)).collect();
    let extra = vec![("last_backfill", number(None)), ("last_update", number(Some(secs(now_ms))))];
    reply_value("jobs", v, cluster, extra)
}

fn tres_per_node(spec: &pb::JobSpec) -> String {
    if spec.gpus_per_node > 0 { format!("gres/gpu:{}", spec.gpus_per_node) } else { String::new() }
}

/// CPU time as Slurm splits it: whole seconds and the microseconds past them.
fn cpu(us: u64) -> Value {
    json!({ "seconds": us / 1_000_000, "microseconds": us % 1_000_000 })
}

/// The times accounting keeps, with what the processes used once measured.
fn times(j: &pb::Job, now_ms: i64) -> Value {
    let u = j.usage.filter(|_| jobfmt::ended(j).is_some()).unwrap_or_default();
    obj([
        ("elapsed", jobfmt::run_secs(j, now_ms).into()),
        ("eligible", secs(j.submit_ms).into()),
        ("end", secs(jobfmt::ended(j).unwrap_or(0)).into()),
        ("start", secs(jobfmt::shown_start(j)).into()),
        ("submission", secs(j.submit_ms).into()),
        ("suspended", 0.into()),
        ("limit", limit(j.time_limit_minutes)),
        ("system", cpu(u.sys_cpu_us)),
        ("user", cpu(u.user_cpu_us)),
        ("total", cpu(u.user_cpu_us.saturating_add(u.sys_cpu_us))),
    ])
}

/// The largest resident set (sacct's MaxRSS), where Slurm's steps carry it:
/// the tasks' peak memory use, in bytes.
fn tres_used(j: &pb::Job) -> Value {
    let max = match j.usage.filter(|u| u.max_rss_kb > 0 && jobfmt::ended(j).is_some()) {
        Some(u) => {
            json!([{ "type": "mem", "name": "", "id": TRES_MEM, "count": u.max_rss_kb.saturating_mul(1024) }])
        }
        None => json!([]),
    };
    json!({ "requested": { "max": max } })
}

/// One step row (`12.batch`, `12.0`) as Slurm's accounting step.
fn step(r: &Row, now_ms: i64) -> Value {
    let (start, end) = (jobfmt::run_start(r), jobfmt::ended(r).unwrap_or(0));
    obj([
        ("step", json!({ "id": r.id(), "name": r.name })),
        ("state", json!([r.job_state().as_str()])),
        ("exit_code", exit_code(r)),
        ("nodes", json!({ "count": r.num_nodes, "range": jobfmt::nodelist(r), "list": r.nodes })),
        ("tasks", json!({ "count": r.ntasks.unwrap_or(1) })),
        (
            "time",
            json!({
                "elapsed": jobfmt::run_secs(r, now_ms), "start": number((start > 0).then(|| secs(start))),
                "end": number((end > 0).then(|| secs(end))), "suspended": 0,
            }),
        ),
        ("tres", tres_used(r)),
    ])
}

/// One job as sacct shows it: Slurm's accounting record, its `steps` the
/// step rows given (none with `-X`).
pub fn accounting(j: &pb::Job, steps: &[Row], now_ms: i64, cluster: Option<&str>) -> Value {
    let spec = j.spec.clone().unwrap_or_default();
    let alloc = if jobfmt::run_start(j) > 0 { j.num_nodes } else { 0 };
    let nodes = if j.nodes.is_empty() { "None assigned".into() } else { jobfmt::nodelist(j) };
    let mut v = obj([
        ("account", j.account.clone().into()),
        ("allocation_nodes", alloc.into()),
        (
            "array",
            json!({
                "job_id": j.array_job_id, "task_id": number(j.array_task_id.map(u64::from)),
                "task": j.array_pending, "limits": { "max": { "running": { "tasks": j.array_throttle } } },
            }),
        ),
        ("comment", json!({ "administrator": "", "job": spec.comment, "system": "" })),
        ("constraints", spec.constraint.clone().into()),
        ("exit_code", exit_code(j)),
        ("group", jobfmt::group_name(j).into()),
        ("job_id", j.id.into()),
        ("licenses", spec.licenses.clone().into()),
        ("name", j.name.clone().into()),
        ("nodes", nodes.into()),
        ("partition", j.partition.clone().into()),
        ("priority", priority(j)),
        ("qos", j.qos.clone().into()),
        (
            "required",
            json!({ "CPUs": j.num_cpus, "memory_per_cpu": given(spec.mem_per_cpu_mb),
                    "memory_per_node": given(spec.mem_mb) }),
        ),
        ("state", json!({ "current": [jobfmt::accounting_state(j).as_str()], "reason": j.reason_text() })),
        ("stderr", spec.stderr_path.clone().into()),
        ("stdout", spec.stdout_path.clone().into()),
        ("steps", steps.iter().map(|r| step(r, now_ms)).collect()),
        ("time", times(j, now_ms)),
        ("user", j.user.clone().into()),
        ("working_directory", spec.workdir.clone().into()),
    ]);
    if let (Some(c), Value::Object(m)) = (cluster, &mut v) {
        m.insert("cluster".into(), c.into());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::JobState;

    #[test]
    fn numbers_limits_and_exit_codes_take_slurms_shapes() {
        assert_eq!(number(Some(3)), json!({ "set": true, "infinite": false, "number": 3 }));
        assert_eq!(limit(None), json!({ "set": false, "infinite": true, "number": 0 }));
        assert_eq!(secs(-5), 0);
        let ended = |exit_code, exit_signal| pb::Job {
            state: spur_proto::states::state_wire(JobState::Failed),
            exit_code,
            exit_signal,
            end_ms: 1,
            ..Default::default()
        };
        // A shell that never started has no code of its own: not a success.
        let never = exit_code(&ended(-1, 0));
        assert_eq!((&never["status"], &never["return_code"]["set"]), (&json!(["INVALID"]), &json!(false)));
        let killed = exit_code(&ended(-1, 15));
        assert_eq!(killed["signal"], json!({ "id": number(Some(15)), "name": "TERM" }));
        let unknown = exit_code(&ended(-1, 63));
        assert_eq!(unknown["signal"]["name"], "", "a signal without a name keeps its number only");
        assert_eq!(exit_code(&ended(7, 0))["return_code"], number(Some(7)));
    }
}
