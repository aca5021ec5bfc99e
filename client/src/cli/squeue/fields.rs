//! squeue's fields: every `-o` letter and `-O` name of Slurm's squeue.1,
//! with Slurm's headers. A field Spur has the data for prints it as Slurm
//! does; one it has no mechanism for (burst buffers, containers, MCS labels,
//! federation, heterogeneous jobs, boards and sockets) prints what Slurm
//! prints when the value is unset: `(null)` for text, `N/A` for times and
//! counts, as Slurm's `_print_str(NULL)` and `_print_time(0)` do.

use crate::cli::fmt::null;
use crate::cli::jobfmt::{self, squeue_secs};
use crate::vocab::time::UNLIMITED;
use spur_proto::v1 as pb;

/// `(letter, -O name, header)`; a name without a letter of its own is in [`NAMED`].
pub(crate) const FIELDS: &[(char, &str, &str)] = &[
    ('i', "JobArrayID", "JOBID"),
    ('A', "JobID", "JOBID"),
    ('j', "Name", "NAME"),
    ('u', "UserName", "USER"),
    ('U', "UserID", "UID"),
    ('G', "GroupID", "GROUP"),
    ('g', "GroupName", "GROUP"),
    ('a', "Account", "ACCOUNT"),
    ('q', "QOS", "QOS"),
    ('P', "Partition", "PARTITION"),
    ('p', "Priority", "PRIORITY"),
    ('Q', "PriorityLong", "PRIORITY"),
    ('t', "StateCompact", "ST"),
    ('T', "State", "STATE"),
    ('N', "NodeList", "NODELIST"),
    ('r', "Reason", "REASON"),
    ('R', "ReasonList", "NODELIST(REASON)"),
    ('M', "TimeUsed", "TIME"),
    ('l', "TimeLimit", "TIME_LIMIT"),
    ('L', "TimeLeft", "TIME_LEFT"),
    ('D', "NumNodes", "NODES"),
    ('C', "NumCPUs", "CPUS"),
    ('S', "StartTime", "START_TIME"),
    ('V', "SubmitTime", "SUBMIT_TIME"),
    ('e', "EndTime", "END_TIME"),
    ('k', "Comment", "COMMENT"),
    // Idle-fill's spec gives %W to BORROWED (Slurm's %W is licenses, still `-O Licenses`).
    ('W', "Borrowed", "BORROWED"),
    (LICENSES, "Licenses", "LICENSES"),
    (ANNOTATIONS, "Annotations", "ANNOTATIONS"),
    ('b', "tres-per-node", "TRES_PER_NODE"),
    ('m', "MinMemory", "MIN_MEMORY"),
    ('Z', "WorkDir", "WORK_DIR"),
    ('x', "ExcNodes", "EXC_NODES"),
    ('n', "ReqNodes", "REQ_NODES"),
    ('h', "OverSubscribe", "OVER_SUBSCRIBE"),
    ('F', "ArrayJobID", "ARRAY_JOB_ID"),
    ('K', "ArrayTaskID", "ARRAY_TASK_ID"),
    ('B', "BatchHost", "EXEC_HOST"),
    ('c', "MinCpus", "MIN_CPUS"),
    ('d', "MinTmpDisk", "MIN_TMP_DISK"),
    ('E', "Dependency", "DEPENDENCY"),
    ('f', "Feature", "FEATURES"),
    ('H', "Sockets", "SOCKETS_PER_NODE"),
    ('I', "Cores", "CORES_PER_SOCKET"),
    ('J', "Threads", "THREADS_PER_CORE"),
    ('o', "Command", "COMMAND"),
    ('O', "Contiguous", "CONTIGUOUS"),
    ('v', "Reservation", "RESERVATION"),
    ('w', "WCKey", "WCKEY"),
    ('X', "CoreSpec", "CORE_SPEC"),
    ('y', "Nice", "NICE"),
    ('Y', "SchedNodes", "SCHEDNODES"),
    ('z', "SCT", "S:C:T"),
];

/// Slurm's other spellings of a field (hidden in its tables, or kept for old scripts).
const ALIASES: &[(&str, &str)] = &[
    ("CPUsPerTask", "cpus-per-task"),
    ("Gres", "tres-per-node"),
    ("Shared", "OverSubscribe"),
    ("Tres", "tres-alloc"),
    ("PackJobId", "HetJobID"),
    ("PackJobIdSet", "HetJobIDSet"),
    ("PackJobOffset", "HetJobOffset"),
];

/// `-O Licenses`: a code no `%` format can name, since idle-fill took `%W`.
pub(crate) const LICENSES: char = '\u{2113}';

/// `-O Annotations` (`--annotation`): Slurm has no letter for it.
pub(crate) const ANNOTATIONS: char = '\u{3b1}';

/// A field of [`NAMED`]: its `-O` name, header and value.
type Named = (&'static str, &'static str, fn(&pb::Job, &pb::JobSpec, i64) -> String);

/// The code of `NAMED[i]`: past every letter, in a private-use plane.
const NAMED_BASE: u32 = 0xF_0000;

const NA: fn(&pb::Job, &pb::JobSpec, i64) -> String = |_, _, _| "N/A".into();
const NULL: fn(&pb::Job, &pb::JobSpec, i64) -> String = |_, _, _| "(null)".into();

/// The `-O` fields Slurm gives no letter. Those Spur keeps no data for
/// print Slurm's unset value (`NA`, `NULL`, or the count Slurm prints).
const NAMED: &[Named] = &[
    // When its age starts to count: its submission, or --begin if later.
    ("AccrueTime", "ACCRUE_TIME", |j, s, _| jobfmt::time_or(j.submit_ms.max(s.begin_ms), "N/A")),
    ("admin_comment", "ADMIN_COMMENT", NULL),
    ("AllocNodes", "ALLOC_NODES", NULL),
    ("AllocSID", "ALLOC_SID", |_, _, _| "0".into()),
    ("AssocID", "ASSOC_ID", |_, _, _| "0".into()),
    ("BatchFlag", "BATCH_FLAG", |_, s, _| if s.allocation { "0" } else { "1" }.into()),
    ("BoardsPerNode", "BOARDS_PER_NODE", NA),
    ("BurstBuffer", "BURST_BUFFER", NULL),
    ("BurstBufferState", "BURST_BUFFER_STATE", NULL),
    ("Cluster", "CLUSTER", NULL),
    ("ClusterFeature", "CLUSTER_FEATURES", NULL),
    ("Container", "CONTAINER", NULL),
    ("ContainerID", "CONTAINERID", NULL),
    ("CPUFreq", "CPU_FREQ", NA),
    ("cpus-per-task", "CPUS_PER_TASK", |_, s, _| s.cpus_per_task.max(1).to_string()),
    ("cpus-per-tres", "CPUS_PER_TRES", NA),
    ("CronJob", "CRON_JOB", |_, _, _| "No".into()),
    ("Deadline", "DEADLINE", |_, s, _| jobfmt::time_or(s.deadline_ms, "N/A")),
    ("DelayBoot", "DELAY_BOOT", |_, _, _| "00:00:00".into()),
    ("DerivedEC", "DERIVED_EC", |j, _, _| jobfmt::derived_exit_code(j)),
    ("EligibleTime", "ELIGIBLE_TIME", |j, s, _| jobfmt::time_or(j.submit_ms.max(s.begin_ms), "N/A")),
    ("exit_code", "EXIT_CODE", |j, _, _| jobfmt::exit_code(j)),
    ("HetJobID", "HET_JOB_ID", NA),
    ("HetJobIDSet", "HET_JOB_ID_SET", NA),
    ("HetJobOffset", "HET_JOB_OFFSET", NA),
    ("LastSchedEval", "LAST_SCHED_EVAL", NA),
    ("LicensesAlloc", "LICENSES_ALLOC", |j, _, _| null(&j.licenses_alloc).into()),
    ("MaxCPUs", "MAX_CPUS", |j, _, _| j.num_cpus.to_string()),
    ("MaxNodes", "MAX_NODES", |j, _, _| j.num_nodes.to_string()),
    ("MCSLabel", "MCSLABEL", NULL),
    ("mem-per-tres", "MEM_PER_TRES", NA),
    ("MinTime", "TIME_MIN", |_, s, _| s.time_min_minutes.map_or("0:00".into(), |m| squeue_secs(m * 60))),
    ("Network", "NETWORK", NULL),
    ("Nodes", "NODELIST", |j, _, _| jobfmt::nodelist(j)),
    ("NTPerBoard", "NTASKS_PER_BOARD", NA),
    ("NTPerCore", "NTASKS_PER_CORE", NA),
    ("NTPerNode", "NTASKS_PER_NODE", |_, s, _| match s.ntasks_per_node {
        0 => "N/A".into(),
        n => n.to_string(),
    }),
    ("NTPerSocket", "NTASKS_PER_SOCKET", NA),
    ("NumTasks", "TASKS", |j, s, _| s.ntasks.max(j.num_nodes).max(1).to_string()),
    ("Origin", "ORIGIN", |_, _, _| "NA".into()),
    ("OriginRaw", "ORIGIN_RAW", |_, _, _| "NA".into()),
    ("PendingTime", "PENDING_TIME", |j, _, now| pending_secs(j, now).to_string()),
    ("PreemptTime", "PREEMPT_TIME", |_, _, _| "NOT_SET".into()),
    ("Prefer", "PREFER", NULL),
    ("Profile", "PROFILE", |_, _, _| "NotSet".into()),
    ("Reboot", "REBOOT", |_, _, _| "0".into()),
    ("ReqSwitch", "REQ_SWITCH", |_, _, _| "0".into()),
    ("Requeue", "REQUEUE", |_, s, _| u8::from(s.requeue.unwrap_or(true)).to_string()),
    ("ResizeTime", "RESIZE_TIME", NA),
    // A preemption's requeue is a restart; the runs it ended are the job's past runs.
    ("RestartCnt", "RESTART_COUNT", |j, _, _| j.past_runs.len().to_string()),
    ("ResvPort", "RESV_PORT", NA),
    ("SegmentSize", "SEGMENT_SIZE", NA),
    ("SiblingsActive", "ACTIVE_SIBLINGS", |_, _, _| "NA".into()),
    ("SiblingsActiveRaw", "ACTIVE_SIBLINGS_RAW", |_, _, _| "NA".into()),
    ("SiblingsViable", "VIABLE_SIBLINGS", |_, _, _| "NA".into()),
    ("SiblingsViableRaw", "VIALBLE_SIBLINGS_RAW", |_, _, _| "NA".into()),
    ("SPerBoard", "SOCKETS_PER_BOARD", NA),
    ("STDERR", "STDERR", |j, s, _| {
        let p = if s.stderr_path.is_empty() { &s.stdout_path } else { &s.stderr_path };
        stdio(j, p)
    }),
    ("STDIN", "STDIN", |_, _, _| "/dev/null".into()),
    ("STDOUT", "STDOUT", |j, s, _| stdio(j, &s.stdout_path)),
    // Step fields (`squeue -s -O`): a job row has no step.
    ("StepID", "STEPID", NA),
    ("StepName", "NAME", NA),
    ("StepState", "STATE", NA),
    ("system_comment", "SYSTEM_COMMENT", NULL),
    ("tres-alloc", "TRES_ALLOC", |j, _, _| if j.start_ms > 0 { jobfmt::tres(j) } else { "N/A".into() }),
    ("tres-bind", "TRES_BIND", NA),
    ("tres-freq", "TRES_FREQ", NA),
    ("tres-per-job", "TRES_PER_JOB", |_, s, _| match s.gpus_total {
        0 => "N/A".into(),
        n => format!("gres/gpu:{n}"),
    }),
    ("tres-per-socket", "TRES_PER_SOCKET", NA),
    ("tres-per-step", "TRES_PER_STEP", NA),
    ("tres-per-task", "TRES_PER_TASK", |_, s, _| match s.gpus_per_task {
        0 => "N/A".into(),
        n => format!("gres/gpu:{n}"),
    }),
    ("Wait4Switch", "WAIT4SWITCH", |_, _, _| "00:00:00".into()),
];

/// The code of a `-O` name, any case (Slurm compares them whole, not as prefixes).
pub fn code_of(name: &str) -> Option<char> {
    let name = ALIASES.iter().find(|a| a.0.eq_ignore_ascii_case(name)).map_or(name, |a| a.1);
    if let Some(f) = FIELDS.iter().find(|f| f.1.eq_ignore_ascii_case(name)) {
        return Some(f.0);
    }
    let i = NAMED.iter().position(|f| f.0.eq_ignore_ascii_case(name))?;
    char::from_u32(NAMED_BASE + i as u32)
}

/// Whether `%code` is a field.
pub fn known(code: char) -> bool {
    FIELDS.iter().any(|f| f.0 == code) || named(code).is_some()
}

fn named(code: char) -> Option<&'static Named> {
    NAMED.get((code as u32).checked_sub(NAMED_BASE)? as usize)
}

/// Letters whose value the brief listing carries; any other field needs the
/// job's full record (its spec, uid, gid, group, steps).
const BRIEF_CODES: &str = "iAjuaqPpQtTNrRMlLDCSVeWFKB";

/// Whether printing `code` needs the full view rather than the brief one.
pub fn needs_full(code: char) -> bool {
    !BRIEF_CODES.contains(code)
}

pub fn header(code: char) -> &'static str {
    match named(code) {
        Some(n) => n.1,
        None => FIELDS.iter().find(|f| f.0 == code).map_or("", |f| f.2),
    }
}

/// One field of one job.
pub fn cell(code: char, j: &pb::Job, now_ms: i64) -> String {
    let mut s = String::new();
    cell_into(&mut s, code, j, now_ms);
    s
}

/// [`cell`] appended to `buf`: the columns of squeue's default format are
/// written without a String of their own, 100,000 jobs times six cells.
pub fn cell_into(buf: &mut String, code: char, j: &pb::Job, now_ms: i64) {
    use std::fmt::Write;
    if let Some(s) = text(code, j) {
        buf.push_str(s);
        return;
    }
    // Writing to a String cannot fail.
    let _ = match code {
        'i' if j.array_job_id == 0 => write!(buf, "{}", j.id),
        'i' => buf.write_str(&j.display_id()),
        'A' => write!(buf, "{}", j.id),
        't' => buf.write_str(j.job_state().code()),
        'M' => jobfmt::squeue_secs_into(buf, jobfmt::run_secs(j, now_ms)),
        'D' => write!(buf, "{}", j.num_nodes),
        'C' => write!(buf, "{}", j.num_cpus),
        'R' if jobfmt::shows_reason(j) => write!(buf, "({})", j.reason_text()),
        'r' => buf.write_str(&j.reason_text()),
        _ => buf.write_str(&other_cell(code, j, now_ms)),
    };
}

/// The cells that are cold or need the spec.
fn other_cell(code: char, j: &pb::Job, now_ms: i64) -> String {
    let none;
    let spec = match &j.spec {
        Some(s) => s,
        None => {
            none = pb::JobSpec::default();
            &none
        }
    };
    if let Some(n) = named(code) {
        return (n.2)(j, spec, now_ms);
    }
    let limit = |f: &dyn Fn(u64) -> u64| j.time_limit_minutes.map_or(UNLIMITED.into(), |m| squeue_secs(f(m)));
    match code {
        'p' | 'Q' => jobfmt::priority(j),
        'F' => {
            if j.array_job_id == 0 {
                j.id.to_string()
            } else {
                j.array_job_id.to_string()
            }
        }
        'K' => match (j.array_job_id, j.array_task_id) {
            (0, _) => "N/A".into(),
            (_, Some(t)) => t.to_string(),
            (_, None) if j.array_throttle > 0 => format!("{}%{}", j.array_pending, j.array_throttle),
            (_, None) => j.array_pending.clone(),
        },
        'N' => jobfmt::nodelist(j),
        'R' => jobfmt::reason_list(j),
        'l' => limit(&|m| m.saturating_mul(60)),
        'L' => limit(&|m| m.saturating_mul(60).saturating_sub(jobfmt::run_secs(j, now_ms))),
        'S' => jobfmt::time_or(j.start_ms, "N/A"),
        'V' => jobfmt::time_or(j.submit_ms, "N/A"),
        'e' => jobfmt::time_or(jobfmt::end_ms(j).unwrap_or(0), "N/A"),
        'k' => null(&spec.comment).into(),
        LICENSES => null(&spec.licenses).into(),
        ANNOTATIONS => null(&jobfmt::annotations(spec)).into(),
        'W' => if j.borrowed { "yes" } else { "no" }.into(),
        'b' if spec.gpus_per_node > 0 => format!("gres/gpu:{}", spec.gpus_per_node),
        'b' => "N/A".into(),
        'm' if spec.mem_mb > 0 => format!("{}M", spec.mem_mb),
        'm' => "0".into(),
        'Z' => null(&spec.workdir).into(),
        'x' => spec.exclude.clone(),
        'n' => spec.nodelist.clone(),
        'h' => if spec.exclusive { "NO" } else { "OK" }.into(),
        // None under plugins none and jwt, where the job runs as the agent's user.
        'U' => j.uid.map_or("N/A".into(), |u| u.to_string()),
        'G' => j.gid.map_or("N/A".into(), |g| g.to_string()),
        'g' if j.gid.is_some() => jobfmt::group_name(j),
        'g' => "N/A".into(),
        // The batch script runs on the job's first node.
        'B' => j.nodes.first().filter(|_| j.start_ms > 0).map_or("n/a".into(), Clone::clone),
        'c' => spec.cpus_per_task.max(1).saturating_mul(spec.ntasks_per_node.max(1)).to_string(),
        'd' => "0".into(),
        'E' => null(&spec.dependency).into(),
        'f' => null(&spec.constraint).into(),
        'H' | 'I' | 'J' => "*".into(),
        'z' => "*:*:*".into(),
        // The script's path as sbatch read it; (null) for --wrap and stdin scripts.
        'o' => null(&spec.command).into(),
        'O' => "0".into(),
        'v' => null(&spec.reservation).into(),
        'w' => null(&spec.wckey).into(),
        'X' => "N/A".into(),
        'y' => spec.nice.to_string(),
        'Y' => "(null)".into(),
        _ => String::new(),
    }
}

/// The fields that are a job's own text, borrowed: sorting 100,000 jobs by
/// partition then compares without allocating.
pub(crate) fn text(code: char, j: &pb::Job) -> Option<&str> {
    Some(match code {
        'j' => &j.name,
        'u' => &j.user,
        'a' => null(&j.account),
        'q' => null(&j.qos),
        'P' => &j.partition,
        'T' => j.job_state().as_str(),
        _ => return None,
    })
}

/// Seconds from submission to start, or to now while it waits (Slurm's PendingTime).
fn pending_secs(j: &pb::Job, now_ms: i64) -> i64 {
    let until = if j.start_ms > 0 && j.start_ms < now_ms { j.start_ms } else { now_ms };
    if j.submit_ms <= 0 { 0 } else { (until - j.submit_ms).max(0) / 1000 }
}

/// A stdout/stderr path with its patterns expanded, as Slurm prints it; `(null)` for none.
fn stdio(j: &pb::Job, pattern: &str) -> String {
    if pattern.is_empty() {
        return "(null)".into();
    }
    jobfmt::expand_path(j, pattern)
}
