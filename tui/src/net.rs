//! The network task: owns the gRPC connection, runs [`Rpc`]s and reports
//! [`Msg`]s. It reconnects with exponential backoff (capped at 5 s) and
//! notices a lost controller through the gRPC health `Watch` stream when
//! the controller serves it; there is no timer polling.

use crate::action::{Msg, Rpc, Snapshot, WriteOp};
use spur_client::conn::{Identity, IdentityInterceptor};
use spur_proto::v1::accounting_client::AccountingClient;
use spur_proto::v1::{DeleteRequest, KeyValue, ListRequest, SetMode, SetRequest, SetResponse};
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;
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

enum Exit {
    /// The app loop hung up: stop.
    Closed,
    /// The controller went away: reconnect.
    Lost(String),
}

async fn run(url: String, identity: Identity, mut rpcs: UnboundedReceiver<Rpc>, msgs: UnboundedSender<Msg>) {
    let endpoint = match Endpoint::from_shared(url.clone()) {
        Ok(e) => e.connect_timeout(Duration::from_secs(3)).timeout(Duration::from_secs(30)),
        Err(e) => {
            let _ = msgs.send(Msg::Disconnected { error: format!("invalid controller URL {url:?}: {e}") });
            return refuse_all(rpcs, msgs).await;
        }
    };
    let mut delay = FIRST_RETRY;
    let mut attempt = 0u32;
    loop {
        let error = match endpoint.connect().await {
            Ok(channel) => {
                delay = FIRST_RETRY;
                attempt = 0;
                if msgs.send(Msg::Connected).is_err() {
                    return;
                }
                match serve(channel, &identity, &mut rpcs, &msgs).await {
                    Exit::Closed => return,
                    Exit::Lost(e) => e,
                }
            }
            Err(e) => format!("cannot connect: {}", source_chain(&e)),
        };
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

async fn serve(
    channel: Channel,
    identity: &Identity,
    rpcs: &mut UnboundedReceiver<Rpc>,
    msgs: &UnboundedSender<Msg>,
) -> Exit {
    let mut client =
        AccountingClient::with_interceptor(channel.clone(), IdentityInterceptor::new(identity.clone()));
    // None when the controller does not serve health: then loss shows up on the next call.
    let mut health = HealthClient::new(channel)
        .watch(HealthCheckRequest::default())
        .await
        .ok()
        .map(tonic::Response::into_inner);
    loop {
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
        let rpc = tokio::select! {
            rpc = rpcs.recv() => rpc,
            error = lost => return Exit::Lost(error),
        };
        match rpc {
            None => return Exit::Closed,
            Some(Rpc::FetchAll) => match fetch(&mut client).await {
                Ok(s) => {
                    let _ = msgs.send(Msg::Loaded(s));
                }
                Err(s) if gone(&s) => return Exit::Lost(describe(&s)),
                Err(s) => {
                    let _ = msgs.send(Msg::FetchFailed { error: describe(&s) });
                }
            },
            Some(Rpc::Write(op)) => {
                let verb = op.verb();
                match write(&mut client, op).await {
                    Ok(summary) => {
                        let _ = msgs.send(Msg::WriteDone { summary });
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

async fn fetch(client: &mut Client) -> Result<Snapshot, Status> {
    let (mut a, mut b, mut c) = (client.clone(), client.clone(), client.clone());
    let (qos, accounts, users) = tokio::try_join!(
        a.list_qos(ListRequest::default()),
        b.list_accounts(ListRequest::default()),
        c.list_users(ListRequest::default()),
    )?;
    let accounts = accounts.into_inner();
    Ok(Snapshot {
        qos: qos.into_inner().qos,
        cluster: accounts.cluster_name,
        accounts: accounts.accounts,
        users: users.into_inner().users,
    })
}

fn kv(key: &str, value: &str) -> KeyValue {
    KeyValue { key: key.into(), value: value.into() }
}

fn deleted(n: usize) -> String {
    if n == 1 { "1 record".into() } else { format!("{n} records") }
}

/// Run one write; the summary counts the records the controller says it changed.
// Request messages may grow fields (dry-run variants, cluster); new ones keep their defaults.
#[allow(clippy::needless_update)]
async fn write(client: &mut Client, op: WriteOp) -> Result<String, Status> {
    let changes = |r: tonic::Response<SetResponse>| r.into_inner().changes.len();
    let del = |w: Vec<KeyValue>| DeleteRequest { r#where: w, dry_run: false, ..Default::default() };
    match op {
        WriteOp::DeleteQos { names } => {
            let mut n = 0;
            for name in &names {
                n += changes(client.delete_qos(del(vec![kv("name", name)])).await?);
            }
            Ok(format!("deleted QOS {} ({} changed)", names.join(","), deleted(n)))
        }
        WriteOp::ModifyQos { name, set, .. } => {
            let req = SetRequest {
                mode: SetMode::Modify as i32,
                r#where: vec![kv("name", &name)],
                set: set.iter().map(|(k, v)| kv(k, v)).collect(),
                dry_run: false,
                ..Default::default()
            };
            let n = changes(client.set_qos(req).await?);
            Ok(format!("modified QOS {name} ({} changed)", deleted(n)))
        }
        WriteOp::DeleteAccount { names } => {
            let mut n = 0;
            for name in &names {
                n += changes(client.delete_account(del(vec![kv("name", name)])).await?);
            }
            Ok(format!("deleted account {} ({} changed)", names.join(","), deleted(n)))
        }
        WriteOp::DeleteUser { assocs } => {
            let mut n = 0;
            for (user, account) in &assocs {
                n += changes(client.delete_user(del(vec![kv("name", user), kv("account", account)])).await?);
            }
            Ok(format!("deleted {} association(s) ({} changed)", assocs.len(), deleted(n)))
        }
    }
}
