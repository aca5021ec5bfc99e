//! sreport's reports from the controller's sums: the banner, Slurm's columns
//! and widths (print_fields), and its time units. Pure: the window and the
//! sums come in, the text goes out.

use super::{Query, Report, TimeFmt};
use crate::cli::args::Parsable;
use crate::cli::fields::{parse_columns, print_fields};
use chrono::{Local, TimeZone};
use spur_proto::v1 as pb;
use std::collections::BTreeMap;

/// One column: its header, its Slurm keyword (matched by prefix, in table order), and its widths
/// (plain, and for the `SecPer`-style units that print a percentage beside the value).
struct Col {
    head: &'static str,
    key: &'static str,
    width: i32,
    per_width: i32,
}

const fn col(head: &'static str, key: &'static str, width: i32, per_width: i32) -> Col {
    Col { head, key, width, per_width }
}

const UTILIZATION: &[Col] = &[
    col("Allocated", "allocated", 12, 20),
    col("Cluster", "cluster", 9, 9),
    col("Down", "down", 10, 18),
    col("Idle", "idle", 12, 20),
    col("Over Comm", "overcommitted", 9, 18),
    col("Planned", "planned", 9, 18),
    col("Planned", "reserved", 9, 18),
    col("PLND Down", "planneddown", 10, 18),
    col("PLND Down", "plnddown", 10, 18),
    col("Reported", "reported", 12, 20),
];

const BY_USER: &[Col] = &[
    col("Account", "accounts", 15, 15),
    col("Cluster", "cluster", 9, 9),
    col("Energy", "energy", 10, 18),
    col("Login", "login", 9, 9),
    col("Proper Name", "proper", 15, 15),
    col("Used", "used", 10, 18),
];

/// A report's default `format=`, as Slurm's.
fn default_format(r: Report) -> &'static str {
    match r {
        Report::Utilization => "Cl,al,d,PLNDDown,i,res,rep",
        Report::AccountByUser => "Cluster,Ac,Login,Proper,Used,Energy",
        Report::UserByAccount | Report::TopUsage => "Cluster,Login,Proper,Ac,Used,Energy",
        Report::SizesByAccount => "Cl,a",
    }
}

/// Slurm's `sreport_get_time_str`: seconds in the unit asked for, or as a share of `total`.
pub fn time_str(secs: u64, total: u64, t: TimeFmt) -> String {
    let total = total.max(1) as f64;
    let pct = secs as f64 / total * 100.0;
    let v = secs as f64;
    match t {
        TimeFmt::Seconds => secs.to_string(),
        TimeFmt::Minutes => format!("{:.0}", v / 60.0),
        TimeFmt::Hours => format!("{:.0}", v / 3600.0),
        TimeFmt::Percent => format!("{pct:.2}%"),
        TimeFmt::SecPer => format!("{secs}({pct:.2}%)"),
        TimeFmt::MinPer => format!("{:.0}({pct:.2}%)", v / 60.0),
        TimeFmt::HourPer => format!("{:.0}({pct:.2}%)", v / 3600.0),
    }
}

/// `slurm_make_time_str`'s default form.
fn when(secs: i64) -> String {
    Local
        .timestamp_opt(secs, 0)
        .single()
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S").to_string())
        .unwrap_or_default()
}

/// The `----` banner: the report's title with its window, and the unit.
fn banner(q: &Query, t: TimeFmt) -> String {
    let (start, end) = (q.start_ms / 1000, q.end_ms / 1000);
    let span = end - start;
    let window = format!("{} - {}", when(start), when(end - 1));
    let title = match q.report {
        Report::Utilization => format!("Cluster Utilization {window}"),
        Report::AccountByUser => format!("Cluster/Account/User Utilization {window} ({span} secs)"),
        Report::UserByAccount => format!("Cluster/User/Account Utilization {window} ({span} secs)"),
        Report::TopUsage => {
            let top = if q.top == 0 { "ALL".to_string() } else { q.top.to_string() };
            format!("Top {top} Users {window} ({span} secs)")
        }
        Report::SizesByAccount => format!("Job Sizes {window} ({span} secs)"),
    };
    let unit = match t {
        _ if q.report == Report::SizesByAccount && q.job_count => {
            "Units are in number of jobs ran".to_string()
        }
        _ if q.report == Report::SizesByAccount => format!("Time reported in {}", t.name()),
        TimeFmt::Percent => "Usage reported in Percentage of Total".to_string(),
        t => format!("Usage reported in CPU {}", t.name()),
    };
    let rule = "-".repeat(80);
    format!("{rule}\n{title}\n{unit}\n{rule}\n")
}

/// One printed line's values, by column keyword.
type Line = BTreeMap<&'static str, String>;

/// The report's text: the banner and header unless `-n`, then its lines.
pub fn render(
    q: &Query,
    cluster: &str,
    u: &pb::UsageResponse,
    t: TimeFmt,
    p: Parsable,
    header: bool,
    proper: &dyn Fn(&str) -> String,
) -> Result<String, String> {
    if q.report == Report::SizesByAccount {
        return sizes(q, cluster, u, t, p, header);
    }
    let table = if q.report == Report::Utilization { UTILIZATION } else { BY_USER };
    let spec = q.format.clone().unwrap_or_else(|| default_format(q.report).to_string());
    let cols = parse_columns(&spec, |n| pick(table, n), "sreport")?;
    let per = matches!(t, TimeFmt::SecPer | TimeFmt::MinPer | TimeFmt::HourPer);
    let heads: Vec<(&str, i32)> =
        cols.iter().map(|(c, w)| (c.head, w.unwrap_or(if per { c.per_width } else { c.width }))).collect();
    let lines = match q.report {
        Report::Utilization => vec![utilization(q, cluster, u, t)],
        Report::AccountByUser => by_account(u, cluster, t, proper),
        Report::UserByAccount | Report::TopUsage | Report::SizesByAccount => {
            by_user(q, u, cluster, t, proper)
        }
    };
    let cells: Vec<Vec<String>> = lines
        .iter()
        .map(|l| cols.iter().map(|(c, _)| l.get(c.key).cloned().unwrap_or_default()).collect())
        .collect();
    let mut out = if header { banner(q, t) } else { String::new() };
    out += &print_fields(&heads, &cells, p, "|", header);
    Ok(out)
}

/// Prefix match in table order, as Slurm's `strncasecmp` chain.
fn pick<'a>(table: &'a [Col], name: &str) -> Option<&'a Col> {
    let w = name.to_ascii_lowercase();
    (!w.is_empty()).then_some(())?;
    table.iter().find(|c| c.key.starts_with(&w))
}

fn utilization(q: &Query, cluster: &str, u: &pb::UsageResponse, t: TimeFmt) -> Line {
    let span = u64::try_from((q.end_ms - q.start_ms) / 1000).unwrap_or(0);
    let reported = u.cluster_cpus.saturating_mul(span);
    let allocated = u.rows.iter().map(|r| r.cpu_secs).sum::<u64>().min(reported);
    let s = |v| time_str(v, reported, t);
    let mut l = Line::new();
    l.insert("cluster", cluster.to_string());
    l.insert("allocated", s(allocated));
    for k in ["down", "planneddown", "plnddown", "planned", "reserved", "overcommitted"] {
        l.insert(k, s(0));
    }
    l.insert("idle", s(reported - allocated));
    l.insert("reported", s(reported));
    l
}

fn line(cluster: &str, account: &str, login: &str, proper: String, used: String, energy: String) -> Line {
    let mut l = Line::new();
    l.insert("cluster", cluster.to_string());
    l.insert("accounts", account.to_string());
    l.insert("login", login.to_string());
    l.insert("proper", proper);
    l.insert("used", used);
    l.insert("energy", energy);
    l
}

/// `cluster AccountUtilizationByUser`: root's total, then each account's total and its users.
fn by_account(
    u: &pb::UsageResponse,
    cluster: &str,
    t: TimeFmt,
    proper: &dyn Fn(&str) -> String,
) -> Vec<Line> {
    let total: u64 = u.rows.iter().map(|r| r.cpu_secs).sum();
    let s = |v| time_str(v, total, t);
    let mut accounts: BTreeMap<&str, Vec<&pb::UsageRow>> = BTreeMap::new();
    for r in &u.rows {
        accounts.entry(r.account.as_str()).or_default().push(r);
    }
    let mut out = vec![line(cluster, "root", "", String::new(), s(total), s(0))];
    for (account, mut users) in accounts {
        users.sort_by(|a, b| b.cpu_secs.cmp(&a.cpu_secs).then(a.user.cmp(&b.user)));
        let sum = users.iter().map(|r| r.cpu_secs).sum();
        out.push(line(cluster, account, "", String::new(), s(sum), s(0)));
        out.extend(
            users.iter().map(|r| line(cluster, account, &r.user, proper(&r.user), s(r.cpu_secs), s(0))),
        );
    }
    out
}

/// `cluster UserUtilizationByAccount` (a line per user and account) and `user TopUsage`
/// (a line per user, its accounts joined, the `topcount=` largest): by use, largest first.
fn by_user(
    q: &Query,
    u: &pb::UsageResponse,
    cluster: &str,
    t: TimeFmt,
    proper: &dyn Fn(&str) -> String,
) -> Vec<Line> {
    let total: u64 = u.rows.iter().map(|r| r.cpu_secs).sum();
    let s = |v| time_str(v, total, t);
    let mut rows: Vec<(String, String, u64)> = if q.report == Report::TopUsage {
        let mut users: BTreeMap<&str, (Vec<&str>, u64)> = BTreeMap::new();
        for r in &u.rows {
            let e = users.entry(r.user.as_str()).or_default();
            e.0.push(r.account.as_str());
            e.1 += r.cpu_secs;
        }
        users.into_iter().map(|(user, (accts, secs))| (user.to_string(), accts.join(","), secs)).collect()
    } else {
        u.rows.iter().map(|r| (r.user.clone(), r.account.clone(), r.cpu_secs)).collect()
    };
    rows.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    if q.report == Report::TopUsage && q.top > 0 {
        rows.truncate(q.top);
    }
    rows.iter().map(|(user, acct, secs)| line(cluster, acct, user, proper(user), s(*secs), s(0))).collect()
}

/// `job SizesByAccount`: per account, its time (or jobs) in each job-size
/// column, its total, and its share of the cluster's.
fn sizes(
    q: &Query,
    cluster: &str,
    u: &pb::UsageResponse,
    t: TimeFmt,
    p: Parsable,
    header: bool,
) -> Result<String, String> {
    const JOB: &[Col] = &[col("Account", "account", 9, 9), col("Cluster", "cluster", 9, 9)];
    let spec = q.format.clone().unwrap_or_else(|| default_format(q.report).to_string());
    let cols = parse_columns(&spec, |n| pick(JOB, n), "sreport")?;
    let mut heads: Vec<(String, i32)> =
        cols.iter().map(|(c, w)| (c.head.to_string(), w.unwrap_or(c.width))).collect();
    let mut low = 0;
    for g in &q.grouping {
        heads.push((format!("{low}-{} CPUs", g - 1), 13));
        low = *g;
    }
    heads.push((format!(">= {low} CPUs"), 13));
    heads.push(("Total Count".into(), 11));
    heads.push(("% of cluster".into(), 12));
    // The column of a job of `cpus`: the first break above it.
    let column = |cpus: u32| q.grouping.iter().position(|g| cpus < *g).unwrap_or(q.grouping.len());
    let value = |s: &pb::UsageSize| if q.job_count { s.jobs } else { s.cpu_secs };
    let cluster_total: u64 = u.sizes.iter().map(value).sum();
    let mut accounts: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for s in &u.sizes {
        accounts.entry(s.account.as_str()).or_insert_with(|| vec![0; q.grouping.len() + 1])
            [column(s.cpus)] += value(s);
    }
    let cells: Vec<Vec<String>> = accounts
        .iter()
        .map(|(account, by)| {
            let total: u64 = by.iter().sum();
            let show = |v: u64, of: u64| if q.job_count { v.to_string() } else { time_str(v, of, t) };
            let mut row: Vec<String> = cols
                .iter()
                .map(|(c, _)| if c.key == "cluster" { cluster.to_string() } else { account.to_string() })
                .collect();
            row.extend(by.iter().map(|v| show(*v, total)));
            row.push(show(total, 0));
            row.push(time_str(total, cluster_total, TimeFmt::Percent));
            row
        })
        .collect();
    let heads: Vec<(&str, i32)> = heads.iter().map(|(h, w)| (h.as_str(), *w)).collect();
    let mut out = if header { banner(q, t) } else { String::new() };
    out += &print_fields(&heads, &cells, p, "|", header);
    Ok(out)
}
