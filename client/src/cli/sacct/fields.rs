//! sacct's fields: every name of Slurm's sacct.c table (sacct.1's Job
//! Accounting Fields), in its order, with its widths. Spur's own `Borrowed`
//! and `Cost` sit in the alphabet. What Spur does not measure (energy, disk and page
//! counts, virtual memory, CPU frequency) or has no mechanism for (burst
//! buffers, containers, MCS labels, reservations, WCKey ids, BlueGene
//! blocks) is printed blank, as sacct prints a field its database left unset.

use super::super::jobfmt::{self, ended, run_start, shown_start};
use super::super::stepfmt::Row;
use crate::vocab::time::{UNLIMITED, format_limit, format_seconds};
use spur_proto::v1 as pb;

/// One sacct field: Slurm's name, width (negative: left-justified) and value
/// at a time, of a row (a job, or one of its steps shown as one).
pub type Field = (&'static str, i32, fn(&Row, i64) -> String);

const fn f(name: &'static str, width: i32, get: fn(&Row, i64) -> String) -> Field {
    (name, width, get)
}

/// A field Spur keeps no data for: blank, as sacct prints an unset value.
const BLANK: fn(&Row, i64) -> String = |_, _| String::new();

/// In Slurm's (alphabetical) order: a typed prefix picks the first match, as sacct does.
pub const FIELDS: &[Field] = &[
    f("Account", 10, |j, _| j.account.clone()),
    // Spur keeps no administrator's comment (scontrol update has no AdminComment=).
    f("AdminComment", 15, BLANK),
    f("AllocCPUS", 10, |j, _| alloc(j, j.num_cpus)),
    f("AllocNodes", 10, |j, _| alloc(j, j.num_nodes)),
    // Blank while pending, as in Slurm.
    f("AllocTRES", 10, |j, _| if run_start(j) > 0 { jobfmt::tres(j) } else { String::new() }),
    f("AssocID", 7, BLANK),
    // The batch script is the measured task, so its average is its total.
    f("AveCPU", 10, |j, _| usage(j, |u| jobfmt::cpu_time(total_us(u)))),
    f("AveCPUFreq", 10, BLANK),
    f("AveDiskRead", 14, BLANK),
    f("AveDiskWrite", 14, BLANK),
    f("AvePages", 10, BLANK),
    // One task, the batch script, so its average is its peak.
    f("AveRSS", 10, |j, _| usage(j, |u| jobfmt::mem_kb(u.max_rss_kb))),
    f("AveVMSize", 10, BLANK),
    f("BlockID", 16, BLANK),
    // Spur's own (idle-fill): whether the run was lent its nodes past its QOS node cap.
    f("Borrowed", 8, |j, _| if j.borrowed { "yes" } else { "no" }.into()),
    f("Cluster", 10, BLANK),
    f("Comment", 14, |j, _| spec(j).comment.clone()),
    f("Constraints", 19, |j, _| spec(j).constraint.clone()),
    f("ConsumedEnergy", 14, |_, _| "0".into()),
    // Spur's own (slurm provisioner): the run's cost on borrowed nodes so far; the job's row only.
    f("Cost", 10, |j, now| if j.suffix.is_empty() { cost(j, now) } else { String::new() }),
    f("ConsumedEnergyRaw", 17, |_, _| "0".into()),
    f("Container", 19, BLANK),
    f("CPUTime", 10, |j, now| format_seconds(cpu_secs(j, now))),
    f("CPUTimeRAW", 10, |j, now| cpu_secs(j, now).to_string()),
    f("DBIndex", -21, BLANK),
    f("DerivedExitCode", 15, |j, _| jobfmt::derived_exit_code(j)),
    f("Elapsed", 10, |j, now| format_seconds(jobfmt::run_secs(j, now))),
    f("ElapsedRaw", 10, |j, now| jobfmt::run_secs(j, now).to_string()),
    // Eligible from submission, or from --begin when that is later.
    f("Eligible", 19, |j, _| jobfmt::time_or(eligible_ms(j), "Unknown")),
    f("End", 19, |j, _| jobfmt::time_or(ended(j).unwrap_or(0), "Unknown")),
    f("ExitCode", 8, |j, _| jobfmt::exit_code(j)),
    f("Extra", 14, BLANK),
    f("FailedNode", 8, BLANK),
    f("Flags", 19, BLANK),
    // The uid, gid and group the job runs as; empty when the controller has
    // none (plugins none and jwt: the node agent's user), as for steps.
    f("GID", 6, |j, _| j.gid.map(|g| g.to_string()).unwrap_or_default()),
    f("Group", 9, |j, _| jobfmt::group_name(j)),
    f("JobID", -12, |r, _| r.id()),
    f("JobIDRaw", -12, |r, _| r.raw_id()),
    f("JobName", 10, |j, _| j.name.clone()),
    f("Layout", 9, BLANK),
    f("Licenses", 10, |j, _| spec(j).licenses.clone()),
    f("MaxDiskRead", 12, BLANK),
    f("MaxDiskReadNode", 15, BLANK),
    f("MaxDiskReadTask", 15, BLANK),
    f("MaxDiskWrite", 12, BLANK),
    f("MaxDiskWriteNode", 16, BLANK),
    f("MaxDiskWriteTask", 16, BLANK),
    f("MaxPages", 8, BLANK),
    f("MaxPagesNode", 12, BLANK),
    f("MaxPagesTask", 14, BLANK),
    f("MaxRSS", 10, |j, _| usage(j, |u| jobfmt::mem_kb(u.max_rss_kb))),
    // The batch script, task 0, runs on the job's first node.
    f("MaxRSSNode", 10, |j, _| usage_at(j, first_node(j))),
    f("MaxRSSTask", 10, |j, _| usage_at(j, "0".into())),
    f("MaxVMSize", 10, BLANK),
    f("MaxVMSizeNode", 14, BLANK),
    f("MaxVMSizeTask", 14, BLANK),
    f("McsLabel", 12, BLANK),
    f("MinCPU", 10, |j, _| usage(j, |u| jobfmt::cpu_time(total_us(u)))),
    f("MinCPUNode", 10, |j, _| usage_at(j, first_node(j))),
    f("MinCPUTask", 10, |j, _| usage_at(j, "0".into())),
    f("NCPUS", 10, |j, _| alloc(j, j.num_cpus)),
    f("NNodes", 8, |j, _| j.num_nodes.to_string()),
    f("NodeList", 15, |j, _| if j.nodes.is_empty() { "None assigned".into() } else { jobfmt::nodelist(j) }),
    // The batch script is the one task, from the job's start (Slurm's batch step).
    f("NTasks", 8, |r, _| match r.ntasks {
        Some(n) => n.to_string(),
        None if run_start(r) > 0 => "1".into(),
        None => String::new(),
    }),
    f("Partition", 10, |j, _| j.partition.clone()),
    // Time spent eligible but waiting: eligible to start (or now, while pending).
    f("Planned", 10, |j, now| format_seconds(planned_secs(j, now))),
    f("PlannedCPU", 10, |j, now| format_seconds(planned_secs(j, now) * u64::from(j.num_cpus))),
    f("PlannedCPURAW", 13, |j, now| (planned_secs(j, now) * u64::from(j.num_cpus)).to_string()),
    f("Priority", 10, |j, _| jobfmt::priority(j)),
    f("QOS", 10, |j, _| j.qos.clone()),
    f("QOSRAW", 6, BLANK),
    // The QOS asked for at submission (the one given, else the one it got).
    f("QOSREQ", 10, |j, _| Some(spec(j).qos.clone()).filter(|q| !q.is_empty()).unwrap_or(j.qos.clone())),
    f("Reason", 22, |j, _| j.reason_text().to_string()),
    f("ReqCPUFreq", 10, |_, _| "Unknown".into()),
    f("ReqCPUFreqGov", 13, |_, _| "Unknown".into()),
    f("ReqCPUFreqMax", 13, |_, _| "Unknown".into()),
    f("ReqCPUFreqMin", 13, |_, _| "Unknown".into()),
    f("ReqCPUS", 8, |j, _| j.num_cpus.to_string()),
    f("ReqMem", 10, |j, _| {
        j.spec.as_ref().filter(|s| s.mem_mb > 0).map_or("0".into(), |s| format!("{}M", s.mem_mb))
    }),
    f("ReqNodes", 8, |j, _| j.num_nodes.to_string()),
    f("ReqTRES", 10, |j, _| jobfmt::tres(j)),
    f("Reservation", 20, |j, _| spec(j).reservation.clone()),
    f("ReservationId", 8, BLANK),
    f("ReqReservation", 20, BLANK),
    // A preemption's or reclaim's requeue is a restart.
    // Records from before the counter know their kept earlier runs only.
    f("Restarts", 8, |j, _| j.restarts.max(u32::try_from(j.past_runs.len()).unwrap_or(u32::MAX)).to_string()),
    f("SegmentSize", 11, |_, _| "0".into()),
    f("SLUID", 14, BLANK),
    f("Start", 19, |j, _| jobfmt::time_or(shown_start(j), "Unknown")),
    f("State", 10, |j, _| jobfmt::accounting_state(j).as_str().to_string()),
    f("StdErr", 20, |j, _| {
        let s = spec(j);
        jobfmt::expand_path(j, if s.stderr_path.is_empty() { &s.stdout_path } else { &s.stderr_path })
    }),
    f("StdIn", 20, |_, _| "/dev/null".into()),
    f("StdOut", 20, |j, _| jobfmt::expand_path(j, &spec(j).stdout_path)),
    f("Submit", 19, |j, _| jobfmt::time_or(j.submit_ms, "Unknown")),
    // The job's row; Spur keeps no srun line for its steps.
    f("SubmitLine", 20, |j, _| if j.suffix.is_empty() { spec(j).submit_line.clone() } else { String::new() }),
    f("Suspended", 10, |_, _| "00:00:00".into()),
    f("SystemComment", 15, BLANK),
    f("SystemCPU", 10, |j, _| usage(j, |u| jobfmt::cpu_time(u.sys_cpu_us))),
    f("Timelimit", 10, |j, _| format_limit(j.time_limit_minutes)),
    f("TimelimitRaw", 10, |j, _| j.time_limit_minutes.map_or(UNLIMITED.into(), |m| m.to_string())),
    f("TotalCPU", 10, |j, _| usage(j, |u| jobfmt::cpu_time(total_us(u)))),
    // The measured task's CPU time and peak memory; one task, so average,
    // minimum, maximum and total agree. Spur samples no disk I/O (TRESUsageOut*).
    f("TRESUsageInAve", 14, |j, _| usage(j, tres_usage)),
    f("TRESUsageInMax", 14, |j, _| usage(j, tres_usage)),
    f("TRESUsageInMaxNode", 18, |j, _| usage_at(j, tres_pair(&first_node(j)))),
    f("TRESUsageInMaxTask", 18, |j, _| usage_at(j, tres_pair("0"))),
    f("TRESUsageInMin", 14, |j, _| usage(j, tres_usage)),
    f("TRESUsageInMinNode", 18, |j, _| usage_at(j, tres_pair(&first_node(j)))),
    f("TRESUsageInMinTask", 18, |j, _| usage_at(j, tres_pair("0"))),
    f("TRESUsageInTot", 14, |j, _| usage(j, tres_usage)),
    f("TRESUsageOutAve", 15, BLANK),
    f("TRESUsageOutMax", 15, BLANK),
    f("TRESUsageOutMaxNode", 19, BLANK),
    f("TRESUsageOutMaxTask", 19, BLANK),
    f("TRESUsageOutMin", 15, BLANK),
    f("TRESUsageOutMinNode", 19, BLANK),
    f("TRESUsageOutMinTask", 19, BLANK),
    f("TRESUsageOutTot", 15, BLANK),
    f("UID", 6, |j, _| j.uid.map(|u| u.to_string()).unwrap_or_default()),
    f("User", 9, |j, _| j.user.clone()),
    f("UserCPU", 10, |j, _| usage(j, |u| jobfmt::cpu_time(u.user_cpu_us))),
    f("WCKey", 10, |j, _| spec(j).wckey.clone()),
    f("WCKeyID", 10, BLANK),
    f("WorkDir", 20, |j, _| spec(j).workdir.clone()),
];

/// A job with no spec (a purged job's record may carry none) reads an empty one.
static NO_SPEC: std::sync::LazyLock<pb::JobSpec> = std::sync::LazyLock::new(Default::default);

/// The job's spec, or an empty one (a purged job's record may carry none).
fn spec(j: &pb::Job) -> &pb::JobSpec {
    j.spec.as_deref().unwrap_or(&*NO_SPEC)
}

fn total_us(u: &pb::JobUsage) -> u64 {
    u.user_cpu_us.saturating_add(u.sys_cpu_us)
}

/// What the job's processes used, once it ended and its agent measured
/// it: empty before then (and for a job that never ran), as in Slurm.
fn usage(j: &pb::Job, show: fn(&pb::JobUsage) -> String) -> String {
    j.usage.as_ref().filter(|_| ended(j).is_some()).map(show).unwrap_or_default()
}

/// `v` where the job has measured usage (its node or task fields), else blank.
fn usage_at(j: &pb::Job, v: String) -> String {
    if j.usage.is_some() && ended(j).is_some() { v } else { String::new() }
}

fn first_node(j: &pb::Job) -> String {
    j.nodes.first().cloned().unwrap_or_default()
}

/// TRESUsageIn's `cpu=...,mem=...` for what the agent measured.
fn tres_usage(u: &pb::JobUsage) -> String {
    format!("cpu={},mem={}", jobfmt::cpu_time(total_us(u)), jobfmt::mem_kb(u.max_rss_kb))
}

/// A Node or Task variant: where the cpu and mem figures were seen.
fn tres_pair(at: &str) -> String {
    format!("cpu={at},mem={at}")
}

/// Allocated counts are 0 until the job has started, as in Slurm.
fn alloc(j: &pb::Job, n: u32) -> String {
    if run_start(j) > 0 { n.to_string() } else { "0".into() }
}

fn cpu_secs(j: &pb::Job, now: i64) -> u64 {
    jobfmt::run_secs(j, now).saturating_mul(u64::from(j.num_cpus))
}

/// When the job could first start: its submission, or its `--begin`.
fn eligible_ms(j: &pb::Job) -> i64 {
    j.submit_ms.max(spec(j).begin_ms)
}

/// Seconds from eligible to start (to now while it waits); 0 before it is eligible.
fn planned_secs(j: &pb::Job, now: i64) -> u64 {
    let until = match run_start(j) {
        0 if ended(j).is_some() => ended(j).unwrap_or(now),
        0 => now,
        s => s,
    };
    u64::try_from(until.saturating_sub(eligible_ms(j)) / 1000).unwrap_or(0)
}

/// The job's cost on borrowed nodes by `now`: its earlier runs' (the
/// controller's figure), then this run's charge per hour times its elapsed
/// hours (none while it waits CONFIGURING for its nodes to boot).
fn cost(j: &Row, now: i64) -> String {
    let booting = j.job_state() == crate::vocab::JobState::Configuring;
    let secs = if booting { 0 } else { jobfmt::run_secs(j, now) };
    format!("{:.4}", j.cost_before + j.cost_per_hour * secs as f64 / 3600.0)
}
