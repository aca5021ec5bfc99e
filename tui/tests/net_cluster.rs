//! The cluster watch, node writes and the provisioner definitions through
//! the network task, against in-test Cluster and Nodes services on loopback
//! (port 0).
#![allow(clippy::needless_update)]

#[path = "fake/provisioners.rs"]
mod provisioners;

use spur_client::conn::{Identity, USER_HEADER};
use spur_console::net;
use spur_console::{Catalog, Msg, NodeOp, Rpc, WriteOp};
use spur_proto::v1::cluster_event::Event;
use spur_proto::v1::cluster_server::{Cluster, ClusterServer};
use spur_proto::v1::nodes_server::{Nodes, NodesServer};
use spur_proto::v1::*;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio_stream::wrappers::{TcpListenerStream, UnboundedReceiverStream};
use tonic::{Request, Response, Status};

type Item = Result<ClusterEvent, Status>;

/// Each Watch call sends its snapshot and hands the test the sender for the rest.
struct Fake {
    log: Arc<Mutex<Vec<String>>>,
    streams: UnboundedSender<UnboundedSender<Item>>,
}

fn node(name: &str, base: &str, drain: bool) -> Node {
    Node { name: name.into(), base_state: base.into(), drain, cpus: 8, ..Default::default() }
}

fn nodes_event(nodes: Vec<Node>, snapshot: bool) -> Item {
    Ok(ClusterEvent { event: Some(Event::Nodes(NodesChanged { nodes, snapshot })) })
}

#[tonic::async_trait]
impl Cluster for Fake {
    type WatchStream = Pin<Box<dyn tokio_stream::Stream<Item = Item> + Send>>;
    async fn watch(&self, _: Request<WatchRequest>) -> Result<Response<Self::WatchStream>, Status> {
        let (tx, rx) = mpsc::unbounded_channel();
        let _ =
            tx.send(nodes_event(vec![node("node01", "IDLE", false), node("node02", "IDLE", false)], true));
        let _ = self.streams.send(tx);
        Ok(Response::new(Box::pin(UnboundedReceiverStream::new(rx))))
    }
    async fn show_config(
        &self,
        _: Request<spur_proto::v1::ShowConfigRequest>,
    ) -> Result<Response<spur_proto::v1::ShowConfigResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }
    async fn diag(&self, _: Request<DiagRequest>) -> Result<Response<DiagResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }
    async fn reset_diag(&self, _: Request<ResetDiagRequest>) -> Result<Response<ResetDiagResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }
    async fn takeover(&self, _: Request<TakeoverRequest>) -> Result<Response<TakeoverResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }
}

#[tonic::async_trait]
impl Nodes for Fake {
    async fn list_nodes(&self, _: Request<ListRequest>) -> Result<Response<ListNodesResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }
    async fn update_nodes(
        &self,
        r: Request<UpdateNodesRequest>,
    ) -> Result<Response<UpdateNodesResponse>, Status> {
        let who = r.metadata().get(USER_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        if who != "admin" {
            return Err(Status::permission_denied(format!(
                "UpdateNodes needs Administrator; {who} is Operator"
            )));
        }
        let r = r.into_inner();
        self.log.lock().unwrap().push(format!("nodes={} state={} reason={}", r.nodes, r.state, r.reason));
        let updated = spur_vocab::hostlist::expand(&r.nodes).unwrap();
        let warning = if r.state == "resume" { "node01 was not drained".to_string() } else { String::new() };
        Ok(Response::new(UpdateNodesResponse { updated, warning }))
    }
    async fn list_partitions(
        &self,
        _: Request<ListRequest>,
    ) -> Result<Response<ListPartitionsResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }
    async fn update_partition(
        &self,
        _: Request<UpdatePartitionRequest>,
    ) -> Result<Response<UpdatePartitionResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }
    async fn reconfigure(
        &self,
        _: Request<ReconfigureRequest>,
    ) -> Result<Response<ReconfigureResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }
    async fn create_node(
        &self,
        _: Request<spur_proto::v1::CreateNodeRequest>,
    ) -> Result<Response<spur_proto::v1::CreateNodeResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }
    async fn delete_node(
        &self,
        _: Request<spur_proto::v1::DeleteNodeRequest>,
    ) -> Result<Response<spur_proto::v1::DeleteNodeResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }
    async fn list_provisioners(
        &self,
        r: Request<ListProvisionersRequest>,
    ) -> Result<Response<ListProvisionersResponse>, Status> {
        let provisioners = provisioners::answer(&r.into_inner().id);
        Ok(Response::new(ListProvisionersResponse {
            provisioners,
            file: "/etc/spur/provisioners.yaml".into(),
        }))
    }
}

struct Server {
    url: String,
    log: Arc<Mutex<Vec<String>>>,
    streams: UnboundedReceiver<UnboundedSender<Item>>,
}

async fn serve() -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let log = Arc::<Mutex<Vec<String>>>::default();
    let (tx, streams) = mpsc::unbounded_channel();
    let fake = || Fake { log: log.clone(), streams: tx.clone() };
    let router = tonic::transport::Server::builder()
        .add_service(ClusterServer::new(fake()))
        .add_service(NodesServer::new(fake()));
    tokio::spawn(router.serve_with_incoming(TcpListenerStream::new(listener)));
    Server { url, log, streams }
}

async fn next<T>(rx: &mut UnboundedReceiver<T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.expect("nothing in 20s").expect("closed")
}

fn names(nodes: &[Node]) -> Vec<&str> {
    nodes.iter().map(|n| n.name.as_str()).collect()
}

fn start(url: &str, user: &str) -> (UnboundedSender<Rpc>, UnboundedReceiver<Msg>) {
    let (rpc_tx, rpc_rx) = mpsc::unbounded_channel();
    let (msg_tx, msgs) = mpsc::unbounded_channel();
    let who = Identity::asserted(user, Some(0));
    drop(net::spawn(url.to_string(), who, rpc_rx, msg_tx));
    (rpc_tx, msgs)
}

#[tokio::test]
async fn snapshot_then_batched_changes_and_a_reconnect_after_the_watch_ends() {
    let mut server = serve().await;
    let (_rpcs, mut msgs) = start(&server.url, "admin");
    // The snapshot is in hand before Connected is reported, and follows it at once.
    assert_eq!(next(&mut msgs).await, Msg::Connected);
    match next(&mut msgs).await {
        Msg::Cluster(u) => assert!(u.snapshot && names(&u.nodes) == ["node01", "node02"], "{u:?}"),
        other => panic!("expected the snapshot, got {other:?}"),
    }
    let stream = next(&mut server.streams).await;
    // Changes that arrive together travel together: the later node02 wins, lists are named once.
    stream.send(nodes_event(vec![node("node02", "IDLE", true)], false)).unwrap();
    stream.send(nodes_event(vec![node("node02", "MIXED", true)], false)).unwrap();
    for entity in ["user", "account", "user"] {
        let changed = CatalogChanged { entity: entity.into(), name: "x".into(), deleted: false };
        stream.send(Ok(ClusterEvent { event: Some(Event::Catalog(changed)) })).unwrap();
    }
    match next(&mut msgs).await {
        Msg::Cluster(u) => {
            assert!(!u.snapshot);
            assert_eq!(names(&u.nodes), ["node02"]);
            assert_eq!(u.nodes[0].base_state, "MIXED");
            assert_eq!(u.stale, [Catalog::Users, Catalog::Accounts]);
        }
        other => panic!("expected one batch, got {other:?}"),
    }
    // The watch ending is a lost connection: re-made, with a fresh snapshot.
    drop(stream);
    assert!(matches!(next(&mut msgs).await, Msg::Reconnecting { attempt: 1, .. }));
    assert_eq!(next(&mut msgs).await, Msg::Connected);
    assert!(matches!(next(&mut msgs).await, Msg::Cluster(u) if u.snapshot));
}

#[tokio::test]
async fn node_writes_send_a_hostlist_and_report_warnings_and_refusals() {
    let server = serve().await;
    let (rpcs, mut msgs) = start(&server.url, "admin");
    assert_eq!(next(&mut msgs).await, Msg::Connected);
    assert!(matches!(next(&mut msgs).await, Msg::Cluster(_)));
    let nodes = vec!["node01".to_string(), "node02".to_string()];
    let drain = WriteOp::UpdateNodes { nodes: nodes.clone(), op: NodeOp::Drain, reason: "swap PSU".into() };
    rpcs.send(Rpc::Write(drain)).unwrap();
    assert_eq!(next(&mut msgs).await, Msg::WriteDone { summary: "drained node[01-02]".into() });
    let resume =
        WriteOp::UpdateNodes { nodes: vec!["node01".into()], op: NodeOp::Resume, reason: String::new() };
    rpcs.send(Rpc::Write(resume)).unwrap();
    assert_eq!(
        next(&mut msgs).await,
        Msg::WriteWarned { summary: "resumed node01".into(), warning: "node01 was not drained".into() }
    );
    assert_eq!(
        *server.log.lock().unwrap(),
        ["nodes=node[01-02] state=drain reason=swap PSU", "nodes=node01 state=resume reason="]
    );

    let (rpcs, mut msgs) = start(&server.url, "bob");
    assert_eq!(next(&mut msgs).await, Msg::Connected);
    assert!(matches!(next(&mut msgs).await, Msg::Cluster(_)));
    rpcs.send(Rpc::Write(WriteOp::UpdateNodes { nodes, op: NodeOp::Down, reason: "psu".into() })).unwrap();
    match next(&mut msgs).await {
        Msg::WriteFailed { error } => assert!(
            error.starts_with("down nodes: PermissionDenied") && error.contains("needs Administrator"),
            "{error}"
        ),
        other => panic!("expected the refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn provisioner_definitions_are_read_through_the_nodes_service() {
    let server = serve().await;
    let (rpcs, mut msgs) = start(&server.url, "alice");
    assert_eq!(next(&mut msgs).await, Msg::Connected);
    assert!(matches!(next(&mut msgs).await, Msg::Cluster(_)));
    rpcs.send(Rpc::FetchProvisioners).unwrap();
    match next(&mut msgs).await {
        Msg::Provisioners(list) => assert_eq!(list, provisioners::sample()),
        other => panic!("expected the definitions, got {other:?}"),
    }
}
