//! A controller that starts without its database: the waiting server
//! answers Unavailable and hands the same socket to the controller once the
//! store opens; a catalog that cannot be read holds jobs naming a QOS or
//! account with AccountingUnavailable, and they start on their own once it loads.

use spur_client::conn::{self, Clients, Identity};
use spur_client::vocab::keys::Entity;
use spur_daemon::accounting::{Caller, SetMode};
use spur_daemon::agent::AgentOpts;
use spur_daemon::auth::Role;
use spur_daemon::config::Config;
use spur_daemon::controller::{self, Running, waiting};
use spur_daemon::error::{Error, Result};
use spur_daemon::store::{Mutator, SqliteStore, Store, TxnHead, TxnQuery, TxnRow, Written};
use spur_proto::v1 as pb;
use spur_tests::wait::wait_until;
use spur_vocab::JobState;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

/// One node, and a scheduling interval long enough that only an event
/// (a submit, a node change, the catalog loading) runs a pass in time.
fn config(dir: &Path, db: &str) -> Config {
    let path = dir.join("spur.conf");
    let text = format!(
        "[controller]\nheartbeat_interval_secs = 1\nnode_timeout_secs = 10\n[scheduler]\ninterval = 3600\n\
         [[nodes]]\nname = \"n1\"\ncpus = 2\n[[partitions]]\nname = \"batch\"\nnodes = \"n1\"\ndefault = true\n\
         [accounting]\ndatabase_url = \"{db}\"\n"
    );
    std::fs::write(&path, text).unwrap();
    Config::load(&path).unwrap()
}

async fn wait_for<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    wait_until(what, || std::future::ready(check())).await
}

async fn list_jobs(c: &mut Clients) -> std::result::Result<Vec<pb::Job>, tonic::Status> {
    Ok(c.jobs.list_jobs(pb::ListRequest::default()).await?.into_inner().jobs)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_waiting_server_refuses_then_hands_its_socket_to_the_controller() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/state/spur.db", dir.path().display());
    let cfg = config(dir.path(), &url);
    let listener = controller::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (waiting_tx, waiting_rx) = tokio::sync::oneshot::channel();
    let opener_url = url.clone();
    let opener = tokio::spawn(async move {
        let (store, waited) = waiting::open_store(
            &opener_url,
            &listener,
            move || {
                let _ = waiting_tx.send(());
            },
            None,
        )
        .await
        .unwrap();
        (store, waited, listener)
    });
    tokio::time::timeout(DEADLINE, waiting_rx).await.expect("the waiting server in time").unwrap();

    let endpoint = format!("http://{addr}");
    let mut c = conn::connect(&endpoint, Identity::local()).await.unwrap();
    let refused = list_jobs(&mut c).await.expect_err("no queue is shown while the database is unreachable");
    assert_eq!(refused.code(), tonic::Code::Unavailable, "{refused:?}");
    let m = refused.message();
    assert!(m.contains(&url) && m.contains("unreachable") && m.contains("retrying (attempt "), "{m}");
    let whoami = c.session.who_am_i(pb::WhoAmIRequest::default()).await.expect_err("every RPC is refused");
    assert_eq!(whoami.code(), tonic::Code::Unavailable);

    std::fs::create_dir(dir.path().join("state")).unwrap();
    let (store, waited, listener) =
        tokio::time::timeout(DEADLINE, opener).await.expect("the store opens").unwrap();
    assert!(waited);
    let running = controller::start_with(cfg, Some(store), listener).await.unwrap();
    assert_eq!(running.addr(), addr, "the same socket");
    // The connection the waiting server closed is re-made by the client.
    let jobs = wait_until("the controller to answer", || {
        let mut c = c.clone();
        async move { list_jobs(&mut c).await.map_err(|s| format!("{s:?}")) }
    })
    .await;
    assert!(jobs.is_empty());
    running.shutdown().await.unwrap();
}

/// A store whose catalog (QOS, accounts, users) cannot be read while `down`.
struct Flaky {
    inner: Arc<dyn Store>,
    down: AtomicBool,
    failed: AtomicU32,
}

#[async_trait::async_trait]
impl Store for Flaky {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    async fn load(&self, kind: &str) -> Result<Vec<(String, serde_json::Value)>> {
        if matches!(kind, "qos" | "account" | "user") && self.down.load(Ordering::SeqCst) {
            self.failed.fetch_add(1, Ordering::SeqCst);
            return Err(Error::Store("the test keeps the catalog unreadable".into()));
        }
        self.inner.load(kind).await
    }
    async fn mutate(&self, kind: &str, name: &str, f: Mutator, head: TxnHead) -> Result<(Written, TxnRow)> {
        self.inner.mutate(kind, name, f, head).await
    }
    async fn commit_raw(
        &self,
        kind: &str,
        docs: &[(String, Option<String>)],
        rows: &[TxnRow],
    ) -> Result<Vec<i64>> {
        self.inner.commit_raw(kind, docs, rows).await
    }
    async fn insert_txns(&self, rows: &[TxnRow]) -> Result<Vec<i64>> {
        self.inner.insert_txns(rows).await
    }
    async fn list_txn(&self, q: &TxnQuery) -> Result<Vec<TxnRow>> {
        self.inner.list_txn(q).await
    }
    async fn delete_txn_before(&self, ms: i64) -> Result<u64> {
        self.inner.delete_txn_before(ms).await
    }
    async fn close(&self) {
        self.inner.close().await
    }
}

/// A controller with QOS `normal`, account `phys` and user `alice`, and a
/// job of alice's naming both, left pending (no agent); returns its id.
async fn seed(cfg: Config, dir: &Path) -> u64 {
    let running = controller::start(cfg, "127.0.0.1:0").await.unwrap();
    let caller = Caller { user: "alice".into(), peer: "test".into(), ..Caller::default() };
    for (entity, pairs) in [
        (Entity::Qos, &[("name", "normal")][..]),
        (Entity::Account, &[("name", "phys")][..]),
        (Entity::User, &[("name", "alice"), ("account", "phys")][..]),
    ] {
        let pairs: Vec<_> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        running.acct.set(entity, &caller, SetMode::Add, &[], &pairs, false).await.unwrap();
    }
    let spec = pb::JobSpec {
        name: "held".into(),
        account: "phys".into(),
        qos: "normal".into(),
        num_nodes: 1,
        ntasks: 1,
        cpus_per_task: 1,
        script: "#!/bin/sh\nexit 0\n".into(),
        workdir: dir.display().to_string(),
        stdout_path: "/dev/null".into(),
        ..Default::default()
    };
    let id = running.jobs.submit(Role::Administrator, &caller, spec).await.unwrap();
    running.shutdown().await.unwrap();
    id
}

fn node_up(running: &Running) -> bool {
    running.nodes.node("n1").is_some_and(|n| n.registered && n.responding)
}

#[tokio::test(flavor = "multi_thread")]
async fn jobs_held_for_an_unreadable_catalog_start_once_it_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spur.db");
    let url = format!("sqlite://{}", path.display());
    let id = seed(config(dir.path(), &url), dir.path()).await;

    let inner: Arc<dyn Store> = Arc::new(SqliteStore::open(&path.display().to_string()).await.unwrap());
    let flaky = Arc::new(Flaky { inner, down: AtomicBool::new(true), failed: AtomicU32::new(0) });
    let listener = controller::bind("127.0.0.1:0").await.unwrap();
    let store: Arc<dyn Store> = flaky.clone();
    let running = controller::start_with(config(dir.path(), &url), Some(store), listener).await.unwrap();
    assert!(!running.acct.catalog().loaded, "the controller starts with the catalog unloaded");
    let mut catalog_events = running.acct.subscribe();
    let opts = AgentOpts {
        controller: format!("http://{}", running.addr()),
        nodes: vec!["n1".into()],
        token: None,
        hostname: "testhost".into(),
        state_dir: dir.path().join("spool"),
        stepd: spur_tests::proc::bin("spurd"),
        facts: Default::default(),
        fact_overrides: vec![],
        dynamic: None,
    };
    let agent = tokio::spawn(spur_daemon::agent::run(opts));

    // The node is up and the refresher has retried, yet the job is held.
    wait_for("the node up and the catalog retried", || {
        (node_up(&running) && flaky.failed.load(Ordering::SeqCst) >= 2).then_some(())
    })
    .await;
    let held = wait_for("the job held for AccountingUnavailable", || {
        running
            .jobs
            .job(id)
            .filter(|j| j.reason == Some(spur_vocab::reason::ReasonCode::AccountingUnavailable))
    })
    .await;
    assert_eq!(held.state, JobState::Pending);
    assert!(
        running.jobs.job(id).is_some_and(|j| j.state == JobState::Pending),
        "still held with the node up"
    );

    // Unread records are neither shown (an empty list would be false) nor written.
    let mut c = conn::connect(&format!("http://{}", running.addr()), Identity::local()).await.unwrap();
    let listed =
        c.accounting.list_qos(pb::ListRequest::default()).await.expect_err("no QOS list while unread");
    assert_eq!(listed.code(), tonic::Code::Unavailable, "{listed:?}");
    let caller = Caller { user: "alice".into(), peer: "test".into(), ..Caller::default() };
    let pairs = [("name".to_string(), "other".to_string())];
    let wrote = running.acct.set(Entity::Qos, &caller, SetMode::Add, &[], &pairs, false).await;
    assert!(matches!(wrote, Err(Error::Unavailable(_))), "{wrote:?}");

    flaky.down.store(false, Ordering::SeqCst);
    let ev = tokio::time::timeout(DEADLINE, catalog_events.recv()).await.expect("a catalog event").unwrap();
    assert_eq!((ev.kind, ev.name.as_str(), ev.deleted), ("qos", "", false));
    assert!(running.acct.catalog().loaded);
    let done = wait_for("the job to run and complete", || {
        running.jobs.job(id).filter(|j| j.state == JobState::Completed)
    })
    .await;
    assert_eq!(done.exit_code, 0);
    agent.abort();
    running.shutdown().await.unwrap();
}
