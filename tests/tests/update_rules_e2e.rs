//! Nobody raises their own limits, through scontrol, sbatch and sacctmgr
//! with the real binaries: a user lowers a time limit and never raises it,
//! a pending job's new QOS, account, partition or features pass what a
//! submit passes, a running job keeps them, an Operator leaves an
//! Administrator alone, and only an Operator and up submits as another
//! user (`--uid`/`--gid`). Users are told apart by signed tokens (`jwt`).

use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, mint_token, run_with, wait_for};
use std::path::PathBuf;

const KEY: &str = "update-rules-test-key-of-at-least-32-bytes";

struct Env {
    dir: tempfile::TempDir,
    c: Controller,
    _agent: Agent,
    key: PathBuf,
    admin: String,
}

/// node[01-02] in batch (MaxTime 3 h), node02 alone in gpu.
fn start() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("jwt.key");
    std::fs::write(&key, KEY).unwrap();
    let cluster = ClusterToml::new()
        .heartbeat(1)
        .node_timeout(5)
        .interval(1)
        .nodes("node[01-02]", 4, 8192)
        .partition("batch", "node[01-02]")
        .partition_set("max_time", "3:00:00")
        .partition("gpu", "node02")
        .set("auth", "plugin", "jwt")
        .set("auth", "jwt_key_file", key.display().to_string().as_str());
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let c = Controller::start(dir.path(), &conf(&db, &cluster.build()));
    let agent = Agent::start(&c.url, "node[01-02]", &[]);
    let admin = mint_token(&key, "admin", "Admin");
    let e = Env { dir, c, _agent: agent, key, admin };
    wait_for("nodes up", || {
        (e.ok(&e.admin, "sinfo", &["-h", "-o", "%t:%D"]).trim() == "idle:2").then_some(())
    });
    e
}

impl Env {
    /// Runs as the holder of `token`: (success, stdout, stderr).
    fn run(&self, token: &str, personality: &str, args: &[&str]) -> (bool, String, String) {
        let out = run_with(personality, &self.c.url, args, &[("SPUR_TOKEN", token)]);
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    }

    fn ok(&self, token: &str, personality: &str, args: &[&str]) -> String {
        let (ok, out, err) = self.run(token, personality, args);
        assert!(ok, "{personality} {args:?}: {err}");
        out
    }

    /// Must fail; its stderr must say `says`.
    fn refused(&self, token: &str, personality: &str, args: &[&str], says: &str) {
        let (ok, _, err) = self.run(token, personality, args);
        assert!(!ok && err.contains(says), "{personality} {args:?} should fail saying '{says}': {err}");
    }

    fn admin(&self, line: &str) -> String {
        self.ok(&self.admin, "sacctmgr", &line.split_whitespace().collect::<Vec<_>>())
    }

    fn sbatch(&self, token: &str, args: &[&str]) -> u64 {
        let dir = self.dir.path().display().to_string();
        let mut all = vec!["--parsable", "-D", &dir];
        all.extend(args);
        self.ok(token, "sbatch", &all).trim().parse().expect("a job id")
    }

    fn field(&self, id: u64, code: &str) -> String {
        self.ok(&self.admin, "squeue", &["-h", "-j", &id.to_string(), "-o", code]).trim().to_string()
    }
}

#[test]
fn a_user_lowers_a_limit_and_changes_a_pending_job_as_a_submit_would() {
    let e = start();
    e.admin("-i add account name=ml");
    e.admin("-i add account name=phys");
    e.admin("-i add qos name=normal");
    e.admin("-i add qos name=short maxwall=20");
    e.admin("-i add qos name=high");
    e.admin("-i add user name=alice account=ml qos=normal,short defaultqos=normal");
    e.admin("-i add user name=alice account=phys");
    let alice = mint_token(&e.key, "alice", "None");
    let update = |token: &str, id: u64, kv: &[&str]| {
        let job = format!("jobid={id}");
        let mut args = vec!["update", job.as_str()];
        args.extend(kv);
        e.run(token, "scontrol", &args)
    };

    let id = e.sbatch(&alice, &["--hold", "-t", "60", "--wrap=true"]);
    for raise in ["TimeLimit=2:00:00", "TimeLimit=UNLIMITED"] {
        let (ok, _, err) = update(&alice, id, &[raise]);
        assert!(!ok && err.contains("Access/permission denied: TimeLimit"), "{raise}: {err}");
    }
    assert!(update(&alice, id, &["TimeLimit=30"]).0);
    assert_eq!(e.field(id, "%l"), "30:00");
    // An Administrator goes past the partition's MaxTime; its owner must come back under it.
    assert!(update(&e.admin, id, &["TimeLimit=5:00:00"]).0);
    assert_eq!(e.field(id, "%l"), "5:00:00");
    let (ok, _, err) = update(&alice, id, &["TimeLimit=4:00:00"]);
    assert!(
        !ok && err.contains("TimeLimit: Requested time limit is invalid") && err.contains("MaxTime"),
        "{err}"
    );
    assert!(update(&alice, id, &["TimeLimit=2:00:00"]).0);

    // A new QOS or account is resolved as at submit.
    let (ok, _, err) = update(&alice, id, &["QOS=high"]);
    assert!(
        !ok && err.contains("InvalidQOS: QOS 'high' is not permitted for user 'alice' under account 'ml'"),
        "{err}"
    );
    let (ok, _, err) = update(&alice, id, &["Account=chem"]);
    assert!(!ok && err.contains("InvalidAccount"), "{err}");
    assert!(update(&alice, id, &["Account=phys", "QOS=high"]).0);
    assert_eq!(e.field(id, "%a %q"), "phys high");
    // A partition or features no node set could ever give, as at submit.
    let wide = e.sbatch(&alice, &["--hold", "-N", "2", "-t", "10", "--wrap=true"]);
    let (ok, _, err) = update(&alice, wide, &["Partition=gpu"]);
    assert!(!ok && err.contains("partition 'gpu' has 1"), "{err}");
    let (ok, _, err) = update(&alice, wide, &["Features=fast"]);
    assert!(!ok && err.contains("features 'fast'"), "{err}");
    assert_eq!(e.field(wide, "%P"), "batch");

    // Running, it keeps them, whoever asks.
    let run = e.sbatch(&alice, &["-t", "10", "--wrap=sleep 300"]);
    wait_for("the job to run", || (e.field(run, "%T") == "RUNNING").then_some(()));
    for (token, kv) in [(&alice, "QOS=short"), (&e.admin, "Partition=gpu"), (&e.admin, "Account=phys")] {
        let (ok, _, err) = update(token, run, &[kv]);
        assert!(!ok && err.contains("Job is no longer pending execution"), "{kv}: {err}");
    }
    e.ok(&alice, "scancel", &[&run.to_string(), &id.to_string(), &wide.to_string()]);
}

#[test]
fn an_operator_leaves_an_administrator_alone_and_is_audited() {
    let e = start();
    e.admin("-i add account name=ops");
    e.admin("-i add user name=ada account=ops adminlevel=Administrator");
    e.admin("-i add user name=olga account=ops adminlevel=Operator");
    let olga = mint_token(&e.key, "olga", "None");
    let above = "above the level of 'olga' (Operator)";
    let lines: [&[&str]; 3] = [
        &["-i", "modify", "user", "where", "name=ada", "set", "maxjobs=1"],
        &["-i", "delete", "user", "name=ada"],
        &["-i", "add", "user", "name=ada", "account=ops", "partition=batch"],
    ];
    for line in lines {
        e.refused(&olga, "sacctmgr", line, above);
    }
    e.refused(
        &olga,
        "sacctmgr",
        &["-i", "modify", "user", "where", "name=ada", "set", "adminlevel=None"],
        "only an Administrator",
    );
    let users = e.admin("-n -P show user format=User,AdminLevel");
    assert!(users.lines().any(|l| l == "ada|Administrator"), "ada is as she was: {users}");
    let assocs = e.admin("-n -P show association format=User,Partition,MaxJobs");
    assert!(assocs.lines().any(|l| l == "ada||") && !assocs.contains("ada|batch"), "{assocs}");
    let denied = e.admin("-n -P show txn Outcome=denied format=Actor,Where");
    assert_eq!(denied.lines().filter(|l| *l == "olga|user:ada").count(), 4, "{denied}");
    // Her own record and those below her are hers to manage.
    e.ok(&olga, "sacctmgr", &["-i", "modify", "user", "where", "name=olga", "set", "maxjobs=2"]);
    e.admin("-i add user name=bob account=ops");
    e.ok(&olga, "sacctmgr", &["-i", "delete", "user", "name=bob"]);
}

#[test]
fn uid_and_gid_are_for_operators_and_show_as_slurm_prints_them() {
    let e = start();
    e.admin("-i add account name=ml");
    e.admin("-i add user name=root account=ml");
    e.admin("-i add user name=alice account=ml");
    let alice = mint_token(&e.key, "alice", "None");
    // sbatch sends them; the controller refuses, and sbatch says so.
    e.refused(&alice, "sbatch", &["--uid=0", "--wrap=true"], "--uid: submitting as another user");
    e.refused(&alice, "sbatch", &["--gid=root", "--wrap=true"], "--gid: submitting as another user");

    // An Administrator's job as uid 0 and gid 0 records them, as root's.
    let id = e.sbatch(&e.admin, &["--hold", "--uid=0", "--gid=0", "--wrap=true"]);
    let show = e.ok(&e.admin, "scontrol", &["show", "job", &id.to_string()]);
    assert!(show.contains("\n   UserId=root(0) GroupId=root(0)\n"), "{show}");
    assert_eq!(e.field(id, "%u %U %G %g"), "root 0 0 root");
    let acct = |id: u64| {
        let args = ["-X", "-n", "-P", "-j", &id.to_string(), "-o", "User,UID,Group,GID"].map(String::from);
        e.ok(&e.admin, "sacct", &args.iter().map(String::as_str).collect::<Vec<_>>()).trim().to_string()
    };
    assert_eq!(acct(id), "root|0|root|0");

    // Under jwt nothing vouches for alice's uid: her job runs as the agent's user.
    let own = e.sbatch(&alice, &["--hold", "--wrap=true"]);
    let show = e.ok(&alice, "scontrol", &["show", "job", &own.to_string()]);
    assert!(show.contains("\n   UserId=alice GroupId=(null)\n"), "{show}");
    assert_eq!(acct(own), "alice|||");
}
