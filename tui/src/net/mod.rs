//! The network task: owns the gRPC connection, runs [`Rpc`]s and reports
//! [`Msg`]s. It reconnects with exponential backoff (capped at 5 s) and
//! notices a lost controller through the gRPC health `Watch` stream when
//! the controller serves it; there is no timer polling. Every client
//! carries the [`IdentityInterceptor`] so the txn log names the console's user.
//!
//! The txn tail runs as its own task beside the request loop, so a long
//! fetch never stalls it; it is aborted when the connection is lost and the
//! app re-subscribes (after the last row seen) on the next `Connected`.
//!
//! `Cluster.Watch` is part of the connection: it is opened, and its node
//! snapshot received, before `Connected` is reported, so the fetch the app
//! then asks for cannot miss a change; when it ends the connection is
//! re-made. A controller without it is served as before (re-fetch after writes).
//!
//! Jobs are read when the app asks (`Rpc::FetchJobs`; see `crate::update::queue`
//! for when; after that the watch pushes their changes), with tonic's 4 MiB
//! answer limit raised for large queues, and compacted on a blocking thread
//! before they are reported.

mod calls;
mod output;
// Plugins run beside the connection: they need no controller.
pub mod plugin;
mod tail;
mod watch;

use crate::model::action::{Msg, Rpc, TailSpec};
use crate::model::session::Session;
use spur_client::conn::{Identity, IdentityInterceptor, Svc};
use spur_proto::v1::WhoAmIRequest;
use spur_proto::v1::accounting_client::AccountingClient;
use spur_proto::v1::audit_client::AuditClient;
use spur_proto::v1::cluster_client::ClusterClient;
use spur_proto::v1::jobs_client::JobsClient as JobsGrpc;
use spur_proto::v1::licenses_client::LicensesClient as LicensesGrpc;
use spur_proto::v1::nodes_client::NodesClient as NodesGrpc;
use spur_proto::v1::reservations_client::ReservationsClient as ResvGrpc;
use spur_proto::v1::session_client::SessionClient;
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::task::{JoinError, JoinHandle};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

const FIRST_RETRY: Duration = Duration::from_millis(250);
const MAX_RETRY: Duration = Duration::from_secs(5);

pub fn spawn(
    url: String,
    identity: Identity,
    rpcs: UnboundedReceiver<Rpc>,
    msgs: UnboundedSender<Msg>,
) -> JoinHandle<()> {
    tokio::spawn(run(url, identity, rpcs, msgs))
}

type Client = AccountingClient<InterceptedService<Channel, IdentityInterceptor>>;
type NodesClient = NodesGrpc<Svc>;
type JobsClient = JobsGrpc<Svc>;
type LicensesClient = LicensesGrpc<Svc>;
type ResvClient = ResvGrpc<Svc>;

enum Exit {
    /// The app loop hung up: stop.
    Closed,
    /// The controller went away: reconnect.
    Lost(String),
}

async fn run(url: String, identity: Identity, mut rpcs: UnboundedReceiver<Rpc>, msgs: UnboundedSender<Msg>) {
    // Several controllers (high availability): tried in order at each attempt.
    let urls = spur_proto::wire::controllers(&url);
    let mut endpoints = Vec::with_capacity(urls.len());
    for u in &urls {
        match Endpoint::from_shared(u.clone()) {
            // The timeout bounds each call until its response starts, so streams (health, tail) live on.
            Ok(e) => endpoints.push((
                u.clone(),
                e.connect_timeout(Duration::from_secs(3)).timeout(Duration::from_secs(30)).tcp_nodelay(true),
            )),
            Err(e) => {
                let _ = msgs.send(Msg::Disconnected { error: format!("invalid controller URL {u:?}: {e}") });
                return refuse_all(rpcs, msgs).await;
            }
        }
    }
    if endpoints.is_empty() {
        let _ = msgs.send(Msg::Disconnected { error: format!("no controller address in {url:?}") });
        return refuse_all(rpcs, msgs).await;
    }
    let several = endpoints.len() > 1;
    let mut delay = FIRST_RETRY;
    let mut attempt = 0u32;
    loop {
        let mut error = String::new();
        for (u, endpoint) in &endpoints {
            match endpoint.connect().await {
                Ok(channel) => {
                    delay = FIRST_RETRY;
                    attempt = 0;
                    if several {
                        let primary = leads(channel.clone()).await;
                        let _ = msgs.send(Msg::On { controller: u.clone(), primary });
                    }
                    // serve() reports Connected once the cluster watch is subscribed.
                    match serve(channel, &identity, &mut rpcs, &msgs).await {
                        Exit::Closed => return,
                        Exit::Lost(e) => error = e,
                    }
                    break;
                }
                Err(e) => error = format!("cannot connect to {u}: {}", source_chain(&e)),
            }
        }
        attempt += 1;
        if msgs.send(Msg::Reconnecting { attempt, retry_in: delay, error }).is_err() {
            return;
        }
        if !wait(delay, &mut rpcs, &msgs).await {
            return;
        }
        delay = (delay * 2).min(MAX_RETRY);
    }
}

/// Whether the controller on `channel` leads: it alone serves the
/// leader-only health name. None when it does not answer.
async fn leads(channel: Channel) -> Option<bool> {
    let req = HealthCheckRequest { service: spur_proto::wire::LEADER_SERVICE.into() };
    let answer = tokio::time::timeout(Duration::from_secs(3), HealthClient::new(channel).check(req)).await;
    match answer {
        Ok(Ok(r)) => Some(r.into_inner().status == tonic_health::ServingStatus::Serving as i32),
        _ => None,
    }
}

/// Sleep out the backoff; a refresh request cuts it short. False when the app hung up.
async fn wait(delay: Duration, rpcs: &mut UnboundedReceiver<Rpc>, msgs: &UnboundedSender<Msg>) -> bool {
    let sleep = tokio::time::sleep(delay);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            _ = &mut sleep => return true,
            rpc = rpcs.recv() => match rpc {
                None => return false,
                Some(Rpc::FetchAll) => return true,
                // Asked again (or covered by FetchAll) on the next Connected.
                Some(
                    Rpc::WhoAmI
                    | Rpc::Tail(_)
                    | Rpc::FetchList(_)
                    | Rpc::FetchJobs
                    | Rpc::FetchLicenses
                    | Rpc::FetchProvisioners
                    | Rpc::FetchShares
                    | Rpc::Explain(_)
                    | Rpc::NodeEvents(_)
                    | Rpc::FetchDiag
                    | Rpc::StopOutput,
                ) => {}
                Some(Rpc::Output(spec)) => {
                    let error = Some("not connected to the controller".to_string());
                    let _ = msgs.send(Msg::OutputEnded { sub: spec.sub, error });
                }
                Some(Rpc::Write(op)) => {
                    let _ = msgs.send(Msg::WriteFailed { error: format!("{}: not connected to the controller", op.verb()) });
                }
            },
        }
    }
}

async fn refuse_all(mut rpcs: UnboundedReceiver<Rpc>, msgs: UnboundedSender<Msg>) {
    while let Some(rpc) = rpcs.recv().await {
        if let Rpc::Write(op) = rpc {
            let _ = msgs.send(Msg::WriteFailed { error: format!("{}: no controller", op.verb()) });
        }
    }
}

/// The running tail task; dropping it (a new subscription, a lost
/// connection) stops it.
struct Tail {
    sub: u64,
    task: JoinHandle<Result<(), Status>>,
}

impl Drop for Tail {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A running task that stops when dropped.
struct Task(JoinHandle<Result<(), Status>>);

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}

type Ended = Result<Result<(), Status>, JoinError>;

enum Event {
    Rpc(Option<Rpc>),
    Lost(String),
    TailEnded(Ended),
    WatchEnded(Ended),
}

/// Open the cluster watch and report the connection; the watch task, if
/// the controller serves one. Err: the controller went away meanwhile.
async fn connected(
    channel: Channel,
    icpt: IdentityInterceptor,
    msgs: &UnboundedSender<Msg>,
) -> Result<Option<Task>, String> {
    // A scheduling pass can change every job of a large queue in one batch.
    let mut cluster = ClusterClient::with_interceptor(channel, icpt)
        .max_decoding_message_size(spur_proto::wire::JOBS_MESSAGE_MAX);
    let opened = watch::open(&mut cluster).await.map_err(|s| describe(&s))?;
    let _ = msgs.send(Msg::Connected);
    Ok(match opened {
        watch::Opened::Live(live) => {
            let (stream, first) = *live;
            let _ = msgs.send(Msg::Cluster(first));
            Some(Task(tokio::spawn(watch::run(stream, msgs.clone()))))
        }
        watch::Opened::Unsupported => None,
        watch::Opened::Refused(error) => {
            let _ = msgs.send(Msg::WatchRefused { error });
            None
        }
    })
}

async fn serve(
    channel: Channel,
    identity: &Identity,
    rpcs: &mut UnboundedReceiver<Rpc>,
    msgs: &UnboundedSender<Msg>,
) -> Exit {
    let icpt = IdentityInterceptor::new(identity.clone());
    let mut client = AccountingClient::with_interceptor(channel.clone(), icpt.clone());
    let mut nodes = NodesGrpc::with_interceptor(channel.clone(), icpt.clone());
    let mut jobs = JobsGrpc::with_interceptor(channel.clone(), icpt.clone())
        .max_decoding_message_size(spur_proto::wire::JOBS_MESSAGE_MAX);
    let audit = AuditClient::with_interceptor(channel.clone(), icpt.clone());
    let steps = spur_proto::v1::steps_client::StepsClient::with_interceptor(channel.clone(), icpt.clone());
    let mut licenses = LicensesGrpc::with_interceptor(channel.clone(), icpt.clone());
    let mut resvs = ResvGrpc::with_interceptor(channel.clone(), icpt.clone());
    let mut session = SessionClient::with_interceptor(channel.clone(), icpt.clone());
    // None when the controller does not serve health: then loss shows up on the next call.
    let mut health = HealthClient::new(channel.clone())
        .watch(HealthCheckRequest::default())
        .await
        .ok()
        .map(tonic::Response::into_inner);
    let mut diag = ClusterClient::with_interceptor(channel.clone(), icpt.clone());
    let mut watching = match connected(channel, icpt, msgs).await {
        Ok(w) => w,
        Err(e) => return Exit::Lost(e),
    };
    let mut tail: Option<Tail> = None;
    // The job output view's stream; dropping it (closed, replaced, the connection lost) stops it.
    let mut job_output: Option<Task> = None;
    loop {
        // In a block so the futures borrowing `health` and `tail` end before the match.
        let event = {
            let lost = async {
                match health.as_mut() {
                    Some(stream) => loop {
                        match stream.message().await {
                            Ok(Some(_)) => continue,
                            Ok(None) => return "the controller closed the connection".to_string(),
                            Err(s) => return describe(&s),
                        }
                    },
                    None => std::future::pending().await,
                }
            };
            let ended = async {
                match tail.as_mut() {
                    Some(t) => (&mut t.task).await,
                    None => std::future::pending().await,
                }
            };
            let unwatched = async {
                match watching.as_mut() {
                    Some(w) => (&mut w.0).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                rpc = rpcs.recv() => Event::Rpc(rpc),
                error = lost => Event::Lost(error),
                result = ended => Event::TailEnded(result),
                result = unwatched => Event::WatchEnded(result),
            }
        };
        let rpc = match event {
            Event::Rpc(None) => return Exit::Closed,
            Event::Rpc(Some(rpc)) => rpc,
            Event::Lost(error) => return Exit::Lost(error),
            // Re-making the connection re-subscribes and brings a fresh snapshot.
            Event::WatchEnded(result) => {
                return Exit::Lost(match result {
                    Ok(Ok(())) => "the controller ended the cluster watch".to_string(),
                    Ok(Err(s)) => describe(&s),
                    Err(e) => format!("the cluster watch task failed: {e}"),
                });
            }
            Event::TailEnded(result) => {
                let sub = tail.take().map_or(0, |t| t.sub);
                let error = match result {
                    Ok(Ok(())) => "the controller ended the txn tail".to_string(),
                    Ok(Err(s)) if gone(&s) => return Exit::Lost(describe(&s)),
                    Ok(Err(s)) => describe(&s),
                    Err(e) => format!("the tail task failed: {e}"),
                };
                let _ = msgs.send(Msg::AuditFailed { sub, error });
                continue;
            }
        };
        match rpc {
            Rpc::Tail(spec) => tail = Some(start_tail(&audit, spec, msgs)),
            Rpc::Output(spec) => {
                drop(job_output.replace(Task(tokio::spawn(output::run(steps.clone(), spec, msgs.clone())))));
            }
            Rpc::StopOutput => drop(job_output.take()),
            Rpc::WhoAmI => match session.who_am_i(WhoAmIRequest {}).await {
                Ok(r) => {
                    let _ = msgs.send(Msg::Session(Session::from_pb(r.into_inner())));
                }
                Err(s) if gone(&s) => return Exit::Lost(describe(&s)),
                // An older controller without WhoAmI: the role stays unknown, which is not an error.
                Err(s) if s.code() == Code::Unimplemented => {}
                Err(s) => {
                    let _ = msgs.send(Msg::SessionFailed { error: describe(&s) });
                }
            },
            Rpc::FetchList(list) => match calls::fetch_list(&mut client, list).await {
                Ok(l) => {
                    let _ = msgs.send(Msg::ListLoaded(l));
                }
                Err(s) if gone(&s) => return Exit::Lost(describe(&s)),
                Err(s) => {
                    let _ = msgs.send(Msg::ListFailed { list, error: describe(&s) });
                }
            },
            Rpc::FetchAll => match calls::fetch(&mut client).await {
                Ok(s) => {
                    let _ = msgs.send(Msg::Loaded(s));
                }
                Err(s) if gone(&s) => return Exit::Lost(describe(&s)),
                Err(s) => {
                    let _ = msgs.send(Msg::FetchFailed { error: describe(&s) });
                }
            },
            Rpc::FetchLicenses => {
                match licenses.show_licenses(spur_proto::v1::ShowLicensesRequest::default()).await {
                    Ok(r) => {
                        let _ = msgs.send(Msg::Licenses(r.into_inner().licenses));
                    }
                    Err(s) if gone(&s) => return Exit::Lost(describe(&s)),
                    // A controller without the service: the pane says it has no data.
                    Err(_) => {
                        let _ = msgs.send(Msg::LicensesFailed);
                    }
                }
            }
            Rpc::FetchDiag => match diag.diag(spur_proto::v1::DiagRequest {}).await {
                Ok(r) => {
                    let _ = msgs.send(Msg::Diag(Box::new(r.into_inner())));
                }
                Err(s) if gone(&s) => return Exit::Lost(describe(&s)),
                Err(s) => {
                    let unsupported = s.code() == Code::Unimplemented;
                    let _ = msgs.send(Msg::DiagFailed { error: describe(&s), unsupported });
                }
            },
            Rpc::FetchShares => match jobs.list_shares(spur_proto::v1::ListRequest::default()).await {
                Ok(r) => {
                    let _ = msgs.send(Msg::Shares(r.into_inner()));
                }
                Err(s) if gone(&s) => return Exit::Lost(describe(&s)),
                Err(s) => {
                    let _ = msgs.send(Msg::SharesFailed { error: describe(&s) });
                }
            },
            Rpc::FetchProvisioners => {
                match nodes.list_provisioners(spur_proto::v1::ListProvisionersRequest::default()).await {
                    Ok(r) => {
                        let _ = msgs.send(Msg::Provisioners(r.into_inner().provisioners));
                    }
                    Err(s) if gone(&s) => return Exit::Lost(describe(&s)),
                    Err(s) => {
                        let unsupported = s.code() == Code::Unimplemented;
                        let _ = msgs.send(Msg::ProvisionersFailed { error: describe(&s), unsupported });
                    }
                }
            }
            Rpc::FetchJobs => match calls::fetch_jobs(&mut jobs).await {
                Ok(set) => {
                    let _ = msgs.send(Msg::Jobs(set));
                }
                Err(s) if gone(&s) => return Exit::Lost(describe(&s)),
                Err(s) => {
                    let unsupported = s.code() == Code::Unimplemented;
                    let _ = msgs.send(Msg::JobsFailed { error: describe(&s), unsupported });
                }
            },
            Rpc::NodeEvents(node) => {
                let mut audit = audit.clone();
                let filter = spur_client::events::Filter::node(&node)
                    .txn_query(crate::model::nodes::EVENT_ROWS as i64);
                match audit.list_txn(spur_proto::v1::ListTxnRequest { filter, before_id: None }).await {
                    Ok(r) => {
                        let _ = msgs.send(Msg::NodeEvents { node, rows: Ok(r.into_inner().rows) });
                    }
                    Err(s) if gone(&s) => return Exit::Lost(describe(&s)),
                    Err(s) => {
                        let _ = msgs.send(Msg::NodeEvents { node, rows: Err(describe(&s)) });
                    }
                }
            }
            Rpc::Explain(job) => {
                let req = spur_proto::v1::ExplainRequest { job_id: job, candidate_id: None };
                match jobs.explain(req).await {
                    Ok(r) => {
                        let _ = msgs.send(Msg::Explained { job, answer: Ok(Box::new(r.into_inner())) });
                    }
                    Err(s) if gone(&s) => return Exit::Lost(describe(&s)),
                    Err(s) => {
                        let _ = msgs.send(Msg::Explained { job, answer: Err(describe(&s)) });
                    }
                }
            }
            Rpc::Write(op) => {
                let verb = op.verb();
                match calls::write(&mut client, &mut nodes, &mut jobs, &mut licenses, &mut resvs, op).await {
                    Ok(calls::Written { summary, warning: None }) => {
                        let _ = msgs.send(Msg::WriteDone { summary });
                    }
                    Ok(calls::Written { summary, warning: Some(warning) }) => {
                        let _ = msgs.send(Msg::WriteWarned { summary, warning });
                    }
                    Err(s) => {
                        let _ = msgs.send(Msg::WriteFailed { error: format!("{verb}: {}", describe(&s)) });
                        if gone(&s) {
                            return Exit::Lost(describe(&s));
                        }
                    }
                }
            }
        }
    }
}

fn start_tail(audit: &tail::Client, spec: TailSpec, msgs: &UnboundedSender<Msg>) -> Tail {
    let sub = spec.sub;
    Tail { sub, task: tokio::spawn(tail::run(audit.clone(), spec, msgs.clone())) }
}

fn gone(s: &Status) -> bool {
    s.code() == Code::Unavailable
}

/// One line: the code and message, plus the transport cause when there is one.
fn describe(s: &Status) -> String {
    let mut text = format!("{:?}: {}", s.code(), s.message());
    if let Some(src) = std::error::Error::source(s) {
        text.push_str(": ");
        text.push_str(&source_chain(src));
    }
    text
}

fn source_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        let t = s.to_string();
        if !parts.iter().any(|p| p.contains(&t)) {
            parts.push(t);
        }
        cur = s.source();
    }
    parts.join(": ")
}
