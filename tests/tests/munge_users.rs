//! Real users under `[auth] plugin = "munge"`, with the real binaries: each
//! user's job runs as that user and writes files they own; no user can
//! cancel, update, tail or read another's job, whatever name they assert; files a
//! user cannot write fail the job and are never made by root; replayed,
//! foreign, missing and non-root agent credentials are refused and logged.
//! Needs root, munged, useradd and runuser (as CI has); skipped elsewhere.

use spur_proto::v1 as pb;
use spur_proto::wire::{MUNGE_HEADER, USER_HEADER};
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, wait_for};
use spur_tests::users::{self, ALICE, BOB, Munged, User};
use std::os::unix::fs::{MetadataExt, PermissionsExt};

struct Site {
    m: Munged,
    c: Controller,
    _agent: Agent,
    dir: tempfile::TempDir,
    alice: User,
    bob: User,
}

impl Site {
    fn up() -> Option<Site> {
        if !users::available() {
            return None;
        }
        let (alice, bob) = (users::user(ALICE), users::user(BOB));
        let m = Munged::start();
        let dir = users::open_dir();
        let d = dir.path();
        let shared = d.join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let socket = m.socket().display().to_string();
        let cluster = ClusterToml::new()
            .heartbeat(1)
            .node_timeout(10)
            .nodes("node[01-02]", 4, 4096)
            .partition("batch", "node[01-02]")
            .set("auth", "plugin", "munge")
            .set("auth", "munge_socket", socket.as_str());
        let db = format!("sqlite://{}/spur.db", d.display());
        let c = Controller::start_logged(d, &conf(&db, &cluster.build()));
        let state = d.join("spool/node01");
        let agent = Agent::start_in(&c.url, "node[01-02]", &[("SPUR_MUNGE_SOCKET", &socket)], &state);
        let site = Site { m, c, _agent: agent, dir, alice, bob };
        wait_for("nodes up", || {
            (site.root(&["sinfo", "-h", "-o", "%t:%D"]).trim() == "idle:2").then_some(())
        });
        Some(site)
    }

    fn root(&self, cmd: &[&str]) -> String {
        self.m.ok_as("root", &self.c.url, cmd[0], &cmd[1..])
    }

    fn shared(&self) -> std::path::PathBuf {
        self.dir.path().join("shared")
    }

    /// `sbatch --wrap` as `user`, its output in the shared directory.
    fn submit(&self, user: &str, out: &str, script: &str) -> u64 {
        let o = self.shared().join(out).display().to_string();
        let args = ["--parsable", "-D", "/tmp", "-o", &o, "--wrap", script];
        self.m.ok_as(user, &self.c.url, "sbatch", &args).trim().parse().expect("a job id")
    }

    fn state(&self, id: u64) -> String {
        let id = id.to_string();
        self.root(&["sacct", "-n", "-P", "-X", "-j", &id, "-o", "State"]).trim().to_string()
    }

    fn ended(&self, id: u64) -> String {
        wait_for(&format!("job {id} to end"), || {
            let s = self.state(id);
            (!s.is_empty() && !matches!(s.as_str(), "PENDING" | "RUNNING" | "CONFIGURING" | "COMPLETING"))
                .then_some(s)
        })
    }

    fn show(&self, id: u64) -> String {
        self.root(&["scontrol", "show", "job", &id.to_string()])
    }
}

#[test]
fn each_user_s_job_runs_as_that_user_and_owns_its_files() {
    let Some(s) = Site::up() else { return };
    let script = "id -u; id -g; id -Gn; echo HOME=$HOME USER=$USER; touch mine-$SLURM_JOB_ID";
    let a = s.submit(ALICE, "a-%j.out", &format!("cd {} && {script}", s.shared().display()));
    let b = s.submit(BOB, "b-%j.out", &format!("cd {} && {script}", s.shared().display()));
    for (id, who, prefix) in [(a, &s.alice, "a"), (b, &s.bob, "b")] {
        assert_eq!(s.ended(id), "COMPLETED", "job {id}: {}", s.show(id));
        let out_path = s.shared().join(format!("{prefix}-{id}.out"));
        let out = std::fs::read_to_string(&out_path).unwrap();
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some(who.uid.to_string().as_str()), "{out}");
        assert_eq!(lines.next(), Some(who.gid.to_string().as_str()), "{out}");
        assert!(out.contains(&format!("HOME=/home/{} USER={}", who.name, who.name)), "{out}");
        for p in [out_path, s.shared().join(format!("mine-{id}"))] {
            let m = std::fs::metadata(&p).unwrap();
            assert_eq!((m.uid(), m.gid()), (who.uid, who.gid), "{} is the user's", p.display());
        }
        let show = s.show(id);
        assert!(show.contains(&format!("UserId={}", who.name)), "{show}");
        let acct = s.root(&["sacct", "-n", "-P", "-X", "-j", &id.to_string(), "-o", "User"]);
        assert_eq!(acct.trim(), who.name);
    }
}

#[test]
fn no_user_can_touch_another_s_job_whatever_name_they_assert() {
    let Some(s) = Site::up() else { return };
    let id = s.submit(ALICE, "slow-%j.out", "echo started; sleep 300");
    wait_for("alice's job running", || (s.state(id) == "RUNNING").then_some(()));
    let sid = id.to_string();
    // Her output is hers to read (the file she owns, read by root's agent for her).
    wait_for("alice tails her job", || {
        let out = s.m.run_as(ALICE, &s.c.url, "spur", &["tail", &sid], &[]);
        (out.status.success() && out.stdout == b"started\n").then_some(())
    });
    // As bob, and as bob claiming to be alice: the name asserted is not who he is.
    for extra in [vec![], vec![("USER", ALICE), ("LOGNAME", ALICE)]] {
        let owner = format!("job {id} belongs to '{ALICE}'");
        let e = s.m.fails_as(BOB, &s.c.url, "scancel", &[&sid], &extra);
        assert!(e.contains(&owner), "scancel as bob: {e}");
        let e = s.m.fails_as(
            BOB,
            &s.c.url,
            "scontrol",
            &["update", &format!("jobid={id}"), "TimeLimit=1"],
            &extra,
        );
        assert!(e.contains(&owner), "update as bob: {e}");
        let e = s.m.fails_as(BOB, &s.c.url, "scontrol", &["hold", &sid], &extra);
        assert!(e.contains(&owner), "hold as bob: {e}");
        let e = s.m.fails_as(BOB, &s.c.url, "spur", &["tail", "-f", &sid], &extra);
        assert!(e.contains(&owner) && e.contains("read its output"), "tail as bob: {e}");
    }
    assert_eq!(s.state(id), "RUNNING");
    // Nothing of the job's is readable by bob on the node: not the state
    // directory (its launch and environment), not the script.
    let spool = s.dir.path().join("spool");
    for path in [spool.join("node01"), spool.join("node01.jobs").join(format!("job-{id}.script"))] {
        let out =
            std::process::Command::new("runuser").args(["-u", BOB, "--", "cat"]).arg(&path).output().unwrap();
        assert!(!out.status.success(), "bob read {}", path.display());
    }
    let script = spool.join("node01.jobs").join(format!("job-{id}.script"));
    assert_eq!(std::fs::metadata(&script).unwrap().uid(), s.alice.uid, "the script is alice's");
    // Each refusal is a txn row with the verified actor.
    let txn = s.root(&["sacctmgr", "-n", "-P", "show", "txn", "Actor=spurbob", "Outcome=denied"]);
    assert!(txn.lines().count() >= 6, "every refused attempt is recorded: {txn}");
    // Alice, who owns it, can.
    s.m.ok_as(ALICE, &s.c.url, "scancel", &[&sid]);
    assert_eq!(s.ended(id), "CANCELLED");
}

#[test]
fn a_file_the_user_cannot_write_fails_the_job_and_root_makes_nothing() {
    let Some(s) = Site::up() else { return };
    let closed = s.dir.path().join("root-only");
    std::fs::create_dir(&closed).unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = closed.join("sub/out-%j.txt").display().to_string();
    let args = ["--parsable", "-D", "/tmp", "-o", &o, "--wrap", "echo should-not-run"];
    let id: u64 = s.m.ok_as(ALICE, &s.c.url, "sbatch", &args).trim().parse().unwrap();
    assert_eq!(s.ended(id), "FAILED", "{}", s.show(id));
    let reason = s.root(&["sacct", "-n", "-P", "-X", "-j", &id.to_string(), "-o", "Reason"]);
    assert!(
        reason.contains("Permission denied") && reason.contains(&closed.display().to_string()),
        "{reason}"
    );
    assert!(
        std::fs::read_dir(&closed).unwrap().next().is_none(),
        "nothing was made as root in {}",
        closed.display()
    );
}

/// A raw request with `cred` as its credential.
async fn whoami(url: &str, cred: &str, asserted: &str) -> Result<pb::WhoAmIResponse, tonic::Status> {
    let mut c = spur_proto::v1::session_client::SessionClient::connect(url.to_string()).await.unwrap();
    let mut req = tonic::Request::new(pb::WhoAmIRequest {});
    req.metadata_mut().insert(MUNGE_HEADER, cred.parse().unwrap());
    req.metadata_mut().insert(USER_HEADER, asserted.parse().unwrap());
    c.who_am_i(req).await.map(|r| r.into_inner())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replayed_foreign_missing_and_non_root_agent_credentials_are_refused_and_logged() {
    let Some(s) = tokio::task::spawn_blocking(Site::up).await.unwrap() else { return };
    let cred = s.m.credential_of(BOB);
    let me = whoami(&s.c.url, &cred, ALICE).await.expect("bob's credential is bob");
    assert_eq!(me.user, BOB, "the asserted name is ignored: {me:?}");
    let again = whoami(&s.c.url, &cred, BOB).await.unwrap_err();
    assert_eq!(again.code(), tonic::Code::Unauthenticated);
    assert!(again.message().contains("replayed"), "{}", again.message());

    // Another cluster's key.
    let dir = users::open_dir();
    let other = spur_munge::daemon::TestMunged::start(&dir.path().join("other")).unwrap();
    let foreign = users::credential(&other.socket(), "root");
    let e = whoami(&s.c.url, &foreign, "root").await.unwrap_err();
    assert!(e.message().contains("invalid"), "{}", e.message());

    // No credential at all: the client says why it has none.
    let nowhere = format!("{}/nowhere", s.m.socket().parent().unwrap().display());
    let e = s.m.fails_as(ALICE, &s.c.url, "squeue", &[], &[("SPUR_MUNGE_SOCKET", &nowhere)]);
    assert!(e.contains("MUNGE credential is required") && e.contains("nowhere"), "{e}");

    // The agent protocol takes root's credentials only.
    let mut a = spur_proto::v1::agent_client::AgentClient::connect(s.c.url.clone()).await.unwrap();
    let mut req =
        tonic::Request::new(pb::RegisterRequest { nodes: vec!["node02".into()], ..Default::default() });
    req.metadata_mut().insert(MUNGE_HEADER, s.m.credential_of(ALICE).parse().unwrap());
    let e = a.register(req).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unauthenticated);
    assert!(e.message().contains(&format!("not uid {}", s.alice.uid)), "{}", e.message());

    let log = s.c.log();
    for why in ["replayed", "invalid", "MUNGE credential is required", "agent protocol"] {
        assert!(log.contains(why) && log.contains("refused a credential"), "the log names '{why}': {log}");
    }
}
