//! Job reads and job actions through the network task, against an
//! in-test Jobs service (without Cluster.Watch or accounting: those calls
//! fail as they would against a controller that lacks them).

#[path = "fake/jobs.rs"]
mod fake;

use spur_client::conn::Identity;
use spur_console::{JobOp, Msg, Rpc, WriteOp, net};
use spur_proto::v1::Job;
use std::time::Duration;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

fn job(id: u64, user: &str, state: &str) -> Job {
    let end_ms = if state == "COMPLETED" { 1 } else { 0 };
    Job { id, user: user.into(), state: spur_proto::states::state_named(state), end_ms, ..Default::default() }
}

fn start(url: &str, user: &str) -> (UnboundedSender<Rpc>, UnboundedReceiver<Msg>) {
    let (rpc_tx, rpc_rx) = mpsc::unbounded_channel();
    let (msg_tx, msgs) = mpsc::unbounded_channel();
    let who = Identity::asserted(user, Some(1000));
    drop(net::spawn(url.to_string(), who, rpc_rx, msg_tx));
    (rpc_tx, msgs)
}

async fn next(rx: &mut UnboundedReceiver<Msg>) -> Msg {
    tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.expect("nothing in 20s").expect("closed")
}

fn jobs_op(op: JobOp, ids: &[u64]) -> Rpc {
    Rpc::Write(WriteOp::UpdateJobs { op, ids: ids.to_vec(), owners: vec![] })
}

#[tokio::test]
async fn lists_compacted_jobs_and_sends_actions_reporting_partial_refusals() {
    let server =
        fake::serve(vec![job(2, "alice", "PENDING"), job(1, "alice", "RUNNING"), job(3, "bob", "COMPLETED")])
            .await;
    let (rpcs, mut msgs) = start(&server.url, "alice");
    assert_eq!(next(&mut msgs).await, Msg::Connected);
    rpcs.send(Rpc::FetchJobs).unwrap();
    match next(&mut msgs).await {
        Msg::Jobs(set) => assert_eq!(set.jobs.iter().map(|j| j.id).collect::<Vec<_>>(), [1, 2, 3]),
        other => panic!("expected the jobs, got {other:?}"),
    }
    rpcs.send(jobs_op(JobOp::Hold, &[2])).unwrap();
    assert_eq!(next(&mut msgs).await, Msg::WriteDone { summary: "held 2".into() });
    // The first refusal stops the rest; what was done is reported with it.
    rpcs.send(jobs_op(JobOp::Release, &[2, 3, 1])).unwrap();
    match next(&mut msgs).await {
        Msg::WriteWarned { summary, warning } => {
            assert_eq!(summary, "released 2");
            assert!(
                warning.starts_with("job 3: PermissionDenied") && warning.contains("belongs to 'bob'"),
                "{warning}"
            );
        }
        other => panic!("expected a partial release, got {other:?}"),
    }
    rpcs.send(jobs_op(JobOp::Requeue, &[3])).unwrap();
    match next(&mut msgs).await {
        Msg::WriteFailed { error } => assert!(error.starts_with("requeue jobs: PermissionDenied"), "{error}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    rpcs.send(jobs_op(JobOp::Cancel, &[1, 2])).unwrap();
    assert_eq!(next(&mut msgs).await, Msg::WriteDone { summary: "cancelled 1,2".into() });
    assert_eq!(
        *server.log.lock().unwrap(),
        ["list", "update 2 action=hold", "update 2 action=release", "cancel [1, 2]"]
    );
}

#[tokio::test]
async fn a_controller_without_jobs_is_unsupported_not_an_error() {
    // A server with only the health service: every other call is Unimplemented.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (_reporter, health) = tonic_health::server::health_reporter();
    let router = tonic::transport::Server::builder().add_service(health);
    tokio::spawn(router.serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)));
    let (rpcs, mut msgs) = start(&url, "alice");
    assert_eq!(next(&mut msgs).await, Msg::Connected);
    rpcs.send(Rpc::FetchJobs).unwrap();
    assert!(matches!(next(&mut msgs).await, Msg::JobsFailed { unsupported: true, .. }));
}
