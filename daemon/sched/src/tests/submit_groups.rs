//! Whose jobs a submit-count cap counts: a user association's caps count
//! that association's jobs (its partition's, or every partition without an
//! association of its own), an account's grpsubmit counts the jobs of the
//! account and every account below it.

use super::{Fx, account, assoc, job, partition, user};
use crate::catalog::Catalog;
use crate::model::{Account, Assoc};
use crate::submit::submit;
use crate::{Job, SubmitCounts, SubmitError, SubmitPolicy};

fn policy() -> SubmitPolicy {
    SubmitPolicy { accounting_enabled: true, ..SubmitPolicy::default() }
}

/// A live job of `user` in `account`, partition `part`.
fn live(id: u64, who: &str, acct: &str, part: &str) -> Job {
    Job { account: Some(acct.into()), qos: Some("normal".into()), partition: part.into(), ..job(id, who) }
}

/// `Ok` or the denial's full text, for a job of `who` in `acct` submitted to `part`.
fn verdict(cat: &Catalog, live: &[Job], who: &str, acct: &str, part: &str) -> Result<(), String> {
    let j = Job { account: Some(acct.into()), partition: part.into(), ..job(1, who) };
    let counts = SubmitCounts::from_jobs(live);
    match submit(&j, Some(&partition(part, &["n1"])), cat, &policy(), &counts) {
        Ok(_) => Ok(()),
        Err(SubmitError::Denied(r)) => Err(r.to_string()),
        Err(e) => panic!("{who}/{acct}: not a limit: {e}"),
    }
}

fn full(scope: &str, used: u64, key: &str) -> Result<(), String> {
    Err(format!(
        "AssocGrpSubmitJobsLimit: {scope} is at {used}/{used} submitted jobs ({key}); the job needs 1 more"
    ))
}

/// The case: grpsubmit=1 on alice in a1; bob is in a1 too.
#[test]
fn a_users_grpsubmit_counts_that_users_jobs_in_the_account() {
    let cat = Fx::new(1, 8, 1000, 0)
        .account(account("a1", "root"))
        .user(user("alice", "a1", vec![Assoc { grp_submit: Some(1), ..assoc("a1") }]))
        .user(user("bob", "a1", vec![assoc("a1")]))
        .catalog;
    // Bob's pending job is not alice's: she may still submit, and so may he.
    let bobs = [live(10, "bob", "a1", "batch")];
    assert_eq!(verdict(&cat, &bobs, "alice", "a1", "batch"), Ok(()));
    assert_eq!(verdict(&cat, &bobs, "bob", "a1", "batch"), Ok(()));
    // Her own pending job fills her cap, and only hers.
    let hers = [live(11, "alice", "a1", "batch")];
    assert_eq!(
        verdict(&cat, &hers, "alice", "a1", "batch"),
        full("user alice in account a1", 1, "grpsubmit")
    );
    assert_eq!(verdict(&cat, &hers, "bob", "a1", "batch"), Ok(()));
    // Her jobs in another account belong to another association.
    let elsewhere = [live(12, "alice", "phys", "batch")];
    assert_eq!(verdict(&cat, &elsewhere, "alice", "a1", "batch"), Ok(()));
}

#[test]
fn a_partitions_own_association_takes_that_partitions_jobs() {
    // alice/phys for every partition and alice/phys/gpu, each capped at 1.
    let every = Assoc { grp_submit: Some(1), max_submit_jobs: Some(1), ..assoc("phys") };
    let gpu = Assoc { partition: "gpu".into(), ..every.clone() };
    let cat = Fx::new(1, 8, 1000, 0).user(user("alice", "phys", vec![every, gpu])).catalog;
    let in_gpu = [live(10, "alice", "phys", "gpu")];
    // The gpu job is the gpu association's, not the every-partition one's.
    assert_eq!(verdict(&cat, &in_gpu, "alice", "phys", "batch"), Ok(()));
    let want = Err("AssocMaxSubmitJobLimit: user alice in account phys is at 1/1 submitted jobs \
                    (maxsubmitjobs); the job needs 1 more"
        .to_string());
    assert_eq!(verdict(&cat, &in_gpu, "alice", "phys", "gpu"), want);
    // A job in a partition with no association of its own is the every-partition one's.
    let in_batch = [live(11, "alice", "phys", "debug")];
    assert_eq!(verdict(&cat, &in_batch, "alice", "phys", "gpu"), Ok(()));
    assert_eq!(verdict(&cat, &in_batch, "alice", "phys", "batch"), want);
}

/// phys has sub-account ml; alice is in phys, bob in ml, carol in chem.
fn tree(phys: Option<u64>, ml: Option<u64>) -> Catalog {
    Fx::new(1, 8, 1000, 0)
        .account(Account { grp_submit: phys, ..account("phys", "root") })
        .account(Account { grp_submit: ml, ..account("ml", "phys") })
        .account(account("chem", "root"))
        .user(user("bob", "ml", vec![assoc("ml")]))
        .user(user("carol", "chem", vec![assoc("chem")]))
        .catalog
}

#[test]
fn an_accounts_grpsubmit_counts_its_subtree() {
    let jobs = [
        live(10, "alice", "phys", "batch"),
        live(11, "bob", "ml", "batch"),
        live(12, "carol", "chem", "batch"),
    ];
    // phys counts its own job and ml's, not chem's; a job in ml is held by phys's cap too.
    let cat = tree(Some(2), None);
    assert_eq!(verdict(&cat, &jobs, "alice", "phys", "batch"), full("account phys", 2, "grpsubmit"));
    assert_eq!(verdict(&cat, &jobs, "bob", "ml", "batch"), full("account phys", 2, "grpsubmit"));
    assert_eq!(verdict(&cat, &jobs, "carol", "chem", "batch"), Ok(()));
    assert_eq!(verdict(&tree(Some(3), None), &jobs, "bob", "ml", "batch"), Ok(()));
    // ml's own cap counts only ml's job, and is named before its parent's.
    let cat = tree(Some(2), Some(1));
    assert_eq!(verdict(&cat, &jobs, "bob", "ml", "batch"), full("account ml", 1, "grpsubmit"));
    assert_eq!(verdict(&cat, &jobs, "alice", "phys", "batch"), full("account phys", 2, "grpsubmit"));
}

#[test]
fn grpsubmit_0_on_an_account_rejects_every_submit_in_it() {
    let cat = tree(Some(0), None);
    let zero = |scope: &str| {
        Err(format!(
            "AssocGrpSubmitJobsLimit: {scope} is at 0/0 submitted jobs (grpsubmit); the job needs 1 more"
        ))
    };
    assert_eq!(verdict(&cat, &[], "alice", "phys", "batch"), zero("account phys"));
    assert_eq!(verdict(&cat, &[], "bob", "ml", "batch"), zero("account phys"));
    assert_eq!(verdict(&cat, &[], "carol", "chem", "batch"), Ok(()));
}

#[test]
fn the_users_association_is_checked_before_the_account() {
    let mut cat = tree(Some(1), None);
    cat.users.get_mut("alice").unwrap().assocs[0].grp_submit = Some(1);
    let jobs = [live(10, "alice", "phys", "batch")];
    assert_eq!(
        verdict(&cat, &jobs, "alice", "phys", "batch"),
        full("user alice in account phys", 1, "grpsubmit")
    );
}

#[test]
fn a_parent_cycle_in_the_data_ends() {
    // Not reachable through sacctmgr (validate refuses it), but a store could hold it.
    let cat = Fx::new(1, 8, 1000, 0)
        .account(Account { grp_submit: Some(5), ..account("x", "y") })
        .account(Account { grp_submit: Some(1), ..account("y", "x") })
        .user(user("alice", "x", vec![assoc("x")]))
        .catalog;
    let jobs = [live(10, "alice", "x", "batch")];
    assert_eq!(verdict(&cat, &jobs, "alice", "x", "batch"), full("account y", 1, "grpsubmit"));
}

#[test]
fn counts_by_partition_follow_jobs_out() {
    let cat = Fx::new(1, 8, 1000, 0)
        .user(user("alice", "phys", vec![Assoc { grp_submit: Some(1), ..assoc("phys") }]))
        .catalog;
    let jobs = [live(10, "alice", "phys", "gpu")];
    let mut counts = SubmitCounts::from_jobs(&jobs);
    let every = &cat.users["alice"].assocs[0];
    assert_eq!(counts.assoc_jobs(&cat, "alice", every), 1);
    assert_eq!(counts.account_jobs(&cat, "phys"), 1);
    counts.remove(&jobs[0]);
    assert_eq!(counts.assoc_jobs(&cat, "alice", every), 0);
    assert_eq!(counts.account_jobs(&cat, "phys"), 0);
}
