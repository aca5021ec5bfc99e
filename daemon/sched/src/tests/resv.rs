//! Admin reservations in a pass: a window is a hole in its nodes' timelines
//! for every job it does not admit (backfill included); jobs that name one
//! run only inside it; it protects its running jobs from lower tiers; its
//! licences are held for its window; and making one follows Slurm's rules.

use super::{Fx, MIN, NOW, job, outcome, run_on};
use crate::model::Resv;
use crate::resv::{ResvCx, ResvNode, resolve};
use crate::{Job, ReasonCode};
use spur_vocab::resv::{ResvFlags, ResvRequest};
use std::collections::BTreeMap;
use std::sync::Arc;

fn resv(name: &str, nodes: &[&str], start: i64, end: i64, flags: ResvFlags) -> Resv {
    Resv {
        name: name.into(),
        start_ms: start,
        end_ms: end,
        nodes: nodes.iter().map(|n| n.to_string()).collect(),
        partition: String::new(),
        users: vec!["alice".into()],
        users_deny: false,
        accounts: vec![],
        accounts_deny: false,
        licenses: vec![],
        flags: flags.bits(),
    }
}

/// Two nodes with a MAINT window on both from NOW+60min for two hours.
fn maint_soon() -> Fx {
    let window = resv("maint", &["n1", "n2"], NOW + 60 * MIN, NOW + 180 * MIN, ResvFlags::MAINT);
    Fx::new(2, 8, 16000, 0).with(|f| f.snap.resvs = Arc::new(vec![window]))
}

fn timed(id: u64, user: &str, minutes: u64) -> Job {
    Job { time_limit: Some(minutes), ..job(id, user) }
}

#[test]
fn a_job_that_would_cross_a_maint_window_waits_and_one_that_ends_before_it_runs() {
    let plan = maint_soon().job(timed(1, "bob", 600)).job(timed(2, "bob", 30)).plan();
    let r = plan.reason_of(1).unwrap();
    assert_eq!(r.code, ReasonCode::ReqNodeNotAvailMaint);
    assert_eq!(r.code.as_str(), "ReqNodeNotAvail, Reserved for maintenance");
    assert!(
        r.to_string().contains("maintenance reservation maint holds the nodes it fits on from in 01:00:00"),
        "{r}"
    );
    assert_eq!(outcome(&plan, 2), Ok(vec!["n1".to_string()]));
}

#[test]
fn an_active_window_keeps_every_job_it_does_not_admit_off_its_nodes() {
    let window = resv("m", &["n1"], NOW - MIN, NOW + 60 * MIN, ResvFlags::NONE);
    let fx = Fx::new(2, 8, 16000, 0).with(|f| f.snap.resvs = Arc::new(vec![window]));
    let plan = fx.job(timed(1, "bob", 5)).job(Job { num_nodes: 2, ..timed(2, "bob", 5) }).plan();
    assert_eq!(outcome(&plan, 1), Ok(vec!["n2".to_string()]));
    let r = plan.reason_of(2).unwrap();
    assert_eq!(r.code, ReasonCode::Resources, "a reservation that is not MAINT keeps jobs off as Resources");
    assert!(r.to_string().contains("reservation m holds the nodes it fits on (ends in 01:00:00)"), "{r}");
}

#[test]
fn a_job_in_a_reservation_runs_only_on_its_nodes_once_it_starts() {
    let window = resv("r", &["n2"], NOW - MIN, NOW + 60 * MIN, ResvFlags::NONE);
    let later = resv("later", &["n1"], NOW + 30 * MIN, NOW + 60 * MIN, ResvFlags::NONE);
    let fx = Fx::new(2, 8, 16000, 0).with(|f| f.snap.resvs = Arc::new(vec![window, later]));
    let inside = |id, r: &str| Job { reservation: Some(r.into()), ..timed(id, "alice", 600) };
    let plan = fx.job(inside(1, "r")).job(inside(2, "later")).job(Job { ..inside(3, "gone") }).plan();
    assert_eq!(outcome(&plan, 1), Ok(vec!["n2".to_string()]), "inside its own window, past its end");
    let waiting = plan.reason_of(2).unwrap();
    assert_eq!(waiting.code, ReasonCode::Reservation);
    assert!(waiting.to_string().contains("from in 00:30:00"), "{waiting}");
    assert_eq!(plan.reason_of(3).unwrap().code, ReasonCode::ReservationDeleted);
}

#[test]
fn a_user_a_reservation_does_not_admit_may_not_use_it() {
    let window = resv("r", &["n1"], NOW - MIN, NOW + 60 * MIN, ResvFlags::NONE);
    let fx = Fx::new(1, 8, 16000, 0).with(|f| f.snap.resvs = Arc::new(vec![window]));
    let plan = fx.job(Job { reservation: Some("r".into()), ..timed(1, "bob", 5) }).plan();
    let r = plan.reason_of(1).unwrap();
    assert_eq!(r.code, ReasonCode::ReservationInvalid);
    assert!(r.to_string().contains("not among its Users and Accounts"), "{r}");
}

#[test]
fn backfill_reserves_a_blocked_job_after_the_window_not_across_it() {
    // n1 busy for 30 min; the window holds n1 and n2 from 60 to 180: a two-hour
    // job needing both nodes cannot fit between 30 and 60, so it waits for 180.
    let busy = run_on(timed(9, "carol", 30), &["n1"], NOW);
    let fx = maint_soon().running(Job { exclusive: true, ..busy });
    let plan =
        fx.job(Job { num_nodes: 2, exclusive: true, priority: Some(900), ..timed(1, "bob", 120) }).plan();
    assert_eq!(plan.reason_of(1).unwrap().code, ReasonCode::Resources);
    assert_eq!(plan.reservations.len(), 1, "{plan:?}");
    assert_eq!(plan.reservations[0].start_ms, NOW + 180 * MIN);
    // With no window the same job reserves from when n1 frees.
    let plain = maint_soon()
        .with(|f| f.snap.resvs = Arc::default())
        .running(Job { exclusive: true, ..run_on(timed(9, "carol", 30), &["n1"], NOW) });
    let plan =
        plain.job(Job { num_nodes: 2, exclusive: true, priority: Some(900), ..timed(1, "bob", 120) }).plan();
    assert_eq!(plan.reservations[0].start_ms, NOW + 30 * MIN);
}

#[test]
fn only_a_job_in_an_active_reservation_is_protected_from_a_lower_tier() {
    let running = |r: Option<&str>| Job {
        reservation: r.map(Into::into),
        ..run_on(timed(9, "alice", 600), &["n1"], NOW - 10 * MIN)
    };
    for (window, protected) in [(NOW - MIN, true), (NOW + 10 * MIN, false)] {
        let w = resv("r", &["n1"], window, NOW + 60 * MIN, ResvFlags::NONE);
        let fx =
            Fx::new(1, 8, 16000, 0).with(|f| f.snap.resvs = Arc::new(vec![w])).running(running(Some("r")));
        let v = fx.job(Job { priority: Some(9000), ..timed(1, "alice", 5) }).explained(1);
        let text = format!("{v:?}");
        assert_eq!(text.contains("reservation: Some(\"r\")"), protected, "{text}");
        // `scontrol explain` names the reservation in the guard's sentence.
        let guard = v.candidates[0].guards.iter().find(|g| g.name() == "reservation").unwrap().to_string();
        let want = match protected {
            true => "guard reservation: in reservation 'r'; pending tier 1 vs running tier 1 → blocks",
            false => "guard reservation: not in an active reservation → passes",
        };
        assert_eq!(guard, want);
    }
}

#[test]
fn a_reservation_holds_its_licences_from_everyone_else_for_its_window() {
    let mut w = resv("lic", &["n1"], NOW + 10 * MIN, NOW + 60 * MIN, ResvFlags::NONE);
    w.licenses = vec![("matlab".into(), 3)];
    let fx = Fx::new(2, 8, 16000, 0).with(|f| {
        f.snap.resvs = Arc::new(vec![w]);
        f.snap.licenses = BTreeMap::from([("matlab".into(), 4)]);
    });
    let lic = |id, n, minutes| Job { licenses: vec![("matlab".into(), n)], ..timed(id, "bob", minutes) };
    let plan = fx.job(lic(1, 2, 120)).job(lic(2, 1, 120)).job(lic(3, 4, 5)).plan();
    assert_eq!(
        plan.reason_of(1).unwrap().code,
        ReasonCode::Licenses,
        "crosses the window: 1 free outside it"
    );
    assert!(plan.start_of(2).is_some());
    assert!(plan.start_of(3).is_none(), "one taken by job 2");
}

fn cx<'a>(nodes: &'a [ResvNode], others: &'a [Resv], lic: &'a BTreeMap<String, u32>) -> ResvCx<'a> {
    ResvCx { now_ms: NOW, nodes, others, licenses: lic, hres: &[], default_name: "root_1" }
}

fn node(name: &str, busy_until: Option<i64>) -> ResvNode {
    ResvNode { name: name.into(), partitions: vec!["batch".into()], up: true, busy_until }
}

fn req(words: &[&str]) -> ResvRequest {
    use chrono::TimeZone;
    let now = chrono::Local.timestamp_millis_opt(NOW).unwrap();
    ResvRequest::parse(words, now).unwrap()
}

#[test]
fn node_count_picks_idle_nodes_first_and_skips_busy_ones_unless_told() {
    let nodes = [
        node("n1", Some(NOW + 120 * MIN)),
        node("n2", None),
        node("n3", Some(NOW + 5 * MIN)),
        node("n4", None),
    ];
    let lic = BTreeMap::new();
    let base = ["StartTime=now+1hour", "Duration=60", "Users=root"];
    let r = resolve(None, &req(&[&base[..], &["NodeCnt=3"]].concat()), &cx(&nodes, &[], &lic)).unwrap();
    assert_eq!(r.nodes, ["n2", "n3", "n4"], "n1 runs past the start");
    let e = resolve(None, &req(&[&base[..], &["NodeCnt=4"]].concat()), &cx(&nodes, &[], &lic)).unwrap_err();
    assert_eq!(e.key, "NodeCnt");
    let all = resolve(
        None,
        &req(&[&base[..], &["NodeCnt=4", "Flags=IGNORE_JOBS"]].concat()),
        &cx(&nodes, &[], &lic),
    );
    assert_eq!(all.unwrap().nodes.len(), 4);
    let named =
        resolve(None, &req(&[&base[..], &["Nodes=n1"]].concat()), &cx(&nodes, &[], &lic)).unwrap_err();
    assert!(named.message.contains("IGNORE_JOBS"), "{named:?}");
}

#[test]
fn overlapping_reservations_need_overlap_and_updates_edit_lists() {
    let nodes = [node("n1", None), node("n2", None)];
    let lic = BTreeMap::from([("matlab".to_string(), 2)]);
    let a = resolve(
        None,
        &req(&["ReservationName=a", "StartTime=now", "Duration=60", "Nodes=n1", "Users=alice"]),
        &cx(&nodes, &[], &lic),
    )
    .unwrap();
    let others = [a.clone()];
    let clash = resolve(
        None,
        &req(&["ReservationName=b", "StartTime=now+30min", "Duration=60", "Nodes=n[1-2]", "Users=bob"]),
        &cx(&nodes, &others, &lic),
    );
    assert_eq!(clash.unwrap_err().key, "Nodes");
    let ok = resolve(
        None,
        &req(&[
            "ReservationName=b",
            "StartTime=now+30min",
            "Duration=60",
            "Nodes=n[1-2]",
            "Users=bob",
            "Flags=OVERLAP",
        ]),
        &cx(&nodes, &others, &lic),
    );
    assert!(ok.is_ok());
    let dup = resolve(
        None,
        &req(&["ReservationName=a", "StartTime=now", "Duration=5", "Nodes=n2", "Users=x"]),
        &cx(&nodes, &others, &lic),
    );
    assert_eq!(dup.unwrap_err().key, "ReservationName");
    let up =
        resolve(Some(&a), &req(&["Nodes+=n2", "Users+=bob", "Licenses=matlab:2"]), &cx(&nodes, &[], &lic))
            .unwrap();
    assert_eq!((up.nodes.len(), up.users.len(), up.start_ms), (2, 2, a.start_ms));
    let moved = resolve(Some(&a), &req(&["StartTime=now+1hour"]), &cx(&nodes, &[], &lic)).unwrap_err();
    assert_eq!(moved.key, "StartTime", "an active reservation keeps its start");
    let too_many = resolve(Some(&a), &req(&["Licenses=matlab:3"]), &cx(&nodes, &[], &lic)).unwrap_err();
    assert_eq!(too_many.key, "Licenses");
    let nobody =
        resolve(None, &req(&["StartTime=now", "Duration=5", "Nodes=n2"]), &cx(&nodes, &others, &lic));
    assert_eq!(nobody.unwrap_err().key, "Users");
}

/// node[01-32] with the spec's example resources.yaml, and `resvs`.
fn hres_fx(resvs: Vec<Resv>) -> Fx {
    let spec = include_str!("../../../../examples/hres/resources.yaml");
    let mut f = Fx::new(32, 64, 0, 0);
    for (i, n) in f.snap.nodes.iter_mut().enumerate() {
        n.name = format!("node{:02}", i + 1);
    }
    f.snap.partitions[0].nodes = f.snap.nodes.iter().map(|n| n.name.clone()).collect();
    f.snap.hres = Arc::new(crate::hres_spec::parse(spec, &BTreeMap::new(), None).unwrap());
    f.with(|f| f.snap.resvs = Arc::new(resvs))
}

fn flat_on(id: u64, user: &str, n: u32, hosts: &str, minutes: u64) -> Job {
    let nodelist = spur_vocab::hostlist::expand(hosts).unwrap();
    Job {
        licenses: vec![("flat".into(), n)],
        num_nodes: nodelist.len() as u32,
        nodelist,
        ..timed(id, user, minutes)
    }
}

#[test]
fn a_reservation_holds_a_layer_of_a_hierarchical_resource_from_others_and_for_its_jobs() {
    // low1 (node[01-08]) has 12; the reservation holds 10 of it for its hour.
    let mut w = resv("hold", &["node01"], NOW - MIN, NOW + 60 * MIN, ResvFlags::NONE);
    w.licenses = vec![("flat(low1)".into(), 10)];
    let member = Job { reservation: Some("hold".into()), ..flat_on(3, "alice", 4, "node01", 30) };
    let plan = hres_fx(vec![w.clone()])
        .job(flat_on(1, "bob", 4, "node[02-05]", 30))
        .job(flat_on(2, "bob", 4, "node[09-12]", 30))
        .job(member)
        .plan();
    let r = plan.reason_of(1).unwrap();
    assert_eq!(r.code, ReasonCode::Licenses);
    assert_eq!(
        r.to_string(),
        "Licenses: hres flat: reservation hold holds 10 on layer low1 for its window; the job asks for 4"
    );
    assert!(plan.start_of(2).is_some(), "low2 is not held");
    let drawn = plan.start_of(3).expect("a job in the reservation draws on the hold");
    assert_eq!(spur_vocab::licenses::format_allocs(&drawn.licenses), "flat(top*4,mid1*4,low1*4):4");
    // Next pass: the member runs with 4 of the hold, so 6 stay held and 2 are free to others.
    let mut running = run_on(flat_on(3, "alice", 4, "node01", 30), &["node01"], NOW);
    running.reservation = Some("hold".into());
    running.charged = drawn.licenses.clone();
    let plan = hres_fx(vec![w.clone()])
        .running(running)
        .job(flat_on(4, "bob", 3, "node[02-04]", 30))
        .job(flat_on(5, "bob", 2, "node[02-03]", 30))
        .plan();
    assert!(plan.reason_of(4).unwrap().to_string().contains("holds 6 on layer low1"), "{plan:?}");
    assert!(plan.start_of(5).is_some());
    // A window that has not begun holds only from the jobs that would reach it.
    w.start_ms = NOW + 60 * MIN;
    w.end_ms = NOW + 120 * MIN;
    let plan = hres_fx(vec![w])
        .job(flat_on(6, "bob", 4, "node[02-05]", 30))
        .job(flat_on(7, "bob", 4, "node[06-08]", 600))
        .plan();
    assert!(plan.start_of(6).is_some(), "ends before the window");
    assert_eq!(plan.reason_of(7).unwrap().code, ReasonCode::Licenses);
}

#[test]
fn a_reservation_names_the_layer_it_holds_and_at_most_one_mode_3_resource() {
    let spec = include_str!("../../../../examples/hres/resources.yaml");
    let mut hres = crate::hres_spec::parse(spec, &BTreeMap::new(), None).unwrap();
    let mut cooling = hres.iter().find(|h| h.name == "power").unwrap().clone();
    cooling.name = "cooling".into();
    hres.push(cooling);
    let nodes = [node("node01", None), node("node09", None)];
    let lic = BTreeMap::new();
    let make = |words: &str, others: &[Resv]| {
        let words = ["StartTime=now", "Duration=60", "Nodes=node01", "Users=alice", words];
        resolve(None, &req(&words), &ResvCx { hres: &hres, ..cx(&nodes, others, &lic) })
    };
    let r = make("Licenses=flat(low1):12,power(rack1):1000", &[]).unwrap();
    assert_eq!(r.licenses, [("flat(low1)".to_string(), 12), ("power(rack1)".to_string(), 1000)]);
    let cases = [
        (
            "Licenses=power(rack1):10,cooling(rack2):10",
            "only one Mode 3 resource; it names cooling and power",
        ),
        ("Licenses=flat:2", "'flat' is a hierarchical resource: name the layer held, as flat(LAYER):N"),
        ("Licenses=flat(nope):2", "'flat' has no layer 'nope'"),
        ("Licenses=flat(low1):13", "layer low1 leaves 12 for jobs"),
        ("Licenses=matlab(low1):1", "'matlab(low1)' is not a license or hierarchical resource"),
    ];
    for (words, want) in cases {
        let e = make(words, &[]).unwrap_err();
        assert_eq!(e.key, "Licenses");
        assert!(e.message.contains(want), "{words}: {}", e.message);
    }
    // Mode 3 holds sum upward: rack1 and rack2 fit alone, not together under row1 (52000 left).
    let other = Resv {
        name: "o".into(),
        nodes: vec!["node09".into()],
        licenses: vec![("power(rack2)".into(), 30000)],
        ..r.clone()
    };
    let e = make("Licenses=power(rack1):30000", &[other]).unwrap_err();
    assert!(e.message.contains("layer row1 leaves 52000 for jobs, 30000 held"), "{}", e.message);
}

/// Two full 4-CPU nodes (job 1 at 100 on n1, job 2 at 150 on n2), preemption
/// on, and `w` on n1: the victim of a job at 1000 of `minutes`.
fn victim_with_window(w: Option<Resv>, minutes: u64) -> Vec<u64> {
    let wide = |id, prio| Job { priority: Some(prio), ntasks: 4, requeueable: true, ..timed(id, "bob", 600) };
    let fx = Fx::new(2, 4, 0, 0)
        .preempting()
        .with(|f| f.snap.resvs = Arc::new(w.into_iter().collect()))
        .running(run_on(wide(1, 100), &["n1"], NOW - 10 * MIN))
        .running(run_on(wide(2, 150), &["n2"], NOW - 10 * MIN))
        .job(Job { time_limit: Some(minutes), ..wide(10, 1000) });
    fx.plan().preemptions.iter().map(|p| p.victim).collect()
}

#[test]
fn preemption_never_evicts_from_a_node_a_window_keeps_the_preemptor_off() {
    assert_eq!(victim_with_window(None, 600), [1], "without a window the lowest goes");
    let active = resv("w", &["n1"], NOW - MIN, NOW + 60 * MIN, ResvFlags::NONE);
    assert_eq!(victim_with_window(Some(active.clone()), 30), [2], "n1 is in a window now");
    let soon = resv("w", &["n1"], NOW + 60 * MIN, NOW + 120 * MIN, ResvFlags::NONE);
    assert_eq!(victim_with_window(Some(soon.clone()), 600), [2], "its limit crosses the window");
    assert_eq!(victim_with_window(Some(soon), 30), [1], "it ends before the window begins");
    let both = Resv { nodes: vec!["n1".into(), "n2".into()], ..active };
    assert!(victim_with_window(Some(both), 30).is_empty(), "no eviction would let it run");
}

/// n1 idle with no window; n2 held by `late` from NOW+90min and n3 by the
/// MAINT `early` from NOW+30min, n3 first in placement order; n4 busy. `busy`
/// runs jobs on more of them.
fn windows_to_come(busy: &[&str]) -> Fx {
    let late = resv("late", &["n2"], NOW + 90 * MIN, NOW + 300 * MIN, ResvFlags::NONE);
    let early = resv("early", &["n3"], NOW + 30 * MIN, NOW + 300 * MIN, ResvFlags::MAINT);
    let fx = Fx::new(4, 8, 16000, 0).with(|f| {
        f.snap.resvs = Arc::new(vec![late, early]);
        (f.snap.nodes.iter_mut().zip([3, 2, 1, 4])).for_each(|(n, w)| n.weight = w);
    });
    (busy.iter().enumerate()).fold(fx, |fx, (k, n)| {
        fx.running(Job { exclusive: true, ..run_on(timed(90 + k as u64, "carol", 900), &[n], NOW) })
    })
}

#[test]
fn a_job_every_window_to_come_keeps_out_counts_the_nodes_they_hold_that_would_take_it() {
    let three = |id| Job { num_nodes: 3, exclusive: true, ..timed(id, "bob", 600) };
    // n1 and both window nodes would take it: the first window node's reservation keeps it.
    let plan = windows_to_come(&["n4"]).job(three(1)).plan();
    let r = plan.reason_of(1).unwrap();
    assert_eq!(r.code, ReasonCode::ReqNodeNotAvailMaint, "{r}");
    assert!(r.to_string().contains("reservation early"), "the first in placement order: {r}");
    // n2 busy: only n3 of the window nodes would take it, two in all: no room, not the windows.
    let plan = windows_to_come(&["n4", "n2"]).job(three(1)).plan();
    let r = plan.reason_of(1).unwrap();
    assert_eq!(r.code, ReasonCode::Resources, "{r}");
    assert!(!r.to_string().contains("reservation"), "{r}");
}

#[test]
fn a_window_failure_counted_once_remembers_the_latest_start_so_a_shorter_job_still_fits() {
    // Job 1 is kept off n2 and n3 (starts 90 and 30); job 2, same shape,
    // ends at 60: only early's window keeps it out, and n1 and n2 take it.
    let two = |id, minutes| Job { num_nodes: 2, exclusive: true, ..timed(id, "bob", minutes) };
    let plan = windows_to_come(&["n4"]).job(two(1, 600)).job(two(2, 60)).plan();
    assert_eq!(plan.reason_of(1).unwrap().code, ReasonCode::ReqNodeNotAvailMaint);
    assert_eq!(outcome(&plan, 2), Ok(vec!["n2".to_string(), "n1".to_string()]));
}

#[test]
fn counts_of_nodes_with_windows_to_come_kept_across_starts_equal_fresh_ones() {
    use crate::job::Shape;
    use crate::pass_state::Pass;
    use crate::priority::PriorityFactors;
    let fx = windows_to_come(&["n4"]).job(Job { ntasks: 4, ..timed(1, "bob", 20) });
    let snap = fx.with(|f| f.snap.jobs.push(Job { ntasks: 8, ..timed(2, "bob", 20) })).snap_with_catalog();
    let mut pass = Pass::new(&snap, NOW);
    let shapes: Vec<Shape> = [1, 4, 5, 8].map(|cpus| Shape { cpus, ..snap.jobs[1].shape() }).into();
    // Counted before the starts, so the starts update them.
    for s in &shapes {
        let _ = pass.soon_fit(0, s);
    }
    // Half of n3 (first in placement order), then all of n2 (the latest start).
    for (j, node) in [(1, 2), (2, 1)] {
        let job = &snap.jobs[j];
        let sc = pass.scopes.of(job);
        pass.start(job, sc, vec![node], vec![], PriorityFactors::new(1.0, 1.0, 1.0, 1), false);
        let kept: Vec<_> = shapes.iter().map(|s| pass.soon_fit(0, s)).collect();
        pass.soon_fit.clear();
        let fresh: Vec<_> = shapes.iter().map(|s| pass.soon_fit(0, s)).collect();
        assert_eq!(kept, fresh, "after job {} started", job.id);
    }
    assert_eq!(pass.soon_fit(0, &shapes[1]).nodes, 1, "n3 still takes 4 CPUs, n2 none");
    assert_eq!(pass.soon_fit(0, &shapes[2]).nodes, 0);
}
