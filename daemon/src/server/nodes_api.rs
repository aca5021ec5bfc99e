//! The Nodes service (sinfo, scontrol show/update node, reconfigure) and the
//! Agent service (spurd registration, heartbeats, commands, reports, step output).

use super::gate::{Gate, Note};
use super::path::{agent, nodes};
use super::{convert, filter};
use crate::config::Config;
use crate::error::Error;
use crate::jobs::JobService;
use crate::licenses::LicenseService;
use crate::nodes::NodeService;
use crate::store::{Action, now_ms};
use serde_json::json;
use spur_proto::v1 as pb;
use spur_proto::v1::{agent_server::Agent, nodes_server::Nodes};
use spur_vocab::hostlist;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

pub struct NodesApi {
    gate: Arc<Gate>,
    nodes: Arc<NodeService>,
    licenses: Arc<LicenseService>,
    /// Pending jobs' plugin arguments are checked again after a reconfigure.
    jobs: Arc<JobService>,
    config_path: Option<PathBuf>,
}

impl NodesApi {
    pub fn new(
        gate: Arc<Gate>,
        nodes: Arc<NodeService>,
        (licenses, jobs): (Arc<LicenseService>, Arc<JobService>),
        config_path: Option<PathBuf>,
    ) -> Self {
        NodesApi { gate, nodes, licenses, jobs, config_path }
    }

    fn filter(&self, req: &pb::ListRequest) -> Result<(Option<Vec<String>>, Option<String>), Error> {
        let (mut names, mut part) = (None, None);
        for p in filter::parse::<NodeKey>(&req.filter)? {
            match p.key {
                NodeKey::Name => names = Some(self.nodes.resolve(p.value)?),
                NodeKey::Partition => part = Some(p.value.to_string()),
            }
        }
        Ok((names, part))
    }
}

filter::keys! {
    /// `sinfo`/`scontrol show node` filters.
    enum NodeKey, "unknown filter (use name=, partition=)" {
        Name = "name" | "nodename" | "nodes",
        Partition = "partition",
    }
}

#[tonic::async_trait]
impl Nodes for NodesApi {
    async fn list_nodes(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListNodesResponse>, Status> {
        self.gate
            .run(nodes::LIST_NODES, req, |_, r| async move {
                let (names, part) = self.filter(&r)?;
                let c = self.nodes.read();
                let mut nodes: Vec<pb::Node> = (c.nodes.values())
                    .filter(|n| names.as_ref().is_none_or(|ns| ns.contains(&n.name)))
                    .filter(|n| part.as_ref().is_none_or(|p| n.partitions.contains(p)))
                    .map(convert::node)
                    .collect();
                convert::mark_reserved(&mut nodes, &self.jobs.resvs.list(), crate::store::now_ms());
                let partitions = c.partitions.iter().map(|p| convert::partition(p, &c.nodes)).collect();
                Ok((pb::ListNodesResponse { nodes, partitions }, vec![]))
            })
            .await
    }

    async fn update_nodes(
        &self,
        req: Request<pb::UpdateNodesRequest>,
    ) -> Result<Response<pb::UpdateNodesResponse>, Status> {
        self.gate
            .run(nodes::UPDATE_NODES, req, |ctx, r| async move {
                let (updated, warning) =
                    self.nodes.update(&ctx.caller, &r.nodes, &r.state, &r.reason).await?;
                let info = crate::nodes::update_info(&updated, &warning);
                let note = Note { action: Action::Update, name: r.nodes, info };
                Ok((pb::UpdateNodesResponse { updated, warning: warning.unwrap_or_default() }, vec![note]))
            })
            .await
    }

    async fn list_partitions(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListPartitionsResponse>, Status> {
        self.gate
            .run(nodes::LIST_PARTITIONS, req, |_, r| async move {
                let want: Option<String> =
                    r.filter.iter().find(|kv| kv.key.eq_ignore_ascii_case("name")).map(|kv| kv.value.clone());
                let c = self.nodes.read();
                let partitions = c
                    .partitions
                    .iter()
                    .filter(|p| want.as_ref().is_none_or(|w| &p.name == w))
                    .map(|p| convert::partition(p, &c.nodes))
                    .collect();
                Ok((pb::ListPartitionsResponse { partitions }, vec![]))
            })
            .await
    }

    async fn update_partition(
        &self,
        req: Request<pb::UpdatePartitionRequest>,
    ) -> Result<Response<pb::UpdatePartitionResponse>, Status> {
        self.gate
            .run(nodes::UPDATE_PARTITION, req, |_, r| async move {
                use crate::nodes::partitions::ExemptChange;
                let change = match (r.preempt_exempt_time_secs, r.clear_preempt_exempt_time) {
                    (Some(_), true) => {
                        return Err(Error::invalid(
                            "PreemptExemptTime",
                            "give either PreemptExemptTime or ClearPreemptExemptTime, not both",
                        ));
                    }
                    (Some(s), false) => ExemptChange::Set(u64::try_from(s).map_err(|_| {
                        Error::invalid("PreemptExemptTime", format!("{s} is negative; use 0 or more seconds"))
                    })?),
                    (None, true) => ExemptChange::Clear,
                    (None, false) => {
                        return Err(Error::invalid(
                            "PartitionName",
                            "nothing to change (use PreemptExemptTime= or ClearPreemptExemptTime=yes)",
                        ));
                    }
                };
                let p = self.nodes.update_partition(&r.name, change)?;
                let info = json!({ "preempt_exempt_time": p.preempt_exempt_time });
                let note = Note { action: Action::Update, name: p.name.clone(), info };
                let partition = Some(convert::partition(&p, &self.nodes.read().nodes));
                Ok((pb::UpdatePartitionResponse { partition }, vec![note]))
            })
            .await
    }

    async fn reconfigure(
        &self,
        req: Request<pb::ReconfigureRequest>,
    ) -> Result<Response<pb::ReconfigureResponse>, Status> {
        self.gate
            .run(nodes::RECONFIGURE, req, |_, _| async move {
                let path = self.config_path.as_ref().ok_or_else(|| {
                    Error::FailedPrecondition("this controller was not started from a config file".into())
                })?;
                let cfg = Config::load(path).map_err(|e| Error::InvalidArgument(e.to_string()))?;
                let changes = self.nodes.reconfigure(&cfg)?;
                // resources.yaml wins again: runtime count, base and flag changes are dropped.
                self.licenses.reconfigure(&cfg).await?;
                self.jobs.revalidate(None, "reconfigure").await;
                let note =
                    Note { action: Action::Update, name: String::new(), info: json!({ "changes": changes }) };
                Ok((pb::ReconfigureResponse { changes }, vec![note]))
            })
            .await
    }

    async fn create_node(
        &self,
        req: Request<pb::CreateNodeRequest>,
    ) -> Result<Response<pb::CreateNodeResponse>, Status> {
        self.gate
            .run(nodes::CREATE_NODE, req, |_, r| async move {
                let shape = r.node.unwrap_or_default();
                let hres = self.nodes.create(&r.name, &shape).await?;
                let warning = match hres.is_empty() {
                    true => None,
                    false => self.licenses.join_dynamic(&r.name, &hres).await,
                };
                let info = json!({ "state": shape.state.to_ascii_uppercase(), "warning": warning });
                let note = Note { action: Action::Create, name: r.name, info };
                Ok((pb::CreateNodeResponse { warning: warning.unwrap_or_default() }, vec![note]))
            })
            .await
    }

    async fn delete_node(
        &self,
        req: Request<pb::DeleteNodeRequest>,
    ) -> Result<Response<pb::DeleteNodeResponse>, Status> {
        self.gate
            .run(nodes::DELETE_NODE, req, |_, r| async move {
                self.nodes.delete(&r.name, &self.jobs.jobs_on(&r.name)).await?;
                self.licenses.leave_dynamic(&r.name).await?;
                let note = Note { action: Action::Delete, name: r.name, info: json!({}) };
                Ok((pb::DeleteNodeResponse {}, vec![note]))
            })
            .await
    }

    async fn list_provisioners(
        &self,
        req: Request<pb::ListProvisionersRequest>,
    ) -> Result<Response<pb::ListProvisionersResponse>, Status> {
        self.gate
            .run(nodes::LIST_PROVISIONERS, req, |_, r| async move {
                let now = crate::store::now_ms();
                let mut out = self.nodes.provisioners(&r.id, now)?;
                if let Some(p) = self.jobs.pilots.get() {
                    p.mark_unavailable(&mut out, now);
                }
                // Only jobs on borrowed nodes are charged: no slurm definition, no walk of the jobs.
                let borrows = (out.provisioners.iter())
                    .any(|p| p.backend == crate::sched::provision::Backend::Slurm.as_str());
                let mut costs = if borrows { self.jobs.account_costs(now) } else { Default::default() };
                for p in out.provisioners.iter_mut() {
                    let by_account = costs.remove(&p.id).unwrap_or_default();
                    p.account_costs = by_account
                        .into_iter()
                        .map(|(account, cost)| pb::AccountCost { account, cost })
                        .collect();
                }
                Ok((out, vec![]))
            })
            .await
    }
}

pub struct AgentApi {
    gate: Arc<Gate>,
    nodes: Arc<NodeService>,
    jobs: Arc<JobService>,
}

impl AgentApi {
    pub fn new(gate: Arc<Gate>, nodes: Arc<NodeService>, jobs: Arc<JobService>) -> Self {
        AgentApi { gate, nodes, jobs }
    }
}

type CommandStream = Pin<Box<dyn Stream<Item = Result<pb::AgentCommand, Status>> + Send>>;

/// The first report of the stream names the agent; its key is checked there.
impl super::gate::Targeted for tonic::Streaming<pb::StepReport> {}

#[tonic::async_trait]
impl Agent for AgentApi {
    async fn register(
        &self,
        req: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterResponse>, Status> {
        self.gate
            .run(agent::REGISTER, req, |_, r| async move {
                let now = now_ms();
                let (agent_id, agent_key, admitted) = match &r.dynamic {
                    None => self.nodes.register(&r, now)?,
                    Some(_) => {
                        let (registered, hres) = self.nodes.register_dynamic(&r, now).await?;
                        if !hres.is_empty() && let Some(name) = r.nodes.first() {
                            self.jobs.licenses.join_dynamic(name, &hres).await;
                        }
                        registered
                    }
                };
                tracing::debug!(nodes = %hostlist::compress(&r.nodes), "registered");
                // An end the store cannot take fails the registration: the agent keeps it and retries.
                let done = self.jobs.reconcile(&r.nodes, &r.running, r.ended).await?;
                if done != Default::default() {
                    tracing::info!(lost = ?done.lost, stray = ?done.stray, "reconciled the agent's jobs");
                }
                // A single-use token is marked used on disk before the agent hears it is
                // registered; a registration that failed before this left it unspent.
                let token = admitted.token.clone();
                admitted.spend(now).await.inspect_err(|e| {
                    tracing::warn!(nodes = %hostlist::compress(&r.nodes), token = ?token, "registration refused: {e}")
                })?;
                Ok((
                    pb::RegisterResponse {
                        agent_id,
                        agent_key,
                        heartbeat_interval_secs: self.nodes.heartbeat_secs,
                    },
                    vec![],
                ))
            })
            .await
    }

    async fn heartbeat(
        &self,
        req: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatResponse>, Status> {
        self.gate
            .run(agent::HEARTBEAT, req, |_, r| async move {
                let known = self.nodes.heartbeat(&r.agent_id, &r.agent_key)?;
                Ok((pb::HeartbeatResponse { reregister: !known }, vec![]))
            })
            .await
    }

    type CommandsStream = CommandStream;

    async fn commands(&self, req: Request<pb::CommandsRequest>) -> Result<Response<CommandStream>, Status> {
        self.gate
            .run(agent::COMMANDS, req, |_, r| async move {
                let rx = self.nodes.commands(&r.agent_id, &r.agent_key)?;
                let s = tokio_stream::StreamExt::map(tokio_stream::wrappers::ReceiverStream::new(rx), Ok);
                Ok((Box::pin(s) as CommandStream, vec![]))
            })
            .await
    }

    async fn step_io(
        &self,
        req: Request<tonic::Streaming<pb::StepReport>>,
    ) -> Result<Response<pb::StepIoAck>, Status> {
        self.gate
            .run(agent::STEP_IO, req, |_, mut rest| async move {
                let first = rest.message().await.map_err(|s| Error::invalid("report", s.message()))?;
                let first = first.ok_or_else(|| Error::invalid("report", "the stream names no step"))?;
                // Only the agent hosting the node may speak for its tasks.
                let nodes = self.nodes.agent_nodes(&first.agent_id, &first.agent_key)?;
                self.jobs.step_io(&nodes, first, rest).await?;
                Ok((pb::StepIoAck {}, vec![]))
            })
            .await
    }

    async fn report_use(&self, req: Request<pb::UseReport>) -> Result<Response<pb::UseAck>, Status> {
        self.gate
            .run(agent::REPORT_USE, req, |_, r| async move {
                // Only the agent hosting the node may answer for it.
                let nodes = self.nodes.agent_nodes(&r.agent_id, &r.agent_key)?;
                self.jobs.use_reported(&nodes, r)?;
                Ok((pb::UseAck {}, vec![]))
            })
            .await
    }

    async fn report_output(&self, req: Request<pb::OutputReport>) -> Result<Response<pb::UseAck>, Status> {
        self.gate
            .run(agent::REPORT_OUTPUT, req, |_, r| async move {
                // Only the agent hosting the node may answer for it.
                let nodes = self.nodes.agent_nodes(&r.agent_id, &r.agent_key)?;
                self.jobs.tails.answer(&nodes, r).await?;
                Ok((pb::UseAck {}, vec![]))
            })
            .await
    }

    async fn report_bcast(&self, req: Request<pb::BcastReport>) -> Result<Response<pb::UseAck>, Status> {
        self.gate
            .run(agent::REPORT_BCAST, req, |_, r| async move {
                let nodes = self.nodes.agent_nodes(&r.agent_id, &r.agent_key)?;
                self.jobs.bcast_reported(&nodes, r)?;
                Ok((pb::UseAck {}, vec![]))
            })
            .await
    }

    async fn report_job(&self, req: Request<pb::JobReport>) -> Result<Response<pb::JobReportAck>, Status> {
        self.gate
            .run(agent::REPORT_JOB, req, |_, r| async move {
                // Only the agent running the job may end it, and the end is
                // on disk before the agent is told it may forget it.
                let nodes = self.nodes.agent_nodes(&r.agent_id, &r.agent_key)?;
                self.jobs.report(&nodes, r).await?;
                Ok((pb::JobReportAck {}, vec![]))
            })
            .await
    }
}

impl super::gate::Targeted for pb::CreateNodeRequest {
    fn target(&self) -> String {
        self.name.clone()
    }
    fn bounds(&self) -> Result<(), Error> {
        spur_vocab::dynamic::check_name(&self.name).map_err(|e| Error::invalid("NodeName", e))
    }
    fn params(&self) -> serde_json::Value {
        let n = self.node.clone().unwrap_or_default();
        json!({ "cpus": n.cpus, "memory_mb": n.memory_mb, "gres": n.gres, "features": n.features,
                "hres": n.hres, "state": n.state })
    }
    fn intent(&self) -> Action {
        Action::Create
    }
}

impl super::gate::Targeted for pb::DeleteNodeRequest {
    fn target(&self) -> String {
        self.name.clone()
    }
    fn bounds(&self) -> Result<(), Error> {
        spur_vocab::dynamic::check_name(&self.name).map_err(|e| Error::invalid("NodeName", e))
    }
    fn intent(&self) -> Action {
        Action::Delete
    }
}

/// For `daemon/fuzz`: the node listing's keys (the names then go to the hostlist parser).
#[cfg(feature = "fuzzing")]
pub(super) fn fuzz_filter(kvs: &[pb::KeyValue]) -> Result<(), Error> {
    filter::parse::<NodeKey>(kvs).map(drop)
}
