//! Whose jobs grpsubmit counts, through sacctmgr and sbatch: a user
//! association's cap counts that user's jobs in the account, an account's
//! cap (sacctmgr add/modify account ... grpsubmit=N) counts the account and
//! its sub-accounts. Jobs are held, so they stay pending and count.

use spur_tests::cluster::Cluster;
use spur_tests::config::ClusterToml;
use spur_tests::proc::run_with;

fn cluster() -> ClusterToml {
    ClusterToml::new().interval(1).nodes("node01", 2, 1024).partition("batch", "node01")
}

/// `sbatch --hold` as `user`: the job id, or the refusal on stderr.
fn submit(e: &Cluster, user: &str) -> Result<u64, String> {
    let dir = e.dir.path().display().to_string();
    let args = ["--parsable", "--hold", "-D", &dir, "--wrap=true"];
    let out = run_with("sbatch", &e.c.url, &args, &[("USER", user)]);
    let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
    match out.status.success() {
        true => text(&out.stdout).parse().map_err(|_| format!("not a job id: {}", text(&out.stdout))),
        false => Err(text(&out.stderr)),
    }
}

fn refused(e: &Cluster, user: &str, says: &str) {
    let err = submit(e, user).expect_err("the submit should be refused");
    assert!(err.contains("AssocGrpSubmitJobsLimit") && err.contains(says), "{user}: {err}");
}

#[test]
fn grpsubmit_counts_the_association_or_the_account_subtree() {
    let e = Cluster::start(&cluster().build(), &[], "node01", 1);
    e.ok("sacctmgr", "-i add account name=a1");
    e.ok("sacctmgr", "-i add account name=a1sub parent=a1");
    e.ok("sacctmgr", "-i add user name=alice account=a1 grpsubmit=1");
    e.ok("sacctmgr", "-i add user name=bob account=a1");
    e.ok("sacctmgr", "-i add user name=carol account=a1sub");

    // Bob's pending job is not alice's: her cap of 1 still has room.
    submit(&e, "bob").unwrap();
    submit(&e, "alice").unwrap();
    refused(&e, "alice", "user alice in account a1 is at 1/1 submitted jobs (grpsubmit)");
    // Bob has no cap of his own and is never held to alice's.
    submit(&e, "bob").unwrap();

    // The whole-account cap counts a1's three jobs and its sub-account's.
    e.ok("sacctmgr", "-i modify account name=a1 set grpsubmitjobs=4");
    submit(&e, "carol").unwrap();
    refused(&e, "carol", "account a1 is at 4/4 submitted jobs (grpsubmit)");
    refused(&e, "bob", "account a1 is at 4/4 submitted jobs (grpsubmit)");

    let shown = e.ok("sacctmgr", "-n -P show account name=a1 format=Account,GrpSubmit");
    assert_eq!(shown, "a1|4\n");
    let assoc = e.ok("sacctmgr", "-n -P show association format=Account,User,GrpSubmit");
    assert!(assoc.lines().any(|l| l == "a1||4"), "{assoc}");
    assert!(assoc.lines().any(|l| l == "a1|alice|1"), "{assoc}");

    // -1 lifts it; 0 blocks every submit into the account's subtree.
    e.ok("sacctmgr", "-i modify account name=a1 set grpsubmit=-1");
    submit(&e, "carol").unwrap();
    e.ok("sacctmgr", "-i add account name=closed grpsubmit=0");
    e.ok("sacctmgr", "-i add user name=dave account=closed");
    refused(&e, "dave", "account closed is at 0/0 submitted jobs (grpsubmit)");
}
