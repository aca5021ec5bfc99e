//! High availability under `[auth] plugin = "munge"`: a user's request
//! reaching a follower is run by the leader as that user (the follower
//! decoded the credential once and sealed the caller in a credential of its
//! own), audited as verified and forwarded; a user cannot hand the leader a
//! caller of their choosing. Needs root, munged, useradd, runuser and
//! PostgreSQL (as CI has); skipped elsewhere.

use spur_client::cli::scontrol::ping::{Role, ask};
use spur_proto::v1 as pb;
use spur_proto::wire::FORWARD_MUNGE_HEADER;
use spur_tests::config::ClusterToml;
use spur_tests::db::{Backend, fresh_url};
use spur_tests::proc::{Controller, conf};
use spur_tests::users::{self, ALICE, Munged};
use spur_tests::wait::wait_until;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_hands_the_leader_the_verified_caller_and_nobody_else_can() {
    if !users::available() {
        return;
    }
    let dir = users::open_dir();
    let Some(db) = fresh_url(Backend::Postgres, dir.path()).await else { return };
    let _alice = users::user(ALICE);
    let m = Munged::start();
    let socket = m.socket().display().to_string();
    let cluster = ClusterToml::new()
        .nodes("node[01-02]", 4, 4096)
        .partition("batch", "node[01-02]")
        .set("controller", "leader_lease_secs", 3)
        .set("auth", "plugin", "munge")
        .set("auth", "munge_socket", socket.as_str());
    let config = dir.path().join("spur.conf");
    std::fs::write(&config, conf(&db, &cluster.build())).unwrap();
    let a = Controller::start_shared(&config, &dir.path().join("a.log"));
    let b = Controller::start_shared(&config, &dir.path().join("b.log"));
    let (leader, follower) = wait_until("one leader and one follower", || async {
        match (ask(&a.url).await, ask(&b.url).await) {
            (Role::Primary, Role::Backup) => Ok((&a, &b)),
            (Role::Backup, Role::Primary) => Ok((&b, &a)),
            other => Err(format!("{other:?}")),
        }
    })
    .await;

    // alice submits through the follower; the leader runs it as alice.
    let sbatch = ["--parsable", "-D", "/tmp", "-o", "/dev/null", "-J", "via-follower", "--wrap", "true"];
    let id = tokio::task::block_in_place(|| m.ok_as(ALICE, &follower.url, "sbatch", &sbatch));
    let id = id.trim();
    let user =
        tokio::task::block_in_place(|| m.ok_as("root", &leader.url, "squeue", &["-h", "-j", id, "-o", "%u"]));
    assert_eq!(user.trim(), ALICE);
    let txn = tokio::task::block_in_place(|| {
        m.ok_as(
            "root",
            &leader.url,
            "sacctmgr",
            &["-n", "-P", "show", "txn", "Entity=job", "format=Actor,Verified,Info,Peer"],
        )
    });
    let row = txn.lines().find(|l| l.contains("via-follower")).unwrap_or_else(|| panic!("{txn}"));
    assert!(row.starts_with(&format!("{ALICE}|Yes|")) || row.starts_with(&format!("{ALICE}|yes|")), "{row}");
    assert!(
        row.contains("\"forwarded\":true") && row.contains("}|127.0.0.1:"),
        "the follower is the peer: {row}"
    );

    // A user's own credential as a forwarded caller: refused by the leader.
    let forged = m.credential_of(ALICE);
    let mut c = spur_proto::v1::session_client::SessionClient::connect(leader.url.clone()).await.unwrap();
    let mut req = tonic::Request::new(pb::WhoAmIRequest {});
    req.metadata_mut().insert(FORWARD_MUNGE_HEADER, forged.parse().unwrap());
    let e = c.who_am_i(req).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unauthenticated, "{e:?}");
    assert!(e.message().contains("sealed by uid"), "{}", e.message());
}
