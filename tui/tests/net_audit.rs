//! WhoAmI and the txn tail through the network task, against in-test
//! Session and Audit services on loopback (port 0).

mod common;

use spur_client::conn::{Identity, USER_HEADER};
use spur_console::model::action::TailSpec;
use spur_console::model::session::Role;
use spur_console::net;
use spur_console::{Msg, Rpc};
use spur_proto::v1::audit_server::{Audit, AuditServer};
use spur_proto::v1::session_server::{Session, SessionServer};
use spur_proto::v1::tail_txn_event::Event;
use spur_proto::v1::*;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio_stream::wrappers::{TcpListenerStream, UnboundedReceiverStream};
use tonic::{Request, Response, Status};

type Log = Arc<Mutex<Vec<String>>>;
type Item = Result<TailTxnEvent, Status>;

/// Each TailTxn call hands the test the sender feeding that call's stream.
struct Fake {
    log: Log,
    streams: UnboundedSender<UnboundedSender<Item>>,
}

fn user<T>(r: &Request<T>) -> String {
    r.metadata().get(USER_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("").to_string()
}

fn pairs(kv: &[KeyValue]) -> String {
    kv.iter().map(|k| format!("{}={}", k.key, k.value)).collect::<Vec<_>>().join(" ")
}

/// The controller's rule: the txn log needs Operator; "nobody" has no role.
fn gate<T>(r: &Request<T>, method: &str) -> Result<(), Status> {
    match user(r).as_str() {
        "nobody" => {
            Err(Status::permission_denied(format!("{method} needs the Operator role; 'nobody' has None")))
        }
        _ => Ok(()),
    }
}

#[tonic::async_trait]
impl Audit for Fake {
    async fn list_txn(&self, r: Request<ListTxnRequest>) -> Result<Response<ListTxnResponse>, Status> {
        gate(&r, "ListTxn")?;
        let line = format!("list_txn by {}: {}", user(&r), pairs(&r.get_ref().filter));
        self.log.lock().unwrap().push(line);
        Ok(Response::new(ListTxnResponse { rows: common::txn_rows()[..3].to_vec(), next_before_id: None }))
    }
    type TailTxnStream = Pin<Box<dyn tokio_stream::Stream<Item = Item> + Send>>;
    async fn tail_txn(&self, r: Request<TailTxnRequest>) -> Result<Response<Self::TailTxnStream>, Status> {
        gate(&r, "TailTxn")?;
        let req = r.get_ref();
        let line = format!("tail_txn by {} after {:?}: {}", user(&r), req.after_id, pairs(&req.filter));
        self.log.lock().unwrap().push(line);
        let (tx, rx) = mpsc::unbounded_channel();
        let _ = self.streams.send(tx);
        Ok(Response::new(Box::pin(UnboundedReceiverStream::new(rx))))
    }
}

#[tonic::async_trait]
impl Session for Fake {
    async fn who_am_i(&self, r: Request<WhoAmIRequest>) -> Result<Response<WhoAmIResponse>, Status> {
        let role = if user(&r) == "nobody" { "None" } else { "Operator" };
        let resp = WhoAmIResponse { user: user(&r), role: role.into(), verified: true, ..Default::default() };
        Ok(Response::new(resp))
    }
}

struct Server {
    url: String,
    log: Log,
    streams: UnboundedReceiver<UnboundedSender<Item>>,
}

async fn serve() -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let log = Log::default();
    let (tx, streams) = mpsc::unbounded_channel();
    let fake = || Fake { log: log.clone(), streams: tx.clone() };
    let router = tonic::transport::Server::builder()
        .add_service(AuditServer::new(fake()))
        .add_service(SessionServer::new(fake()));
    tokio::spawn(router.serve_with_incoming(TcpListenerStream::new(listener)));
    Server { url, log, streams }
}

async fn next<T>(rx: &mut UnboundedReceiver<T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.expect("nothing in 20s").expect("closed")
}

fn row(r: TxnRow) -> Item {
    Ok(TailTxnEvent { event: Some(Event::Row(r)) })
}

fn ids(rows: &[TxnRow]) -> Vec<i64> {
    rows.iter().map(|r| r.id).collect()
}

fn spec(sub: u64, filter: &[(&str, &str)], after_id: Option<i64>) -> Rpc {
    let filter = filter.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Rpc::Tail(TailSpec { sub, filter, after_id })
}

#[tokio::test]
async fn fills_tails_in_batches_and_resumes_after_a_lost_stream() {
    let mut server = serve().await;
    let (rpc_tx, rpc_rx) = mpsc::unbounded_channel();
    let (msg_tx, mut msgs) = mpsc::unbounded_channel();
    let operator = Identity::asserted("operator", Some(4242));
    let _task = net::spawn(server.url.clone(), operator, rpc_rx, msg_tx);
    assert_eq!(next(&mut msgs).await, Msg::Connected);
    rpc_tx.send(Rpc::WhoAmI).unwrap();
    match next(&mut msgs).await {
        Msg::Session(s) => {
            assert_eq!((s.user.as_str(), s.role, s.verified), ("operator", Role::Operator, true))
        }
        other => panic!("expected the session, got {other:?}"),
    }
    rpc_tx.send(spec(1, &[("Outcome", "denied")], None)).unwrap();
    match next(&mut msgs).await {
        Msg::AuditRows { sub: 1, rows, lagged: None } => assert_eq!(ids(&rows), [1, 2, 3]),
        other => panic!("expected the fill, got {other:?}"),
    }
    // Rows that arrive together travel together, with the lagged notice.
    let stream = next(&mut server.streams).await;
    stream.send(row(common::txn(4, "a", "create", "qos:a", "denied"))).unwrap();
    stream.send(Ok(TailTxnEvent { event: Some(Event::Lagged("fell 9 rows behind".into())) })).unwrap();
    stream.send(row(common::txn(5, "b", "create", "qos:b", "denied"))).unwrap();
    match next(&mut msgs).await {
        Msg::AuditRows { sub: 1, rows, lagged } => {
            assert_eq!(ids(&rows), [4, 5]);
            assert_eq!(lagged.as_deref(), Some("fell 9 rows behind"));
        }
        other => panic!("expected one batch, got {other:?}"),
    }
    // The stream failing as Unavailable is a lost controller: reconnect, then the app resumes.
    stream.send(Err(Status::unavailable("controller shutting down"))).unwrap();
    assert!(matches!(next(&mut msgs).await, Msg::Reconnecting { attempt: 1, .. }));
    assert_eq!(next(&mut msgs).await, Msg::Connected);
    rpc_tx.send(spec(2, &[("Outcome", "denied")], Some(5))).unwrap();
    let stream = next(&mut server.streams).await;
    stream.send(row(common::txn(6, "c", "create", "qos:c", "denied"))).unwrap();
    assert!(matches!(next(&mut msgs).await, Msg::AuditRows { sub: 2, rows, .. } if ids(&rows) == [6]));
    assert_eq!(
        *server.log.lock().unwrap(),
        [
            "list_txn by operator: Outcome=denied limit=200",
            "tail_txn by operator after Some(3): Outcome=denied",
            "tail_txn by operator after Some(5): Outcome=denied",
        ]
    );
}

#[tokio::test]
async fn permission_denied_is_reported_with_the_reason() {
    let server = serve().await;
    let (rpc_tx, rpc_rx) = mpsc::unbounded_channel();
    let (msg_tx, mut msgs) = mpsc::unbounded_channel();
    let nobody = Identity::asserted("nobody", None);
    let _task = net::spawn(server.url.clone(), nobody, rpc_rx, msg_tx);
    assert_eq!(next(&mut msgs).await, Msg::Connected);
    rpc_tx.send(spec(1, &[], None)).unwrap();
    match next(&mut msgs).await {
        Msg::AuditFailed { sub: 1, error } => {
            assert!(
                error.contains("PermissionDenied") && error.contains("needs the Operator role"),
                "{error}"
            )
        }
        other => panic!("expected the refusal, got {other:?}"),
    }
    // The connection is fine: the session still answers.
    rpc_tx.send(Rpc::WhoAmI).unwrap();
    assert!(matches!(next(&mut msgs).await, Msg::Session(s) if s.role == Role::None));
}
