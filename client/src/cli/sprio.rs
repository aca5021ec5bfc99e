//! `sprio` (also `spur prio`): the priority factors of pending jobs. Slurm's
//! sprio shows weighted factors that add up to the priority; Spur's priority
//! is a product, so the columns are the factors of
//! `PRIORITY = BASE × min(FAIRSHARE, 10) × AGE × max(TIER, 1)` as the
//! controller computed them. The layout is sprio's: `%[.][width]X` codes,
//! `.` right-justifying, one line per job in job id order.

use super::kv::list;

use super::fmt::status;
use super::getopt::{Mode, Opt, Spec, check, switch, value};
use super::jobfmt;
use super::kv::{self, Item, fit_into};
use crate::conn::{self, Identity};
use spur_proto::v1 as pb;

pub const USAGE: &str = "\
usage: sprio [-hl] [-j ID,...] [-u USER,...] [-p PARTITION,...] [-o FORMAT] [--json] [--controller URL]
Spur's priority is a product, not Slurm's weighted sum, so the columns are its factors:
  PRIORITY = BASE x min(FAIRSHARE, 10) x AGE x max(TIER, 1)
  BASE       --priority, else 1000 + the QOS priority
  FAIRSHARE  2^(1 - usage/shares) of the job's user and account: 2 idle, 1 at its share, below 1 over it
  AGE        1 at submission, rising to 2 after seven days pending
  TIER       the partition's PriorityTier
Only pending jobs have factors; others are not listed.
  -j, --jobs=ID,...     these jobs        -u, --user=U,...  these users' jobs (adds USER)
  -p, --partition=P,... these partitions  -h, --noheader    no header line
  -l, --long            USER and ACCOUNT columns as well
  -o, --format=FORMAT   default \"%.15i %9P %.10Y %.10B %.10A %.10F %.10T\"; '.' right-justifies:
      %i job id  %P (or %r) partition  %u user  %a account  %q qos
      %Y priority  %B base  %A age  %F fair share  %T tier
      %N user  %o account  %c cluster (N/A); Slurm's weighted and normalized factors that Spur
      has no counterpart of print 0: %b %f %j %J %n %p %Q %S %t %y
  -w, --weights         the formula instead of weights (Spur's factors have none)
  -M, --clusters=NAME   this controller's cluster (or all)     -V, --version   Spur's version
  -n, --norm  -S, --sort  --local  --sibling  --federation: accepted, each with a warning (no effect)
  --json / --yaml       the factors as JSON / YAML";

static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
const OPTS: &[Opt<Args>] = &[
    switch("h/noheader", |a| a.noheader = true),
    check("j/jobs", |a, v| {
        jobfmt::parse_ids(&[v]).map(|ids| a.jobs.extend(ids)).map_err(|e| format!("--jobs: {e}"))
    }),
    switch("l/long", |a| a.long = true),
    value("o/format", |a, v| a.format = Some(v)),
    value("p/partition", |a, v| a.partitions.extend(list(&v))),
    value("u/user", |a, v| a.users.extend(list(&v))),
    switch("-/json", |a| a.json = true),
    switch("-/yaml", |a| a.yaml = true),
    value("-/controller", |a, v| a.controller = Some(v)),
    switch("-/help", |a| a.help = true),
    switch("-/usage", |a| a.help = true),
    check("M/clusters", |a, v| super::cluster::parse_list(&v).map(|n| a.clusters.extend(n))),
    switch("-/federation", |a| a.no_effect("--federation", NO_FED)),
    switch("-/local", |a| a.no_effect("--local", NO_FED)),
    switch("-/sibling", |a| a.no_effect("--sibling", NO_FED)),
    switch("n/norm", |a| {
        a.no_effect("--norm", "Spur's factors are not normalized weights; the columns are the factors")
    }),
    value("S/sort", |a, _| a.no_effect("--sort", "sprio lists jobs in job id order in Spur")),
    switch("v/verbose", |_| {}),
    switch("V/version", |a| a.version = true),
    switch("w/weights", |a| a.weights = true),
];

const NO_FED: &str = "Spur has no federation";

/// `-w`: Slurm's configured weights; Spur's priority is a product with none.
const WEIGHTS: &str =
    "Spur's priority has no weights: PRIORITY = BASE x min(FAIRSHARE, 10) x AGE x max(TIER, 1)\n";

const DEFAULT_FORMAT: &str = "%.15i %9P %.10Y %.10B %.10A %.10F %.10T";
const USER_FORMAT: &str = "%.15i %9P %.8u %.10Y %.10B %.10A %.10F %.10T";
const LONG_FORMAT: &str = "%.15i %9P %.8u %.10a %.10Y %.10B %.10A %.10F %.10T";

/// `(code, header)`.
const FIELDS: &[(char, &str)] = &[
    ('i', "JOBID"),
    ('P', "PARTITION"),
    ('r', "PARTITION"),
    ('u', "USER"),
    ('a', "ACCOUNT"),
    ('q', "QOS"),
    ('Y', "PRIORITY"),
    ('B', "BASE"),
    ('A', "AGE"),
    ('F', "FAIRSHARE"),
    ('T', "TIER"),
    // provisioners.yaml's scheduler.priority: the queue's order when set.
    ('E', "EXPR"),
    ('N', "USER"),
    ('o', "ACCOUNT"),
    ('c', "CLUSTER"),
    // Slurm's weighted and normalized factors with no counterpart in Spur's product.
    ('b', "ASSOC"),
    ('f', "FAIRSHARE"),
    ('j', "JOBSIZE"),
    ('J', "JOBSIZE"),
    ('n', "PARTITION"),
    ('p', "PARTITION"),
    ('Q', "QOS"),
    ('S', "SITE"),
    ('t', "TRES"),
    ('y', "PRIORITY"),
];

#[derive(Debug, Clone, Default)]
pub struct Args {
    pub noheader: bool,
    pub long: bool,
    pub json: bool,
    pub help: bool,
    pub format: Option<String>,
    pub jobs: Vec<u64>,
    pub users: Vec<String>,
    pub partitions: Vec<String>,
    pub controller: Option<String>,
    pub yaml: bool,
    pub version: bool,
    pub weights: bool,
    /// `-M`: the clusters named (this controller's, or `all`).
    pub clusters: Vec<String>,
    /// Flags accepted without effect, one warning each.
    pub warnings: Vec<String>,
}

impl Args {
    fn no_effect(&mut self, flag: &str, why: &str) {
        self.warnings.push(format!("{flag} has no effect: {why}"));
    }
}

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    FLAGS.parse_flags(argv, &mut a, "sprio")?;
    plan(&a)?;
    Ok(a)
}

/// The items to print: `-o`, `-l`, the default, or the default with USER when `-u` is given (as sprio).
pub fn plan(a: &Args) -> Result<Vec<Item>, String> {
    let fmt = match &a.format {
        Some(f) => f.as_str(),
        None if a.long => LONG_FORMAT,
        None if !a.users.is_empty() => USER_FORMAT,
        None => DEFAULT_FORMAT,
    };
    kv::parse_format(fmt, |c| FIELDS.iter().any(|f| f.0 == c), "sprio")
}

impl Args {
    /// The ListJobs filter: only pending jobs have priority factors.
    pub fn filter(&self) -> Vec<pb::KeyValue> {
        let ids: Vec<String> = self.jobs.iter().map(u64::to_string).collect();
        let pairs = [
            ("state", vec!["PENDING".to_string()]),
            ("id", ids),
            ("user", self.users.clone()),
            ("partition", self.partitions.clone()),
            // The brief view with the factors: no spec, reason facts or script on the wire.
            ("view", vec!["prio".to_string()]),
        ];
        pairs
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| pb::KeyValue { key: k.into(), value: v.join(",") })
            .collect()
    }

    pub fn keep(&self, j: &pb::JobPriority) -> bool {
        let any = |want: &[String], have: &str| {
            want.is_empty() || want.iter().any(|w| w.eq_ignore_ascii_case(have))
        };
        j.job_state() == crate::vocab::JobState::Pending
            && (self.jobs.is_empty() || self.jobs.contains(&j.id))
            && any(&self.users, &j.user)
            && any(&self.partitions, &j.partition)
    }
}

/// Factors near 1 need decimals to be told apart; BASE and TIER are whole numbers.
pub fn cell(code: char, j: &pb::JobPriority) -> String {
    let mut s = String::new();
    cell_into(&mut s, code, j);
    s
}

/// [`cell`], appended to `out`.
fn cell_into(out: &mut String, code: char, j: &pb::JobPriority) {
    use std::fmt::Write;
    match code {
        'i' => drop(write!(out, "{}", j.id)),
        'P' | 'r' => out.push_str(&j.partition),
        'u' | 'N' => out.push_str(&j.user),
        'a' | 'o' => out.push_str(&j.account),
        'c' => out.push_str("N/A"),
        'q' => out.push_str(&j.qos),
        'Y' => jobfmt::whole_into(out, j.priority.max(0.0)),
        'B' => jobfmt::whole_into(out, j.prio_base.max(0.0)),
        'A' => jobfmt::four_places_into(out, j.prio_age),
        'F' => jobfmt::four_places_into(out, j.prio_fair_share),
        'T' => drop(write!(out, "{}", j.prio_tier)),
        'E' => match j.prio_ordered {
            Some(v) => jobfmt::four_places_into(out, v),
            None => out.push_str("N/A"),
        },
        _ => out.push('0'),
    }
}

fn header(code: char) -> &'static str {
    FIELDS.iter().find(|f| f.0 == code).map_or("", |f| f.1)
}

/// The whole report from listed jobs; no I/O.
pub fn report(a: &Args, jobs: &[pb::JobPriority]) -> Result<String, String> {
    let mut items = plan(a)?;
    // With scheduler.priority set, the default formats gain its column: it is what orders the queue.
    if a.format.is_none() && jobs.iter().any(|j| j.prio_ordered.is_some()) {
        items.extend(kv::parse_format(" %.10E", |c| c == 'E', "sprio")?);
    }
    let mut shown: Vec<&pb::JobPriority> = jobs.iter().filter(|j| a.keep(j)).collect();
    shown.sort_by_key(|j| j.id);
    if a.json || a.yaml {
        let v: Vec<serde_json::Value> = shown
            .iter()
            .map(|j| {
                serde_json::json!({
                    "job_id": j.id, "partition": j.partition, "user": j.user, "account": j.account,
                    "qos": j.qos, "priority": j.priority, "base": j.prio_base,
                    "fair_share": j.prio_fair_share, "age": j.prio_age, "tier": j.prio_tier,
                    "ordered": j.prio_ordered,
                })
            })
            .collect();
        return Ok(super::output::document(&serde_json::json!({ "jobs": v }), a.yaml));
    }
    // sprio's answer when named jobs are not pending (or do not exist).
    if !a.jobs.is_empty() && shown.is_empty() {
        return Ok("Unable to find jobs matching user/id(s) specified\n".into());
    }
    let mut out = String::new();
    if !a.noheader {
        lines(&mut out, &items, &[None]);
    }
    // Lines are formatted on every core, as squeue's are: over 100,000 jobs it is most of the time.
    let rows: Vec<Option<&pb::JobPriority>> = shown.into_iter().map(Some).collect();
    let parts = super::listing::par_map(&rows, |chunk| {
        let mut part = String::with_capacity(chunk.len() * 80);
        lines(&mut part, &items, chunk);
        part
    });
    out.reserve(parts.iter().map(String::len).sum());
    parts.iter().for_each(|p| out.push_str(p));
    Ok(out)
}

/// The text of a cell that is a field as it stands, borrowed.
fn text(code: char, j: &pb::JobPriority) -> Option<&str> {
    match code {
        'P' | 'r' => Some(&j.partition),
        'u' | 'N' => Some(&j.user),
        'a' | 'o' => Some(&j.account),
        'q' => Some(&j.qos),
        _ => None,
    }
}

/// Lines written straight into `out`, cell by cell; `None` is the header.
fn lines(out: &mut String, items: &[Item], jobs: &[Option<&pb::JobPriority>]) {
    // One scratch buffer for the computed cells of every line.
    let mut scratch = String::with_capacity(32);
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
                            cell_into(&mut scratch, *code, j);
                            fit_into(out, &scratch, *width, *right);
                        }
                    },
                },
            }
        }
        out.push('\n');
    }
}

async fn run(a: Args) -> Result<String, String> {
    for w in &a.warnings {
        super::output::complain(&format!("sprio: warning: {w}"));
    }
    if a.version {
        return Ok(super::output::version());
    }
    if a.weights {
        return Ok(WEIGHTS.into());
    }
    let mut c = conn::connect_flag(a.controller.as_deref(), Identity::local()).await?;
    super::cluster::resolve(&mut c, &a.clusters).await?;
    let req = pb::ListRequest { filter: a.filter() };
    let jobs: Vec<pb::JobPriority> =
        super::listing::collect_as(c.jobs.stream_jobs(req).await.map_err(status)?.into_inner()).await?;
    let out = report(&a, &jobs);
    // As squeue: the process exits right after printing, so the jobs are not freed one by one.
    std::mem::forget(jobs);
    out
}

/// Runs sprio with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    let result = match parse(argv) {
        Ok(a) if a.help => Ok(format!("{USAGE}\n")),
        Ok(a) => run(a).await,
        Err(e) => Err(e),
    };
    super::output::finish("sprio", result)
}
