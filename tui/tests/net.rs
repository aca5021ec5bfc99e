//! The network task against an in-test gRPC server on loopback (port 0).
#![allow(clippy::needless_update)]

mod common;

use spur_client::conn::{Identity, USER_HEADER};
use spur_console::net;
use spur_console::{Msg, Rpc, WriteOp};
use spur_proto::v1::accounting_server::{Accounting, AccountingServer};
use spur_proto::v1::*;
use spur_vocab::keys::Entity;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_stream::wrappers::{TcpListenerStream, UnboundedReceiverStream};
use tonic::{Request, Response, Status};
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

type Log = Arc<Mutex<Vec<String>>>;

struct Fake {
    log: Log,
}

fn log_where(log: &Log, call: &str, kv: &[KeyValue]) {
    let args: Vec<String> = kv.iter().map(|k| format!("{}={}", k.key, k.value)).collect();
    log.lock().unwrap().push(format!("{call} {}", args.join(" ")));
}

fn one_change() -> SetResponse {
    SetResponse { changes: vec![Change::default()], ..Default::default() }
}

fn log_set(log: &Log, call: &str, r: Request<SetRequest>) -> Response<SetResponse> {
    let r = r.into_inner();
    log_where(log, &format!("{call} mode={} where", r.mode), &r.r#where);
    log_where(log, &format!("{call} set"), &r.set);
    Response::new(one_change())
}

#[tonic::async_trait]
impl Accounting for Fake {
    async fn list_qos(&self, _: Request<ListRequest>) -> Result<Response<ListQosResponse>, Status> {
        Ok(Response::new(ListQosResponse { qos: common::snapshot().qos, ..Default::default() }))
    }
    async fn set_qos(&self, r: Request<SetRequest>) -> Result<Response<SetResponse>, Status> {
        Ok(log_set(&self.log, "set_qos", r))
    }
    async fn delete_qos(&self, r: Request<DeleteRequest>) -> Result<Response<SetResponse>, Status> {
        let who = r.metadata().get(USER_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        let r = r.into_inner();
        if who != "operator" {
            return Err(Status::permission_denied(format!("caller {who:?} is not the operator")));
        }
        if r.r#where.iter().any(|kv| kv.value == "missing") {
            return Err(Status::not_found("qos missing does not exist"));
        }
        log_where(&self.log, "delete_qos", &r.r#where);
        Ok(Response::new(one_change()))
    }
    async fn list_accounts(&self, _: Request<ListRequest>) -> Result<Response<ListAccountsResponse>, Status> {
        Ok(Response::new(ListAccountsResponse {
            accounts: common::snapshot().accounts,
            ..Default::default()
        }))
    }
    async fn set_account(&self, r: Request<SetRequest>) -> Result<Response<SetResponse>, Status> {
        Ok(log_set(&self.log, "set_account", r))
    }
    async fn delete_account(&self, r: Request<DeleteRequest>) -> Result<Response<SetResponse>, Status> {
        log_where(&self.log, "delete_account", &r.into_inner().r#where);
        Ok(Response::new(one_change()))
    }
    async fn list_users(&self, _: Request<ListRequest>) -> Result<Response<ListUsersResponse>, Status> {
        Ok(Response::new(ListUsersResponse { users: common::snapshot().users, ..Default::default() }))
    }
    async fn set_user(&self, r: Request<SetRequest>) -> Result<Response<SetResponse>, Status> {
        Ok(log_set(&self.log, "set_user", r))
    }
    async fn delete_user(&self, r: Request<DeleteRequest>) -> Result<Response<SetResponse>, Status> {
        log_where(&self.log, "delete_user", &r.into_inner().r#where);
        Ok(Response::new(one_change()))
    }
    async fn list_tres(&self, _: Request<ListRequest>) -> Result<Response<ListTresResponse>, Status> {
        Ok(Response::new(ListTresResponse::default()))
    }
}

/// Health whose Watch stream ends when the test drops the sender: a controller going away.
struct FakeHealth {
    watch: Mutex<Option<mpsc::UnboundedReceiver<Result<HealthCheckResponse, Status>>>>,
}

#[tonic::async_trait]
impl Health for FakeHealth {
    async fn check(&self, _: Request<HealthCheckRequest>) -> Result<Response<HealthCheckResponse>, Status> {
        Ok(Response::new(HealthCheckResponse { status: 1, ..Default::default() }))
    }
    type WatchStream = Pin<Box<dyn tokio_stream::Stream<Item = Result<HealthCheckResponse, Status>> + Send>>;
    async fn watch(&self, _: Request<HealthCheckRequest>) -> Result<Response<Self::WatchStream>, Status> {
        let rx = self.watch.lock().unwrap().take().ok_or_else(|| Status::unavailable("one watcher only"))?;
        Ok(Response::new(Box::pin(UnboundedReceiverStream::new(rx))))
    }
}

struct Server {
    url: String,
    log: Log,
    health: Option<mpsc::UnboundedSender<Result<HealthCheckResponse, Status>>>,
}

async fn serve(listener: TcpListener, with_health: bool) -> Server {
    let url = format!("http://{}", listener.local_addr().unwrap());
    let log = Log::default();
    let (tx, rx) = mpsc::unbounded_channel();
    let mut router =
        tonic::transport::Server::builder().add_service(AccountingServer::new(Fake { log: log.clone() }));
    let health = if with_health {
        let _ = tx.send(Ok(HealthCheckResponse { status: 1, ..Default::default() }));
        router = router.add_service(HealthServer::new(FakeHealth { watch: Mutex::new(Some(rx)) }));
        Some(tx)
    } else {
        None
    };
    tokio::spawn(router.serve_with_incoming(TcpListenerStream::new(listener)));
    Server { url, log, health }
}

fn ident() -> Identity {
    Identity::asserted("operator", Some(4242))
}

async fn next(rx: &mut mpsc::UnboundedReceiver<Msg>) -> Msg {
    tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .expect("no message in 20s")
        .expect("task ended")
}

#[tokio::test]
async fn fetches_writes_and_reports() {
    let server = serve(TcpListener::bind("127.0.0.1:0").await.unwrap(), false).await;
    let (rpc_tx, rpc_rx) = mpsc::unbounded_channel();
    let (msg_tx, mut msg_rx) = mpsc::unbounded_channel();
    let task = net::spawn(server.url.clone(), ident(), rpc_rx, msg_tx);
    assert_eq!(next(&mut msg_rx).await, Msg::Connected);
    rpc_tx.send(Rpc::FetchAll).unwrap();
    assert_eq!(next(&mut msg_rx).await, Msg::Loaded(common::snapshot()));

    rpc_tx.send(Rpc::Write(WriteOp::DeleteQos { names: vec!["low".into(), "scavenger".into()] })).unwrap();
    assert!(
        matches!(next(&mut msg_rx).await, Msg::WriteDone { summary } if summary.contains("low,scavenger"))
    );
    // Every modify goes through its entity's Set RPC, as `sacctmgr modify` sends it.
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    for (entity, filter, set) in [
        (Entity::Qos, vec![pair("name", "highprio")], vec![pair("priority", "120")]),
        (Entity::Account, vec![pair("name", "ml")], vec![pair("fairshare", "60")]),
        (
            Entity::User,
            vec![pair("name", "alice"), pair("account", "ml")],
            vec![pair("defaultqos", "normal"), pair("qos", "normal,low")],
        ),
    ] {
        rpc_tx.send(Rpc::Write(WriteOp::Modify { entity, filter, set, diff: vec![] })).unwrap();
        assert!(matches!(next(&mut msg_rx).await, Msg::WriteDone { .. }));
    }
    rpc_tx.send(Rpc::Write(WriteOp::DeleteUser { assocs: vec![("bob".into(), "physics".into())] })).unwrap();
    assert!(matches!(next(&mut msg_rx).await, Msg::WriteDone { .. }));
    rpc_tx.send(Rpc::Write(WriteOp::DeleteQos { names: vec!["missing".into()] })).unwrap();
    match next(&mut msg_rx).await {
        Msg::WriteFailed { error } => {
            assert!(error.contains("NotFound") && error.contains("missing"), "{error}")
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    assert_eq!(
        *server.log.lock().unwrap(),
        [
            "delete_qos name=low",
            "delete_qos name=scavenger",
            "set_qos mode=2 where name=highprio",
            "set_qos set priority=120",
            "set_account mode=2 where name=ml",
            "set_account set fairshare=60",
            "set_user mode=2 where name=alice account=ml",
            "set_user set defaultqos=normal qos=normal,low",
            "delete_user name=bob account=physics",
        ]
    );
    drop(rpc_tx);
    tokio::time::timeout(Duration::from_secs(20), task).await.unwrap().unwrap();
}

#[tokio::test]
async fn backs_off_while_unreachable_then_connects() {
    // Reserve a port, then free it so the first attempts are refused.
    let port = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap().port();
    let (rpc_tx, rpc_rx) = mpsc::unbounded_channel();
    let (msg_tx, mut msg_rx) = mpsc::unbounded_channel();
    let _task = net::spawn(format!("http://127.0.0.1:{port}"), ident(), rpc_rx, msg_tx);
    let mut delays = Vec::new();
    while delays.len() < 3 {
        match next(&mut msg_rx).await {
            Msg::Reconnecting { attempt, retry_in, error } => {
                assert_eq!(attempt as usize, delays.len() + 1);
                assert!(error.contains("connect"), "{error}");
                delays.push(retry_in);
            }
            other => panic!("expected Reconnecting, got {other:?}"),
        }
    }
    assert!(delays[0] < delays[1] && delays[1] < delays[2], "{delays:?}");
    // A write while disconnected fails at once instead of waiting.
    rpc_tx.send(Rpc::Write(WriteOp::DeleteQos { names: vec!["low".into()] })).unwrap();
    assert!(matches!(next(&mut msg_rx).await, Msg::WriteFailed { error } if error.contains("not connected")));
    let _server = serve(TcpListener::bind(("127.0.0.1", port)).await.unwrap(), false).await;
    // A refresh cuts the backoff short.
    rpc_tx.send(Rpc::FetchAll).unwrap();
    loop {
        match next(&mut msg_rx).await {
            Msg::Connected => break,
            Msg::Reconnecting { .. } => rpc_tx.send(Rpc::FetchAll).unwrap(),
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn notices_a_lost_controller_through_health_watch() {
    let mut server = serve(TcpListener::bind("127.0.0.1:0").await.unwrap(), true).await;
    let (_rpc_tx, rpc_rx) = mpsc::unbounded_channel();
    let (msg_tx, mut msg_rx) = mpsc::unbounded_channel();
    let _task = net::spawn(server.url.clone(), ident(), rpc_rx, msg_tx);
    assert_eq!(next(&mut msg_rx).await, Msg::Connected);
    // No request is sent: the end of the watch stream alone must be noticed.
    server.health.take();
    assert!(matches!(next(&mut msg_rx).await, Msg::Reconnecting { attempt: 1, .. }));
}

#[tokio::test]
async fn malformed_url_is_reported_once() {
    let (rpc_tx, rpc_rx) = mpsc::unbounded_channel();
    let (msg_tx, mut msg_rx) = mpsc::unbounded_channel();
    let _task = net::spawn("not a url".into(), ident(), rpc_rx, msg_tx);
    assert!(matches!(next(&mut msg_rx).await, Msg::Disconnected { error } if error.contains("not a url")));
    rpc_tx.send(Rpc::Write(WriteOp::DeleteQos { names: vec!["x".into()] })).unwrap();
    assert!(matches!(next(&mut msg_rx).await, Msg::WriteFailed { .. }));
}
