//! `sstat` (also `spur stat`): what a running job step's tasks use now.
//! The controller asks the agents of the step's nodes, which read each
//! task's processes from `/proc` (StepStats); this side sums the tasks into
//! Slurm's per-step fields (averages, maxima with the node and task that
//! hold them) and prints them in Slurm's print_fields layout.

use super::args::Parsable;
use super::fields::{help_format, parse_columns, prefix, print_fields};
use super::fmt::status;
use super::getopt::{Mode, Opt, Spec, switch, value};
use super::kv::list;
use crate::conn::{self, Identity};
use spur_proto::v1 as pb;

pub const USAGE: &str = "\
usage: sstat [-aehinpPv] -j JOB[.STEP],... [-o FIELDS] [--noconvert] [--controller URL]
  -j, --jobs=JOB[.STEP],...   the steps to report (a job alone: each of its running steps)
  -a, --allsteps      every running step of the jobs given
  -o, --format=F,...  fields (name[%width]); -e, --helpformat lists them
  -i, --pidformat     JobID, Nodelist and Pids only
  -n, --noheader      no header    -p / -P, --parsable / --parsable2   '|' delimited
  --noconvert         sizes in bytes, not K/M/G";

/// Slurm's STAT_FIELDS, sstat's default.
const DEFAULT_FORMAT: &str = "JobID,AllocTRES,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,MaxRSSNode,\
MaxRSSTask,AveRSS,MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,\
AveCPUFreq,ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ConsumedEnergy,MaxDiskRead,MaxDiskReadNode,MaxDiskReadTask,\
AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,TRESUsageInAve,TRESUsageInMax,\
TRESUsageInMaxNode,TRESUsageInMaxTask,TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,\
TRESUsageOutAve,TRESUsageOutMax,TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutMin,TRESUsageOutMinNode,\
TRESUsageOutMinTask,TRESUsageOutTot";

#[derive(Debug, Clone, Default)]
pub struct Args {
    pub help: bool,
    pub helpformat: bool,
    pub version: bool,
    pub allsteps: bool,
    pub noheader: bool,
    pub noconvert: bool,
    pub parsable: Parsable,
    pub jobs: Vec<String>,
    pub format: Vec<String>,
    pub controller: Option<String>,
    pub warnings: Vec<String>,
}

static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
pub const OPTS: &[Opt<Args>] = &[
    switch("a/allsteps", |a| a.allsteps = true),
    value("o/format", |a, v| a.format.push(v)),
    value("-/fields", |a, v| a.format.push(v)),
    switch("h/help", |a| a.help = true),
    switch("e/helpformat", |a| a.helpformat = true),
    value("j/jobs", |a, v| a.jobs.extend(list(&v))),
    switch("-/noconvert", |a| a.noconvert = true),
    switch("n/noheader", |a| a.noheader = true),
    switch("p/parsable", |a| a.parsable = Parsable::Trailing),
    switch("P/parsable2", |a| a.parsable = Parsable::NoTrailing),
    switch("i/pidformat", |a| a.format = vec!["JobID,Nodelist,Pids".into()]),
    switch("-/usage", |a| a.help = true),
    switch("v/verbose", |a| {
        a.warnings.push("sstat: warning: --verbose: sstat has nothing more to say".into())
    }),
    switch("V/version", |a| a.version = true),
    value("-/controller", |a, v| a.controller = Some(v)),
];

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    let words = FLAGS.parse(argv, &mut a)?;
    // Slurm's sstat also takes the job list as its operand.
    a.jobs.extend(words.iter().flat_map(|w| list(w)));
    Ok(a)
}

/// `JOB` or `JOB.STEP`; the batch and extern steps are not sampled here.
pub fn step_ref(s: &str) -> Result<(u64, Option<u32>), String> {
    let (job, step) = s.split_once('.').map_or((s, None), |(j, st)| (j, Some(st)));
    let job = job.parse().map_err(|_| format!("--jobs: '{s}' is not a job id (JOB or JOB.STEP)"))?;
    match step {
        None => Ok((job, None)),
        Some(b @ ("batch" | "extern")) => Err(format!(
            "--jobs: '{s}': Spur samples srun steps only; the {b} step has no tasks to sample (see sacct)"
        )),
        Some(st) => {
            st.parse().map(|n| (job, Some(n))).map_err(|_| format!("--jobs: '{s}' names no step number"))
        }
    }
}

/// One step's figures, summed over its tasks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub job_step: String,
    pub tasks: Vec<pb::TaskUse>,
}

/// Slurm's `convert_num_unit` as sstat calls it (exact): bytes in K/M/G... while that
/// loses nothing (whole, or a half: 1.50M), two decimals when not whole.
pub fn size(bytes: f64, raw: bool) -> String {
    if raw || bytes < 1.0 {
        return format!("{}", bytes as u64);
    }
    let (mut n, mut unit) = (bytes, 0usize);
    while n >= 1024.0 && (n as u64).is_multiple_of(512) && unit < 5 {
        n /= 1024.0;
        unit += 1;
    }
    let u = ["", "K", "M", "G", "T", "P"][unit];
    if n.fract() == 0.0 { format!("{}{u}", n as u64) } else { format!("{n:.2}{u}") }
}

/// sstat's CPU times: `[D-][HH:]MM:SS`, always with minutes.
pub fn cpu_time(usec: u64) -> String {
    let s = usec / 1_000_000;
    let (d, h, m, sec) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    match (d, h) {
        (0, 0) => format!("00:{m:02}:{sec:02}"),
        (0, _) => format!("{h:02}:{m:02}:{sec:02}"),
        _ => format!("{d}-{h:02}:{m:02}:{sec:02}"),
    }
}

type Get = fn(&Row, bool) -> String;

fn mean(r: &Row, f: fn(&pb::TaskUse) -> u64) -> f64 {
    r.tasks.iter().map(|t| f(t) as f64).sum::<f64>() / r.tasks.len().max(1) as f64
}

fn top(r: &Row, f: fn(&pb::TaskUse) -> u64, max: bool) -> Option<&pb::TaskUse> {
    if max { r.tasks.iter().max_by_key(|t| f(t)) } else { r.tasks.iter().min_by_key(|t| f(t)) }
}

macro_rules! ext {
    ($f:expr, $max:expr, $show:expr) => {
        |r: &Row, raw: bool| top(r, $f, $max).map(|t| ($show)(t, raw)).unwrap_or_default()
    };
}

const RSS: fn(&pb::TaskUse) -> u64 = |t| t.max_rss_bytes;
const VM: fn(&pb::TaskUse) -> u64 = |t| t.max_vsize_bytes;
const PAGES: fn(&pb::TaskUse) -> u64 = |t| t.pages;
const READ: fn(&pb::TaskUse) -> u64 = |t| t.read_bytes;
const WRITE: fn(&pb::TaskUse) -> u64 = |t| t.write_bytes;
const CPU: fn(&pb::TaskUse) -> u64 = |t| t.cpu_usec;

/// `(name, width, value)` in Slurm's table order, so a prefix picks as sstat does.
const FIELDS: &[(&str, i32, Get)] = &[
    ("AllocTRES", 10, |_, _| String::new()),
    ("AveCPU", 10, |r, _| cpu_time(mean(r, CPU) as u64)),
    ("AveCPUFreq", 10, |_, _| String::new()),
    ("AveDiskRead", 12, |r, raw| size(mean(r, READ), raw)),
    ("AveDiskWrite", 12, |r, raw| size(mean(r, WRITE), raw)),
    ("AvePages", 10, |r, raw| size(mean(r, PAGES), raw)),
    ("AveRSS", 10, |r, raw| size(mean(r, |t| t.rss_bytes), raw)),
    ("AveVMSize", 10, |r, raw| size(mean(r, |t| t.vsize_bytes), raw)),
    ("ConsumedEnergy", 14, |_, _| "0".into()),
    ("ConsumedEnergyRaw", 17, |_, _| "0".into()),
    ("JobID", -12, |r, _| r.job_step.clone()),
    ("MaxDiskRead", 12, ext!(READ, true, |t: &pb::TaskUse, raw| size(t.read_bytes as f64, raw))),
    ("MaxDiskReadNode", 15, ext!(READ, true, |t: &pb::TaskUse, _| t.node.clone())),
    ("MaxDiskReadTask", 15, ext!(READ, true, |t: &pb::TaskUse, _| t.task.to_string())),
    ("MaxDiskWrite", 12, ext!(WRITE, true, |t: &pb::TaskUse, raw| size(t.write_bytes as f64, raw))),
    ("MaxDiskWriteNode", 16, ext!(WRITE, true, |t: &pb::TaskUse, _| t.node.clone())),
    ("MaxDiskWriteTask", 16, ext!(WRITE, true, |t: &pb::TaskUse, _| t.task.to_string())),
    ("MaxPages", 8, ext!(PAGES, true, |t: &pb::TaskUse, raw| size(t.pages as f64, raw))),
    ("MaxPagesNode", 12, ext!(PAGES, true, |t: &pb::TaskUse, _| t.node.clone())),
    ("MaxPagesTask", 14, ext!(PAGES, true, |t: &pb::TaskUse, _| t.task.to_string())),
    ("MaxRSS", 10, ext!(RSS, true, |t: &pb::TaskUse, raw| size(t.max_rss_bytes as f64, raw))),
    ("MaxRSSNode", 10, ext!(RSS, true, |t: &pb::TaskUse, _| t.node.clone())),
    ("MaxRSSTask", 10, ext!(RSS, true, |t: &pb::TaskUse, _| t.task.to_string())),
    ("MaxVMSize", 10, ext!(VM, true, |t: &pb::TaskUse, raw| size(t.max_vsize_bytes as f64, raw))),
    ("MaxVMSizeNode", 14, ext!(VM, true, |t: &pb::TaskUse, _| t.node.clone())),
    ("MaxVMSizeTask", 14, ext!(VM, true, |t: &pb::TaskUse, _| t.task.to_string())),
    ("MinCPU", 10, ext!(CPU, false, |t: &pb::TaskUse, _| cpu_time(t.cpu_usec))),
    ("MinCPUNode", 10, ext!(CPU, false, |t: &pb::TaskUse, _| t.node.clone())),
    ("MinCPUTask", 10, ext!(CPU, false, |t: &pb::TaskUse, _| t.task.to_string())),
    ("Nodelist", 20, |r, _| {
        let mut n: Vec<&str> = r.tasks.iter().map(|t| t.node.as_str()).collect();
        n.dedup();
        spur_vocab::hostlist::compress(&n)
    }),
    ("NTasks", 8, |r, _| r.tasks.len().to_string()),
    ("Pids", 20, |r, _| r.tasks.iter().map(|t| t.pid.to_string()).collect::<Vec<_>>().join(",")),
    ("ReqCPUFreq", 10, |_, _| String::new()),
    ("ReqCPUFreqMin", 13, |_, _| String::new()),
    ("ReqCPUFreqMax", 13, |_, _| String::new()),
    ("ReqCPUFreqGov", 13, |_, _| String::new()),
    ("TRESUsageInAve", 14, |_, _| String::new()),
    ("TRESUsageInMax", 14, |_, _| String::new()),
    ("TRESUsageInMaxNode", 18, |_, _| String::new()),
    ("TRESUsageInMaxTask", 18, |_, _| String::new()),
    ("TRESUsageInMin", 14, |_, _| String::new()),
    ("TRESUsageInMinNode", 18, |_, _| String::new()),
    ("TRESUsageInMinTask", 18, |_, _| String::new()),
    ("TRESUsageInTot", 14, |_, _| String::new()),
    ("TRESUsageOutAve", 15, |_, _| String::new()),
    ("TRESUsageOutMax", 15, |_, _| String::new()),
    ("TRESUsageOutMaxNode", 19, |_, _| String::new()),
    ("TRESUsageOutMaxTask", 19, |_, _| String::new()),
    ("TRESUsageOutMin", 15, |_, _| String::new()),
    ("TRESUsageOutMinNode", 19, |_, _| String::new()),
    ("TRESUsageOutMinTask", 19, |_, _| String::new()),
    ("TRESUsageOutTot", 15, |_, _| String::new()),
];

/// The rows of one answer: a row per step it names, its tasks in task order.
pub fn rows(r: &pb::StepStatsResponse) -> Vec<Row> {
    r.steps
        .iter()
        .map(|s| Row {
            job_step: s.clone(),
            tasks: r.tasks.iter().filter(|t| format!("{}.{}", t.job_id, t.step_id) == *s).cloned().collect(),
        })
        .collect()
}

/// The table; no I/O.
pub fn render(a: &Args, rows: &[Row]) -> Result<String, String> {
    let spec = if a.format.is_empty() { DEFAULT_FORMAT.to_string() } else { a.format.join(",") };
    let cols = parse_columns(&spec, |n| prefix(FIELDS, |f| f.0, n), "sstat")?;
    let heads: Vec<(&str, i32)> = cols.iter().map(|(f, w)| (f.0, w.unwrap_or(f.1))).collect();
    let cells: Vec<Vec<String>> =
        rows.iter().map(|r| cols.iter().map(|(f, _)| (f.2)(r, a.noconvert)).collect()).collect();
    Ok(print_fields(&heads, &cells, a.parsable, "|", !a.noheader))
}

async fn run(a: Args) -> Result<String, String> {
    if a.jobs.is_empty() {
        return Err("no job given: use -j JOB[.STEP] (sstat reports running steps)".into());
    }
    let refs = a.jobs.iter().map(|j| step_ref(j)).collect::<Result<Vec<_>, _>>()?;
    let mut c = conn::connect_flag(a.controller.as_deref(), Identity::local()).await?;
    let mut all = vec![];
    for (job, step) in refs {
        // A job alone is each of its running steps, with or without -a.
        let req = pb::StepStatsRequest { job_id: job, step_id: step };
        let r = c.steps.step_stats(req).await.map_err(status)?.into_inner();
        for n in &r.missing {
            super::output::complain(&format!(
                "sstat: warning: node {n} did not answer in time; its tasks are left out"
            ));
        }
        all.extend(rows(&r));
    }
    render(&a, &all)
}

/// Runs sstat with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    let result = match parse(argv) {
        Ok(a) if a.help => Ok(format!("{USAGE}\n")),
        Ok(a) if a.helpformat => Ok(help_format(&FIELDS.iter().map(|f| f.0).collect::<Vec<_>>(), 19)),
        Ok(a) if a.version => Ok(format!("spur {}\n", env!("CARGO_PKG_VERSION"))),
        Ok(a) => {
            a.warnings.iter().for_each(|w| super::output::complain(w));
            run(a).await
        }
        Err(e) => Err(e),
    };
    super::output::finish("sstat", result)
}
