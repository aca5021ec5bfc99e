//! The job vocabulary shared by `squeue`, `scancel` and `scontrol show job`:
//! state names (long and compact), job id lists, Slurm's two duration styles,
//! the times and exit code accounting shows, and the `scontrol show job`
//! record (its JSON is `jobjson`'s). Everything here is a pure
//! function of a `pb::Job` and `now`, so the rendering is testable on fake jobs.

use super::fmt::{null, record};
use crate::vocab::hostlist;
use crate::vocab::time::{format_limit, format_seconds};
use crate::vocab::txn::format_time;
use spur_proto::v1 as pb;

use crate::vocab::JobState;
pub use crate::vocab::time::{squeue_secs, squeue_secs_into};
pub use crate::vocab::txn::time_or;

/// Whether a job's state is one `squeue` shows without `-t` ([`JobState::ACTIVE`]).
pub fn is_active(j: &pb::Job) -> bool {
    JobState::ACTIVE.contains(&j.job_state())
}

/// A `-t` list: `None` for `all` (no filter).
pub fn parse_states(list: &str) -> Result<Option<Vec<JobState>>, String> {
    let mut out = vec![];
    for tok in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if tok.eq_ignore_ascii_case("all") {
            return Ok(None);
        }
        let st = JobState::parse(tok)?;
        if !out.contains(&st) {
            out.push(st);
        }
    }
    if out.is_empty() {
        return Err(format!("no job state in '{list}'"));
    }
    Ok(Some(out))
}

/// A job id list, `12,13` or several words; arrays and steps are named as unsupported.
pub fn parse_ids<S: AsRef<str>>(words: &[S]) -> Result<Vec<u64>, String> {
    let mut out = vec![];
    for tok in words.iter().flat_map(|w| w.as_ref().split(',')).map(str::trim).filter(|s| !s.is_empty()) {
        match tok.parse::<u64>() {
            Ok(id) if id > 0 => {
                if !out.contains(&id) {
                    out.push(id);
                }
            }
            _ if tok.contains(['_', '.']) && tok.starts_with(|c: char| c.is_ascii_digit()) => {
                return Err(format!("invalid job id '{tok}' (job arrays and steps do not exist in Spur)"));
            }
            _ => return Err(format!("invalid job id '{tok}'")),
        }
    }
    Ok(out)
}

/// The state job accounting records: a job cancelled by preemption is PREEMPTED.
pub fn accounting_state(j: &pb::Job) -> JobState {
    match j.job_state() {
        JobState::Cancelled if j.preempted_by != 0 => JobState::Preempted,
        s => s,
    }
}

/// A pending (or requeued) job's start and end belong to an earlier run.
pub fn waiting(j: &pb::Job) -> bool {
    j.job_state().waiting()
}

/// The start of the job's current run, as accounting shows it; 0 for none.
pub fn run_start(j: &pb::Job) -> i64 {
    if waiting(j) { 0 } else { j.start_ms }
}

/// The end accounting shows: only a job that has ended has one.
pub fn ended(j: &pb::Job) -> Option<i64> {
    (j.end_ms > 0 && !is_active(j)).then_some(j.end_ms)
}

/// Slurm shows a job that ended without starting (cancelled while pending) as starting when it ended.
pub fn shown_start(j: &pb::Job) -> i64 {
    match run_start(j) {
        0 => ended(j).unwrap_or(0),
        s => s,
    }
}

/// Slurm's `code:signal`: a job killed by signal N is `0:N`.
pub fn exit_code(j: &pb::Job) -> String {
    match exit_signal(j) {
        Some(sig) => format!("0:{sig}"),
        None => format!("{}:0", j.exit_code),
    }
}

/// Slurm's DerivedExitCode: the highest exit code of the job's steps, with
/// the signal of the step that had it; the job's own exit code when it has none.
pub fn derived_exit_code(j: &pb::Job) -> String {
    match j.steps.iter().max_by_key(|s| (s.exit_code, s.signal)) {
        Some(s) if s.signal > 0 && s.exit_code == 0 => format!("0:{}", s.signal),
        Some(s) => format!("{}:{}", s.exit_code, s.signal.max(0)),
        None => exit_code(j),
    }
}

/// The signal that killed a job (or step), as the controller recorded it.
pub fn exit_signal(j: &pb::Job) -> Option<i32> {
    (j.exit_signal > 0).then_some(j.exit_signal)
}

/// Seconds the job has run: none while pending, up to now while running,
/// start to end once it ended.
pub fn run_secs(j: &pb::Job, now_ms: i64) -> u64 {
    if j.start_ms <= 0 || j.job_state() == JobState::Pending {
        return 0;
    }
    let end = if j.end_ms > 0 { j.end_ms } else { now_ms };
    u64::try_from(end.saturating_sub(j.start_ms) / 1000).unwrap_or(0)
}

/// The end a running job is due at (start + limit), or the recorded end.
pub fn end_ms(j: &pb::Job) -> Option<i64> {
    if j.end_ms > 0 {
        return Some(j.end_ms);
    }
    let limit = i64::try_from(j.time_limit_minutes?).ok()?;
    (j.start_ms > 0 && j.job_state() != JobState::Pending)
        .then(|| j.start_ms.saturating_add(limit.saturating_mul(60_000)))
}

/// `%R`: `(Reason)` for jobs waiting or ended by a fault, else the nodes (as Slurm).
pub fn reason_list(j: &pb::Job) -> String {
    if shows_reason(j) { format!("({})", j.reason_text()) } else { nodelist(j) }
}

/// Whether `%R` shows the job's reason rather than its nodes.
pub fn shows_reason(j: &pb::Job) -> bool {
    j.job_state().shows_reason()
}

pub fn nodelist(j: &pb::Job) -> String {
    hostlist::compress(&j.nodes)
}

/// Spur's effective priority is a float with no fixed scale; it is shown
/// rounded, as the whole number Slurm admins expect from `Priority=`.
pub fn priority(j: &pb::Job) -> String {
    whole(j.priority.max(0.0))
}

/// `format!("{x:.0}")` for a listing: the float formatter's exact path is
/// most of sprio's own time over 100,000 jobs. Integers print the same
/// (both round half to even); values past 2^53 go to the formatter.
pub fn whole(x: f64) -> String {
    let mut s = String::new();
    whole_into(&mut s, x);
    s
}

/// [`whole`], appended to `out`: a listing's cell without a String of its own.
pub fn whole_into(out: &mut String, x: f64) {
    use std::fmt::Write;
    // Writing to a String cannot fail.
    let _ = if (0.0..9.0e15).contains(&x) {
        write!(out, "{}", x.round_ties_even() as u64)
    } else {
        write!(out, "{x:.0}")
    };
}

/// `format!("{x:.4}")` for a listing's factors, by the same shortcut. The
/// scaling can round a value just under a half up to it, so one near a
/// half goes to the formatter, which decides on the exact value.
pub fn four_places(x: f64) -> String {
    let mut s = String::new();
    four_places_into(&mut s, x);
    s
}

/// [`four_places`], appended to `out`.
pub fn four_places_into(out: &mut String, x: f64) {
    use std::fmt::Write;
    let scaled = x * 10_000.0;
    let near_half = (scaled.fract() - 0.5).abs() < 1e-4;
    let _ = if (0.0..1.0e7).contains(&x) && !near_half {
        let t = scaled.round() as u64;
        write!(out, "{}.{:04}", t / 10_000, t % 10_000)
    } else {
        write!(out, "{x:.4}")
    };
}

/// sacct's CPU times (TotalCPU, UserCPU, SystemCPU), Slurm's own mix of
/// `[DD-[HH:]]MM:SS.mmm`: milliseconds only under an hour, and `00:MM:SS`
/// when there are none: `00:01.234`, `00:00:05`, `01:02:03`, `1-00:00:00`.
pub fn cpu_time(us: u64) -> String {
    let (secs, ms) = (us / 1_000_000, (us % 1_000_000) / 1000);
    let (d, h, m, s) = (secs / 86400, (secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else if h > 0 {
        format!("{h:02}:{m:02}:{s:02}")
    } else if ms > 0 {
        format!("{m:02}:{s:02}.{ms:03}")
    } else {
        format!("00:{m:02}:{s:02}")
    }
}

/// A size in KiB as sacct prints memory (MaxRSS, AveRSS): Slurm's exact
/// conversion, the largest unit that keeps the value exact to a half:
/// `1234K`, `2M`, `2.50M`, `0`.
pub fn mem_kb(kb: u64) -> String {
    const UNITS: [&str; 6] = ["", "K", "M", "G", "T", "P"];
    if kb == 0 {
        return "0".into();
    }
    // From bytes, as Slurm counts; a float as in Slurm, so no step overflows.
    let mut num = kb as f64 * 1024.0;
    let mut unit = 0;
    while unit + 1 < UNITS.len() && num >= 1024.0 && (num as u64).is_multiple_of(512) {
        num /= 1024.0;
        unit += 1;
    }
    if num.fract() == 0.0 { format!("{num:.0}{}", UNITS[unit]) } else { format!("{num:.2}{}", UNITS[unit]) }
}

/// A stdout/stderr pattern as the job will see it (vocab's one expansion).
pub fn expand_path(j: &pb::Job, p: &str) -> String {
    let node = j.nodes.first().map_or("", String::as_str);
    crate::vocab::jobs::expand_path(
        p,
        &crate::vocab::jobs::PathVars {
            job_id: j.id,
            user: &j.user,
            name: &j.name,
            node,
            array: j.array_task_id.map(|t| (j.array_job_id, t)),
        },
    )
}

/// The job's TRES as Slurm prints them: `cpu=8,mem=2000M,node=2,gres/gpu=4`.
pub fn tres(j: &pb::Job) -> String {
    let spec = j.spec.clone().unwrap_or_default();
    let nodes = u64::from(j.num_nodes.max(1));
    let mut out = format!("cpu={}", j.num_cpus);
    if spec.mem_mb > 0 {
        out += &format!(",mem={}M", spec.mem_mb.saturating_mul(nodes));
    }
    out += &format!(",node={nodes}");
    if spec.gpus_per_node > 0 {
        out += &format!(",gres/gpu={}", u64::from(spec.gpus_per_node).saturating_mul(nodes));
    }
    out
}

/// `UserId=` as Slurm prints it, `alice(1001)`; the name alone for a job
/// with no uid (plugins none and jwt, where it runs as the agent's user).
pub fn user_id(j: &pb::Job) -> String {
    j.uid.map_or_else(|| j.user.clone(), |uid| format!("{}({uid})", j.user))
}

/// `GroupId=`, `alice(1001)`; `(null)` for a job with no gid, as for `user_id`.
pub fn group_id(j: &pb::Job) -> String {
    j.gid.map_or_else(|| null("").into(), |gid| format!("{}({gid})", group_name(j)))
}

/// The job's group: the controller's name for it, else (as the controller
/// names a gid it cannot look up) the number; empty for a job with no gid.
pub fn group_name(j: &pb::Job) -> String {
    match j.gid {
        Some(gid) if j.group.is_empty() => gid.to_string(),
        Some(_) => j.group.clone(),
        None => String::new(),
    }
}

/// `scontrol show job` for one job, in Slurm's order. The pending reason's
/// facts follow the code in parentheses, last on the JobState line: an admin
/// reads them where Slurm puts the reason, and `Reason=(\S+)` still yields
/// just the code for scripts.
pub fn job_record(j: &pb::Job, now_ms: i64, oneliner: bool) -> String {
    let spec = j.spec.clone().unwrap_or_default();
    let mut reason = format!("Reason={}", j.reason_text());
    if !j.reason_facts().is_empty() {
        reason += &format!(" ({})", j.reason_facts());
    }
    let limit = format_limit(j.time_limit_minutes);
    // A pending job's recorded end (from before a requeue) is not its end.
    let end = if j.job_state() == JobState::Pending { None } else { end_ms(j) };
    let (start, end) = (time_or(j.start_ms, "Unknown"), end.map_or("Unknown".into(), format_time));
    let stdout = expand_path(j, &spec.stdout_path);
    let stderr = if spec.stderr_path.is_empty() { stdout.clone() } else { expand_path(j, &spec.stderr_path) };
    let mut lines = vec![
        format!("JobId={}{} JobName={}", j.id, array_fields(j), j.name),
        format!("UserId={} GroupId={}", user_id(j), group_id(j)),
        format!(
            "Priority={} Nice={} Account={} QOS={}",
            priority(j),
            spec.nice,
            null(&j.account),
            null(&j.qos)
        ),
        format!("JobState={} {reason} Dependency={}", j.job_state(), null(&spec.dependency)),
        format!(
            "Requeue={} Restarts={} BatchFlag=1 ExitCode={}",
            u8::from(spec.requeue.unwrap_or(true)),
            j.restarts,
            exit_code(j)
        ),
        format!("RunTime={} TimeLimit={limit}", format_seconds(run_secs(j, now_ms))),
        format!("SubmitTime={}", time_or(j.submit_ms, "Unknown")),
        format!("StartTime={start} EndTime={end}"),
        format!("Partition={}", j.partition),
        format!("ReqNodeList={} ExcNodeList={}", null(&spec.nodelist), null(&spec.exclude)),
        format!("NodeList={}", null(&nodelist(j))),
        format!(
            "NumNodes={} NumCPUs={} NumTasks={} CPUs/Task={}",
            j.num_nodes,
            j.num_cpus,
            spec.ntasks.max(j.num_nodes).max(1),
            spec.cpus_per_task.max(1)
        ),
        format!("TRES={}", tres(j)),
        format!("MinMemoryNode={}", if spec.mem_mb > 0 { format!("{}M", spec.mem_mb) } else { "0".into() }),
        format!(
            "OverSubscribe={} Licenses={} LicensesAlloc={}",
            if spec.exclusive { "NO" } else { "OK" },
            null(&spec.licenses),
            null(&j.licenses_alloc)
        ),
        // The script's path as sbatch read it, without its arguments, as Slurm shows it.
        format!("Command={}", null(&spec.command)),
        format!("SubmitLine={}", null(&spec.submit_line)),
        format!("WorkDir={}", null(&spec.workdir)),
    ];
    if !spec.comment.is_empty() {
        lines.push(format!("Comment={}", spec.comment));
    }
    if !spec.reservation.is_empty() {
        lines.push(format!("Reservation={}", spec.reservation));
    }
    if !spec.annotations.is_empty() {
        lines.push(format!("Annotations={}", annotations(&spec)));
    }
    if j.borrowed || j.reclaims > 0 {
        // Idle-fill: this run was lent its nodes; how often a reclaim took them back.
        lines.push(format!("Borrowed={} Reclaims={}", if j.borrowed { "yes" } else { "no" }, j.reclaims));
    }
    if j.preempted_by != 0 {
        let mode = match j.job_state() {
            JobState::Suspended => "SUSPEND",
            JobState::Cancelled => "CANCEL",
            _ => "REQUEUE",
        };
        lines.push(format!("PreemptedBy={} PreemptMode={mode}", j.preempted_by));
    }
    lines.push(format!("StdErr={}", null(&stderr)));
    lines.push(format!("StdOut={}", null(&stdout)));
    if spec.gpus_per_node > 0 {
        lines.push(format!("TresPerNode=gres/gpu:{}", spec.gpus_per_node));
    }
    lines.extend(extras_lines(&spec));
    record(&lines, oneliner)
}

/// `--annotation`s as scontrol and squeue print them: `k=v,k2=v2`, in the
/// order given; empty when there are none.
pub fn annotations(spec: &pb::JobSpec) -> String {
    pb::KeyValue::join(&spec.annotations, ",")
}

/// ` ArrayJobId=12 ArrayTaskId=3` for an array's record, as scontrol prints it.
fn array_fields(j: &pb::Job) -> String {
    match (j.array_job_id, j.array_task_id) {
        (0, _) => String::new(),
        (a, Some(t)) => format!(" ArrayJobId={a} ArrayTaskId={t}"),
        (a, None) if j.array_throttle > 0 => {
            format!(" ArrayJobId={a} ArrayTaskId={} ArrayTaskThrottle={}", j.array_pending, j.array_throttle)
        }
        (a, None) => format!(" ArrayJobId={a} ArrayTaskId={}", j.array_pending),
    }
}

/// The rarely-set options, in Slurm's spelling, where Slurm prints them
/// (`Features=`, `MailUser=`, ...).
fn extras_lines(spec: &pb::JobSpec) -> Vec<String> {
    let mut out = vec![format!("Features={}", null(&spec.constraint))];
    if spec.mem_per_cpu_mb > 0 {
        out.push(format!("MinMemoryCPU={}M", spec.mem_per_cpu_mb));
    }
    if spec.begin_ms > 0 {
        out.push(format!("EligibleTime={}", format_time(spec.begin_ms)));
    }
    if spec.deadline_ms > 0 {
        out.push(format!("Deadline={}", format_time(spec.deadline_ms)));
    }
    if let Some(m) = spec.time_min_minutes {
        out.push(format!("TimeMin={}", format_limit(Some(m))));
    }
    if spec.ntasks_per_node > 0 {
        out.push(format!("NtasksPerN:B:S:C={}:0:*:*", spec.ntasks_per_node));
    }
    if !spec.mail_type.is_empty() || !spec.mail_user.is_empty() {
        out.push(format!("MailUser={} MailType={}", null(&spec.mail_user), null(&spec.mail_type)));
    }
    if spec.kill_on_invalid_dep {
        // Slurm's spelling, typo included, which scripts match.
        out.push("KillOInInvalidDependent=Yes".into());
    }
    if !spec.signal.is_empty() {
        out.push(format!("Signal={}", spec.signal));
    }
    if !spec.wckey.is_empty() {
        out.push(format!("WCKey={}", spec.wckey));
    }
    if !spec.open_mode.is_empty() {
        out.push(format!("OpenMode={}", spec.open_mode));
    }
    out
}

/// Signal names and numbers live in the vocabulary; scancel and scontrol take them from here.
pub use spur_vocab::signal::parse_signal;

#[cfg(test)]
mod tests {
    use super::{cpu_time, four_places, mem_kb, whole};

    #[test]
    fn cpu_times_are_slurm_s_elapsed_with_milliseconds_under_an_hour() {
        for (us, want) in [
            (0, "00:00:00"),
            (500, "00:00:00"),
            (1_234_000, "00:01.234"),
            (5_000_000, "00:00:05"),
            (65_001_999, "01:05.001"),
            (3_723_000_000, "01:02:03"),
            (3_723_456_789, "01:02:03"),
            (86_400_000_000, "1-00:00:00"),
            (90_061_500_000, "1-01:01:01"),
            (u64::MAX, "213503982-08:01:49"),
        ] {
            assert_eq!(cpu_time(us), want, "{us}");
        }
    }

    #[test]
    fn memory_takes_the_largest_exact_unit() {
        for (kb, want) in [
            (0, "0"),
            (1, "1K"),
            (1234, "1234K"),
            (1024, "1M"),
            (1536, "1.50M"),
            (2560, "2.50M"),
            (1025, "1025K"),
            (4 * 1024 * 1024, "4G"),
            (3 * 1024 * 1024 * 1024 * 1024, "3P"),
            (2048 * 1024 * 1024 * 1024 * 1024, "2048P"),
        ] {
            assert_eq!(mem_kb(kb), want, "{kb}");
        }
        assert!(!mem_kb(u64::MAX).is_empty());
    }

    #[test]
    fn the_shortcuts_print_what_the_formatter_prints() {
        // Priorities and factors as the controller makes them: products of
        // a base, fair share in (0, 10], age in [1, 2] and a tier.
        let mut x = 0.137_f64;
        for i in 0..200_000u64 {
            x = (x * 1.618_033_988_7 + 0.001 * (i % 97) as f64) % 10.0;
            for v in [x, x * 1000.0, 1000.0 + (i % 500) as f64 * x, (i as f64) + 0.5, i as f64 * 0.25] {
                assert_eq!(whole(v), format!("{v:.0}"), "{v:?}");
                assert_eq!(four_places(v), format!("{v:.4}"), "{v:?}");
            }
        }
        for v in [0.0, 2.5, 3.5, 1e16, 1e12 + 0.5, 123.456_75] {
            assert_eq!(whole(v), format!("{v:.0}"), "{v:?}");
            assert_eq!(four_places(v), format!("{v:.4}"), "{v:?}");
        }
    }
}
