//! `squeue` (also `spur queue`): the job queue, printed the way Slurm's squeue
//! prints it. `-o` takes Slurm's `%[.][width]X` codes, `-O` its long field
//! names (`name[:[.]width]`, 20 wide by default), `-S` its sort letters. The
//! state filter travels to the controller as `state=`, so a queue with many
//! finished jobs stays cheap to list, and the brief view (StreamJobs: pages
//! written by the controller straight into protobuf bytes, decoded as they
//! arrive) unless a column needs the job's spec; every filter is also
//! re-applied here so the output never depends on which filters a
//! controller understands.

mod fields;

use super::kv::list;

use super::cluster;
use super::fmt::status;
use super::getopt::{Mode, Opt, Spec, check, switch, value};
use super::jobfmt;
use super::jobjson;
pub use super::jobsort::{sort, sort_keys};
use super::kv::{self, Item, fit_into};
use super::listing;
use crate::conn::{self, Identity};
use crate::vocab::JobState;
use fields::header;
pub(crate) use fields::{FIELDS, text};
pub use fields::{cell, cell_into};
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
      %i id  %A raw id  %j name  %u user  %a account  %q qos  %P partition  %p/%Q priority
      %t/%T state  %N nodes  %r reason  %R nodes or (reason)  %M used  %l limit  %L left
      %D nodes  %C cpus  %c min cpus  %S start  %V submit  %e end  %k comment  %E dependency
      %f features  %w wckey  %y nice  %B batch host  %W borrowed (idle-fill)  %b gres per node
      %m memory per node  %Z workdir  %x excluded  %n requested  %h oversubscribe  %F/%K array
      %U uid  %G gid  %g group;  %d %H %I %J %o %O %v %X %Y %z: Slurm's unset value (no data)
  -O, --Format=FIELDS   every name of Slurm's squeue -O (JobID,Name:30,State,Dependency,STDOUT,
      tres-alloc,DerivedEC,...), plus Licenses, Annotations, Borrowed; names Spur has no data for
      (BurstBuffer, Container, MCSLabel, HetJobID, ...) print Slurm's (null) or N/A
      (name[:[.]width], default width 20)
  --json / --yaml       the selected jobs as JSON / YAML in Slurm's shape (jobs, meta, errors)
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
    switch("-/yaml", |a| (a.json, a.yaml) = (true, true)),
    check("M/clusters", |a, v| cluster::parse_list(&v).map(|n| a.clusters.extend(n))),
    value("-/controller", |a, v| a.controller = Some(v)),
    switch("-/help", |a| a.help = true),
    switch("-/usage", |a| a.help = true),
];

const DEFAULT_FORMAT: &str = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
const LONG_FORMAT: &str = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
const DEFAULT_SORT: &str = "P,t,-p";

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
    /// `--yaml`: the `--json` document in YAML.
    pub yaml: bool,
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
                items.iter().all(|it| !matches!(it, Item::Field { code, .. } if fields::needs_full(*code)))
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
    let known = fields::known;
    match &a.format {
        Some(Format::Names(names)) => kv::long_format(names, fields::code_of, "squeue"),
        Some(Format::Codes(f)) => kv::parse_format(f, known, "squeue"),
        None => kv::parse_format(if a.long { LONG_FORMAT } else { DEFAULT_FORMAT }, known, "squeue"),
    }
}

/// The whole report from listed jobs; no I/O.
pub fn report(a: &Args, jobs: &[pb::Job], now_ms: i64) -> Result<String, String> {
    let items = plan(a)?;
    let mut shown: Vec<&pb::Job> = jobs.iter().filter(|j| a.keep(j)).collect();
    sort(&mut shown, &sort_keys(a.sort.as_deref().unwrap_or(DEFAULT_SORT))?, now_ms);
    if a.json {
        let doc = jobjson::job_info_value(&shown, now_ms, a.cluster.as_deref());
        return Ok(super::output::document(&doc, a.yaml));
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
