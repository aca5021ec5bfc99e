//! sreport's pure half: the report and window from its words against a fixed
//! now, Slurm's units, and each report's banner, columns and lines.

use chrono::{Local, TimeZone};
use spur_client::cli::args::Parsable;
use spur_client::cli::sreport::render::{render, time_str};
use spur_client::cli::sreport::{Query, Report, TimeFmt, filter, query};
use spur_proto::v1 as pb;

fn now() -> chrono::DateTime<Local> {
    Local.with_ymd_and_hms(2026, 3, 10, 14, 30, 0).unwrap()
}

fn ms(y: i32, m: u32, d: u32, h: u32) -> i64 {
    Local.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap().timestamp_millis()
}

fn q(line: &str) -> Result<Query, String> {
    query(&line.split_whitespace().map(String::from).collect::<Vec<_>>(), now())
}

fn usage() -> pb::UsageResponse {
    let row = |a: &str, u: &str, s| pb::UsageRow { account: a.into(), user: u.into(), cpu_secs: s };
    pb::UsageResponse {
        rows: vec![row("ml", "ann", 7_200), row("ml", "bob", 3_600), row("phys", "ann", 1_800)],
        cluster_cpus: 8,
        truncated: false,
        sizes: vec![],
    }
}

fn show(q: &Query, t: TimeFmt, p: Parsable, header: bool) -> String {
    render(q, "spur", &usage(), t, p, header, &|u: &str| {
        if u == "ann" { "Ann Lee".into() } else { String::new() }
    })
    .unwrap()
}

#[test]
fn the_default_window_is_yesterday_and_words_pick_the_report() {
    let d = q("cluster utilization").unwrap();
    assert_eq!(
        (d.report, d.start_ms, d.end_ms),
        (Report::Utilization, ms(2026, 3, 9, 0), ms(2026, 3, 10, 0))
    );
    assert_eq!(q("cluster AccountUtilizationByUser").unwrap().report, Report::AccountByUser);
    assert_eq!(q("c accountutilizationbyuser").unwrap().report, Report::AccountByUser);
    assert_eq!(q("cluster UserUtilizationByAccount").unwrap().report, Report::UserByAccount);
    let t = q("user topusage topcount=3 start=2026-03-01 end=now").unwrap();
    assert_eq!(
        (t.report, t.top, t.start_ms, t.end_ms),
        (Report::TopUsage, 3, ms(2026, 3, 1, 0), now().timestamp_millis())
    );
    // An end after now is now.
    assert_eq!(q("cluster utilization end=tomorrow").unwrap().end_ms, now().timestamp_millis());
}

#[test]
fn bad_words_name_what_is_wrong() {
    assert!(q("").unwrap_err().contains("name a report"));
    assert!(q("cluster bogus").unwrap_err().contains("'bogus'"));
    assert!(q("cluster utilization start=soon").unwrap_err().starts_with("start: 'soon' is not a time"));
    assert!(q("cluster utilization colour=red").unwrap_err().contains("'colour'"));
    assert!(q("cluster utilization start=now").unwrap_err().contains("must start before it ends"));
    assert!(q("user topusage topcount=x").unwrap_err().contains("topcount"));
    assert!(TimeFmt::parse("fortnights").unwrap_err().starts_with("-t: unknown time format 'fortnights'"));
}

#[test]
fn units_are_slurms() {
    assert_eq!(time_str(5_400, 10_800, TimeFmt::Seconds), "5400");
    assert_eq!(time_str(5_400, 10_800, TimeFmt::Minutes), "90");
    assert_eq!(time_str(5_400, 10_800, TimeFmt::Hours), "2");
    assert_eq!(time_str(5_400, 10_800, TimeFmt::Percent), "50.00%");
    assert_eq!(time_str(5_400, 10_800, TimeFmt::MinPer), "90(50.00%)");
    assert_eq!(TimeFmt::parse("h").unwrap(), TimeFmt::Hours);
    assert_eq!(TimeFmt::parse("minper").unwrap(), TimeFmt::MinPer);
    assert_eq!(TimeFmt::parse("Percent").unwrap(), TimeFmt::Percent);
}

#[test]
fn cluster_utilization_has_the_banner_and_slurms_columns() {
    let mut w = q("cluster utilization").unwrap();
    w.end_ms = w.start_ms + 3_600_000;
    let out = show(&w, TimeFmt::Minutes, Parsable::No, true);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "-".repeat(80));
    assert_eq!(lines[1], "Cluster Utilization 2026-03-09T00:00:00 - 2026-03-09T00:59:59");
    assert_eq!(lines[2], "Usage reported in CPU Minutes");
    assert_eq!(lines[4], "  Cluster    Allocated       Down  PLND Down         Idle   Planned     Reported ");
    // 8 CPUs x 60 min = 480 reported; 210 allocated.
    assert_eq!(lines[6], "     spur          210          0          0          270         0          480 ");
    let p = show(&w, TimeFmt::Percent, Parsable::NoTrailing, false);
    assert_eq!(p, "spur|43.75%|0.00%|0.00%|56.25%|0.00%|100.00%\n");
}

#[test]
fn account_utilization_by_user_lists_root_then_each_account_and_its_users() {
    let w = Query { format: None, ..q("cluster AccountUtilizationByUser").unwrap() };
    let out = show(&w, TimeFmt::Seconds, Parsable::NoTrailing, true);
    assert!(out.contains(
        "\nCluster/Account/User Utilization 2026-03-09T00:00:00 - 2026-03-09T23:59:59 (86400 secs)\n"
    ));
    let body: Vec<&str> = out.lines().skip(4).collect();
    assert_eq!(
        body,
        [
            "Cluster|Account|Login|Proper Name|Used|Energy",
            "spur|root|||12600|0",
            "spur|ml|||10800|0",
            "spur|ml|ann|Ann Lee|7200|0",
            "spur|ml|bob||3600|0",
            "spur|phys|||1800|0",
            "spur|phys|ann|Ann Lee|1800|0",
        ]
    );
    let only = filter(&Query { accounts: vec!["phys".into()], ..w.clone() }, usage());
    assert_eq!(only.rows.len(), 1);
}

#[test]
fn top_usage_sums_a_users_accounts_and_keeps_the_largest() {
    let w = q("user topusage topcount=1 format=Login,Account,Used").unwrap();
    let out = show(&w, TimeFmt::Seconds, Parsable::Trailing, true);
    assert!(out.contains("\nTop 1 Users 2026-03-09T00:00:00 - 2026-03-09T23:59:59 (86400 secs)\n"), "{out}");
    assert!(out.ends_with("Login|Account|Used|\nann|ml,phys|9000|\n"), "{out}");
    let by = q("cluster UserUtilizationByAccount").unwrap();
    let out = show(&by, TimeFmt::Seconds, Parsable::NoTrailing, false);
    assert_eq!(out, "spur|ann|Ann Lee|ml|7200|0\nspur|bob||ml|3600|0\nspur|ann|Ann Lee|phys|1800|0\n");
    let e = render(
        &Query { format: Some("Bogus".into()), ..by },
        "spur",
        &usage(),
        TimeFmt::Seconds,
        Parsable::No,
        true,
        &|_| String::new(),
    );
    assert!(e.unwrap_err().contains("\"Bogus\""));
}

#[test]
fn job_sizes_by_account_puts_each_accounts_time_in_its_size_column() {
    let size = |a: &str, cpus, s, jobs| pb::UsageSize { account: a.into(), cpus, cpu_secs: s, jobs };
    let u = pb::UsageResponse {
        sizes: vec![size("ml", 4, 3_000, 2), size("ml", 64, 9_000, 1), size("phys", 1, 6_000, 3)],
        ..usage()
    };
    let w = q("job SizesByAccount").unwrap();
    assert_eq!(
        (w.report, w.grouping.clone(), w.job_count),
        (Report::SizesByAccount, vec![50, 250, 500, 1000], false)
    );
    let out =
        render(&w, "spur", &u, TimeFmt::Minutes, Parsable::NoTrailing, true, &|_| String::new()).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[1], "Job Sizes 2026-03-09T00:00:00 - 2026-03-09T23:59:59 (86400 secs)");
    assert_eq!(lines[2], "Time reported in Minutes");
    assert_eq!(
        lines[4..],
        [
            "Cluster|Account|0-49 CPUs|50-249 CPUs|250-499 CPUs|500-999 CPUs|>= 1000 CPUs|Total Count|% of cluster",
            "spur|ml|50|150|0|0|0|200|66.67%",
            "spur|phys|100|0|0|0|0|100|33.33%",
        ]
    );
    let w = q("job sizesbyaccount grouping=2,10 PrintJobCount FlatView").unwrap();
    let out =
        render(&w, "spur", &u, TimeFmt::Minutes, Parsable::NoTrailing, true, &|_| String::new()).unwrap();
    assert!(out.contains("\nUnits are in number of jobs ran\n"), "{out}");
    assert!(out.ends_with("Cluster|Account|0-1 CPUs|2-9 CPUs|>= 10 CPUs|Total Count|% of cluster\nspur|ml|0|2|1|3|50.00%\nspur|phys|3|0|0|3|50.00%\n"), "{out}");
    assert!(q("job sizesbyaccount grouping=10,5").unwrap_err().contains("increasing"));
    assert!(q("job sizesbyaccount bogus").unwrap_err().contains("'bogus'"));
}
