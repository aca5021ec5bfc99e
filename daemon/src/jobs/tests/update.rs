//! scontrol update job held to Slurm's rules: nobody below Operator raises
//! a time limit or sets one past the limits that apply; a pending job's new
//! QOS, account or partition passes what its submit passed; a job that no
//! longer pends keeps them.

use super::*;
use crate::auth::Role;
use crate::error::Error;
use crate::model::{Account, Assoc, Qos, User};
use crate::sched::SubmitPolicy;

fn set(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn limited(id: u64, minutes: u64) -> JobRecord {
    JobRecord {
        time_limit: Some(minutes),
        account: Some("ml".into()),
        qos: Some("normal".into()),
        ..pending(id)
    }
}

/// Accounting on: QOS normal (MaxWall 2 h), short (MaxWall 20 min), high,
/// and one (MaxSubmitJobsPerUser 1); alice in ml (allow-list normal, short,
/// one; MaxWall 100 min) and in phys (every QOS); partition batch's MaxTime 3 h.
fn accounting() -> At {
    let qos = |name: &str, max_wall: Option<u64>| Qos { name: name.into(), max_wall, ..Qos::default() };
    let mut catalog = Catalog { loaded: true, ..Catalog::default() };
    for q in [
        qos("normal", Some(120)),
        qos("short", Some(20)),
        qos("high", None),
        Qos { max_submit_jobs_per_user: Some(1), ..qos("one", None) },
    ] {
        catalog.qos.insert(q.name.clone(), q);
    }
    for a in ["ml", "phys"] {
        catalog
            .accounts
            .insert(a.into(), Account { name: a.into(), parent: "root".into(), ..Account::default() });
    }
    let ml = Assoc {
        account: "ml".into(),
        qos: vec!["normal".into(), "short".into(), "one".into()],
        default_qos: "normal".into(),
        max_wall: Some(100),
        ..Assoc::default()
    };
    let phys = Assoc { account: "phys".into(), ..Assoc::default() };
    let alice = User {
        name: "alice".into(),
        default_account: "ml".into(),
        assocs: vec![ml, phys],
        ..User::default()
    };
    catalog.users.insert("alice".into(), alice);
    At {
        parts: vec![partition("batch", Some(180)), partition("gpu", None)],
        catalog,
        policy: SubmitPolicy { accounting_enabled: true, ..SubmitPolicy::default() },
    }
}

fn update(
    q: &Queue,
    role: Role,
    user: &str,
    id: u64,
    pairs: &[(&str, &str)],
    at: &At,
) -> Result<JobRecord, Error> {
    let fx = q.update(role, &who(user), id, &set(pairs), &at.bounds())?;
    Ok(fx.persisted()[0].clone())
}

#[test]
fn an_owner_lowers_a_time_limit_and_never_raises_it() {
    let at = At::default();
    let q = queue([limited(1, 60), JobRecord { time_limit: None, ..pending(2) }]);
    assert_eq!(update(&q, Role::None, "alice", 1, &[("TimeLimit", "30")], &at).unwrap().time_limit, Some(30));
    for raise in ["61", "UNLIMITED"] {
        let e = update(&q, Role::None, "alice", 1, &[("TimeLimit", raise)], &at).unwrap_err();
        assert!(matches!(e, Error::PermissionDenied(_)), "{raise}: {e}");
        assert!(e.to_string().starts_with("Access/permission denied: TimeLimit: "), "{e}");
        assert!(e.to_string().contains("(from 01:00:00 to"), "{e}");
    }
    // An unlimited job's first limit is a lowering.
    assert_eq!(
        update(&q, Role::None, "alice", 2, &[("TimeLimit", "600")], &at).unwrap().time_limit,
        Some(600)
    );
    assert!(update(&q, Role::None, "alice", 2, &[("TimeLimit", "UNLIMITED")], &at).is_ok(), "no change");
}

#[test]
fn operators_and_administrators_raise_past_every_limit() {
    let at = accounting();
    let q = queue([limited(1, 60), JobRecord { state: JobState::Running, ..limited(2, 60) }]);
    for role in [Role::Operator, Role::Administrator] {
        let n = update(&q, role, "ops", 1, &[("TimeLimit", "1000")], &at).unwrap();
        assert_eq!(n.time_limit, Some(1000), "past MaxTime 3 h and both MaxWalls");
        assert_eq!(update(&q, role, "ops", 2, &[("TimeLimit", "UNLIMITED")], &at).unwrap().time_limit, None);
    }
}

#[test]
fn a_lowered_limit_still_keeps_under_maxtime_and_both_maxwalls() {
    let at = accounting();
    // Set by an Operator past every limit; its owner brings it down.
    let q = queue([limited(1, 1000), JobRecord { partition: "gpu".into(), ..limited(2, 1000) }]);
    let refused = |id, t: &str, code: &str| {
        let e = update(&q, Role::None, "alice", id, &[("TimeLimit", t)], &at).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{t}: {e}");
        let m = e.to_string();
        assert!(
            m.starts_with("TimeLimit: Requested time limit is invalid (missing or exceeds some limit): "),
            "{m}"
        );
        assert!(m.contains(code), "{t}: {m}");
    };
    refused(1, "500", "PartitionTimeLimit");
    refused(2, "500", "AssocMaxWallDurationPerJobLimit");
    let qos_wall = JobRecord { account: Some("phys".into()), ..limited(3, 1000) };
    let q2 = queue([qos_wall]);
    let e = update(&q2, Role::None, "alice", 3, &[("TimeLimit", "150")], &at).unwrap_err();
    assert!(e.to_string().contains("QOSMaxWallDurationPerJobLimit"), "{e}");
    assert_eq!(update(&q, Role::None, "alice", 2, &[("TimeLimit", "90")], &at).unwrap().time_limit, Some(90));
    // Until the catalog loads, the QOS and association limits cannot be told.
    let unloaded = At { catalog: Catalog::default(), ..accounting() };
    let e = update(&q, Role::None, "alice", 2, &[("TimeLimit", "90")], &unloaded).unwrap_err();
    assert!(matches!(e, Error::Unavailable(_)), "{e}");
}

#[test]
fn a_new_qos_or_account_is_checked_as_a_submit_is() {
    let at = accounting();
    let q = queue([limited(1, 60), JobRecord { qos: Some("one".into()), ..limited(2, 60) }]);
    let msg =
        |pairs: &[(&str, &str)], role| update(&q, role, "alice", 1, pairs, &at).unwrap_err().to_string();
    assert_eq!(
        msg(&[("QOS", "High")], Role::None),
        "InvalidQOS: QOS 'high' is not permitted for user 'alice' under account 'ml'"
    );
    assert_eq!(
        msg(&[("QOS", "High")], Role::Administrator),
        msg(&[("QOS", "high")], Role::None),
        "admins too"
    );
    assert_eq!(msg(&[("QOS", "nope")], Role::None), "InvalidQOS: QOS 'nope' does not exist");
    assert_eq!(
        msg(&[("Account", "chem")], Role::None),
        "InvalidAccount: user 'alice' is not associated with account 'chem'"
    );
    let n = update(&q, Role::None, "alice", 1, &[("QOS", "short"), ("TimeLimit", "15")], &at).unwrap();
    assert_eq!((n.qos.as_deref(), n.time_limit), (Some("short"), Some(15)));
    // phys allows every QOS; the job's QOS goes with it.
    let n = update(&q, Role::None, "alice", 1, &[("Account", "PHYS"), ("QOS", "high")], &at).unwrap();
    assert_eq!((n.account.as_deref(), n.qos.as_deref()), (Some("phys"), Some("high")));
    // The submit gate: job 2 holds QOS one's only place for alice...
    let e = update(&q, Role::None, "alice", 1, &[("QOS", "one")], &at).unwrap_err();
    assert!(
        matches!(e, Error::FailedPrecondition(_)) && e.to_string().contains("QOSMaxSubmitJobPerUserLimit"),
        "{e}"
    );
    // ...and is not counted against itself when it moves.
    assert_eq!(update(&q, Role::None, "alice", 2, &[("Partition", "gpu")], &at).unwrap().partition, "gpu");
    let e = update(&q, Role::None, "alice", 1, &[("Account", "")], &at).unwrap_err();
    assert!(e.to_string().starts_with("Account: needs a name"), "{e}");
}

#[test]
fn a_job_that_no_longer_pends_keeps_its_qos_account_and_partition() {
    let at = accounting();
    let q = queue([JobRecord { state: JobState::Running, ..limited(1, 60) }]);
    for pairs in [[("QOS", "short")], [("Account", "phys")], [("Partition", "gpu")]] {
        let e = update(&q, Role::Administrator, "root", 1, &pairs, &at).unwrap_err();
        assert!(matches!(e, Error::FailedPrecondition(_)), "{pairs:?}: {e}");
        let m = e.to_string();
        assert!(
            m.starts_with(&format!("Job is no longer pending execution: {}: job 1 is RUNNING", pairs[0].0)),
            "{m}"
        );
    }
    // The same value is no change.
    assert!(update(&q, Role::None, "alice", 1, &[("QOS", "normal"), ("TimeLimit", "30")], &at).is_ok());
}

#[test]
fn mail_user_is_one_address_at_update() {
    let at = At::default();
    let q = queue([pending(1)]);
    let n = update(&q, Role::None, "alice", 1, &[("MailUser", "ops@example.org")], &at).unwrap();
    assert_eq!(n.extra.unwrap().mail_user, "ops@example.org");
    for bad in ["", " ", "-f/etc/passwd", "a@x;reboot", "$(id)@x", "a b@x"] {
        let e = update(&q, Role::None, "alice", 1, &[("MailUser", bad)], &at).unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument(_)) && e.to_string().starts_with("MailUser: "),
            "{bad}: {e}"
        );
    }
}
