//! `sreport` (also `spur report`): CPU time reports over a window, in
//! Slurm's layout: `cluster Utilization`, `cluster AccountUtilizationByUser`,
//! `cluster UserUtilizationByAccount` and `user TopUsage`. The controller sums
//! each job run's allocated CPUs times the part of it inside the window (the
//! Usage RPC); this side picks the window, the unit and the columns
//! ([`render`]). The window is read against a `now` the caller passes.

pub mod render;

use super::args::Parsable;
use super::cluster;
use super::fmt::status;
use super::getopt::{Mode, Opt, Spec, check, switch, value};
use crate::conn::{self, Identity};
use chrono::{DateTime, Duration, Local, TimeZone};
use spur_proto::v1 as pb;
use spur_vocab::time::{Lean, parse_when};

pub const USAGE: &str = "\
usage: sreport [-anpPQ] [-t UNIT] [-M CLUSTER] [--controller URL] REPORT [start=T] [end=T] [format=F,...]
  cluster Utilization                 the cluster's CPU time: Allocated, Idle, Reported
  cluster AccountUtilizationByUser    CPU time per account, then per user in it
  cluster UserUtilizationByAccount    CPU time per user and account, largest first
  user TopUsage [topcount=N]          the N users who used the most (default 10)
  job SizesByAccount [grouping=50,250,500,1000] [PrintJobCount]   each account's time by job size
  start=, end=      Slurm's date forms (default: yesterday 00:00 to today 00:00; end is at most now)
  Accounts=A,...  Users=U,...         only these accounts' or users' use
  -t UNIT           Seconds, Minutes (default), Hours, Percent, SecPer, MinPer, HourPer
  -n, --noheader    no banner or header    -p / -P, --parsable / --parsable2   '|' delimited
  -M, --cluster     this controller's cluster (or 'all')    -Q, --quiet  no warnings";

/// The unit of the time columns (`-t`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TimeFmt {
    Seconds,
    #[default]
    Minutes,
    Hours,
    Percent,
    SecPer,
    MinPer,
    HourPer,
}

impl TimeFmt {
    /// As Slurm's `_set_time_format`: the `*Per` names need six letters, the others one.
    pub fn parse(v: &str) -> Result<TimeFmt, String> {
        let w = v.trim().to_ascii_lowercase();
        let is = |name: &str, min: usize| w.len() >= min && name.starts_with(&w);
        let t = [
            ("secper", 6, TimeFmt::SecPer),
            ("minper", 6, TimeFmt::MinPer),
            ("hourper", 6, TimeFmt::HourPer),
            ("seconds", 1, TimeFmt::Seconds),
            ("minutes", 1, TimeFmt::Minutes),
            ("hours", 1, TimeFmt::Hours),
            ("percent", 1, TimeFmt::Percent),
        ];
        t.iter().find(|(n, min, _)| is(n, *min)).map(|t| t.2).ok_or_else(|| {
            format!(
                "-t: unknown time format '{v}' (Seconds, Minutes, Hours, Percent, SecPer, MinPer, HourPer)"
            )
        })
    }

    /// The unit as the banner names it.
    pub fn name(self) -> &'static str {
        match self {
            TimeFmt::Seconds => "Seconds",
            TimeFmt::Minutes => "Minutes",
            TimeFmt::Hours => "Hours",
            TimeFmt::Percent => "Percentage of Total",
            TimeFmt::SecPer => "Seconds/Percentage of Total",
            TimeFmt::MinPer => "Minutes/Percentage of Total",
            TimeFmt::HourPer => "Hours/Percentage of Total",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Args {
    pub help: bool,
    pub version: bool,
    pub noheader: bool,
    pub quiet: bool,
    pub parsable: Parsable,
    pub time: TimeFmt,
    pub clusters: Vec<String>,
    pub controller: Option<String>,
    /// The words after the flags: the report and its `key=value` options.
    pub words: Vec<String>,
    /// One line each on stderr (unless `-Q`): options Slurm has that change nothing here.
    pub warnings: Vec<String>,
}

fn warn(a: &mut Args, flag: &str, why: &str) {
    a.warnings.push(format!("sreport: warning: {flag}: {why}"));
}

static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
pub const OPTS: &[Opt<Args>] = &[
    // One controller is one cluster: every cluster is this one.
    switch("a/all_clusters", |_| {}),
    value("M/cluster", |a, v| a.clusters.push(v)),
    value("-/clusters", |a, v| a.clusters.push(v)),
    switch("-/federation", |a| warn(a, "--federation", "Spur has no federations; this cluster is reported")),
    switch("h/help", |a| a.help = true),
    switch("-/usage", |a| a.help = true),
    switch("-/local", |a| warn(a, "--local", "Spur has no federations; this cluster is reported")),
    switch("n/noheader", |a| a.noheader = true),
    switch("p/parsable", |a| a.parsable = Parsable::Trailing),
    switch("P/parsable2", |a| a.parsable = Parsable::NoTrailing),
    switch("Q/quiet", |a| a.quiet = true),
    check("t/time", |a, v| TimeFmt::parse(&v).map(|t| a.time = t)),
    value("T/tres", |a, v| {
        if !v.split(',').all(|t| t.trim().eq_ignore_ascii_case("cpu")) {
            warn(a, &format!("--tres={v}"), "Spur reports CPU time only; the cpu figures are shown")
        }
    }),
    switch("v/verbose", |a| warn(a, "--verbose", "sreport has nothing more to say than its report")),
    switch("V/version", |a| a.version = true),
    value("-/controller", |a, v| a.controller = Some(v)),
];

/// Which report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    Utilization,
    AccountByUser,
    UserByAccount,
    TopUsage,
    /// `job SizesByAccount`: each account's time by job size.
    SizesByAccount,
}

/// A report with its window (Unix ms, `[start_ms, end_ms)`) and options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub report: Report,
    pub start_ms: i64,
    pub end_ms: i64,
    pub format: Option<String>,
    /// `topcount=`; 0 for all.
    pub top: usize,
    pub accounts: Vec<String>,
    pub users: Vec<String>,
    /// `grouping=`: the job sizes (CPUs) where the size columns break; Slurm's default 50,250,500,1000.
    pub grouping: Vec<u32>,
    /// `PrintJobCount`: jobs in each column, not time.
    pub job_count: bool,
}

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    a.words = FLAGS.parse(argv, &mut a)?;
    for list in std::mem::take(&mut a.clusters) {
        a.clusters.extend(cluster::parse_list(&list)?);
    }
    Ok(a)
}

/// Slurm's keyword match: case-insensitive, at least `min` letters of `name`.
fn abbrev(word: &str, name: &str, min: usize) -> bool {
    let w = word.to_ascii_lowercase();
    w.len() >= min.min(name.len()) && name.to_ascii_lowercase().starts_with(&w)
}

/// The report and its options from the words, with the window read against `now`.
pub fn query(words: &[String], now: DateTime<Local>) -> Result<Query, String> {
    let (entity, rest) =
        words.split_first().ok_or("name a report: cluster Utilization, user TopUsage, ...")?;
    let (name, opts) =
        rest.split_first().ok_or_else(|| format!("'{entity}' needs a report name (see --help)"))?;
    let report = if abbrev(entity, "cluster", 1) {
        if abbrev(name, "Utilization", 2) {
            Report::Utilization
        } else if abbrev(name, "AccountUtilizationByUser", 8) {
            Report::AccountByUser
        } else if abbrev(name, "UserUtilizationByAccount", 2) {
            Report::UserByAccount
        } else {
            return Err(format!("cluster report '{name}' is not one Spur has (see --help)"));
        }
    } else if abbrev(entity, "user", 1) && abbrev(name, "TopUsage", 1) {
        Report::TopUsage
    } else if abbrev(entity, "job", 1) && abbrev(name, "SizesByAccount", 10) {
        Report::SizesByAccount
    } else {
        return Err(format!("'{entity} {name}' is not a report Spur has (see --help)"));
    };
    let midnight = Local
        .from_local_datetime(&now.date_naive().and_hms_opt(0, 0, 0).unwrap_or_default())
        .earliest()
        .map_or(now.timestamp_millis(), |t| t.timestamp_millis());
    let mut q = Query {
        report,
        start_ms: midnight - Duration::days(1).num_milliseconds(),
        end_ms: midnight,
        format: None,
        top: 10,
        accounts: vec![],
        users: vec![],
        grouping: vec![50, 250, 500, 1000],
        job_count: false,
    };
    let (mut start, mut end) = (None, None);
    for w in opts {
        // The job reports' bare words: a flat list and accounts as parents are what Spur prints anyway.
        if report == Report::SizesByAccount && !w.contains('=') {
            match w.to_ascii_lowercase() {
                x if abbrev(&x, "PrintJobCount", 2) => q.job_count = true,
                x if abbrev(&x, "FlatView", 2) || abbrev(&x, "AcctAsParent", 2) => {}
                _ => return Err(format!("'{w}' is not an option of job SizesByAccount")),
            }
            continue;
        }
        let (k, v) =
            w.split_once('=').ok_or_else(|| format!("'{w}': expected Key=value (start=, end=, format=)"))?;
        let list = || v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
        match k.to_ascii_lowercase().as_str() {
            "start" | "starttime" => {
                start = Some(parse_when(v, now, Lean::Past).map_err(|e| format!("start: {e}"))?)
            }
            "end" | "endtime" => end = Some(parse_when(v, now, Lean::Past).map_err(|e| format!("end: {e}"))?),
            "format" => q.format = Some(v.to_string()),
            "topcount" if report == Report::TopUsage => {
                q.top = v.parse().map_err(|_| format!("topcount: '{v}' is not a count"))?
            }
            "grouping" if report == Report::SizesByAccount => q.grouping = grouping(v)?,
            "accounts" | "account" | "acct" => q.accounts = list(),
            "users" | "user" => q.users = list(),
            // The cluster list is checked with -M's.
            "clusters" | "cluster" => {}
            _ => return Err(format!("'{k}' is not an option of this report (start=, end=, format=, ...)")),
        }
    }
    q.end_ms = end.unwrap_or(q.end_ms).min(now.timestamp_millis());
    q.start_ms = start.unwrap_or(q.start_ms);
    if q.start_ms >= q.end_ms {
        return Err("start: the window must start before it ends (and end is at most now)".into());
    }
    Ok(q)
}

/// `grouping=50,250,...`: increasing sizes, each above 0.
fn grouping(v: &str) -> Result<Vec<u32>, String> {
    let sizes: Vec<u32> = (v.split(',').map(|s| s.trim().parse::<u32>()))
        .collect::<Result<_, _>>()
        .map_err(|_| format!("grouping: '{v}' is not a list of sizes (50,250,500,1000)"))?;
    if sizes.is_empty() || sizes.len() > 64 || sizes.windows(2).any(|w| w[0] >= w[1]) || sizes[0] == 0 {
        return Err(format!("grouping: '{v}' must be 1 to 64 increasing sizes above 0"));
    }
    Ok(sizes)
}

/// The `Clusters=` words of a report, for the same check as `-M`.
fn cluster_words(words: &[String]) -> Result<Vec<String>, String> {
    let mut out = vec![];
    for w in words {
        if let Some((k, v)) = w.split_once('=')
            && matches!(k.to_ascii_lowercase().as_str(), "clusters" | "cluster")
        {
            out.extend(cluster::parse_list(v)?);
        }
    }
    Ok(out)
}

/// The first part of a user's GECOS field in the local user database, as Slurm's "Proper Name".
fn proper_name(passwd: &str, user: &str) -> String {
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.first() == Some(&user))
        .and_then(|f| f.get(4).map(|g| g.split(',').next().unwrap_or_default().to_string()))
        .unwrap_or_default()
}

/// Keeps the rows `Accounts=` and `Users=` ask for.
pub fn filter(q: &Query, mut u: pb::UsageResponse) -> pb::UsageResponse {
    let want = |list: &[String], v: &str| list.is_empty() || list.iter().any(|w| w.eq_ignore_ascii_case(v));
    u.rows.retain(|r| want(&q.accounts, &r.account) && want(&q.users, &r.user));
    u.sizes.retain(|r| want(&q.accounts, &r.account));
    u
}

async fn run(a: Args, now: DateTime<Local>) -> Result<String, String> {
    let q = query(&a.words, now)?;
    let mut given = a.clusters.clone();
    given.extend(cluster_words(&a.words)?);
    let mut c = conn::connect_flag(a.controller.as_deref(), Identity::local()).await?;
    let name = match cluster::resolve(&mut c, &given).await? {
        Some(n) => n,
        None => c.session.who_am_i(pb::WhoAmIRequest {}).await.map_err(status)?.into_inner().cluster_name,
    };
    let by_size = q.report == Report::SizesByAccount;
    let req = pb::UsageRequest { start_ms: q.start_ms, end_ms: q.end_ms, by_size };
    let u = filter(&q, c.jobs.usage(req).await.map_err(status)?.into_inner());
    if u.truncated && !a.quiet {
        super::output::complain(
            "sreport: warning: the history is longer than one report reads; the figures are a lower bound",
        );
    }
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    render::render(&q, &name, &u, a.time, a.parsable, !a.noheader, &|user| proper_name(&passwd, user))
}

/// Runs sreport with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    let result = match parse(argv) {
        Ok(a) if a.help => Ok(format!("{USAGE}\n")),
        Ok(a) if a.version => Ok(format!("spur {}\n", env!("CARGO_PKG_VERSION"))),
        Ok(a) => {
            if !a.quiet {
                a.warnings.iter().for_each(|w| super::output::complain(w));
            }
            run(a, Local::now()).await
        }
        Err(e) => Err(e),
    };
    super::output::finish("sreport", result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proper_names_come_from_the_gecos_field() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\nann:x:1000:1000:Ann Lee,Room 4,,:/home/ann:/bin/sh\n";
        assert_eq!(proper_name(passwd, "ann"), "Ann Lee");
        assert_eq!(proper_name(passwd, "bob"), "");
    }
}
