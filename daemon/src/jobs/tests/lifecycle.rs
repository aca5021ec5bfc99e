//! Submit, the pass's starts, and scontrol update / hold / release.

use super::*;
use crate::accounting::Catalog;
use crate::auth::Role;
use crate::error::Error;
use crate::jobs::effect::Effect;
use crate::model::Partition;
use crate::sched::{self, SubmitPolicy};
use spur_vocab::Hold;

fn partition() -> Partition {
    Partition {
        name: "batch".into(),
        nodes: vec!["n1".into(), "n2".into()],
        is_default: true,
        max_time: None,
        default_time: Some(30),
        priority_tier: 1,
        preempt_mode: Default::default(),
        preempt_exempt_time: None,
        state: "UP".into(),
    }
}

fn set(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn parts() -> At {
    At::default()
}

#[test]
fn submit_resolves_against_the_queue_then_persists_the_new_job() {
    let q = queue([pending(1)]);
    let catalog = Catalog { loaded: true, ..Catalog::default() };
    let rec = JobRecord { id: 0, time_limit: None, ..pending(0) };
    let fx = q.submit(rec.clone(), &partition(), &catalog, &SubmitPolicy::default(), |_| Ok(7)).unwrap();
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!(
        (j.id, j.state, j.time_limit),
        (7, JobState::Pending, Some(30)),
        "the partition's DefaultTime"
    );
    assert_eq!(fx.0.len(), 1, "a new job is persisted and installed, nothing more");
    // A refusal of the admission step (MaxJobCount) refuses the submit, with no effects.
    let e = q.submit(rec, &partition(), &catalog, &SubmitPolicy::default(), |_| {
        Err(Error::Unavailable("Resource temporarily unavailable".into()))
    });
    assert!(matches!(e, Err(Error::Unavailable(_))));
}

#[test]
fn submit_refused_by_the_gate_allocates_no_id() {
    let q = queue([]);
    let policy =
        SubmitPolicy { accounting_enabled: true, require_association: true, ..SubmitPolicy::default() };
    let catalog = Catalog { loaded: true, ..Catalog::default() };
    let rec = JobRecord { account: Some("nope".into()), ..pending(0) };
    let mut asked = false;
    let e = q.submit(rec, &partition(), &catalog, &policy, |_| {
        asked = true;
        Ok(1)
    });
    assert!(e.is_err(), "{e:?}");
    assert!(!asked, "ids stay consecutive across refusals");
}

#[test]
fn starts_persist_running_jobs_flush_and_then_launch() {
    let q = queue([pending(1), pending(2), JobRecord { state: JobState::Cancelled, ..pending(3) }]);
    let fx =
        q.start(&[start(1, "n1"), start(3, "n2"), start(2, "n2")], &[], NOW, &mut || unreachable!(), &mut []);
    let got: Vec<_> = fx.persisted().iter().map(|j| (j.id, j.state, j.nodes.clone(), j.start_ms)).collect();
    assert_eq!(
        got,
        [
            (1, JobState::Running, vec!["n1".to_string()], NOW),
            (2, JobState::Running, vec!["n2".to_string()], NOW)
        ]
    );
    assert_eq!(fx.persisted()[0].alloc, (2, 0, 0), "what the job asked of each node");
    let runs: Vec<&str> = fx.persisted().iter().map(|j| j.run_id.as_str()).collect();
    assert_eq!(runs, [format!("1.{NOW}"), format!("2.{NOW}")], "each start mints its run's id");
    assert_eq!(fx.launches(), [(1, "n1"), (2, "n2")], "a job that ended meanwhile is not started");
    let flush = fx.0.iter().position(|e| *e == Effect::Flush).unwrap();
    assert!(fx.0[flush + 1..].iter().all(|e| matches!(e, Effect::Launch { .. })), "{fx:?}");
    assert_eq!(
        q.start(&[], &[], NOW, &mut || unreachable!(), &mut []).0,
        [Effect::Flush],
        "a pass with no start is still one batch"
    );
}

#[test]
fn update_of_an_ended_job_is_refused_with_no_effects() {
    let q = queue([JobRecord { state: JobState::Completed, ..pending(1) }]);
    let e = q
        .update(Role::Administrator, &who("root"), 1, &set(&[("TimeLimit", "10")]), &parts().bounds())
        .unwrap_err();
    assert!(matches!(e, Error::FailedPrecondition(_)));
    assert!(e.to_string().contains("Job/step already completing or completed"), "{e}");
    let e =
        q.update(Role::None, &who("alice"), 2, &set(&[("TimeLimit", "10")]), &parts().bounds()).unwrap_err();
    assert!(matches!(e, Error::NotFound(_)));
}

#[test]
fn update_persists_the_changed_copy_of_the_current_record() {
    let q = queue([pending(1), JobRecord { user: "bob".into(), ..pending(2) }]);
    let fx =
        q.update(Role::None, &who("alice"), 1, &set(&[("TimeLimit", "1:00:00")]), &parts().bounds()).unwrap();
    assert_eq!(fx.persisted()[0].time_limit, Some(60));
    assert_eq!(fx.0.len(), 1, "an update only persists: no signal, no launch");
    let e =
        q.update(Role::None, &who("alice"), 2, &set(&[("TimeLimit", "5")]), &parts().bounds()).unwrap_err();
    assert!(matches!(e, Error::PermissionDenied(_)), "someone else's job");
}

#[test]
fn hold_by_a_user_and_by_an_operator() {
    let q = queue([pending(1)]);
    let hold = set(&[("action", "hold")]);
    let by_user = q.update(Role::None, &who("alice"), 1, &hold, &parts().bounds()).unwrap();
    assert_eq!(by_user.persisted()[0].hold, Hold::User);
    let by_ops = q.update(Role::Operator, &who("ops"), 1, &hold, &parts().bounds()).unwrap();
    assert_eq!(by_ops.persisted()[0].hold, Hold::Admin);
    // An operator holding their own job holds it as its user.
    let own = queue([JobRecord { user: "ops".into(), ..pending(1) }]);
    assert_eq!(
        own.update(Role::Operator, &who("ops"), 1, &hold, &parts().bounds()).unwrap().persisted()[0].hold,
        Hold::User
    );
}

#[test]
fn release_of_an_admin_hold_needs_an_operator() {
    let q =
        queue([JobRecord { hold: Hold::Admin, ..pending(1) }, JobRecord { hold: Hold::User, ..pending(2) }]);
    let release = set(&[("action", "release")]);
    let e = q.update(Role::None, &who("alice"), 1, &release, &parts().bounds()).unwrap_err();
    assert!(matches!(e, Error::PermissionDenied(_)) && e.to_string().contains("Operator"), "{e}");
    let fx = q.update(Role::Operator, &who("ops"), 1, &release, &parts().bounds()).unwrap();
    assert_eq!(fx.persisted()[0].hold, Hold::None);
    let fx = q.update(Role::None, &who("alice"), 2, &release, &parts().bounds()).unwrap();
    assert_eq!(fx.persisted()[0].hold, Hold::None);
}

#[test]
fn a_lent_start_is_stamped_borrowed_and_a_requeue_clears_the_stamp() {
    let q = queue([JobRecord { account: Some("phys".into()), ..pending(1) }]);
    let lent = sched::Start { borrowed: true, ..start(1, "n1") };
    let fx = q.start(&[lent], &[], NOW, &mut || unreachable!(), &mut []);
    let run = fx.persisted()[0].clone();
    assert!(run.borrowed && run.sched_job().borrowed);
    // "A borrowed run is held outside every quota aggregate": submitted counts included.
    let mut q = queue([]);
    q.install(run.clone());
    let catalog = crate::sched::catalog::Catalog::default();
    assert_eq!(q.counts().account_jobs(&catalog, "phys"), 0, "the borrowed run counts in no submit count");
    let back = q.requeue(1, true, NOW).persisted()[0].clone();
    assert!(!back.borrowed, "the next run is lent, or not, afresh");
    q.install(back);
    assert_eq!(q.counts().account_jobs(&catalog, "phys"), 1, "pending again, it counts");
    // Its end keeps the stamp, for sacct.
    let done = crate::jobs::ending::ended(&run, JobState::Completed, 0, None, NOW);
    assert!(done.borrowed && !done.sched_job().borrowed);
}
