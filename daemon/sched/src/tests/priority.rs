//! The effective-priority formula with the spec's example numbers, its
//! factors, fair share from decayed usage, and the order a pass uses.

use super::{Fx, MIN, NOW, account, assoc, job, qos, user};
use crate::model::Qos;
use crate::priority::{FairShare, UsageRecord, age_factor, base_priority, decayed_usage};
use crate::{Job, PriorityFactors, UsageTable};

/// Preemption fires when the running side is below half the pending side.
fn fires(pending: PriorityFactors, running: PriorityFactors) -> bool {
    running.effective < pending.effective / 2.0
}

#[test]
fn the_spec_examples() {
    let f = PriorityFactors::new;
    // (case, pending, running, pending effective, running effective, fires)
    let cases = [
        ("higher base priority", f(1000.0, 1.0, 1.0, 1), f(100.0, 1.0, 1.0, 1), 1000.0, 100.0, true),
        ("higher QOS priority", f(3000.0, 1.0, 1.0, 1), f(1000.0, 1.0, 1.0, 1), 3000.0, 1000.0, true),
        ("fair-share divergence alone", f(1000.0, 2.0, 2.0, 1), f(1000.0, 0.1, 1.0, 1), 4000.0, 100.0, true),
        ("higher partition tier", f(1000.0, 1.0, 1.0, 3), f(1000.0, 1.0, 1.0, 1), 3000.0, 1000.0, true),
        ("combination of smaller gaps", f(500.0, 2.0, 2.0, 2), f(500.0, 0.5, 1.0, 1), 4000.0, 250.0, true),
        ("exactly 2x does not fire", f(2000.0, 1.0, 1.0, 1), f(1000.0, 1.0, 1.0, 1), 2000.0, 1000.0, false),
        (
            "fair share is capped at 10",
            f(1000.0, 50.0, 1.0, 1),
            f(1000.0, 10.0, 1.0, 1),
            10000.0,
            10000.0,
            false,
        ),
        ("tier 0 counts as 1", f(1000.0, 1.0, 1.0, 0), f(1000.0, 1.0, 1.0, 1), 1000.0, 1000.0, false),
    ];
    for (name, p, r, pe, re, want) in cases {
        assert!((p.effective - pe).abs() < 1e-9 && (r.effective - re).abs() < 1e-9, "{name}: {p:?} {r:?}");
        assert_eq!(fires(p, r), want, "{name}");
    }
}

#[test]
fn base_and_age() {
    let q = |p| Qos { priority: p, ..qos("q") };
    let bases = [
        (Some(100), Some(q(2000)), 100.0),
        (None, Some(q(2000)), 3000.0),
        (None, None, 1000.0),
        (None, Some(q(0)), 1000.0),
        (None, Some(q(-5000)), 0.0),
    ];
    for (explicit, qos, want) in bases {
        assert_eq!(base_priority(explicit, qos.as_ref()), want, "{explicit:?} {qos:?}");
    }
    let ages = [(0, 1.0), (5040, 1.5), (10080, 2.0), (50000, 2.0), (-60, 1.0)];
    for (waited_min, want) in ages {
        assert_eq!(age_factor(NOW - waited_min * MIN, NOW), want, "{waited_min}");
    }
}

#[test]
fn fair_share_from_shares_and_usage() {
    // phys (fairshare 1) and chem (fairshare 3) under root; alice and bob in phys, carol in chem.
    let fx = Fx::new(1, 8, 1000, 0)
        .account(crate::model::Account { fairshare: 3.0, ..account("chem", "root") })
        .user(user("bob", "phys", vec![assoc("phys")]))
        .user(user("carol", "chem", vec![assoc("chem")]));
    let usage = |rows: &[(&str, &str, f64)]| -> UsageTable {
        rows.iter().map(|(u, a, v)| ((u.to_string(), a.to_string()), *v)).collect()
    };
    // alice's share is 1/4 × 1/2 = 0.125; carol's 0.75.
    let cases = [
        ("nobody has used anything", usage(&[]), ("alice", "phys"), 2.0),
        (
            "exactly her share",
            usage(&[("alice", "phys", 125.0), ("carol", "chem", 875.0)]),
            ("alice", "phys"),
            1.0,
        ),
        (
            "twice her share",
            usage(&[("alice", "phys", 250.0), ("carol", "chem", 750.0)]),
            ("alice", "phys"),
            0.5,
        ),
        ("idle while others work", usage(&[("carol", "chem", 10.0)]), ("alice", "phys"), 2.0),
        ("the only user", usage(&[("carol", "chem", 10.0)]), ("carol", "chem"), 2f64.powf(1.0 - 1.0 / 0.75)),
    ];
    for (name, u, (who, acct), want) in cases {
        let fs = FairShare::compute(&fx.catalog, &u);
        assert!((fs.factor(who, Some(acct)) - want).abs() < 1e-9, "{name}: {}", fs.factor(who, Some(acct)));
    }
    let fs = FairShare::compute(&fx.catalog, &UsageTable::new());
    assert_eq!((fs.factor("alice", None), fs.factor("nobody", Some("phys"))), (1.0, 1.0));
    assert!((fs.rows["phys"]["alice"].shares - 0.125).abs() < 1e-9);
}

#[test]
fn usage_decays_with_the_half_life_and_the_usage_factor() {
    let fx = Fx::new(1, 8, 1000, 0).qos(Qos { usage_factor: 2.0, ..qos("double") });
    let day = 86_400_000;
    let rec = |start, end: Option<i64>, cpus, q: Option<&str>| UsageRecord {
        user: "alice".into(),
        account: "phys".into(),
        qos: q.map(Into::into),
        cpus,
        start_ms: start,
        end_ms: end,
    };
    let one_second = |ago| rec(NOW - ago - 1000, Some(NOW - ago), 1, None);
    let cases = [
        ("just now", vec![one_second(0)], 7.0, 1.0),
        ("one half-life ago", vec![one_second(7 * day)], 7.0, 0.5),
        ("two half-lives ago", vec![one_second(14 * day)], 7.0, 0.25),
        ("no decay", vec![one_second(14 * day)], 0.0, 1.0),
        ("cpus and usage factor", vec![rec(NOW - 1000, Some(NOW), 4, Some("double"))], 7.0, 8.0),
        ("running counts up to now", vec![rec(NOW - 1000, None, 1, None)], 7.0, 1.0),
    ];
    for (name, records, halflife, want) in cases {
        let u = decayed_usage(&records, &fx.catalog, NOW, halflife);
        let got = u[&("alice".to_string(), "phys".to_string())];
        assert!((got - want).abs() < 1e-3, "{name}: {got}");
    }
}

#[test]
fn a_pass_orders_by_effective_priority_then_submit_time() {
    // One free CPU: only the first job in order starts; the plan keeps each job's factors.
    let jobs = [
        Job { priority: Some(100), ..job(1, "alice") },
        Job { submit_ms: NOW - 1000, ..job(2, "alice") },
        job(3, "alice"),
        Job { qos: Some("high".into()), ..job(4, "alice") },
        Job { submit_ms: NOW - 7 * 1440 * MIN, ..job(5, "alice") },
    ];
    let fx = Fx::new(1, 1, 1000, 0).qos(Qos { priority: 500, ..qos("high") });
    let fx = jobs.into_iter().fold(fx, Fx::job);
    let plan = fx.plan();
    assert_eq!(plan.starts[0].job, 5, "fully aged: 1000 × 2.0");
    let order: Vec<u64> = plan.pending.iter().map(|p| p.job).collect();
    assert_eq!(order, [4, 2, 3, 1]);
    let p = plan.pending[0].priority;
    assert_eq!((p.base, p.fair_share, p.age, p.tier, p.value()), (1500.0, 1.0, 1.0, 1, 1500));
}

#[test]
fn the_tree_carries_each_lines_inputs() {
    // root → {phys (1), chem (3) → organic (2), inorganic (2)}; usage of organic counts in chem.
    let fx = Fx::new(1, 8, 1000, 0)
        .account(crate::model::Account { fairshare: 3.0, ..account("chem", "root") })
        .account(crate::model::Account { fairshare: 2.0, ..account("organic", "chem") })
        .account(crate::model::Account { fairshare: 2.0, ..account("inorganic", "chem") })
        .user(user("bob", "phys", vec![assoc("phys")]))
        .user(user("carol", "organic", vec![assoc("organic")]));
    let usage: UsageTable = [
        (("carol".to_string(), "organic".to_string()), 300.0),
        (("bob".to_string(), "phys".to_string()), 100.0),
    ]
    .into_iter()
    .collect();
    let (lines, total) = crate::account_shares_tree(&fx.catalog, &usage);
    assert_eq!(total, 400.0);
    let line = |n: &str| lines.iter().find(|l| l.name == n).unwrap().clone();
    let chem = line("chem");
    assert_eq!(
        (chem.parent.as_str(), chem.raw_shares, chem.siblings, chem.parent_shares),
        ("root", 3.0, 4.0, 1.0)
    );
    assert!(
        (chem.shares - 0.75).abs() < 1e-9 && chem.raw_usage == 300.0 && (chem.norm_usage - 0.75).abs() < 1e-9
    );
    let organic = line("organic");
    assert_eq!((organic.siblings, organic.parent_shares), (4.0, 0.75));
    assert!((organic.shares - 0.375).abs() < 1e-9);
    // A user's row: 1 share among the account's users, under the account's shares.
    let fs = FairShare::compute(&fx.catalog, &usage);
    let carol = &fs.rows["organic"]["carol"];
    assert_eq!((carol.siblings, carol.parent), (1.0, 0.375));
    assert!((crate::level_fs(carol.shares, carol.norm_usage) - 0.5).abs() < 1e-9);
    assert_eq!(crate::level_fs(0.5, 0.0), f64::INFINITY);
}
