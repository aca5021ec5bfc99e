//! `sshare` (also `spur share`): fair share per account and user, in Slurm's
//! columns and print_fields layout (shared with `sacct`). ListShares returns
//! one row per (account, user); the account lines Slurm prints above its
//! users are summed here from all of the account's rows, so an account's
//! totals do not depend on which users are shown. The tree's parent links are
//! not in ListShares, so accounts are listed flat, each followed by its users
//! indented one space (Slurm indents a user one level below its account).
//!
//! The account lines come from the controller's own account rows (each
//! account's usage is its subtree's); a controller that sends none gets them
//! summed from the user rows. A user's RawShares is 1: Spur splits an
//! account's share evenly between its users. EffectvUsage equals NormUsage
//! (the share of all usage on the cluster), LevelFS is NormShares /
//! EffectvUsage (`inf` with no usage), and FairShare is Spur's factor
//! `2^(1 - usage/shares)`: 2 for an idle user, 1 at exactly its share
//! (Slurm's classic factor is half of it).

use super::kv::list;

use super::args::Parsable;
use super::fields::{help_format, parse_columns, prefix, print_fields};
use super::fmt::status;
use super::getopt::{Mode, Opt, Spec, check, switch, value};
use crate::conn::{self, Identity};
use spur_proto::v1 as pb;
use std::collections::BTreeMap;

pub const USAGE: &str = "\
usage: sshare [-aelnpPU] [-A ACCOUNT,...] [-u USER,...] [-o FIELDS] [--json] [--controller URL]
  -a, --all             every user's lines (default: your own, under every account)
  -u, --users=U,...     these users' lines (-u -1: everyone)
  -A, --accounts=A,...  only these accounts        -U, --Users   user lines only
  -l, --long            adds NormUsage, LevelFS    -e, --helpformat   list the fields
  -o, --format=FIELDS   name[%width],... of Account User RawShares NormShares RawUsage NormUsage
                        EffectvUsage FairShare LevelFS (a negative width left-justifies)
  -n, -h, --noheader    no header   -p, --parsable / -P, --parsable2   '|' delimited
  --json / --yaml       the lines as JSON / YAML
  -M, --clusters=NAME   this controller's cluster (or all)     -V, --version   Spur's version
  -m, --partition       accepted with a warning (Spur's share rows have no partition)
Fields Spur keeps no data for print blank: Cluster GrpTRESMins GrpTRESRaw ID Partition TRESRunMins.
A user's RawShares is 1 (an account's share is split evenly between its users); EffectvUsage is
NormUsage; LevelFS is NormShares/EffectvUsage (inf with no usage, above 1 under-served).
FairShare is Spur's 2^(1 - NormUsage/NormShares): 2 idle, 1 at the user's share, below 1 above it.
Accounts are listed flat (no parent tree); an account's usage is that of its whole subtree.";

static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
const OPTS: &[Opt<Args>] = &[
    switch("a/all", |a| a.all_users = true),
    value("A/accounts", |a, v| a.accounts.extend(list(&v))),
    switch("e/helpformat", |a| a.helpformat = true),
    switch("h/noheader", |a| a.noheader = true),
    switch("l/long", |a| a.long = true),
    switch("n/noheader", |a| a.noheader = true),
    value("o/format", |a, v| a.format.push(v)),
    switch("p/parsable", |a| a.parsable = Parsable::Trailing),
    switch("P/parsable2", |a| a.parsable = Parsable::NoTrailing),
    value("u/users", users),
    switch("U/Users", |a| a.users_only = true),
    switch("-/json", |a| a.json = true),
    switch("-/yaml", |a| a.yaml = true),
    value("-/controller", |a, v| a.controller = Some(v)),
    switch("-/help", |a| a.help = true),
    switch("-/usage", |a| a.help = true),
    check("M/clusters", |a, v| super::cluster::parse_list(&v).map(|n| a.clusters.extend(n))),
    switch("m/partition", |a| {
        a.warnings.push("--partition has no effect: Spur's share rows are per account and user".into())
    }),
    switch("v/verbose", |_| {}),
    switch("V/version", |a| a.version = true),
];

const DEFAULT_FORMAT: &str = "Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare";
const LONG_FORMAT: &str =
    "Account,User,RawShares,NormShares,RawUsage,NormUsage,EffectvUsage,FairShare,LevelFS";

/// One printed line: an account's (no user, no fair share) or a user's.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub account: String,
    pub user: Option<String>,
    /// None from a controller that does not send it.
    pub raw_shares: Option<f64>,
    pub norm_shares: f64,
    pub raw_usage: f64,
    pub norm_usage: f64,
    pub fair_share: Option<f64>,
    pub level_fs: Option<f64>,
}

/// Slurm prints six decimals, and `inf` for a LevelFS with no usage.
fn dbl(v: f64) -> String {
    if v.is_infinite() { "inf".into() } else { format!("{v:.6}") }
}

/// `(name, width, value)` in Slurm's table order, so a prefix picks as sshare does.
type Get = fn(&Line) -> String;
const FIELDS: &[(&str, i32, Get)] = &[
    ("Account", -20, |l| if l.user.is_some() { format!(" {}", l.account) } else { l.account.clone() }),
    ("Cluster", 10, |_| String::new()),
    ("EffectvUsage", 13, |l| dbl(l.norm_usage)),
    ("FairShare", 10, |l| l.fair_share.map(dbl).unwrap_or_default()),
    // Blank: Spur keeps no TRES-minute limits or association ids.
    ("GrpTRESMins", 30, |_| String::new()),
    ("GrpTRESRaw", 30, |_| String::new()),
    ("ID", 6, |_| String::new()),
    ("LevelFS", 10, |l| l.level_fs.map(dbl).unwrap_or_default()),
    ("NormShares", 11, |l| dbl(l.norm_shares)),
    ("NormUsage", 11, |l| dbl(l.norm_usage)),
    ("Partition", 12, |_| String::new()),
    ("RawShares", 10, |l| l.raw_shares.map(|r| format!("{r}")).unwrap_or_default()),
    ("RawUsage", 11, |l| format!("{:.0}", l.raw_usage.max(0.0))),
    ("TRESRunMins", 30, |_| String::new()),
    ("User", 10, |l| l.user.clone().unwrap_or_default()),
];

#[derive(Debug, Clone, Default)]
pub struct Args {
    pub help: bool,
    pub helpformat: bool,
    pub json: bool,
    pub noheader: bool,
    pub long: bool,
    pub users_only: bool,
    pub parsable: Parsable,
    pub all_users: bool,
    pub users: Vec<String>,
    pub accounts: Vec<String>,
    pub format: Vec<String>,
    pub controller: Option<String>,
    pub yaml: bool,
    pub version: bool,
    /// `-M`: the clusters named (this controller's, or `all`).
    pub clusters: Vec<String>,
    /// Flags accepted without effect, one warning each.
    pub warnings: Vec<String>,
}

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    FLAGS.parse_flags(argv, &mut a, "sshare")?;
    columns(&a)?;
    Ok(a)
}

/// As in Slurm, `-u -1` means everyone and a later -u undoes an earlier -a.
fn users(a: &mut Args, v: String) {
    if v.trim() == "-1" {
        a.all_users = true;
    } else {
        a.all_users = false;
        a.users.extend(list(&v));
    }
}

pub fn columns(a: &Args) -> Result<Vec<(&'static str, i32, Get)>, String> {
    let spec = match (&a.format[..], a.long) {
        ([], false) => DEFAULT_FORMAT.to_string(),
        ([], true) => LONG_FORMAT.to_string(),
        (f, _) => f.join(","),
    };
    let cols = parse_columns(&spec, |n| prefix(FIELDS, |f| f.0, n), "sshare")?;
    Ok(cols.into_iter().map(|(f, w)| (f.0, w.unwrap_or(f.1), f.2)).collect())
}

impl Args {
    /// Whose user lines: `None` for everyone; by default the caller's, as sshare.
    pub fn users(&self, me: &str) -> Option<Vec<String>> {
        if self.all_users {
            None
        } else if self.users.is_empty() {
            Some(vec![me.to_string()])
        } else {
            Some(self.users.clone())
        }
    }

    /// ListShares takes one account, so a longer `-A` list is filtered here.
    /// Users are never sent: account lines need every user's row.
    pub fn filter(&self) -> Vec<pb::KeyValue> {
        match &self.accounts[..] {
            [one] => vec![pb::KeyValue { key: "account".into(), value: one.clone() }],
            _ => vec![],
        }
    }
}

/// The lines to print, accounts in name order, each followed by its shown users.
pub fn lines(a: &Args, resp: &pb::ListSharesResponse, me: &str) -> Vec<Line> {
    let users = a.users(me);
    let wanted =
        |name: &str| a.accounts.is_empty() || a.accounts.iter().any(|w| w.eq_ignore_ascii_case(name));
    let mut by_account: BTreeMap<&str, Vec<&pb::ShareRow>> = BTreeMap::new();
    for r in resp.accounts.iter().filter(|r| wanted(&r.account)) {
        by_account.entry(r.account.as_str()).or_default();
    }
    for r in resp.rows.iter().filter(|r| wanted(&r.account)) {
        by_account.entry(r.account.as_str()).or_default().push(r);
    }
    // Sent rows keep the wire's zero RawShares/LevelFS of an older controller blank.
    let sent = !resp.accounts.is_empty();
    let mut out = vec![];
    for (account, mut rs) in by_account {
        rs.sort_by(|x, y| x.user.cmp(&y.user));
        if !a.users_only {
            out.push(match resp.accounts.iter().find(|r| r.account == account) {
                Some(r) => Line { user: None, fair_share: None, ..line(r, true) },
                None => Line {
                    account: account.to_string(),
                    user: None,
                    raw_shares: None,
                    norm_shares: rs.iter().map(|r| r.norm_shares).sum(),
                    raw_usage: rs.iter().map(|r| r.raw_usage).sum(),
                    norm_usage: rs.iter().map(|r| r.norm_usage).sum(),
                    fair_share: None,
                    level_fs: None,
                },
            });
        }
        let shown = rs.into_iter().filter(|r| users.as_ref().is_none_or(|u| u.contains(&r.user)));
        out.extend(shown.map(|r| line(r, sent)));
    }
    out
}

fn line(r: &pb::ShareRow, sent: bool) -> Line {
    Line {
        account: r.account.clone(),
        user: Some(r.user.clone()),
        raw_shares: sent.then_some(r.raw_shares),
        norm_shares: r.norm_shares,
        raw_usage: r.raw_usage,
        norm_usage: r.norm_usage,
        fair_share: Some(r.fair_share),
        level_fs: sent.then_some(r.level_fs),
    }
}

/// The whole report from listed rows; no I/O.
pub fn report(a: &Args, resp: &pb::ListSharesResponse, me: &str) -> Result<String, String> {
    let cols = columns(a)?;
    let lines = lines(a, resp, me);
    if a.json || a.yaml {
        let v: Vec<serde_json::Value> = lines
            .iter()
            .map(|l| {
                serde_json::json!({
                    "account": l.account, "user": l.user, "norm_shares": l.norm_shares,
                    "raw_usage": l.raw_usage, "norm_usage": l.norm_usage,
                    "effective_usage": l.norm_usage, "fair_share": l.fair_share,
                    // JSON has no infinity: a LevelFS with no usage is null.
                    "raw_shares": l.raw_shares, "level_fs": l.level_fs.filter(|v| v.is_finite()),
                })
            })
            .collect();
        return Ok(super::output::document(&serde_json::json!({ "shares": v }), a.yaml));
    }
    let heads: Vec<(&str, i32)> = cols.iter().map(|c| (c.0, c.1)).collect();
    let cells: Vec<Vec<String>> = lines.iter().map(|l| cols.iter().map(|c| (c.2)(l)).collect()).collect();
    Ok(print_fields(&heads, &cells, a.parsable, "|", !a.noheader))
}

async fn run(a: Args) -> Result<String, String> {
    for w in &a.warnings {
        super::output::complain(&format!("sshare: warning: {w}"));
    }
    if a.version {
        return Ok(super::output::version());
    }
    let me = Identity::local();
    let mut c = conn::connect_flag(a.controller.as_deref(), me.clone()).await?;
    super::cluster::resolve(&mut c, &a.clusters).await?;
    let req = pb::ListRequest { filter: a.filter() };
    let resp = c.jobs.list_shares(req).await.map_err(status)?.into_inner();
    report(&a, &resp, &me.user)
}

/// Runs sshare with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    let result = match parse(argv) {
        Ok(a) if a.help => Ok(format!("{USAGE}\n")),
        Ok(a) if a.helpformat => Ok(help_format(&FIELDS.iter().map(|f| f.0).collect::<Vec<_>>(), 17)),
        Ok(a) => run(a).await,
        Err(e) => Err(e),
    };
    super::output::finish("sshare", result)
}
