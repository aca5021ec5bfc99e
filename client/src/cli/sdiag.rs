//! `sdiag` (also `spur diag`): the controller's own figures in Slurm's
//! layout: jobs submitted, started and ended, the scheduler's passes, the
//! backfill's starts, and calls per RPC, since the controller started or an
//! Administrator last ran `sdiag --reset`.
//!
//! Spur's backfill runs inside each scheduler pass, so the backfilling block
//! reports the passes (when backfill is on) and the jobs they started behind
//! a reservation. Slurm's thread, agent and DBD queue figures have no Spur
//! equivalent and print `N/A`; the scheduler- and backfill-exit tables, the
//! gettimeofday latency, per-user RPC figures and pending RPCs are not kept.

use super::cluster;
use super::fmt::status;
use super::getopt::{Mode, Opt, Spec, switch, value};
use crate::conn::{self, Identity};
use chrono::{Local, TimeZone};
use serde_json::{Value, json};
use spur_proto::v1 as pb;

pub const USAGE: &str = "\
usage: sdiag [-ahirtTV] [-M CLUSTER] [--json|--yaml] [--controller URL]
  -a, --all             report the figures (the default)
  -r, --reset           zero the counters (Administrator)
  -i, --sort-by-id      RPCs by id          -t, --sort-by-time   RPCs by total time
  -T, --sort-by-time2   RPCs by mean time   (default: by count)
  -M, --cluster=NAME    this controller's cluster (or 'all')
  --json, --yaml        the figures as JSON (which YAML readers also read)
  -V, --version         Spur's version      -h, --help, --usage   this text";

/// How the RPC lines are ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Sort {
    #[default]
    Count,
    Id,
    Time,
    MeanTime,
}

#[derive(Debug, Clone, Default)]
pub struct Args {
    pub help: bool,
    pub version: bool,
    pub reset: bool,
    pub json: bool,
    pub sort: Sort,
    pub clusters: Vec<String>,
    pub controller: Option<String>,
    /// One line each on stderr: options Slurm has that change nothing here.
    pub warnings: Vec<String>,
}

static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
pub const OPTS: &[Opt<Args>] = &[
    switch("a/all", |a| a.reset = false),
    switch("h/help", |a| a.help = true),
    switch("i/sort-by-id", |a| a.sort = Sort::Id),
    value("M/cluster", |a, v| a.clusters.push(v)),
    value("-/clusters", |a, v| a.clusters.push(v)),
    switch("r/reset", |a| a.reset = true),
    switch("t/sort-by-time", |a| a.sort = Sort::Time),
    switch("T/sort-by-time2", |a| a.sort = Sort::MeanTime),
    switch("-/usage", |a| a.help = true),
    switch("V/version", |a| a.version = true),
    switch("-/json", |a| a.json = true),
    switch("-/yaml", |a| a.json = true),
    value("-/controller", |a, v| a.controller = Some(v)),
];

/// `--json=PARSER` and `--yaml=PARSER` (Slurm's data_parser choice): the
/// flag is kept, its value dropped with a warning, since Spur has one shape.
fn data_parser(argv: &[String], warnings: &mut Vec<String>) -> Vec<String> {
    argv.iter()
        .map(|a| match a.split_once('=') {
            Some((flag @ ("--json" | "--yaml"), parser)) => {
                warnings.push(format!(
                    "sdiag: warning: {flag}={parser}: Spur has one JSON shape; the data_parser is ignored"
                ));
                flag.to_string()
            }
            _ => a.clone(),
        })
        .collect()
}

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    let argv = data_parser(argv, &mut a.warnings);
    FLAGS.parse_flags(&argv, &mut a, "sdiag")?;
    for list in std::mem::take(&mut a.clusters) {
        a.clusters.extend(cluster::parse_list(&list)?);
    }
    Ok(a)
}

/// Slurm's `slurm_ctime2`: `Mon Dec 07 02:20:00 2026`, in local time.
fn ctime(secs: i64) -> String {
    Local
        .timestamp_opt(secs, 0)
        .single()
        .map(|t| t.format("%a %b %d %H:%M:%S %Y").to_string())
        .unwrap_or_default()
}

fn mean(sum: u64, n: u64) -> u64 {
    sum.checked_div(n).unwrap_or(0)
}

/// The RPC lines in the order asked for; ties by id, so the output is stable.
fn sorted(rpcs: &[pb::RpcStat], sort: Sort) -> Vec<&pb::RpcStat> {
    let mut v: Vec<&pb::RpcStat> = rpcs.iter().collect();
    v.sort_by_key(|r| r.id);
    match sort {
        Sort::Id => {}
        Sort::Count => v.sort_by_key(|r| std::cmp::Reverse(r.count)),
        Sort::Time => v.sort_by_key(|r| std::cmp::Reverse(r.total_us)),
        Sort::MeanTime => v.sort_by_key(|r| std::cmp::Reverse(mean(r.total_us, r.count))),
    }
    v
}

/// The figures as sdiag prints them; no I/O.
pub fn render(d: &pb::DiagResponse, sort: Sort) -> String {
    let stars = "*".repeat(55);
    let mut o = format!(
        "{stars}\nsdiag output at {} ({})\nData since      {} ({})\n{stars}\n",
        ctime(d.req_time),
        d.req_time,
        ctime(d.req_time_start),
        d.req_time_start
    );
    o += "Server thread count:  N/A\nRPC queue enabled:    0\nAgent queue size:     N/A\n";
    o += "Agent count:          N/A\nAgent thread count:   N/A\nDBD Agent queue size: N/A\n\n";
    o += &format!(
        "Jobs submitted: {}\nJobs started:   {}\nJobs completed: {}\nJobs canceled:  {}\nJobs failed:    {}\n\n",
        d.jobs_submitted, d.jobs_started, d.jobs_completed, d.jobs_canceled, d.jobs_failed
    );
    o += &format!(
        "Job states ts:  {} ({})\nJobs pending:   {}\nJobs running:   {}\n",
        ctime(d.job_states_ts),
        d.job_states_ts,
        d.jobs_pending,
        d.jobs_running
    );
    let n = d.schedule_cycle_counter;
    o += &format!(
        "\nMain schedule statistics (microseconds):\n\tLast cycle:   {}\n\tMax cycle:    {}\n\tTotal cycles: {n}\n",
        d.schedule_cycle_last, d.schedule_cycle_max
    );
    if n > 0 {
        o += &format!(
            "\tMean cycle:   {}\n\tMean depth cycle:  {}\n",
            mean(d.schedule_cycle_sum, n),
            mean(d.schedule_cycle_depth, n)
        );
    }
    let span = d.req_time - d.req_time_start;
    if span > 60 {
        o += &format!("\tCycles per minute: {}\n", mean(n, u64::try_from(span / 60).unwrap_or(1)));
    }
    o += &format!("\tLast queue length: {}\n", d.schedule_queue_len);
    o += &backfill(d);
    o += "\nRemote Procedure Call statistics by message type\n";
    for r in sorted(&d.rpcs, sort) {
        o += &format!(
            "\t{:<40}({:>5}) count:{:<6} ave_time:{:<6} total_time:{}\n",
            r.name,
            r.id,
            r.count,
            mean(r.total_us, r.count),
            r.total_us
        );
    }
    if d.rpcs.is_empty() {
        o += "\tNo RPCs recorded yet.\n";
    }
    o += "\nRemote Procedure Call statistics by user\n\nPending RPC statistics\n\tNo pending RPCs\n";
    o
}

/// The backfilling block: Spur's backfill is part of every pass, so its cycles are the passes.
fn backfill(d: &pb::DiagResponse) -> String {
    let (n, last, max, sum, depth_sum) = if d.backfill_enabled {
        (
            d.schedule_cycle_counter,
            d.schedule_cycle_last,
            d.schedule_cycle_max,
            d.schedule_cycle_sum,
            d.schedule_cycle_depth,
        )
    } else {
        (0, 0, 0, 0, 0)
    };
    let queue = if d.backfill_enabled { d.schedule_queue_len } else { 0 };
    let mut o = format!(
        "\nBackfilling stats\n\tTotal backfilled jobs (since last slurm start): {}\n\
         \tTotal backfilled jobs (since last stats cycle start): {}\n\
         \tTotal backfilled heterogeneous job components: 0\n\tTotal cycles: {n}\n",
        d.bf_backfilled_jobs, d.bf_last_backfilled_jobs
    );
    o += &match d.bf_when_last_cycle {
        w if w > 0 && n > 0 => format!("\tLast cycle when: {} ({w})\n", ctime(w)),
        _ => "\tLast cycle when: N/A\n".to_string(),
    };
    o += &format!("\tLast cycle: {last}\n\tMax cycle:  {max}\n");
    if n > 0 {
        o += &format!("\tMean cycle: {}\n", mean(sum, n));
    }
    o += &format!("\tLast depth cycle: {queue}\n\tLast depth cycle (try sched): {queue}\n");
    if n > 0 {
        o += &format!("\tDepth Mean: {0}\n\tDepth Mean (try depth): {0}\n", mean(depth_sum, n));
    }
    o += &format!("\tLast queue length: {queue}\n");
    if n > 0 {
        o += &format!("\tQueue length mean: {}\n", mean(depth_sum, n));
    }
    o
}

/// A number as Slurm's data_parser writes one that may be unset.
fn number(v: impl Into<Value>) -> Value {
    json!({ "set": true, "infinite": false, "number": v.into() })
}

/// The figures in the shape of Slurm's `sdiag --json` (`statistics`, `meta`, `errors`, `warnings`).
pub fn to_json(d: &pb::DiagResponse, cluster: Option<&str>) -> String {
    let n = d.schedule_cycle_counter;
    let bf = if d.backfill_enabled { n } else { 0 };
    let rpcs: Vec<Value> = sorted(&d.rpcs, Sort::Id)
        .into_iter()
        .map(|r| {
            json!({ "type_id": r.id, "message_type": r.name, "count": r.count, "queued": 0, "dropped": 0,
                    "cycle_last": 0, "cycle_max": 0, "total_time": r.total_us,
                    "average_time": number(mean(r.total_us, r.count)) })
        })
        .collect();
    // Spur's own: the last hour a minute a line, oldest first (Slurm's sdiag keeps no history).
    let history: Vec<Value> = (d.history.iter())
        .map(|h| {
            json!({ "time": number(h.time), "last_pass": h.last_pass_us, "jobs_started": h.jobs_started,
                    "bf_backfilled_jobs": h.bf_backfilled_jobs, "rpcs_per_second": h.rpcs_per_sec,
                    "jobs_pending": h.jobs_pending, "jobs_running": h.jobs_running })
        })
        .collect();
    let stats = json!({
        "parts_packed": 1,
        "req_time": number(d.req_time), "req_time_start": number(d.req_time_start),
        "jobs_submitted": d.jobs_submitted, "jobs_started": d.jobs_started,
        "jobs_completed": d.jobs_completed, "jobs_canceled": d.jobs_canceled, "jobs_failed": d.jobs_failed,
        "jobs_pending": d.jobs_pending, "jobs_running": d.jobs_running,
        "job_states_ts": number(d.job_states_ts),
        "schedule_cycle_max": d.schedule_cycle_max, "schedule_cycle_last": d.schedule_cycle_last,
        "schedule_cycle_sum": d.schedule_cycle_sum, "schedule_cycle_total": n,
        "schedule_cycle_mean": mean(d.schedule_cycle_sum, n),
        "schedule_cycle_mean_depth": mean(d.schedule_cycle_depth, n),
        "schedule_queue_length": d.schedule_queue_len,
        "bf_backfilled_jobs": d.bf_backfilled_jobs, "bf_last_backfilled_jobs": d.bf_last_backfilled_jobs,
        "bf_backfilled_het_jobs": 0, "bf_cycle_counter": bf, "bf_active": false,
        "bf_when_last_cycle": number(if bf > 0 { d.bf_when_last_cycle } else { 0 }),
        "rpcs_by_message_type": rpcs, "rpcs_by_user": [], "history": history,
    });
    let meta = json!({
        "plugin": { "type": "", "name": "spur", "data_parser": "spur", "accounting_storage": "spur" },
        "slurm": { "cluster": cluster.unwrap_or("") },
        "spur": { "version": env!("CARGO_PKG_VERSION") },
    });
    let out = json!({ "statistics": stats, "meta": meta, "errors": [], "warnings": [] });
    serde_json::to_string_pretty(&out).unwrap_or_default() + "\n"
}

async fn run(a: Args) -> Result<String, String> {
    let mut c = conn::connect_flag(a.controller.as_deref(), Identity::local()).await?;
    let cluster = cluster::resolve(&mut c, &a.clusters).await?;
    if a.reset {
        c.cluster.reset_diag(pb::ResetDiagRequest {}).await.map_err(status)?;
        return Ok("Reset scheduling statistics\n".into());
    }
    let d = c.cluster.diag(pb::DiagRequest {}).await.map_err(status)?.into_inner();
    Ok(if a.json { to_json(&d, cluster.as_deref()) } else { render(&d, a.sort) })
}

/// Runs sdiag with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    let result = match parse(argv) {
        Ok(a) if a.help => Ok(format!("{USAGE}\n")),
        Ok(a) if a.version => Ok(format!("spur {}\n", env!("CARGO_PKG_VERSION"))),
        Ok(a) => {
            a.warnings.iter().for_each(|w| super::output::complain(w));
            run(a).await
        }
        Err(e) => Err(e),
    };
    super::output::finish("sdiag", result)
}
