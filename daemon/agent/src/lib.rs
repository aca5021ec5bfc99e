//! spurd, the node agent: hosts one or more nodes from one host (like
//! multiple-slurmd), registers them with the controller (presenting an
//! admission token when asked), heartbeats, runs the job processes the
//! controller sends, and reports how they end.
//!
//! Jobs outlive the agent: each runs under a supervisor process of its own
//! (Slurm's slurmstepd), recorded in the agent's state directory, so a
//! restarted agent adopts the jobs still running and reports the ones that
//! ended meanwhile; an end leaves the state directory only once the
//! controller has it.
//!
//! - [`exec`]: launching, signalling, adopting and watching jobs.
//! - [`tasks`]: the tasks of job steps (srun), their output streamed to the controller.
//! - [`stepd`]: the per-job supervisor (`spurd __stepd`).
//! - [`runas`]: `spurd __exec`: joins the cgroup, drops to the job's user, opens its files, execs.
//! - [`script`]: the batch script as a file, run by its `#!` interpreter.
//! - [`state`]: the state directory's files.
//! - [`cgroup`]: a cgroup v2 per job where the host offers one.
//! - [`facts`]: the host's facts (uname, os-release, cpuinfo, PCI modaliases) for
//!   provisioner conditions, collected once and sent with every registration.
//! - [`link`]: the controller as a step's stream and a step node's reports reach it.
//! - [`output`]: spur tail: a job's output file read as its user may, streamed to the controller.
//! - [`hres`]: HRES plugins on the node: the job's plugin data, the node functions.
//! - [`facts_file`]: `--facts FILE`, facts for simulated nodes over the host's.
//! - [`task_env`]: what each task of a step adds to its environment on its node.
//!
//! Its own crate (`spur-agent`, the `spurd` binary): it links the proto, the
//! vocabulary, the pure scheduler crate's plain data and the hres/lua
//! plugin, never the controller's store, server or web stack; the compiler
//! holds that wall (`cargo tree -p spur-agent` shows no sqlx and no axum).

pub mod bcast;
pub mod cgroup;
pub mod cpubind;
pub mod dynamic;
pub mod exec;
pub mod facts;
pub mod facts_file;
pub mod hres;
pub mod link;
pub mod output;
pub mod pty;
pub mod rlimits;
pub mod runas;
pub mod script;
pub mod state;
pub mod stdin;
pub mod stepd;
pub mod task_env;
pub mod task_files;
pub mod tasks;
pub mod usage;
pub mod userenv;

use exec::Executor;
use link::AgentChannel;
use spur_proto::credential::Credentials;
use spur_proto::v1 as pb;
use spur_proto::v1::agent_client::AgentClient;
use state::{Ended, StateDir};
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc;
use tonic::Code;
use tonic::transport::Endpoint;

#[derive(Debug, Clone)]
pub struct AgentOpts {
    pub controller: String,
    pub nodes: Vec<String>,
    pub token: Option<String>,
    pub hostname: String,
    /// Where running jobs are recorded, so a restarted agent finds them.
    pub state_dir: PathBuf,
    /// The program run as `STEPD_ARG` to supervise each job (this binary).
    pub stepd: PathBuf,
    /// What [`facts::collect`] found, sent with each registration.
    pub facts: pb::HostFacts,
    /// The `--facts` file's entries, applied by the controller in order.
    pub fact_overrides: Vec<pb::FactsOverride>,
    /// `--dynamic`: the shape of the one node, which is not in spur.conf.
    pub dynamic: Option<pb::DynamicNode>,
}

/// Slurm's SlurmdSpoolDir, one per agent: its first node and a digest of
/// its controller and node list, so two agents on one host (of one cluster
/// or of two), or a restarted one with other nodes, never read each other's
/// records, and an agent restarted as it was finds its own.
pub fn default_state_dir(controller: &str, nodes: &[String]) -> PathBuf {
    use sha2::{Digest, Sha256};
    let first = nodes.first().map_or("agent", String::as_str);
    let digest = Sha256::digest(format!("{controller}\n{}", nodes.join(",")).as_bytes());
    let key = format!("{first}-{}", &hex::encode(digest)[..8]);
    let uid = nix::unistd::getuid();
    let base = if uid.is_root() {
        PathBuf::from("/var/spool/spurd")
    } else {
        std::env::temp_dir().join(format!("spurd-{uid}"))
    };
    base.join(key)
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
    let dir = StateDir::open(&opts.state_dir)
        .map_err(|e| anyhow::anyhow!("--state-dir {}: {e}", opts.state_dir.display()))?;
    let exec = Executor::new(dir, opts.stepd.clone());
    let (ended_tx, mut ended_rx) = mpsc::channel::<Ended>(1024);
    let found = exec.recover(&opts.nodes, &ended_tx);
    if !(found.adopted.is_empty() && found.ended.is_empty() && found.vanished.is_empty()) {
        tracing::info!(
            adopted = ?found.adopted, ended = ?found.ended.iter().map(|e| e.job_id).collect::<Vec<_>>(),
            vanished = ?found.vanished, "took over the jobs of the previous agent process"
        );
    }
    if !found.steps.is_empty() {
        tracing::info!(steps = ?found.steps, "killed the step tasks of the previous agent process");
    }
    let mut unsent: Vec<Ended> = found.ended;
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

/// The first of the controllers `urls` lists that answers, in order (a
/// follower forwards to the leader, so any will do).
async fn connect(urls: &str) -> Result<AgentClient<AgentChannel>, String> {
    let mut last = format!("no controller address in '{urls}'");
    for url in spur_proto::wire::controllers(urls) {
        let ch = Endpoint::from_shared(url.clone())
            .map_err(|e| format!("bad controller URL '{url}': {e}"))?
            .connect_timeout(Duration::from_secs(5))
            .tcp_nodelay(true)
            // A controller stopped (not dead) keeps the socket open: the
            // pings find it, so the agent moves on to another.
            .http2_keep_alive_interval(Duration::from_secs(5))
            .keep_alive_timeout(Duration::from_secs(5))
            .keep_alive_while_idle(true)
            .connect()
            .await;
        match ch {
            Ok(ch) => return Ok(AgentClient::with_interceptor(ch, Credentials::local())),
            Err(e) => last = format!("{url}: {e}"),
        }
    }
    Err(last)
}

/// The registration a session holds: who we are to the controller.
struct Registered {
    agent_id: String,
    agent_key: String,
}

fn report(reg: Option<&Registered>, e: &Ended) -> pb::JobReport {
    pb::JobReport {
        agent_id: reg.map(|r| r.agent_id.clone()).unwrap_or_default(),
        agent_key: reg.map(|r| r.agent_key.clone()).unwrap_or_default(),
        job_id: e.job_id,
        state: e.state.clone(),
        exit_code: e.exit_code,
        signal: e.signal,
        message: e.message.clone(),
        user_cpu_us: e.usage.user_cpu_us,
        sys_cpu_us: e.usage.sys_cpu_us,
        max_rss_kb: e.usage.max_rss_kb,
        hres_phase: e.hres.as_ref().map(|h| h.phase.clone()).unwrap_or_default(),
        hres_remote: e.hres.as_ref().is_some_and(|h| h.remote),
        hres_message: e.hres.as_ref().map(|h| h.message.clone()).unwrap_or_default(),
        // The batch node's supervisor: the job's first node.
        hres_node: String::new(),
        run_id: e.run_id.clone(),
    }
}

/// What became of one report.
enum Sent {
    /// The controller has it: the job's files can go.
    Taken,
    /// The controller could not take it now (its database is down): kept, sent again.
    Later(String),
    /// The connection failed: start a new session.
    Broken(String),
}

/// sstat: samples the job's step tasks here and answers the controller's request.
async fn report_use(tasks: tasks::StepTasks, s: pb::SampleSteps, link: link::Link) {
    let (job, step, node) = (s.job_id, s.step_id, s.node.clone());
    let sampled =
        tokio::task::spawn_blocking(move || tasks.sample(job, step, &node)).await.unwrap_or_default();
    let r = pb::UseReport {
        agent_id: link.agent_id.clone(),
        agent_key: link.agent_key.clone(),
        request_id: s.request_id,
        tasks: sampled,
        node: s.node,
    };
    if let Err(e) = link.client.clone().report_use(r).await {
        tracing::warn!(job, error = %e.message(), "cannot send the step use sstat asked for");
    }
}

async fn send_report(client: &mut AgentClient<AgentChannel>, reg: &Registered, e: &Ended) -> Sent {
    match client.report_job(report(Some(reg), e)).await {
        Ok(_) => Sent::Taken,
        Err(s)
            if matches!(s.code(), Code::Unavailable | Code::DeadlineExceeded | Code::ResourceExhausted) =>
        {
            Sent::Later(s.message().to_string())
        }
        // The controller will never take it (the job is no longer ours): keeping it would resend it forever.
        Err(s) if matches!(s.code(), Code::PermissionDenied | Code::NotFound | Code::FailedPrecondition) => {
            tracing::warn!(job = e.job_id, error = %s.message(), "the controller refused the job's report; dropped");
            Sent::Taken
        }
        Err(s) => Sent::Broken(s.message().to_string()),
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
        ended: unsent.iter().map(|e| report(None, e)).collect(),
        facts: Some(opts.facts.clone()),
        fact_overrides: opts.fact_overrides.clone(),
        dynamic: opts.dynamic.clone(),
    };
    let reg = match client.register(req).await {
        Ok(r) => r.into_inner(),
        Err(s) if matches!(s.code(), Code::PermissionDenied | Code::NotFound | Code::InvalidArgument) => {
            return End::Fatal(format!("registration refused: {}", s.message()));
        }
        // A controller that allows no dynamic nodes, or not this one, will not change its mind.
        Err(s) if opts.dynamic.is_some() && s.code() == Code::FailedPrecondition => {
            return End::Fatal(format!("registration refused: {}", s.message()));
        }
        Err(s) => return End::Retry(s.message().to_string()),
    };
    *backoff = Duration::from_millis(250);
    let interval = Duration::from_secs(u64::from(reg.heartbeat_interval_secs.max(1)));
    let reg = Registered { agent_id: reg.agent_id, agent_key: reg.agent_key };
    tracing::info!(agent = %reg.agent_id, nodes = opts.nodes.len(), "registered with the controller");
    // Delivered with the registration.
    for e in unsent.drain(..) {
        exec.forget(e.job_id, &e.run_id);
    }
    let req = pb::CommandsRequest { agent_id: reg.agent_id.clone(), agent_key: reg.agent_key.clone() };
    let mut commands = match client.commands(req).await {
        Ok(s) => s.into_inner(),
        Err(s) => return End::Retry(s.message().to_string()),
    };
    // What steps and step nodes' reports reach the controller by.
    // sbcast's copies in progress; a new session starts with none (the controller's wait ends).
    let copies = bcast::Copies::default();
    let link = link::Link {
        client: client.clone(),
        agent_id: reg.agent_id.clone(),
        agent_key: reg.agent_key.clone(),
    };
    let mut tick = tokio::time::interval(interval);
    tick.tick().await;
    loop {
        tokio::select! {
            _ = tick.tick() => {
                let hb = pb::HeartbeatRequest { agent_id: reg.agent_id.clone(), agent_key: reg.agent_key.clone() };
                match client.heartbeat(hb).await {
                    Ok(r) if r.get_ref().reregister => return End::Reregister,
                    Ok(_) => {}
                    Err(s) => return End::Retry(s.message().to_string()),
                }
                // Reports the controller could not take yet, oldest first.
                while let Some(e) = unsent.first() {
                    match send_report(&mut client, &reg, e).await {
                        Sent::Taken => {
                            let e = unsent.remove(0);
                            exec.forget(e.job_id, &e.run_id)
                        }
                        Sent::Later(_) => break,
                        Sent::Broken(m) => return End::Retry(m),
                    }
                }
            }
            cmd = commands.message() => match cmd {
                // Awaited in order, so a signal that follows a launch finds the job.
                Ok(Some(pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::Launch(l)) })) => {
                    exec.launch(l, ended_tx.clone()).await
                }
                Ok(Some(pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::Signal(s)) }))
                    if s.batch_shell_only =>
                {
                    if !exec.signal_shell(s.job_id, s.signal) {
                        tracing::warn!(job = s.job_id, "signal for a job that is not running here");
                    }
                }
                Ok(Some(pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::Signal(s)) })) => {
                    if !exec.signal(s.job_id, s.signal, Duration::from_secs(u64::from(s.kill_wait_secs))) {
                        tracing::warn!(job = s.job_id, "signal for a job that is not running here");
                    }
                }
                Ok(Some(pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::LaunchStep(l)) })) => {
                    exec.tasks.launch(l.clone(), exec.cgroup_of(l.job_id), link.clone());
                }
                Ok(Some(pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::EndJob(e)) })) => {
                    let file = exec.state().hres_path(e.job_id, &e.node);
                    tokio::spawn(hres::end_job(file, (e.job_id, e.node), link.clone()));
                }
                Ok(Some(pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::SignalStep(s)) })) => {
                    let wait = Duration::from_secs(u64::from(s.kill_wait_secs));
                    exec.tasks.signal(s.job_id, s.step_id, s.signal, wait);
                }
                // Awaited in order: a copy's pieces are written as they were sent.
                Ok(Some(pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::BcastFile(b)) })) => {
                    copies.piece(b, &link).await;
                }
                // Never awaited: the controller's credits keep a step's queue from filling.
                Ok(Some(pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::StepStdin(s)) })) => {
                    exec.tasks.feeds.piece(s);
                }
                // spur tail: read on its own; its pieces wait for the controller, never the commands.
                Ok(Some(pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::ReadOutput(r)) })) => {
                    tokio::spawn(output::read(r, exec.clone(), link.clone()));
                }
                Ok(Some(pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::SampleSteps(s)) })) => {
                    tokio::spawn(report_use(exec.tasks.clone(), s, link.clone()));
                }
                Ok(Some(_)) => {}
                Ok(None) => return End::Retry("the controller closed the command stream".into()),
                Err(s) => return End::Retry(s.message().to_string()),
            },
            Some(e) = ended_rx.recv() => {
                // Behind older unsent reports, so ends reach the controller in order.
                if !unsent.is_empty() {
                    unsent.push(e);
                    continue;
                }
                match send_report(&mut client, &reg, &e).await {
                    Sent::Taken => exec.forget(e.job_id, &e.run_id),
                    Sent::Later(m) => {
                        tracing::warn!(job = e.job_id, error = %m, "the controller could not take the job's end yet; kept");
                        unsent.push(e);
                    }
                    Sent::Broken(m) => {
                        unsent.push(e);
                        return End::Retry(m);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_agent_has_its_own_state_directory_and_keeps_it_across_restarts() {
        let n = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let a = super::default_state_dir("http://ctl:6817", &n(&["node01", "node02"]));
        assert_eq!(a, super::default_state_dir("http://ctl:6817", &n(&["node01", "node02"])));
        assert!(a.file_name().unwrap().to_string_lossy().starts_with("node01-"), "{}", a.display());
        let other_nodes = super::default_state_dir("http://ctl:6817", &n(&["node01"]));
        let other_cluster = super::default_state_dir("http://ctl2:6817", &n(&["node01", "node02"]));
        assert!(a != other_nodes && a != other_cluster && other_nodes != other_cluster);
    }
}
