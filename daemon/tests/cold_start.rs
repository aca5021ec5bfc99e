//! A controller that starts without its database: the waiting server
//! answers Unavailable and hands the same socket to the controller once the
//! store opens.

use spur_client::conn::{self, Clients, Identity};
use spur_daemon::config::Config;
use spur_daemon::controller::{self, waiting};
use spur_proto::v1 as pb;
use std::path::Path;
use std::time::{Duration, Instant};

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
        let (store, waited) = waiting::open_store(&opener_url, &listener, move || {
            let _ = waiting_tx.send(());
        })
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
    let start = Instant::now();
    let jobs = loop {
        match list_jobs(&mut c).await {
            Ok(jobs) => break jobs,
            Err(s) => assert!(start.elapsed() < DEADLINE, "the controller never answered: {s:?}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(jobs.is_empty());
    running.shutdown().await.unwrap();
}
