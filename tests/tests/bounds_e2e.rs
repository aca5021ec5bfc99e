//! Request limits end to end: oversized requests from a user with no role
//! get a clear error and one txn row, and the controller keeps answering;
//! `show txn` pages a large log under the message limit.

use spur_client::conn::{self, Clients, Identity};
use spur_daemon::store::{TxnHead, TxnRow};
use spur_proto::v1 as pb;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Controller, conf, ok};
use tonic::Code;

fn cluster() -> ClusterToml {
    ClusterToml::new().nodes_default("node[01-04]").partition("batch", "node[01-04]")
}

struct Env {
    _dir: tempfile::TempDir,
    c: Controller,
}

fn start() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let c = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    Env { _dir: dir, c }
}

/// A caller with no adminlevel: under the `none` plugin, any name and uid but 0.
async fn nobody(url: &str) -> Clients {
    conn::connect(url, Identity::asserted("mallory", Some(1000))).await.unwrap()
}

impl Env {
    /// `sacctmgr -n -P show txn ARGS` as the local admin.
    fn txn(&self, args: &str) -> String {
        let mut all = vec!["-n", "-P", "show", "txn"];
        all.extend(args.split_whitespace());
        ok("sacctmgr", &self.c.url, &all)
    }

    /// The controller still runs and answers a read.
    async fn answers(&mut self) {
        assert!(self.c.alive(), "spurctld exited");
        let mut c = nobody(&self.c.url).await;
        c.nodes.list_nodes(pb::ListRequest::default()).await.expect("spurctld answers");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_30000_ids_is_refused_with_one_row() {
    let mut e = start();
    let mut m = nobody(&e.c.url).await;
    let ids: Vec<u64> = (1..=30_000).collect();
    let err = m.jobs.cancel(pb::CancelRequest { ids, ..Default::default() }).await.unwrap_err();
    eprintln!("spurctld peak RSS (VmHWM) after a 30,000-id cancel: {:?} KiB", e.c.peak_rss_kib());
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("ids") && err.message().contains("10000"), "{}", err.message());
    e.answers().await;
    let rows = e.txn("format=Actor,Action,Where,Outcome");
    assert_eq!(rows, "mallory|update|job:1,2,3,…(+29997 more)|error\n");
    let info = e.txn("format=Info");
    assert!(info.len() <= 4200, "Info is capped: {} bytes", info.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn huge_hostlists_from_a_user_without_the_role_are_denied_once() {
    let mut e = start();
    let mut m = nobody(&e.c.url).await;
    for expr in ["x[0-999999]", "x[0-9999]y[0-9999]"] {
        let req = pb::UpdateNodesRequest { nodes: expr.into(), state: "drain".into(), reason: "r".into() };
        let err = m.nodes.update_nodes(req).await.unwrap_err();
        assert_eq!(err.code(), Code::PermissionDenied, "{expr}: {err:?}");
        assert!(err.message().contains("Administrator"), "{}", err.message());
    }
    e.answers().await;
    let rows = e.txn("format=Actor,Where,Outcome");
    assert_eq!(rows, "mallory|node:x[0-999999]|denied\nmallory|node:x[0-9999]y[0-9999]|denied\n");
    // Over the message limit, a request is refused before it is decoded.
    let req = pb::UpdateNodesRequest { nodes: "n".repeat(5 << 20), ..Default::default() };
    let err = m.nodes.update_nodes(req).await.unwrap_err();
    assert_eq!(err.code(), Code::OutOfRange, "{err:?}");
    e.answers().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_admin_hostlist_is_bounded_by_the_cluster() {
    let mut e = start();
    let out = spur_tests::proc::run(
        "scontrol",
        &e.c.url,
        &["update", "nodename=x[0-9999]y[0-9999]", "state=drain", "reason=r"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("names more than 4 hosts"), "{err}");
    e.answers().await;
    assert_eq!(e.txn("format=Where,Outcome"), "node:x[0-9999]y[0-9999]|error\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_submit_nodelist_is_refused_by_name() {
    let mut e = start();
    let mut m = nobody(&e.c.url).await;
    for (nodelist, exclude) in [("x[0-9999]y[0-9999]", ""), ("", "x[0-9999]y[0-9999]")] {
        let spec = pb::JobSpec {
            nodelist: nodelist.into(),
            exclude: exclude.into(),
            script: "#!/bin/sh\ntrue\n".into(),
            workdir: "/tmp".into(),
            ..Default::default()
        };
        let err = m.jobs.submit(pb::SubmitRequest { spec: Some(spec) }).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
        let key = if nodelist.is_empty() { "exclude" } else { "nodelist" };
        assert!(err.message().starts_with(&format!("{key}: ")), "{}", err.message());
        assert!(err.message().contains("names more than 4 hosts"), "{}", err.message());
    }
    e.answers().await;
}

/// Row `i` of a seeded log (the store assigns ids from 1, in order).
fn seeded(i: i64, info: String) -> TxnRow {
    TxnRow {
        id: 0,
        head: TxnHead {
            time_ms: 1_700_000_000_000 + i,
            actor: "seed".into(),
            source: "api".into(),
            ..Default::default()
        },
        action: "update".into(),
        entity: "node".into(),
        name: format!("n{i}"),
        outcome: "denied".into(),
        info,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn show_txn_limit_10000_pages_under_the_message_limit() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    {
        // Rows as an older controller left them: some of 1 KiB, and a few of
        // 1 MiB (each denied row once carried a whole request).
        let store = spur_daemon::store::open(&db).await.unwrap();
        let rows: Vec<TxnRow> = (1..=12_000)
            .map(|i| {
                let big = i % 2_000 == 0;
                seeded(
                    i,
                    if big { "y".repeat(1 << 20) } else { format!("{{\"pad\":\"{}\"}}", "x".repeat(1024)) },
                )
            })
            .collect();
        store.insert_txns(&rows).await.unwrap();
        store.close().await;
    }
    let mut e = Env { c: Controller::start(dir.path(), &conf(&db, &cluster().build())), _dir: dir };
    let ids: Vec<i64> = e.txn("limit=10000 format=ID").lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids, (2_001..=12_000).collect::<Vec<i64>>(), "the newest 10,000, oldest first");
    let legacy = e.txn("Name=n12000 format=Info");
    assert!(
        legacy.len() < 4200 && legacy.trim_end().ends_with("…(truncated, 1048576 bytes)"),
        "{legacy:.200}"
    );
    e.answers().await;
    eprintln!("spurctld peak RSS (VmHWM) after show txn limit=10000: {:?} KiB", e.c.peak_rss_kib());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_name_comment_or_output_path_is_refused_before_any_work() {
    let mut e = start();
    let mut c = nobody(&e.c.url).await;
    let spec = |f: &dyn Fn(&mut pb::JobSpec)| {
        let mut s = pb::JobSpec { script: "#!/bin/sh\ntrue\n".into(), ..Default::default() };
        f(&mut s);
        pb::SubmitRequest { spec: Some(s) }
    };
    type Edit<'a> = &'a dyn Fn(&mut pb::JobSpec);
    let cases: [(&str, Edit); 4] = [
        ("name", &|s| s.name = "x".repeat(256 * 1024)),
        ("comment", &|s| s.comment = "c".repeat(5000)),
        ("stdout_path", &|s| s.stdout_path = "%x".repeat(20_000)),
        ("workdir", &|s| s.workdir = format!("/{}", "d".repeat(5000))),
    ];
    for (field, f) in cases {
        let err = c.jobs.submit(spec(f)).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{field}: {err:?}");
        assert!(
            err.message().starts_with(&format!("{field}: ")) && err.message().contains("at most"),
            "{}",
            err.message()
        );
    }
    // Each part within its cap, the expansion not: 2,000 × %x of a 1,000-byte name.
    let expands = spec(&|s| {
        s.name = "n".repeat(1000);
        s.stdout_path = "%x".repeat(2000);
    });
    let err = c.jobs.submit(expands).await.unwrap_err();
    assert!(
        err.message().contains("stdout_path: '%x%x") && err.message().contains("expands to more than 4096"),
        "{}",
        err.message()
    );
    let set = vec![pb::KeyValue::new("Comment", &"c".repeat(10_000))];
    let err = c.jobs.update_job(pb::UpdateJobRequest { id: 1, set }).await.unwrap_err();
    assert!(err.message().contains("Comment: 10000 bytes; at most 4096"), "{}", err.message());
    assert_eq!(e.txn("Outcome=error Entity=job format=Action").lines().count(), 6, "one row each");
    e.answers().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_user_holds_at_most_sixteen_unread_streams_and_gets_them_back_when_closed() {
    let mut e = start();
    let c = nobody(&e.c.url).await;
    let mut held = vec![];
    for _ in 0..16 {
        held.push(c.cluster.clone().watch(pb::WatchRequest::default()).await.expect("a stream").into_inner());
    }
    let err = c.cluster.clone().watch(pb::WatchRequest::default()).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
    assert!(err.message().contains("at most 16"), "{}", err.message());
    // Another user is not held to mallory's streams.
    let admin = conn::connect(&e.c.url, Identity::asserted("root", Some(0))).await.unwrap();
    admin.cluster.clone().watch(pb::WatchRequest::default()).await.expect("root's own stream");
    drop(held);
    spur_tests::wait::wait_until("a closed stream's slot to come back", || {
        let c = c.clone();
        async move {
            c.cluster.clone().watch(pb::WatchRequest::default()).await.map(|_| ()).map_err(|e| e.to_string())
        }
    })
    .await;
    e.answers().await;
}
