//! `scontrol create|update reservation`'s words: what each key takes, and the
//! refusals, each naming its key.

use chrono::{Local, TimeZone};
use spur_vocab::resv::{Access, NodeEdit, Op, ResvFlags, ResvRequest};
use spur_vocab::time::TimeLimit;

fn now() -> chrono::DateTime<Local> {
    Local.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap()
}

fn parse(words: &[&str]) -> Result<ResvRequest, String> {
    ResvRequest::parse(words, now())
}

#[test]
fn a_maintenance_window_reads_as_slurm_writes_it() {
    let r = parse(&[
        "ReservationName=maint",
        "StartTime=now+1hour",
        "Duration=2:00:00",
        "Nodes=node[01-04]",
        "Users=root",
        "Flags=MAINT,IGNORE_JOBS",
    ])
    .unwrap();
    assert_eq!(r.name.as_deref(), Some("maint"));
    assert_eq!(r.start_ms, Some(now().timestamp_millis() + 3_600_000));
    assert_eq!(r.duration, Some(TimeLimit::Minutes(120)));
    assert_eq!(r.nodes, Some(NodeEdit::List(Op::Set, "node[01-04]".into())));
    assert_eq!(r.users, Some((Op::Set, Access { names: vec!["root".into()], deny: false })));
    let (op, f) = r.flags.unwrap();
    assert_eq!(op, Op::Set);
    assert!(f.has(ResvFlags::MAINT) && f.has(ResvFlags::IGNORE_JOBS) && !f.has(ResvFlags::OVERLAP));
    assert_eq!(f.to_string(), "MAINT,IGNORE_JOBS");
}

#[test]
fn keys_take_any_case_and_any_unambiguous_prefix() {
    let r = parse(&[
        "reservationname=a",
        "starttime=2026-03-03T02:00:00",
        "endt=2026-03-03T04:00",
        "nodec=2k",
        "part=debug",
        "acc=physics",
        "lic=matlab:2,foo",
    ])
    .unwrap();
    assert_eq!(r.end_ms.unwrap() - r.start_ms.unwrap(), 2 * 3_600_000);
    assert_eq!(r.node_cnt, Some(2048));
    assert_eq!(r.partition.as_deref(), Some("debug"));
    assert_eq!(r.licenses, Some(vec![("matlab".into(), 2), ("foo".into(), 1)]));
    assert!(parse(&["N=x"]).unwrap_err().contains("ambiguous"), "N: Nodes or NodeCnt");
    // Slurm's form for a hierarchical resource names the layer held.
    let r = parse(&["Licenses=natural(low1):30,flat(low2):4,flat(low4)"]).unwrap();
    let want = vec![("natural(low1)".into(), 30), ("flat(low2)".into(), 4), ("flat(low4)".into(), 1)];
    assert_eq!(r.licenses, Some(want));
    assert_eq!(spur_vocab::resv::split_layer("flat(low2)"), ("flat", Some("low2")));
    assert_eq!(spur_vocab::resv::split_layer("matlab"), ("matlab", None));
}

#[test]
fn lists_grow_and_shrink_with_plus_and_minus() {
    let r = parse(&["Nodes+=n3", "Users-=bob", "Flags-=DAILY"]).unwrap();
    assert_eq!(r.nodes, Some(NodeEdit::List(Op::Add, "n3".into())));
    assert_eq!(r.users.unwrap().0, Op::Remove);
    assert_eq!(r.flags.unwrap(), (Op::Remove, ResvFlags::DAILY));
    let r = parse(&["Nodes=+lx0,-lx[2-4]"]).unwrap();
    assert_eq!(r.nodes, Some(NodeEdit::Items(vec![(Op::Add, "lx0".into()), (Op::Remove, "lx[2-4]".into())])));
    let mut a = Access::parse("Users", "alice").unwrap();
    a.apply("Users", Op::Add, &Access::parse("Users", "bob").unwrap()).unwrap();
    a.apply("Users", Op::Remove, &Access::parse("Users", "alice").unwrap()).unwrap();
    assert_eq!(a.render(), "bob");
    assert!(a.apply("Users", Op::Add, &Access::parse("Users", "-carol").unwrap()).is_err());
}

#[test]
fn denied_names_let_everyone_else_in() {
    let a = Access::parse("Accounts", "-physics,-chem").unwrap();
    assert!(a.deny && !a.admits("physics") && a.admits("bio"));
    assert!(Access::parse("Accounts", "physics,-chem").unwrap_err().contains("mixes"));
}

#[test]
fn bad_words_are_refused_naming_the_key() {
    let cases: &[(&str, &str)] = &[
        ("StartTime=whenever", "StartTime"),
        ("Duration=abc", "Duration"),
        ("Nodes=node[01-", "Nodes"),
        ("NodeCnt=0", "NodeCnt"),
        ("Flags=MAGNETIC", "MAGNETIC is not supported"),
        ("Flags=BOGUS", "'BOGUS' is not a reservation flag"),
        ("Flags=DAILY,WEEKLY", "cannot both"),
        ("CoreCnt=4", "CoreCnt is not supported"),
        ("Colour=red", "'Colour' is not a reservation key"),
        ("StartTime+=now", "only Nodes, Users, Accounts and Flags"),
        ("Licenses=q[mode=fast]", "Licenses"),
        ("Licenses=flat(:2", "Licenses: 'flat(:2'"),
        ("Licenses=flat(a)(b):2", "Licenses"),
        ("Licenses=flat(a):2,flat(a):1", "'flat(a)' is given twice"),
        ("Licenses=flat:0", "Licenses"),
        ("ReservationName=a b", "ReservationName"),
        ("Users=al ice", "Users"),
        ("plain", "not Key=value"),
    ];
    for (w, want) in cases {
        let e = parse(&[w]).unwrap_err();
        assert!(e.contains(want), "{w}: {e}");
    }
    let long = format!("Users={}", "a,".repeat(5000));
    assert!(parse(&[&long]).unwrap_err().contains("Users: 10000 bytes"));
}

#[test]
fn a_request_prints_back_as_the_words_that_make_it() {
    let words =
        ["ReservationName=m", "Nodes=n[1-2]", "NodeCnt=2", "Users=-bob", "Flags+=OVERLAP", "Licenses=lic:3"];
    let r = parse(&words).unwrap();
    assert_eq!(parse(&r.to_words().iter().map(String::as_str).collect::<Vec<_>>()).unwrap(), r);
    assert_eq!(
        ResvFlags::from_bits(ResvFlags::MAINT.with(ResvFlags::WEEKLY).bits()).to_string(),
        "MAINT,WEEKLY"
    );
    assert_eq!(ResvFlags::WEEKLY.period_ms(), Some(7 * 86_400_000));
}
