//! spurd, the node agent: hosts one or more nodes from one host (like
//! multiple-slurmd), registers them with the controller (presenting an
//! admission token when asked), heartbeats, runs the job processes the
//! controller sends, and reports how they end.
//!
//! - [`exec`]: launching, signalling and watching job processes.

pub mod exec;

use exec::{Ended, Executor};
use spur_proto::v1 as pb;
use spur_proto::v1::agent_client::AgentClient;
use std::time::Duration;
use tokio::sync::mpsc;
use tonic::Code;
use tonic::transport::{Channel, Endpoint};

#[derive(Debug, Clone)]
pub struct AgentOpts {
    pub controller: String,
    pub nodes: Vec<String>,
    pub token: Option<String>,
    pub hostname: String,
}

/// Why a session with the controller ended.
enum End {
    /// Register again at once (the controller forgot us).
    Reregister,
    /// A transient failure: back off and retry.
    Retry(String),
    /// The controller refused us for good (admission, unknown node).
    Fatal(String),
}

/// Runs the agent until a fatal refusal; transient failures retry with backoff.
pub async fn run(opts: AgentOpts) -> anyhow::Result<()> {
    let exec = Executor::default();
    let (ended_tx, mut ended_rx) = mpsc::channel::<Ended>(1024);
    let mut unsent: Vec<Ended> = vec![];
    let mut backoff = Duration::from_millis(250);
    loop {
        match session(&opts, &exec, &ended_tx, &mut ended_rx, &mut unsent, &mut backoff).await {
            End::Reregister => continue,
            End::Fatal(m) => anyhow::bail!("{m}"),
            End::Retry(m) => {
                tracing::warn!(controller = %opts.controller, error = %m, retry_in = ?backoff, "controller unreachable");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
}

async fn connect(url: &str) -> Result<AgentClient<Channel>, String> {
    let ch = Endpoint::from_shared(url.to_string())
        .map_err(|e| format!("bad controller URL '{url}': {e}"))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        .connect()
        .await
        .map_err(|e| e.to_string())?;
    Ok(AgentClient::new(ch))
}

fn report(agent_id: &str, e: &Ended) -> pb::JobReport {
    pb::JobReport {
        agent_id: agent_id.into(),
        job_id: e.job_id,
        state: e.state.into(),
        exit_code: e.exit_code,
        signal: e.signal,
        message: e.message.clone(),
    }
}

async fn session(
    opts: &AgentOpts,
    exec: &Executor,
    ended_tx: &mpsc::Sender<Ended>,
    ended_rx: &mut mpsc::Receiver<Ended>,
    unsent: &mut Vec<Ended>,
    backoff: &mut Duration,
) -> End {
    let mut client = match connect(&opts.controller).await {
        Ok(c) => c,
        Err(e) => return End::Retry(e),
    };
    // Running first, then the ends queued so far: a job leaves the running
    // list only after its end is queued, so each job is in one list or both.
    let mut running = exec.running();
    while let Ok(e) = ended_rx.try_recv() {
        unsent.push(e);
    }
    running.retain(|r| !unsent.iter().any(|e| e.job_id == r.job_id));
    let req = pb::RegisterRequest {
        nodes: opts.nodes.clone(),
        admission_token: opts.token.clone().unwrap_or_default(),
        hostname: opts.hostname.clone(),
        running,
        ended: unsent.iter().map(|e| report("", e)).collect(),
    };
    let reg = match client.register(req).await {
        Ok(r) => r.into_inner(),
        Err(s) if matches!(s.code(), Code::PermissionDenied | Code::NotFound | Code::InvalidArgument) => {
            return End::Fatal(format!("registration refused: {}", s.message()));
        }
        Err(s) => return End::Retry(s.message().to_string()),
    };
    *backoff = Duration::from_millis(250);
    tracing::info!(agent = %reg.agent_id, nodes = opts.nodes.len(), "registered with the controller");
    let mut commands = match client.commands(pb::CommandsRequest { agent_id: reg.agent_id.clone() }).await {
        Ok(s) => s.into_inner(),
        Err(s) => return End::Retry(s.message().to_string()),
    };
    // Delivered with the registration.
    unsent.clear();
    let mut tick = tokio::time::interval(Duration::from_secs(u64::from(reg.heartbeat_interval_secs.max(1))));
    tick.tick().await;
    loop {
        tokio::select! {
            _ = tick.tick() => match client.heartbeat(pb::HeartbeatRequest { agent_id: reg.agent_id.clone() }).await {
                Ok(r) if r.get_ref().reregister => return End::Reregister,
                Ok(_) => {}
                Err(s) => return End::Retry(s.message().to_string()),
            },
            cmd = commands.message() => match cmd {
                Ok(Some(pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::Launch(l)) })) => exec.launch(l, ended_tx.clone()),
                Ok(Some(pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::Signal(s)) })) => {
                    if !exec.signal(s.job_id, s.signal).await {
                        tracing::warn!(job = s.job_id, "signal for a job that is not running here");
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) => return End::Retry("the controller closed the command stream".into()),
                Err(s) => return End::Retry(s.message().to_string()),
            },
            Some(e) = ended_rx.recv() => {
                if let Err(s) = client.report_job(report(&reg.agent_id, &e)).await {
                    unsent.push(e);
                    return End::Retry(s.message().to_string());
                }
            }
        }
    }
}
