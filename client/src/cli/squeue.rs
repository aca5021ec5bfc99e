//! `squeue` (also `spur queue`): the job queue, printed the way Slurm's squeue
//! prints it. `-o` takes Slurm's `%[.][width]X` codes, `-O` its long field
//! names (`name[:[.]width]`, 20 wide by default), `-S` its sort letters. The
//! state filter travels to the controller as `state=`, so a queue with many
//! finished jobs stays cheap to list, and the brief view (StreamJobs: pages
//! written by the controller straight into protobuf bytes, decoded as they
//! arrive) unless a column needs the job's spec; every filter is also
//! re-applied here so the output never depends on which filters a
//! controller understands.

use super::kv::list;

use super::cluster;
use super::fmt::{null, status};
use super::getopt::{Mode, Opt, Spec, check, switch, value};
use super::jobfmt::{self, squeue_secs};
use super::jobjson;
pub use super::jobsort::{sort, sort_keys};
use super::kv::{self, Item, fit_into};
use super::listing;
use crate::conn::{self, Identity};
use crate::vocab::JobState;
use crate::vocab::time::UNLIMITED;
use spur_proto::v1 as pb;

pub const USAGE: &str = "\
usage: squeue [-hl] [-u USER,...] [-A ACCOUNT,...] [-p PARTITION,...] [-q QOS,...] [-n NAME,...] [-t STATE,...]
              [-j ID,...] [-o FORMAT | -O FIELDS] [-S SORT] [--me] [--json] [-M CLUSTER,...] [--controller URL]
  -u, --user / --me     only these users' jobs / only mine
  -A, --account  -p, --partition  -q, --qos  -j, --jobs  -n, --name   comma lists
  -r, --array           one line per pending array task (12_4, 12_5, ...) instead of 12_[4-99]
  -t, --states=S,...    PD R S CG CD CA F TO NF PR RQ (or long names, or all); default: unfinished
                        jobs, or every state with -j
  -h, --noheader        no header line          -l, --long   STATE and TIME_LIMIT columns
  -s, --steps           the running job steps (srun): STEPID NAME PARTITION USER TIME NODELIST
  -S, --sort=KEYS       format letters, '-' descending: -S -p,i  (default P,t,-p)
  -o, --format=FORMAT   default \"%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R\"; '.' right-justifies:
      %i id  %j name  %u user  %a account  %q qos  %P partition  %p/%Q priority  %t/%T state
      %N nodes  %r reason  %R nodes or (reason)  %M time used  %l time limit  %L time left
      %D node count  %C cpus  %S start  %V submit  %e end  %k comment  %W borrowed (idle-fill)
      %b gres per node  %m memory per node  %Z workdir  %x excluded  %n requested  %h oversubscribe
      %F array job id  %K array task id(s)  %U uid  %G gid  %g group (N/A: runs as the agent's user)
  -O, --Format=FIELDS   JobID,Name:30,UserName,Account,QOS,Partition,Priority,StateCompact,State,
      NodeList,Reason,ReasonList,TimeUsed,TimeLimit,TimeLeft,NumNodes,NumCPUs,StartTime,SubmitTime,
      EndTime,Comment,Licenses,Annotations,Borrowed,UserID,GroupID,GroupName,...
      (name[:[.]width], default width 20)
  --json                the selected jobs as JSON in Slurm's shape (jobs, meta, errors)
  -M, --clusters=NAME,...   this controller's cluster (or all), named in a CLUSTER: line; others are errors";

static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
const OPTS: &[Opt<Args>] = &[
    switch("a/all", |_| {}),
    value("A/account", |a, v| a.accounts.extend(list(&v))),
    switch("h/noheader", |a| a.noheader = true),
    check("j/jobs", |a, v| {
        jobfmt::parse_ids(&[v]).map(|ids| a.jobs.extend(ids)).map_err(|e| format!("--jobs: {e}"))
    }),
    switch("l/long", |a| a.long = true),
    value("o/format", |a, v| a.format = Some(Format::Codes(v))),
    value("O/Format", |a, v| a.format = Some(Format::Names(v))),
    value("p/partition", |a, v| a.partitions.extend(list(&v))),
    value("q/qos", |a, v| a.qos.extend(list(&v))),
    value("n/name", |a, v| a.names.extend(list(&v))),
    switch("r/array", |a| a.expand_arrays = true),
    value("S/sort", |a, v| a.sort = Some(v)),
    check("t/states", states),
    value("u/user", |a, v| a.users.extend(list(&v))),
    switch("-/me", |a| a.me = true),
    switch("s/steps", |a| a.steps = true),
    switch("-/json", |a| a.json = true),
    check("M/clusters", |a, v| cluster::parse_list(&v).map(|n| a.clusters.extend(n))),
    value("-/controller", |a, v| a.controller = Some(v)),
    switch("-/help", |a| a.help = true),
    switch("-/usage", |a| a.help = true),
];

const DEFAULT_FORMAT: &str = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
const LONG_FORMAT: &str = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
const DEFAULT_SORT: &str = "P,t,-p";

/// `(letter, -O name, header)`.
pub(crate) const FIELDS: &[(char, &str, &str)] = &[
    ('i', "JobID", "JOBID"),
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
];

/// Format letters read from the job's spec, or from what the streamed brief
/// listing leaves out (uid, gid, group); without them (and without `--json`)
/// squeue asks for the brief view, which the controller sends lighter.
const SPEC_CODES: &str = "k\u{2113}\u{3b1}bmZxnhUGg";

/// `-O Licenses`: a code no `%` format can name, since idle-fill took `%W`.
const LICENSES: char = '\u{2113}';

/// `-O Annotations` (`--annotation`): Slurm has no letter for it.
const ANNOTATIONS: char = '\u{3b1}';

fn header(code: char) -> &'static str {
    FIELDS.iter().find(|f| f.0 == code).map_or("", |f| f.2)
}

/// Which states to show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum States {
    /// Unfinished jobs; every state when `-j` names jobs (as Slurm).
    #[default]
    Default,
    All,
    Only(Vec<JobState>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    /// `-o`: printf-style codes.
    Codes(String),
    /// `-O`: long field names.
    Names(String),
}

#[derive(Debug, Clone, Default)]
pub struct Args {
    pub noheader: bool,
    pub long: bool,
    pub json: bool,
    pub help: bool,
    /// `--me`: resolved to the local user when the request is built.
    pub me: bool,
    pub format: Option<Format>,
    pub sort: Option<String>,
    pub users: Vec<String>,
    pub accounts: Vec<String>,
    pub partitions: Vec<String>,
    pub qos: Vec<String>,
    /// `-n/--name`: job names.
    pub names: Vec<String>,
    /// `-r/--array`: one row per pending array task.
    pub expand_arrays: bool,
    pub states: States,
    pub jobs: Vec<u64>,
    pub controller: Option<String>,
    /// `-s/--steps`: the running job steps instead (Slurm's STEPID NAME PARTITION USER TIME NODELIST).
    pub steps: bool,
    /// `-M`: the clusters named (this controller's, or `all`).
    pub clusters: Vec<String>,
    /// The controller's cluster, set when the command runs with `-M`.
    pub cluster: Option<String>,
}

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    FLAGS.parse_flags(argv, &mut a, "squeue")?;
    // Checked now so a bad format or sort fails before any network call.
    plan(&a)?;
    sort_keys(a.sort.as_deref().unwrap_or(DEFAULT_SORT))?;
    Ok(a)
}

fn states(a: &mut Args, v: String) -> Result<(), String> {
    a.states = match jobfmt::parse_states(&v).map_err(|e| format!("--states: {e}"))? {
        None => States::All,
        Some(v) => States::Only(v),
    };
    Ok(())
}

impl Args {
    /// The states shown, borrowed: `keep` asks it of every listed job.
    fn states(&self) -> Option<&[JobState]> {
        match &self.states {
            States::Default if self.jobs.is_empty() => Some(JobState::ACTIVE),
            States::Only(v) => Some(v),
            _ => None,
        }
    }

    /// The ListJobs filter: `id=`, `user=`, `account=`, `partition=`, `qos=`, `state=`,
    /// and `view=brief` when nothing printed comes from the job's spec.
    pub fn filter(&self) -> Vec<pb::KeyValue> {
        let ids: Vec<String> = self.jobs.iter().map(u64::to_string).collect();
        let states = self.states().unwrap_or_default();
        let pairs = [
            ("id", ids),
            ("user", self.users.clone()),
            ("account", self.accounts.clone()),
            ("partition", self.partitions.clone()),
            ("qos", self.qos.clone()),
            ("name", self.names.clone()),
            ("state", states.iter().map(|s| s.to_string()).collect()),
            ("view", if self.brief() { vec!["brief".to_string()] } else { vec![] }),
        ];
        pairs
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| pb::KeyValue { key: k.into(), value: v.join(",") })
            .collect()
    }

    fn brief(&self) -> bool {
        !self.json
            && plan(self).is_ok_and(|items| {
                items.iter().all(|it| !matches!(it, Item::Field { code, .. } if SPEC_CODES.contains(*code)))
            })
    }

    pub fn keep(&self, j: &pb::Job) -> bool {
        let any = |want: &[String], have: &str| {
            want.is_empty() || want.iter().any(|w| w.eq_ignore_ascii_case(have))
        };
        (self.jobs.is_empty() || self.jobs.contains(&j.id))
            && any(&self.users, &j.user)
            && any(&self.accounts, &j.account)
            && any(&self.partitions, &j.partition)
            && any(&self.qos, &j.qos)
            && self.states().is_none_or(|s| s.contains(&j.job_state()))
    }
}

/// The items to print, from `-o`, `-O`, `-l` or the default.
pub fn plan(a: &Args) -> Result<Vec<Item>, String> {
    let known = |c: char| FIELDS.iter().any(|f| f.0 == c);
    match &a.format {
        Some(Format::Names(names)) => {
            let code = |name: &str| FIELDS.iter().find(|f| f.1.eq_ignore_ascii_case(name)).map(|f| f.0);
            kv::long_format(names, code, "squeue")
        }
        Some(Format::Codes(f)) => kv::parse_format(f, known, "squeue"),
        None => kv::parse_format(if a.long { LONG_FORMAT } else { DEFAULT_FORMAT }, known, "squeue"),
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

/// The whole report from listed jobs; no I/O.
pub fn report(a: &Args, jobs: &[pb::Job], now_ms: i64) -> Result<String, String> {
    let items = plan(a)?;
    let mut shown: Vec<&pb::Job> = jobs.iter().filter(|j| a.keep(j)).collect();
    sort(&mut shown, &sort_keys(a.sort.as_deref().unwrap_or(DEFAULT_SORT))?, now_ms);
    if a.json {
        return Ok(jobjson::job_info_reply(&shown, now_ms, a.cluster.as_deref()));
    }
    let mut out = heading(a, now_ms);
    if !a.noheader {
        lines(&mut out, &items, &[None], now_ms);
    }
    let rows: Vec<Option<&pb::Job>> = shown.into_iter().map(Some).collect();
    let parts = listing::par_map(&rows, |chunk| {
        let mut part = String::with_capacity(chunk.len() * 96);
        lines(&mut part, &items, chunk, now_ms);
        part
    });
    out.reserve(parts.iter().map(String::len).sum());
    parts.iter().for_each(|p| out.push_str(p));
    Ok(out)
}

/// What comes before the header: `-l`'s time of the listing (in ctime's
/// layout), then with `-M` the cluster's name, as Slurm prints them; `-h`
/// drops both.
pub fn heading(a: &Args, now_ms: i64) -> String {
    let mut out = String::new();
    if a.long && !a.noheader {
        let t = chrono::DateTime::from_timestamp_millis(now_ms).unwrap_or_default();
        out += &format!("{}\n", t.with_timezone(&chrono::Local).format("%a %b %e %H:%M:%S %Y"));
    }
    if let Some(c) = a.cluster.as_deref().filter(|_| !a.noheader) {
        out += &format!("CLUSTER: {c}\n");
    }
    out
}

/// Lines written straight into `out`, cell by cell; `None` is the header.
fn lines(out: &mut String, items: &[Item], jobs: &[Option<&pb::Job>], now_ms: i64) {
    let mut scratch = String::new();
    for j in jobs {
        for it in items {
            match it {
                Item::Text(t) => out.push_str(t),
                Item::Field { code, width, right } => match j {
                    None => fit_into(out, header(*code), *width, *right),
                    Some(j) => match text(*code, j) {
                        Some(t) => fit_into(out, t, *width, *right),
                        None => {
                            scratch.clear();
                            cell_into(&mut scratch, *code, j, now_ms);
                            fit_into(out, &scratch, *width, *right)
                        }
                    },
                },
            }
        }
        out.push('\n');
    }
}

async fn run(mut a: Args) -> Result<String, String> {
    // Slurm's environment defaults, used only when the flag is absent.
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if a.format.is_none() && !a.long {
        a.format =
            env("SQUEUE_FORMAT").map(Format::Codes).or_else(|| env("SQUEUE_FORMAT2").map(Format::Names));
        plan(&a).map_err(|e| format!("SQUEUE_FORMAT: {e}"))?;
    }
    if a.sort.is_none() {
        a.sort = env("SQUEUE_SORT");
        sort_keys(a.sort.as_deref().unwrap_or(DEFAULT_SORT)).map_err(|e| format!("SQUEUE_SORT: {e}"))?;
    }
    if a.me {
        a.users.push(Identity::local().user);
    }
    let mut c = conn::connect_flag(a.controller.as_deref(), Identity::local()).await?;
    a.cluster = cluster::resolve(&mut c, &a.clusters).await?;
    if a.steps {
        let mut filter = a.filter();
        filter.retain(|kv| kv.key != "state" && kv.key != "view");
        filter.push(pb::KeyValue { key: "state".into(), value: "RUNNING,SUSPENDED".into() });
        let jobs = c.jobs.list_jobs(pb::ListRequest { filter }).await.map_err(status)?.into_inner().jobs;
        let now_ms = chrono::Utc::now().timestamp_millis();
        return Ok(heading(&a, now_ms) + &super::stepfmt::squeue(&jobs, now_ms, !a.noheader));
    }
    let req = pb::ListRequest { filter: a.filter() };
    let jobs = if a.brief() {
        listing::collect(c.jobs.stream_jobs(req).await.map_err(status)?.into_inner()).await?
    } else {
        c.jobs.list_jobs(req).await.map_err(status)?.into_inner().jobs
    };
    let jobs = if a.expand_arrays { expand_arrays(jobs) } else { jobs };
    let out = report(&a, &jobs, chrono::Utc::now().timestamp_millis());
    // squeue exits right after printing: freeing 100,000 jobs one by one
    // would only delay that by some 15 ms.
    std::mem::forget(jobs);
    out
}

/// `-r`: an array's record of pending tasks becomes a row per task, as Slurm prints them.
pub fn expand_arrays(jobs: Vec<pb::Job>) -> Vec<pb::Job> {
    let mut out = Vec::with_capacity(jobs.len());
    for j in jobs {
        let tasks = (j.array_job_id != 0 && j.array_task_id.is_none())
            .then(|| {
                crate::vocab::array::TaskSet::parse_bounded(
                    &j.array_pending,
                    crate::vocab::array::MAX_PENDING_RUNS,
                )
                .ok()
            })
            .flatten();
        match tasks {
            Some(t) => out.extend(t.iter().map(|i| pb::Job { array_task_id: Some(i), ..j.clone() })),
            None => out.push(j),
        }
    }
    out
}

/// Runs squeue with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    let result = match parse(argv) {
        Ok(a) if a.help => Ok(format!("{USAGE}\n")),
        Ok(a) => run(a).await,
        Err(e) => Err(e),
    };
    super::output::finish("squeue", result)
}
