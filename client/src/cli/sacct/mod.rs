//! `sacct` (also `spur acct`): accounting for jobs, read from the controller:
//! its jobs in memory and, with ListJobs `history=yes`, the ended jobs it has
//! purged from memory after MinJobAge, which its store keeps. Selection follows Slurm: the
//! caller's own jobs unless `-a`, `-u` or `-j` (or when run as root), and
//! Slurm's default time window (midnight to now; epoch with `-j`; the instant
//! `now` with `-s`). With `-s`, a job is chosen by the state it was in during
//! the window, so `-s R` also finds jobs that ran and have since ended.
//!
//! The table is Slurm's print_fields layout byte for byte (fixed widths, a
//! dashed rule, a space after every field, `+` marking a cut value, positive
//! widths right-justified), because scripts written against real sacct slice
//! its columns; the layout itself is `cli::fields`, which `sshare` shares.

mod fields;

use super::kv::list;

use super::args::Parsable;
use super::cluster;
use super::fields::{help_format, parse_columns, prefix, print_fields};
use super::fmt::status;
use super::getopt::{Mode, Opt, Spec, check, switch, value};
use super::jobfmt::{self, ended, run_start, waiting};
use super::jobjson;
use super::stepfmt::{self, Row};
use crate::conn::{self, Identity};
use crate::vocab::JobState;
use crate::vocab::array::{JobRef, StepRef, parse_refs};
use crate::vocab::time::Lean;
use chrono::{DateTime, Local};
use spur_proto::v1 as pb;

pub const USAGE: &str = "\
usage: sacct [-abnpPX] [-j ID,...] [-u USER,...] [-A ACCOUNT,...] [-r PARTITION,...] [-q QOS,...]
             [-s STATE,...] [-S TIME] [-E TIME] [-o FIELDS] [--name NAME,...] [--delimiter C] [--json]
             [-M CLUSTER,...]
  -j, --jobs=ID,...     these jobs (of any user; the window starts at the epoch)
  -u, --user=U,... / -a, --allusers   these users' jobs / everyone's (default: your own; root: all)
  -A, --accounts  -r, --partition  -q, --qos  --name   comma lists
  -S, --starttime=TIME  -E, --endtime=TIME   the window: YYYY-MM-DD[THH:MM[:SS]], MMDD[YY],
                        MM/DD[/YY][-HH:MM[:SS]], HH:MM[:SS] (today's), today, midnight (today's), noon,
                        now[-N[seconds|minutes|hours|days|weeks]]; a date without a year is the last one.
                        Default midnight..now; with -j the epoch..now; with -s the instant -S (default
                        now), so -s CD needs -S to find anything, as in Slurm
  -s, --state=S,...     PD R S CD CA F TO NF PR OOM ... (or long names): PD/R match jobs pending/running
                        at some time in the window, ended states match jobs that ended in it
  -o, --format=FIELDS   name[%width],...; a negative width left-justifies (default
                        JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode; SACCT_FORMAT overrides);
                        every field of Slurm's sacct, by prefix; what Spur does not measure or have
                        (energy, disk, pages, VMSize, CPU frequency, reservations, MCS) prints blank
  -b, --brief           JobID,State,ExitCode         -e, --helpformat   list the fields
  -n, --noheader        no header                    -X, --allocations  the jobs alone, not their steps
  -D, --duplicates      also the runs a preemption or idle-fill reclaim requeued (State PREEMPTED)
  -j ID.STEP, ID.batch  one step of a job: srun's N, or the batch script
  -p, --parsable / -P, --parsable2   '|' delimited, with / without a trailing '|'; --delimiter=C
  -B, --batch-script / --env-vars   refused: Spur keeps no script or environment of a purged job
  --json / --yaml       the selected jobs as JSON / YAML in Slurm's shape (jobs, meta, errors; -o is
                        ignored)
  -M, --clusters=NAME,...   this controller's cluster (or all); any other name is an error
ExitCode is code:signal; a job killed by signal N shows 0:N, one whose shell never started -1:0.";

static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
const OPTS: &[Opt<Args>] = &[
    switch("a/allusers", |a| a.all_users = true),
    value("A/accounts", |a, v| a.accounts.extend(list(&v))),
    switch("B/batch-script", |a| a.kept_nowhere.push("--batch-script")),
    switch("b/brief", |a| a.format.push(BRIEF_FORMAT.into())),
    switch("D/duplicates", |a| a.duplicates = true),
    switch("e/helpformat", |a| a.helpformat = true),
    value("E/endtime", |a, v| a.end = Some(v)),
    switch("h/help", |a| a.help = true),
    check("j/jobs", |a, v| jobs(a, &v).map_err(|e| format!("--jobs: {e}"))),
    switch("n/noheader", |a| a.noheader = true),
    value("o/format", |a, v| a.format.push(v)),
    switch("p/parsable", |a| a.parsable = Parsable::Trailing),
    switch("P/parsable2", |a| a.parsable = Parsable::NoTrailing),
    value("q/qos", |a, v| a.qos.extend(list(&v))),
    value("r/partition", |a, v| a.partitions.extend(list(&v))),
    // `all` (squeue's word) means no state test.
    check("s/state", |a, v| {
        let states = jobfmt::parse_states(&v).map_err(|e| format!("--state: {e}"))?;
        a.states.extend(states.into_iter().flatten());
        Ok(())
    }),
    value("S/starttime", |a, v| a.start = Some(v)),
    value("u/user", user),
    switch("X/allocations", |a| a.allocations = true),
    value("-/delimiter", |a, v| a.delimiter = Some(v)),
    switch("-/env-vars", |a| a.kept_nowhere.push("--env-vars")),
    switch("-/json", |a| a.json = true),
    switch("-/yaml", |a| (a.json, a.yaml) = (true, true)),
    value("-/name", |a, v| a.names.extend(list(&v))),
    value("-/controller", |a, v| a.controller = Some(v)),
    switch("-/usage", |a| a.help = true),
    check("M/clusters", |a, v| cluster::parse_list(&v).map(|n| a.clusters.extend(n))),
];

pub const DEFAULT_FORMAT: &str = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";
const BRIEF_FORMAT: &str = "JobID,State,ExitCode";

/// States after which a job has a real end (Slurm's "ended in the window" states).
const ENDED: &[JobState] = &[
    JobState::Completed,
    JobState::Cancelled,
    JobState::Failed,
    JobState::Timeout,
    JobState::NodeFail,
    JobState::Preempted,
    JobState::BootFail,
    JobState::Deadline,
    JobState::OutOfMemory,
    JobState::Requeued,
    JobState::Resizing,
    JobState::Revoked,
];

pub use fields::{FIELDS, Field};
pub use jobfmt::exit_code;

#[derive(Debug, Clone, Default)]
pub struct Args {
    pub help: bool,
    pub helpformat: bool,
    pub json: bool,
    /// `--yaml`: the `--json` document in YAML.
    pub yaml: bool,
    pub noheader: bool,
    pub parsable: Parsable,
    pub delimiter: Option<String>,
    pub all_users: bool,
    pub users: Vec<String>,
    pub jobs: Vec<u64>,
    /// `-j 12.0`, `-j 12.batch`: the steps asked for, by job; a job named whole has none.
    pub only: Vec<(u64, StepRef)>,
    /// `-X`: the jobs' own rows, not their steps'.
    pub allocations: bool,
    /// `-D`: the earlier runs of requeued jobs too, as Slurm lists a requeued job's runs.
    pub duplicates: bool,
    pub accounts: Vec<String>,
    pub partitions: Vec<String>,
    pub qos: Vec<String>,
    pub names: Vec<String>,
    pub states: Vec<JobState>,
    pub start: Option<String>,
    pub end: Option<String>,
    /// `-o` and `-b`, in order; empty: SACCT_FORMAT or the default.
    pub format: Vec<String>,
    pub controller: Option<String>,
    /// `-M`: the clusters named (this controller's, or `all`).
    pub clusters: Vec<String>,
    /// The controller's cluster, set when the command runs with `-M` (for the JSON).
    pub cluster: Option<String>,
    /// The caller, set when the command runs: whose jobs are shown by default.
    pub me: String,
    /// Root sees every user's jobs by default, as in Slurm.
    pub root: bool,
    /// `-B/--batch-script`, `--env-vars`: asked for what Spur does not keep (refused at parse).
    pub kept_nowhere: Vec<&'static str>,
}

/// Why `--batch-script` and `--env-vars` find nothing: Slurm stores a job's
/// script and environment only with AccountingStoreFlags=job_script,job_env,
/// and Spur keeps neither once the job leaves the controller's memory.
const NOT_KEPT: &str = "Spur keeps no job's batch script or environment after it leaves the \
controller's memory (MinJobAge), as Slurm without AccountingStoreFlags=job_script,job_env; \
`scontrol show job` shows what a job still in memory has";

/// Parses sacct's arguments; `now` (the caller's clock) resolves the window's
/// relative times, so a bad window fails before any network call.
pub fn parse(argv: &[String], now: DateTime<Local>) -> Result<Args, String> {
    let mut a = Args::default();
    FLAGS.parse_flags(argv, &mut a, "sacct")?;
    if let Some(flag) = a.kept_nowhere.first() {
        return Err(format!("{flag}: {NOT_KEPT}"));
    }
    // Checked now, so a bad field or time fails before any network call.
    columns(&a)?;
    a.window(now)?;
    Ok(a)
}

/// `-j`: jobs (`12`), and steps of them (`12.0`, `12.batch`).
fn jobs(a: &mut Args, v: &str) -> Result<(), String> {
    for r in parse_refs(&[v])? {
        let id = r.job();
        match r {
            JobRef::Step(_, step) => a.only.push((id, step)),
            JobRef::Job(_) => a.only.retain(|(j, _)| *j != id),
            JobRef::Tasks(..) => {
                return Err(format!("'{v}': array tasks are named by their own job ids here"));
            }
        }
        if !a.jobs.contains(&id) {
            a.jobs.push(id);
        }
    }
    Ok(())
}

impl Args {
    /// The steps asked for of job `id` (empty: the job whole).
    fn only_of(&self, id: u64) -> Vec<StepRef> {
        self.only.iter().filter(|(j, _)| *j == id).map(|(_, s)| *s).collect()
    }
}

/// As in Slurm, `-u -1` means everyone and a later -u undoes an earlier -a.
fn user(a: &mut Args, v: String) {
    if v.trim() == "-1" {
        a.all_users = true;
    } else {
        a.all_users = false;
        a.users.extend(list(&v));
    }
}

/// `-S`/`-E`: Slurm's date-times read as a query's bound, as sacct reads
/// them: `midnight`, `today` and a bare `HH:MM` are today's (not the next).
pub fn parse_when(raw: &str, now: DateTime<Local>) -> Result<i64, String> {
    crate::vocab::time::parse_when(raw, now, Lean::Past)
}

impl Args {
    /// The `-o`/`-b` fields joined, or the default.
    fn format_spec(&self) -> String {
        if self.format.is_empty() { DEFAULT_FORMAT.into() } else { self.format.join(",") }
    }

    /// The window `[start, end)` in epoch ms, with Slurm's defaults. As in
    /// Slurm, an end equal to the start or to now is moved one second on, so
    /// that instant is included.
    pub fn window(&self, now: DateTime<Local>) -> Result<(i64, i64), String> {
        let now_ms = now.timestamp_millis();
        let start = self.start.as_deref().map(|s| parse_when(s, now)).transpose();
        let end = self.end.as_deref().map(|s| parse_when(s, now)).transpose();
        let start = start.map_err(|e| format!("--starttime: {e}"))?;
        let end = end.map_err(|e| format!("--endtime: {e}"))?;
        let s = match start {
            Some(s) => s,
            None if !self.jobs.is_empty() => 0,
            None if !self.states.is_empty() => now_ms,
            None => parse_when("midnight", now)?,
        };
        let e = match end {
            Some(e) => e,
            None if !self.states.is_empty() && start.is_some() => s,
            None => now_ms,
        };
        if e < s {
            return Err("--endtime is before --starttime".into());
        }
        Ok((s, if e == s || e == now_ms { e + 1000 } else { e }))
    }

    /// Whose jobs: `None` for everyone. `-j` without `-u` and root see all, as in Slurm.
    pub fn users(&self) -> Option<Vec<String>> {
        if self.all_users || (self.users.is_empty() && (self.root || !self.jobs.is_empty())) {
            None
        } else if self.users.is_empty() {
            Some(vec![self.me.clone()])
        } else {
            Some(self.users.clone())
        }
    }

    /// The ListJobs filter, purged jobs included. States are not sent: `-s R` also wants ended jobs.
    pub fn filter(&self) -> Vec<pb::KeyValue> {
        let ids: Vec<String> = self.jobs.iter().map(u64::to_string).collect();
        let pairs = [
            ("id", ids),
            ("user", self.users().unwrap_or_default()),
            ("account", self.accounts.clone()),
            ("partition", self.partitions.clone()),
            ("qos", self.qos.clone()),
            ("name", self.names.clone()),
        ];
        let mut f: Vec<pb::KeyValue> = pairs
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| pb::KeyValue { key: k.into(), value: v.join(",") })
            .collect();
        f.push(pb::KeyValue { key: "history".into(), value: "yes".into() });
        f
    }
}

/// Slurm's window test for one job (times in ms, `[s, e)`).
pub fn in_window(j: &pb::Job, states: &[JobState], s: i64, e: i64) -> bool {
    let (submit, start, end) = (j.submit_ms, run_start(j), ended(j));
    if states.is_empty() {
        return submit > 0 && submit < e && end.is_none_or(|t| t >= s);
    }
    let now = j.job_state();
    states.iter().any(|st| match *st {
        JobState::Pending => {
            let left = if start > 0 { s < start } else { end.map_or(waiting(j), |t| s < t) };
            submit > 0 && submit < e && left
        }
        JobState::Running => {
            let running = matches!(now, JobState::Running | JobState::Completing);
            start > 0 && start < e && end.map_or(running, |t| s < t)
        }
        JobState::Suspended => now == JobState::Suspended && start > 0 && start < e,
        st if ENDED.contains(&st) => {
            jobfmt::accounting_state(j) == st && j.end_ms > 0 && s <= j.end_ms && j.end_ms <= e
        }
        st => now == st,
    })
}

type Column = (&'static Field, i32);

pub fn columns(a: &Args) -> Result<Vec<Column>, String> {
    let mut out = vec![];
    for (fields, width) in parse_columns(&a.format_spec(), pick, "sacct")? {
        out.extend(fields.into_iter().map(|f| (f, width.unwrap_or(f.1))));
    }
    Ok(out)
}

/// `all`, or one field by prefix.
fn pick(name: &str) -> Option<Vec<&'static Field>> {
    if name.eq_ignore_ascii_case("all") {
        return Some(FIELDS.iter().collect());
    }
    prefix(FIELDS, |f| f.0, name).map(|f| vec![f])
}

/// The jobs shown, in job id order (as sacct lists them).
pub fn select<'a>(a: &Args, jobs: &'a [pb::Job], now: DateTime<Local>) -> Result<Vec<&'a pb::Job>, String> {
    let (s, e) = a.window(now)?;
    let users = a.users();
    let any =
        |want: &[String], have: &str| want.is_empty() || want.iter().any(|w| w.eq_ignore_ascii_case(have));
    let mut shown: Vec<&pb::Job> = jobs
        .iter()
        .filter(|j| {
            (a.jobs.is_empty()
                || a.jobs.contains(&j.id)
                || (j.array_job_id != 0 && a.jobs.contains(&j.array_job_id)))
                && users.as_deref().is_none_or(|u| any(u, &j.user))
                && any(&a.accounts, &j.account)
                && any(&a.partitions, &j.partition)
                && any(&a.qos, &j.qos)
                && any(&a.names, &j.name)
                && in_window(j, &a.states, s, e)
        })
        .collect();
    shown.sort_by_key(|j| j.id);
    Ok(shown)
}

/// The whole report from listed jobs; no I/O.
pub fn report(a: &Args, jobs: &[pb::Job], now: DateTime<Local>) -> Result<String, String> {
    let cols = columns(a)?;
    let now_ms = now.timestamp_millis();
    let shown = select(a, jobs, now)?;
    if a.json {
        let v = (shown.iter())
            .map(|j| {
                let steps = if a.allocations { vec![] } else { stepfmt::rows(j, true, &a.only_of(j.id)) };
                let steps: Vec<Row> = steps.into_iter().filter(|r| !r.suffix.is_empty()).collect();
                jobjson::accounting(j, &steps, now_ms, a.cluster.as_deref())
            })
            .collect();
        return Ok(super::output::document(
            &jobjson::reply_value("jobs", v, a.cluster.as_deref(), vec![]),
            a.yaml,
        ));
    }
    let heads: Vec<(&str, i32)> = cols.iter().map(|(f, w)| (f.0, *w)).collect();
    let rows: Vec<Vec<String>> = (shown.iter())
        .flat_map(|j| {
            let past = if a.duplicates { stepfmt::past_runs(j) } else { vec![] };
            past.into_iter().chain(stepfmt::rows(j, !a.allocations, &a.only_of(j.id)))
        })
        .map(|r| cols.iter().map(|(f, _)| (f.2)(&r, now_ms)).collect())
        .collect();
    Ok(print_fields(&heads, &rows, a.parsable, a.delimiter.as_deref().unwrap_or("|"), !a.noheader))
}

async fn run(mut a: Args, now: DateTime<Local>) -> Result<String, String> {
    if a.format.is_empty()
        && let Some(env) = std::env::var("SACCT_FORMAT").ok().filter(|v| !v.trim().is_empty())
    {
        a.format.push(env);
        columns(&a).map_err(|e| format!("SACCT_FORMAT: {e}"))?;
    }
    let me = Identity::local();
    (a.me, a.root) = (me.user.clone(), me.uid == Some(0));
    let mut c = conn::connect_flag(a.controller.as_deref(), me).await?;
    a.cluster = cluster::resolve(&mut c, &a.clusters).await?;
    // The history comes a page at a time; each answer names where the next starts.
    let mut filter = a.filter();
    let mut jobs = vec![];
    loop {
        let req = pb::ListRequest { filter: filter.clone() };
        let page = c.jobs.list_jobs(req).await.map_err(status)?.into_inner();
        jobs.extend(page.jobs);
        let Some(next) = page.next_history_after_id else { break };
        filter.retain(|kv| kv.key != "history_after");
        filter.push(pb::KeyValue { key: "history_after".into(), value: next.to_string() });
    }
    // A job purged between two pages is on both (from memory, then the store): shown once.
    let mut ids = std::collections::HashSet::new();
    jobs.retain(|j| ids.insert(j.id));
    report(&a, &jobs, now)
}

/// Runs sacct with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    // One clock read: the window checked at parse is the one selected on.
    let now = Local::now();
    let result = match parse(argv, now) {
        Ok(a) if a.help => Ok(format!("{USAGE}\n")),
        Ok(a) if a.helpformat => Ok(help_format(&FIELDS.iter().map(|f| f.0).collect::<Vec<_>>(), 19)),
        Ok(a) => run(a, now).await,
        Err(e) => Err(e),
    };
    super::output::finish("sacct", result)
}
