//! Every parser of user input in spur-vocab, fed inputs up to a few KB
//! built from its grammar's pieces and from arbitrary text: each accepts
//! or refuses without panicking, and what it accepts stays within its caps
//! and reads back the same once printed.

use chrono::{DateTime, Local, TimeZone};
use proptest::prelude::*;
use spur_vocab::array::{ArraySpec, JobRef, MAX_ARRAY_PARTS, MAX_TASK_ID, TaskSet, parse_refs};
use spur_vocab::constraint::Constraint;
use spur_vocab::depend::{Dependency, MAX_ITEMS};
use spur_vocab::jobs::{PathVars, StepVars, expand_path, expand_step_path};
use spur_vocab::time::{Lean, TimeLimit, format_minutes, parse_limit, parse_seconds, parse_when};
use spur_vocab::tres::{TRES, format_map, parse_map, parse_patch};
use spur_vocab::txn::{MAX_LIMIT, TxnFilter, parse_time, peer_matches};
use spur_vocab::{hostlist, licenses};

/// The longest input: past a few KB an input is only longer, not different.
const MAX_LEN: usize = 4096;

/// Inputs mostly made of `tokens` (and numbers small and huge), some of
/// arbitrary characters, some one token repeated to the full length.
fn input(tokens: &'static [&'static str]) -> BoxedStrategy<String> {
    let piece = prop_oneof![
        6 => prop::sample::select(tokens).prop_map(str::to_string),
        2 => (0u32..5000).prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => prop::collection::vec(any::<char>(), 0..4).prop_map(|v| v.into_iter().collect()),
    ];
    let text = prop_oneof![
        8 => prop::collection::vec(piece, 0..64).prop_map(|v| v.concat()),
        1 => prop::collection::vec(piece_any(), 0..MAX_LEN / 8).prop_map(|v| v.concat()),
        1 => (prop::sample::select(tokens), 1..MAX_LEN).prop_map(|(t, n)| t.repeat(n.div_ceil(t.len().max(1)))),
    ];
    text.prop_map(|s| s.chars().take(MAX_LEN).collect()).boxed()
}

fn piece_any() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 1..9).prop_map(|v| v.into_iter().collect())
}

fn now() -> DateTime<Local> {
    Local.with_ymd_and_hms(2026, 3, 10, 14, 30, 0).unwrap()
}

const ARRAY: &[&str] = &[
    "0",
    "1",
    "7",
    "4000000",
    "4000001",
    "99999999999",
    "-",
    ":",
    ",",
    ",",
    "%",
    "[",
    "]",
    "_",
    ".",
    " ",
    "batch",
    "extern",
    "0-4000000:2",
    "1-4000000:3",
    "0-99",
    "5-1",
    ":0",
    "12_",
    "%4",
];
const HOSTS: &[&str] = &[
    "node",
    "n",
    "gpu",
    "[",
    "]",
    "-",
    ",",
    "0",
    "01",
    "001",
    "9",
    "99",
    "[1-1000]",
    "[01-99]",
    "[1]",
    " ",
    "[0-18446744073709551615]",
    "x",
];
const TIMES: &[&str] = &[
    "0",
    "1",
    "12",
    "59",
    "60",
    "99999999999999999999",
    ":",
    "-",
    "+",
    " ",
    "now",
    "days",
    "weeks",
    "T",
    "am",
    "pm",
    "midnight",
    "noon",
    "today",
    "tomorrow",
    "/",
    ".",
    "UNLIMITED",
    "infinite",
    "2026",
    "0229",
];
const TRES_TOKENS: &[&str] = &[
    "cpu",
    "mem",
    "node",
    "gres/gpu",
    "billing",
    "energy",
    "=",
    ",",
    "-1",
    "M",
    "G",
    "T",
    "1",
    "18446744073709551615",
];
const PATHS: &[&str] = &[
    "%",
    "%%",
    "j",
    "J",
    "A",
    "a",
    "b",
    "u",
    "x",
    "N",
    "n",
    "t",
    "s",
    "r",
    "q",
    "\\",
    "10",
    "4",
    "99999999999999999999",
    "/",
    "out",
];
const DEPS: &[&str] = &[
    "after",
    "afterany",
    "afterok",
    "afternotok",
    "aftercorr",
    "singleton",
    ":",
    ",",
    "?",
    "+",
    "_",
    "1",
    "0",
];
const FEATURES: &[&str] = &["gpu", "a", "b", "&", "|", "[", "]", "*", "(", ")", " ", "_", ".", "=", "-"];
const DISTS: &[&str] = &[
    "block",
    "cyclic",
    "fcyclic",
    "arbitrary",
    "plane=",
    "plane",
    "*",
    ":",
    ",",
    "Pack",
    "NoPack",
    "1",
    "0",
    "99999999",
    " ",
];
const LICENSES: &[&str] = &["lic", "a", ":", ",", "[", "]", "=", "name", "x", "|", " ", "0"];
const TXN: &[&str] = &[
    "create",
    "update",
    "delete",
    "success",
    "denied",
    "error",
    "node",
    "now-1days",
    "2026-01-01",
    "10.0.0.4",
    ":",
    "[",
    "]",
    "1",
    "10001",
    "-5",
];

/// 256 cases a run, or `PROPTEST_CASES` for a longer search.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn array_expressions_are_bounded(s in input(ARRAY)) {
        if let Ok(t) = TaskSet::parse(&s) {
            prop_assert!(t.len() <= u64::from(MAX_TASK_ID) + 1);
            let shown = t.to_string();
            prop_assert!(shown.split(',').count() <= MAX_ARRAY_PARTS);
            let back = TaskSet::parse(&shown);
            prop_assert_eq!(back.as_ref(), Ok(&t), "{} printed as {}", s, shown);
            for i in [t.first(), t.last()].into_iter().flatten() {
                prop_assert!(t.contains(i));
            }
            if t.len() <= 20_000 {
                let v: Vec<u32> = t.iter().collect();
                prop_assert!(v.windows(2).all(|w| w[0] < w[1]) && v.len() as u64 == t.len());
            }
        }
        if let Ok(a) = ArraySpec::parse(&s, 1001) {
            prop_assert!(a.tasks.len() <= 1001);
        }
        let _ = JobRef::parse(&s);
        let _ = parse_refs(&[&s]);
    }

    #[test]
    fn task_set_operations_agree_with_plain_sets(
        a in prop::collection::vec((0u32..300, 0u32..80, 1u32..9), 1..6),
        b in prop::collection::vec((0u32..300, 0u32..80, 1u32..9), 1..6),
    ) {
        let text = |v: &[(u32, u32, u32)]| {
            v.iter().map(|(x, n, s)| format!("{x}-{}:{s}", x + n)).collect::<Vec<_>>().join(",")
        };
        let plain = |v: &[(u32, u32, u32)]| {
            let mut m: Vec<u32> =
                v.iter().flat_map(|&(x, n, s)| (x..=x + n).step_by(s as usize)).collect();
            m.sort_unstable();
            m.dedup();
            m
        };
        let (sa, sb) = (TaskSet::parse(&text(&a)).unwrap(), TaskSet::parse(&text(&b)).unwrap());
        let (pa, pb) = (plain(&a), plain(&b));
        prop_assert_eq!(sa.iter().collect::<Vec<_>>(), pa.clone());
        let both: Vec<u32> = pa.iter().copied().filter(|i| pb.contains(i)).collect();
        let only: Vec<u32> = pa.iter().copied().filter(|i| !pb.contains(i)).collect();
        prop_assert_eq!(sa.intersect(&sb).iter().collect::<Vec<_>>(), both);
        prop_assert_eq!(sa.minus(&sb).iter().collect::<Vec<_>>(), only);
        for i in 0..400 {
            prop_assert_eq!(sa.contains(i), pa.binary_search(&i).is_ok());
        }
        let mut popped = sa.clone();
        let mut out = vec![];
        while let Some(i) = popped.pop_first() {
            out.push(i);
        }
        prop_assert_eq!(out, pa);
    }

    #[test]
    fn distributions_parse_or_name_the_option_and_print_back(s in input(DISTS)) {
        match spur_vocab::distribution::Distribution::parse(&s) {
            Ok(d) => {
                prop_assert_eq!(spur_vocab::distribution::Distribution::parse(&d.to_string()), Ok(d));
                let laid = d.layout(17, 3);
                if let Some(ids) = laid {
                    let mut all: Vec<u32> = ids.concat();
                    all.sort_unstable();
                    prop_assert_eq!(all, (0..17).collect::<Vec<u32>>(), "every task once");
                }
            }
            Err(e) => prop_assert!(e.starts_with("--distribution: "), "{}", e),
        }
    }

    #[test]
    fn hostlists_are_bounded(s in input(HOSTS)) {
        let _ = hostlist::count(&s);
        if let Ok(names) = hostlist::expand_bounded(&s, 1000, 64) {
            prop_assert!(names.len() <= 1000);
            prop_assert!(names.iter().all(|n| n.len() <= 20 * 64), "{:?}", names);
            let back = hostlist::expand(&hostlist::compress(&names)).unwrap();
            let set = |v: &[String]| v.iter().cloned().collect::<std::collections::BTreeSet<_>>();
            prop_assert_eq!(set(&back), set(&names), "compressed from {}", s);
        }
    }

    #[test]
    fn times_and_dates_are_bounded(s in input(TIMES)) {
        if let Ok(m) = parse_limit(&s) {
            prop_assert_eq!(parse_limit(&format_minutes(m)), Ok(m));
        }
        let _ = parse_seconds(&s);
        let _ = TimeLimit::parse(&s);
        let _ = TimeLimit::parse_request(&s);
        for lean in [Lean::Past, Lean::Future] {
            let _ = parse_when(&s, now(), lean);
        }
    }

    #[test]
    fn tres_strings_are_bounded(s in input(TRES_TOKENS)) {
        if let Ok(p) = parse_patch(&s) {
            prop_assert!(p.set.len() <= TRES.len());
        }
        if let Ok(m) = parse_map(&s) {
            prop_assert_eq!(parse_map(&format_map(&m)), Ok(m));
        }
    }

    #[test]
    fn filename_patterns_are_bounded(s in input(PATHS), name in "[a-z]{0,40}") {
        let j = PathVars { job_id: u64::MAX, user: "alice", name: &name, node: "n3", array: Some((7, u32::MAX)) };
        let step = StepVars { step: u32::MAX, task: u32::MAX, node_index: u32::MAX };
        // Each pattern character yields at most a field or a number (20 digits, 31 for %J).
        let most = s.len() * (32 + name.len());
        prop_assert!(expand_path(&s, &j).len() <= most);
        prop_assert!(expand_step_path(&s, &j, &step).len() <= most);
    }

    #[test]
    fn dependencies_are_bounded(s in input(DEPS)) {
        if let Ok(d) = Dependency::parse(&s) {
            prop_assert!(d.items.len() <= MAX_ITEMS);
            prop_assert_eq!(Dependency::parse(&d.to_string()), Ok(d));
        }
    }

    #[test]
    fn constraints_are_bounded(s in input(FEATURES)) {
        if let Ok(c) = Constraint::parse(&s) {
            let _ = c.holds(&["gpu".to_string()]);
            prop_assert_eq!(Constraint::parse(&c.to_string()), Ok(c));
        }
    }

    #[test]
    fn license_requests_are_bounded(s in input(LICENSES)) {
        if let Ok(reqs) = licenses::parse_request(&s) {
            let names: std::collections::BTreeSet<&str> = reqs.iter().map(|r| r.name.as_str()).collect();
            prop_assert_eq!(names.len(), reqs.len());
            let shown: Vec<String> = reqs.iter().map(ToString::to_string).collect();
            prop_assert_eq!(licenses::parse_request(&shown.join(",")), Ok(reqs));
        }
    }

    #[test]
    fn txn_filters_are_bounded(
        pairs in prop::collection::vec(
            (prop::sample::select(&["actor", "action", "entity", "name", "outcome", "peer", "start", "end",
                                    "limit", "Limit", "bogus"][..]), input(TXN)),
            0..8,
        ),
        stored in input(TXN),
    ) {
        let pairs: Vec<(String, String)> = pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        if let Ok(f) = TxnFilter::parse(&pairs, now()) {
            prop_assert!((1..=MAX_LIMIT).contains(&f.limit) || f.limit == 0);
        }
        for (_, v) in &pairs {
            let _ = parse_time(v, now());
            let _ = peer_matches(v, &stored);
        }
    }
}
