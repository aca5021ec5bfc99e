//! sprio and sshare on fake data: sprio's default and long columns byte for
//! byte, its filters (pending jobs only) and `-o` codes; sshare's Slurm
//! columns, the summed account lines, the default user (the caller), -a, -A,
//! -U, -l, `-o` prefixes and the parsable forms.

use spur_client::cli::{sprio, sshare};
use spur_proto::v1 as pb;

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

fn pjob(id: u64, user: &str, partition: &str, state: &str, prio: f64) -> pb::JobPriority {
    pb::JobPriority {
        id,
        user: user.into(),
        account: "ml".into(),
        qos: "normal".into(),
        partition: partition.into(),
        state: spur_proto::states::state_wire(spur_vocab::JobState::from_name(state).unwrap()),
        priority: prio,
        prio_base: 1000.0,
        prio_fair_share: 1.2,
        prio_age: 1.25,
        prio_tier: 2,
        prio_ordered: None,
    }
}

fn pjobs() -> Vec<pb::JobPriority> {
    vec![
        pjob(31, "bob", "gpu", "PENDING", 3000.2),
        pjob(30, "alice", "batch", "PENDING", 1500.0),
        pjob(29, "alice", "batch", "RUNNING", 900.0),
    ]
}

fn prio(w: &[&str]) -> String {
    sprio::report(&sprio::parse(&words(w)).unwrap(), &pjobs()).unwrap()
}

#[test]
fn sprio_default_columns_are_the_formula_factors() {
    let want = "          JOBID PARTITION   PRIORITY       BASE        AGE  FAIRSHARE       TIER
             30 batch           1500       1000     1.2500     1.2000          2
             31 gpu             3000       1000     1.2500     1.2000          2
";
    assert_eq!(prio(&[]), want);
}

#[test]
fn sprio_long_users_and_codes() {
    let out = prio(&["-l"]);
    assert!(out.starts_with("          JOBID PARTITION     USER    ACCOUNT   PRIORITY"), "{out}");
    assert!(out.contains("             30 batch        alice         ml       1500"), "{out}");
    // -u adds USER, as sprio does, and filters.
    let out = prio(&["-u", "bob"]);
    assert_eq!(out.lines().count(), 2);
    assert!(out.lines().nth(1).unwrap().contains("     bob"), "{out}");
    assert_eq!(
        prio(&["-h", "-o", "%i|%u|%a|%P|%Y|%B|%A|%F|%T", "-p", "gpu"]),
        "31|bob|ml|gpu|3000|1000|1.2500|1.2000|2\n"
    );
    // A running job has no factors to show.
    assert_eq!(prio(&["-j", "29"]), "Unable to find jobs matching user/id(s) specified\n");
    assert!(sprio::parse(&words(&["-o", "%Z"])).unwrap_err().contains("'%Z'"));
    assert!(sprio::parse(&words(&["-j", "x"])).unwrap_err().starts_with("--jobs:"));
    let f = sprio::parse(&words(&["-u", "bob"])).unwrap().filter();
    assert!(f.iter().any(|kv| kv.key == "state" && kv.value == "PENDING"));
}

#[test]
fn sprio_json_has_the_factors() {
    let v: serde_json::Value = serde_json::from_str(&prio(&["--json", "-j", "31"])).unwrap();
    assert_eq!(v["jobs"][0]["job_id"], 31);
    assert_eq!(v["jobs"][0]["fair_share"], 1.2);
    assert_eq!(v["jobs"][0]["tier"], 2);
}

fn row(account: &str, user: &str, shares: f64, raw: f64, norm: f64, fs: f64) -> pb::ShareRow {
    pb::ShareRow {
        account: account.into(),
        user: user.into(),
        norm_shares: shares,
        raw_usage: raw,
        norm_usage: norm,
        fair_share: fs,
        ..Default::default()
    }
}

fn rows() -> Vec<pb::ShareRow> {
    vec![
        row("phys", "carol", 0.5, 25000.0, 0.7, 0.757858),
        row("ml", "bob", 0.25, 7200.0, 0.2, 1.0),
        row("ml", "alice", 0.25, 3600.4, 0.1, 1.515717),
    ]
}

fn share(w: &[&str]) -> String {
    // As an older controller answers: user rows only, account lines summed here.
    let resp = pb::ListSharesResponse { rows: rows(), ..Default::default() };
    sshare::report(&sshare::parse(&words(w)).unwrap(), &resp, "alice").unwrap()
}

/// A controller that sends the tree: account rows (with their subtree's
/// usage) and every row's RawShares and LevelFS.
fn tree() -> pb::ListSharesResponse {
    let with = |mut r: pb::ShareRow, raw: f64, sib: f64, parent: f64, level: f64| {
        r.raw_shares = raw;
        r.sibling_shares = sib;
        r.parent_shares = parent;
        r.level_fs = level;
        r
    };
    let account = |name: &str, raw: f64, shares: f64, usage: f64, norm: f64, level: f64| {
        with(row(name, "", shares, usage, norm, 0.0), raw, 40.0, 1.0, level)
    };
    pb::ListSharesResponse {
        rows: vec![
            with(row("ml", "alice", 0.125, 3600.0, 0.1, 1.515717), 1.0, 2.0, 0.25, 1.25),
            with(row("ml", "bob", 0.125, 0.0, 0.0, 2.0), 1.0, 2.0, 0.25, f64::INFINITY),
        ],
        accounts: vec![
            account("ml", 10.0, 0.25, 3600.0, 0.1, 2.5),
            account("idle", 30.0, 0.75, 0.0, 0.0, f64::INFINITY),
        ],
        total_usage: 36000.0,
    }
}

#[test]
fn sshare_long_prints_raw_shares_and_level_fs_from_the_controller() {
    let a = sshare::parse(&words(&["-l", "-a", "-P"])).unwrap();
    let want = "\
Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS
idle||30|0.750000|0|0.000000|0.000000||inf
ml||10|0.250000|3600|0.100000|0.100000||2.500000
 ml|alice|1|0.125000|3600|0.100000|0.100000|1.515717|1.250000
 ml|bob|1|0.125000|0|0.000000|0.000000|2.000000|inf
";
    assert_eq!(sshare::report(&a, &tree(), "alice").unwrap(), want);
    let v: serde_json::Value = serde_json::from_str(
        &sshare::report(&sshare::parse(&words(&["--json"])).unwrap(), &tree(), "alice").unwrap(),
    )
    .unwrap();
    assert_eq!(
        (v["shares"][1]["raw_shares"].clone(), v["shares"][1]["level_fs"].clone()),
        (10.0.into(), 2.5.into())
    );
    assert!(v["shares"][0]["level_fs"].is_null(), "no usage: JSON has no inf");
}

#[test]
fn sshare_default_is_accounts_and_my_lines() {
    let want = "\
Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare 
-------------------- ---------- ---------- ----------- ----------- ------------- ---------- 
ml                                            0.500000       10800      0.300000            
 ml                       alice               0.250000        3600      0.100000   1.515717 
phys                                          0.500000       25000      0.700000            
";
    assert_eq!(share(&[]), want);
}

#[test]
fn sshare_selects_users_and_accounts() {
    let users = |out: String| -> Vec<String> {
        out.lines().skip(2).map(|l| l[21..31].trim().to_string()).filter(|u| !u.is_empty()).collect()
    };
    assert_eq!(users(share(&["-a"])), ["alice", "bob", "carol"]);
    assert_eq!(users(share(&["-u", "bob,carol"])), ["bob", "carol"]);
    assert_eq!(users(share(&["-u", "-1"])), ["alice", "bob", "carol"]);
    assert_eq!(
        share(&["-A", "phys", "-n", "-P", "-a"]),
        "phys|||0.500000|25000|0.700000|\n phys|carol||0.500000|25000|0.700000|0.757858\n"
    );
    assert_eq!(share(&["-U", "-p", "-n"]), " ml|alice||0.250000|3600|0.100000|1.515717|\n");
    let out = share(&["-l", "-P"]);
    assert!(
        out.starts_with(
            "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS\n"
        ),
        "{out}"
    );
    // Prefixes pick in Slurm's table order; widths as name%N.
    assert_eq!(share(&["-o", "user,fair%-9", "-U", "-h"]), "     alice 1.515717  \n");
    let a = sshare::parse(&words(&["-A", "ml"])).unwrap();
    assert_eq!(a.filter().len(), 1);
    assert!(sshare::parse(&words(&["-A", "ml,phys"])).unwrap().filter().is_empty());
    assert!(sshare::parse(&words(&["-o", "Bogus"])).unwrap_err().contains("Invalid field requested"));
    assert!(sshare::parse(&words(&["-x"])).unwrap_err().contains("'-x'"));
}

#[test]
fn sshare_json_marks_account_lines() {
    let v: serde_json::Value = serde_json::from_str(&share(&["--json"])).unwrap();
    assert_eq!(v["shares"][0]["account"], "ml");
    assert!(v["shares"][0]["user"].is_null() && v["shares"][0]["fair_share"].is_null());
    assert_eq!(v["shares"][1]["user"], "alice");
    assert_eq!(v["shares"][1]["effective_usage"], 0.1);
}

#[test]
fn sprio_shows_the_priority_expression_when_it_orders_the_queue() {
    let mut jobs = pjobs();
    jobs[0].prio_ordered = Some(42.5);
    let a = spur_client::cli::sprio::Args::default();
    let out = spur_client::cli::sprio::report(&a, &jobs).unwrap();
    let header = out.lines().next().unwrap();
    assert!(header.trim_end().ends_with("EXPR"), "{out}");
    assert!(out.contains("42.5000"), "{out}");
    assert!(out.contains("N/A"), "a job without the value: {out}");
    let plain = spur_client::cli::sprio::report(&a, &pjobs()).unwrap();
    assert!(!plain.contains("EXPR"), "{plain}");
}
