//! Submit-time resolution (account, QOS, time limit) and the gate, with the
//! spec's messages verbatim.

use super::{Fx, assoc, job, partition, qos, tres, user};
use crate::catalog::Catalog;
use crate::model::{Assoc, Partition, Qos};
use crate::submit::{default_time_limit, submit};
use crate::{Job, ReasonCode as C, Resolved, SubmitCounts, SubmitError, SubmitPolicy};
use spur_vocab::names::QosFlags;

const DENY: QosFlags = QosFlags { deny_on_limit: true };

fn policy() -> SubmitPolicy {
    SubmitPolicy { accounting_enabled: true, ..SubmitPolicy::default() }
}

/// alice: phys (default, allow-list `normal`, default QOS `normal`); carol: phys, no default account.
fn catalog() -> Catalog {
    let scoped = Assoc { qos: vec!["normal".into()], default_qos: "normal".into(), ..assoc("phys") };
    Fx::new(1, 8, 1000, 0)
        .qos(qos("gpu"))
        .qos(qos("spare"))
        .user(user("alice", "phys", vec![scoped]))
        .user(user("carol", "", vec![assoc("phys")]))
        .catalog
}

fn try_submit(j: &Job, catalog: &Catalog, policy: &SubmitPolicy) -> Result<Resolved, SubmitError> {
    submit(j, Some(&partition("batch", &["n1"])), catalog, policy, &SubmitCounts::default())
}

fn message(r: Result<Resolved, SubmitError>) -> String {
    match r {
        Ok(r) => format!("ok account={:?} qos={:?}", r.account, r.qos),
        Err(e) => e.to_string(),
    }
}

#[test]
fn account_resolution_follows_the_spec_order_and_messages() {
    let require = SubmitPolicy { require_association: true, ..policy() };
    let cases: [(&str, Option<&str>, &SubmitPolicy, &str); 6] = [
        ("alice", Some("chem"), &policy(), "user 'alice' is not associated with account 'chem'"),
        ("bob", Some("phys"), &policy(), "user 'bob' has no account associations"),
        ("alice", None, &policy(), "ok account=Some(\"phys\") qos=Some(\"normal\")"),
        ("carol", None, &require, "no account resolved for user 'carol'"),
        ("carol", None, &policy(), "ok account=None qos=None"),
        ("alice", Some("phys"), &require, "ok account=Some(\"phys\") qos=Some(\"normal\")"),
    ];
    for (who, account, policy, want) in cases {
        let j = Job { account: account.map(Into::into), ..job(1, who) };
        assert_eq!(message(try_submit(&j, &catalog(), policy)), want, "{who} {account:?}");
    }
}

#[test]
fn qos_resolution_follows_the_spec_order_and_messages() {
    let mut stale = catalog();
    stale.users.get_mut("alice").unwrap().assocs[0].default_qos = "gone".into();
    stale.users.get_mut("alice").unwrap().assocs[0].qos = vec!["normal".into(), "spare".into()];
    let fallback = SubmitPolicy { default_qos: "spare".into(), ..policy() };
    let missing = SubmitPolicy { default_qos: "nope".into(), ..policy() };
    let strict = SubmitPolicy { require_qos: true, default_qos: "gpu".into(), ..policy() };
    let cases: [(&str, Option<&str>, &Catalog, &SubmitPolicy, &str); 8] = [
        ("alice", Some("nope"), &catalog(), &policy(), "QOS 'nope' does not exist"),
        (
            "alice",
            Some("gpu"),
            &catalog(),
            &policy(),
            "QOS 'gpu' is not permitted for user 'alice' under account 'phys'",
        ),
        ("alice", Some("normal"), &catalog(), &policy(), "ok account=Some(\"phys\") qos=Some(\"normal\")"),
        ("alice", None, &catalog(), &policy(), "ok account=Some(\"phys\") qos=Some(\"normal\")"),
        // A stale association default is skipped for the cluster fallback.
        ("alice", None, &stale, &fallback, "ok account=Some(\"phys\") qos=Some(\"spare\")"),
        (
            "carol",
            None,
            &catalog(),
            &missing,
            "accounting.default_qos 'nope' names no existing QOS; create it with 'sacctmgr add qos name=nope' or change default_qos in spur.conf",
        ),
        // A fallback the association does not permit is skipped; require_qos then rejects.
        (
            "alice",
            None,
            &stale_scoped(),
            &strict,
            "no QOS specified and no default QOS is configured for this user/account",
        ),
        ("carol", None, &catalog(), &policy(), "ok account=None qos=None"),
    ];
    for (who, q, catalog, policy, want) in cases {
        let j = Job { qos: q.map(Into::into), ..job(1, who) };
        assert_eq!(message(try_submit(&j, catalog, policy)), want, "{who} {q:?}");
    }
}

/// alice's association allows only `normal`, and its default is a deleted QOS.
fn stale_scoped() -> Catalog {
    let mut c = catalog();
    c.users.get_mut("alice").unwrap().assocs[0].default_qos = "gone".into();
    c
}

#[test]
fn stale_defaults_leave_warnings() {
    // Both the deleted association default and the unpermitted fallback are skipped.
    let p = SubmitPolicy { default_qos: "gpu".into(), ..policy() };
    let r = try_submit(&job(1, "alice"), &stale_scoped(), &p).unwrap();
    assert_eq!(r.qos, None);
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    assert!(r.warnings[0].contains("default QOS 'gone'"), "{:?}", r.warnings);
    assert!(r.warnings[1].contains("'gpu' is not permitted"), "{:?}", r.warnings);
}

#[test]
fn cache_not_loaded_and_accounting_off() {
    let unloaded = Catalog { loaded: false, ..catalog() };
    let r = try_submit(&Job { account: Some("phys".into()), ..job(1, "alice") }, &unloaded, &policy());
    assert!(matches!(r, Err(SubmitError::Unavailable(_))), "{r:?}");
    // Accounting off: nothing to check, but require_* still apply.
    let off = SubmitPolicy { require_association: true, ..SubmitPolicy::default() };
    assert_eq!(
        message(try_submit(&job(1, "alice"), &unloaded, &off)),
        "no account resolved for user 'alice'"
    );
    let off = SubmitPolicy { require_qos: true, ..SubmitPolicy::default() };
    let j = Job { account: Some("any".into()), ..job(1, "alice") };
    assert_eq!(
        message(try_submit(&j, &unloaded, &off)),
        "no QOS specified and no default QOS is configured for this user/account"
    );
    let j = Job { qos: Some("whatever".into()), ..j };
    assert_eq!(message(try_submit(&j, &unloaded, &off)), "ok account=Some(\"any\") qos=Some(\"whatever\")");
}

#[test]
fn time_limit_precedence() {
    let part = |default_time, max_time| Partition { default_time, max_time, ..partition("batch", &[]) };
    let q = |w| Qos { max_wall: w, ..qos("q") };
    let a = |w| Assoc { max_wall: w, ..assoc("phys") };
    // (asked, partition DefaultTime, MaxTime, cluster default, QOS maxwall, assoc maxwall) -> limit
    type Case = (Option<u64>, Option<u64>, Option<u64>, Option<u64>, Option<u64>, Option<u64>, Option<u64>);
    let cases: [Case; 11] = [
        (Some(30), Some(10), Some(20), None, Some(5), None, Some(30)), // the job's own wins, uncapped
        (None, Some(20), None, None, Some(60), None, Some(20)), // DefaultTime shorter than maxwall wins
        (None, None, None, Some(45), Some(60), None, Some(45)), // then the cluster default
        (None, None, None, None, Some(60), Some(90), Some(60)), // then the smaller maxwall
        (None, None, None, None, Some(90), Some(60), Some(60)),
        (None, None, None, None, Some(0), Some(90), Some(90)), // 0 is never a default
        (None, None, None, None, Some(0), Some(0), None),
        (None, None, Some(120), None, Some(600), None, Some(120)), // held under MaxTime
        (None, Some(300), Some(120), None, None, None, Some(120)),
        (None, None, Some(120), None, None, None, Some(120)), // unbounded takes MaxTime
        (None, None, None, None, None, None, None),           // stays unbounded
    ];
    for (asked, dt, mt, cluster, qw, aw, want) in cases {
        let got = default_time_limit(asked, Some(&part(dt, mt)), cluster, Some(&q(qw)), Some(&a(aw)));
        assert_eq!(got, want, "{asked:?} {dt:?} {mt:?} {cluster:?} {qw:?} {aw:?}");
    }
    // Through submit: a -t-less job inherits maxwall, filled in at submit.
    let c = Fx::new(1, 8, 1000, 0).qos(Qos { max_wall: Some(60), ..qos("normal") }).catalog;
    let j = Job { qos: Some("normal".into()), ..job(1, "alice") };
    assert_eq!(try_submit(&j, &c, &policy()).unwrap().time_limit, Some(60));
}

/// One gate case: QOS `normal` and alice's association are set, then a job is submitted.
struct Gate {
    name: &'static str,
    qos: Qos,
    assoc: Assoc,
    job: Job,
    live: Vec<Job>,
    want: Result<(), &'static str>,
}

fn live(n: usize, user: &str, account: &str) -> Vec<Job> {
    (0..n)
        .map(|i| Job {
            account: Some(account.into()),
            qos: Some("normal".into()),
            ..job(100 + i as u64, user)
        })
        .collect()
}

#[test]
fn the_gate_rejects_exactly_what_the_spec_says() {
    let base = || job(1, "alice");
    let big = |cpus| Job { ntasks: cpus, ..base() };
    let q = qos("normal");
    let a = assoc("phys");
    let cases = vec![
        Gate {
            name: "maxsubmitjobs=0 rejects every submit",
            qos: q.clone(),
            assoc: Assoc { max_submit_jobs: Some(0), ..a.clone() },
            job: base(),
            live: vec![],
            want: Err(
                "AssocMaxSubmitJobLimit: user alice in account phys is at 0/0 submitted jobs (maxsubmitjobs); the job needs 1 more",
            ),
        },
        Gate {
            name: "maxsubmitjobs counts pending and running",
            qos: q.clone(),
            assoc: Assoc { max_submit_jobs: Some(2), ..a.clone() },
            job: base(),
            live: live(2, "alice", "phys"),
            want: Err(
                "AssocMaxSubmitJobLimit: user alice in account phys is at 2/2 submitted jobs (maxsubmitjobs); the job needs 1 more",
            ),
        },
        Gate {
            name: "under maxsubmitjobs",
            qos: q.clone(),
            assoc: Assoc { max_submit_jobs: Some(2), ..a.clone() },
            job: base(),
            live: live(1, "alice", "phys"),
            want: Ok(()),
        },
        Gate {
            name: "a user association's grpsubmit counts its own jobs",
            qos: q.clone(),
            assoc: Assoc { grp_submit: Some(3), ..a.clone() },
            job: base(),
            live: live(3, "alice", "phys"),
            want: Err(
                "AssocGrpSubmitJobsLimit: user alice in account phys is at 3/3 submitted jobs (grpsubmit); the job needs 1 more",
            ),
        },
        Gate {
            name: "others' jobs in the account do not fill a user association's grpsubmit",
            qos: q.clone(),
            assoc: Assoc { grp_submit: Some(3), ..a.clone() },
            job: base(),
            live: live(3, "dave", "phys"),
            want: Ok(()),
        },
        Gate {
            name: "assoc maxwall always rejects",
            qos: q.clone(),
            assoc: Assoc { max_wall: Some(60), ..a.clone() },
            job: Job { time_limit: Some(120), ..base() },
            live: vec![],
            want: Err(
                "AssocMaxWallDurationPerJobLimit: the job's time limit 02:00:00 exceeds user alice in account phys's maxwall of 01:00:00",
            ),
        },
        Gate {
            name: "assoc maxwall=0 blocks a job with no time",
            qos: q.clone(),
            assoc: Assoc { max_wall: Some(0), ..a.clone() },
            job: base(),
            live: vec![],
            want: Err(
                "AssocMaxWallDurationPerJobLimit: the job has no time limit; user alice in account phys's maxwall is 00:00:00",
            ),
        },
        Gate {
            name: "assoc checked before QOS",
            qos: Qos { grp_submit: Some(0), ..q.clone() },
            assoc: Assoc { max_submit_jobs: Some(0), ..a.clone() },
            job: base(),
            live: vec![],
            want: Err(
                "AssocMaxSubmitJobLimit: user alice in account phys is at 0/0 submitted jobs (maxsubmitjobs); the job needs 1 more",
            ),
        },
        Gate {
            name: "maxsubmitjobsperuser",
            qos: Qos { max_submit_jobs_per_user: Some(1), ..q.clone() },
            assoc: a.clone(),
            job: base(),
            live: live(1, "alice", "phys"),
            want: Err(
                "QOSMaxSubmitJobPerUserLimit: user alice under QOS normal is at 1/1 submitted jobs (maxsubmitjobsperuser); the job needs 1 more",
            ),
        },
        Gate {
            name: "maxsubmitjobsperaccount",
            qos: Qos { max_submit_jobs_per_account: Some(2), ..q.clone() },
            assoc: a.clone(),
            job: base(),
            live: live(2, "dave", "phys"),
            want: Err(
                "MaxSubmitJobsPerAccount: account phys under QOS normal is at 2/2 submitted jobs (maxsubmitjobsperaccount); the job needs 1 more",
            ),
        },
        Gate {
            name: "QOS grpsubmit",
            qos: Qos { grp_submit: Some(2), ..q.clone() },
            assoc: a.clone(),
            job: base(),
            live: live(2, "dave", "chem"),
            want: Err(
                "QOSGrpSubmitJobsLimit: QOS normal is at 2/2 submitted jobs (grpsubmit); the job needs 1 more",
            ),
        },
        Gate {
            name: "per-job TRES pends without DenyOnLimit",
            qos: Qos { max_tres_per_job: tres("cpu=8"), ..q.clone() },
            assoc: a.clone(),
            job: big(16),
            live: vec![],
            want: Ok(()),
        },
        Gate {
            name: "per-job CPUs under DenyOnLimit",
            qos: Qos { max_tres_per_job: tres("cpu=8"), flags: DENY, ..q.clone() },
            assoc: a.clone(),
            job: big(16),
            live: vec![],
            want: Err(
                "QOSMaxCpuPerJobLimit: the job asks for 16 CPUs; QOS normal allows 8 per job (maxtresperjob)",
            ),
        },
        Gate {
            name: "per-job nodes under DenyOnLimit",
            qos: Qos { max_tres_per_job: tres("node=2"), flags: DENY, ..q.clone() },
            assoc: a.clone(),
            job: Job { num_nodes: 3, ..base() },
            live: vec![],
            want: Err(
                "QOSMaxNodePerJobLimit: the job asks for 3 nodes; QOS normal allows 2 per job (maxtresperjob)",
            ),
        },
        Gate {
            name: "per-job memory under DenyOnLimit",
            qos: Qos { max_tres_per_job: tres("mem=1G"), flags: DENY, ..q.clone() },
            assoc: a.clone(),
            job: Job { mem_mb: 2048, ..base() },
            live: vec![],
            want: Err(
                "QOSMaxMemoryPerJob: the job asks for 2048 MB of memory; QOS normal allows 1024 per job (maxtresperjob)",
            ),
        },
        Gate {
            name: "a TRES cap of 0 is ignored; other dimensions still apply",
            qos: Qos { max_tres_per_job: tres("cpu=0,gres/gpu=4"), flags: DENY, ..q.clone() },
            assoc: a.clone(),
            job: Job { gpus: 2, ..big(64) },
            live: vec![],
            want: Ok(()),
        },
        Gate {
            name: "per-job GPUs under DenyOnLimit",
            qos: Qos { max_tres_per_job: tres("cpu=0,gres/gpu=4"), flags: DENY, ..q.clone() },
            assoc: a.clone(),
            job: Job { gpus: 8, ..base() },
            live: vec![],
            want: Err(
                "QOSMaxGRESPerJob: the job asks for 8 GPUs; QOS normal allows 4 per job (maxtresperjob)",
            ),
        },
        Gate {
            name: "QOS maxwall pends without DenyOnLimit",
            qos: Qos { max_wall: Some(60), ..q.clone() },
            assoc: a.clone(),
            job: Job { time_limit: Some(120), ..base() },
            live: vec![],
            want: Ok(()),
        },
        Gate {
            name: "QOS maxwall under DenyOnLimit",
            qos: Qos { max_wall: Some(60), flags: DENY, ..q.clone() },
            assoc: a.clone(),
            job: Job { time_limit: Some(120), ..base() },
            live: vec![],
            want: Err(
                "QOSMaxWallDurationPerJobLimit: the job's time limit 02:00:00 exceeds QOS normal's maxwall of 01:00:00",
            ),
        },
        Gate {
            name: "assoc per-job TRES pends under a permissive QOS",
            qos: q.clone(),
            assoc: Assoc { max_tres_per_job: tres("cpu=4"), ..a.clone() },
            job: big(8),
            live: vec![],
            want: Ok(()),
        },
        Gate {
            name: "running-count limits never reject",
            qos: Qos { max_jobs_per_user: Some(0), grp_wall: Some(0), ..q.clone() },
            assoc: Assoc { max_jobs: Some(0), ..a.clone() },
            job: base(),
            live: live(5, "alice", "phys"),
            want: Ok(()),
        },
    ];
    for c in cases {
        let scoped = Assoc { qos: vec!["normal".into()], ..c.assoc };
        let cat = Fx::new(1, 8, 1000, 0).qos(c.qos).user(user("alice", "phys", vec![scoped])).catalog;
        let j = Job { qos: Some("normal".into()), ..c.job };
        let counts = SubmitCounts::from_jobs(&c.live);
        let got = submit(&j, Some(&partition("batch", &["n1"])), &cat, &policy(), &counts);
        match (got, c.want) {
            (Ok(_), Ok(())) => {}
            (Err(SubmitError::Denied(r)), Err(want)) => assert_eq!(r.to_string(), want, "{}", c.name),
            (got, want) => panic!("{}: got {got:?}, want {want:?}", c.name),
        }
    }
}

#[test]
fn a_job_with_no_qos_is_treated_as_deny_on_limit() {
    let a = Assoc { max_tres_per_job: tres("cpu=4"), ..assoc("phys") };
    let cat = Fx::new(1, 8, 1000, 0).user(user("alice", "phys", vec![a])).catalog;
    let j = Job { ntasks: 8, ..job(1, "alice") };
    let got = submit(&j, None, &cat, &policy(), &SubmitCounts::default());
    let Err(SubmitError::Denied(r)) = got else { panic!("{got:?}") };
    assert_eq!(r.code, C::AssocMaxCpuPerJobLimit);
    assert_eq!(
        r.sentence(),
        "the job asks for 8 CPUs; user alice in account phys allows 4 per job (maxtresperjob)"
    );
}

#[test]
fn counts_follow_jobs_in_and_out() {
    let jobs = live(2, "alice", "phys");
    let mut counts = SubmitCounts::from_jobs(&jobs);
    counts.remove(&jobs[0]);
    let a = Assoc { max_submit_jobs: Some(2), ..assoc("phys") };
    let cat = Fx::new(1, 8, 1000, 0).user(user("alice", "phys", vec![a])).catalog;
    let j = Job { qos: Some("normal".into()), ..job(1, "alice") };
    assert!(submit(&j, None, &cat, &policy(), &counts).is_ok());
    counts.add(&jobs[0]);
    assert!(submit(&j, None, &cat, &policy(), &counts).is_err());
}
