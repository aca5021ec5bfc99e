//! The demo's ongoing activity, through the controller's own RPCs over
//! loopback as a user's client would make them (the user asserted, as the
//! demo's `none` auth plugin takes it): submits, a cancel now and then, a
//! drain and resume of a node now and then. Each passes the RPC gate, so
//! each makes its audit row and the console's Audit pane tails real rows.
//! A preemption is staged in the first seconds (a `burst` job on node03,
//! then a `normal` one that needs the node) so the Preemption pane has
//! something to explain.

use crate::jobs::JobService;
use spur_proto::v1::jobs_client::JobsClient;
use spur_proto::v1::nodes_client::NodesClient;
use spur_proto::v1::{CancelRequest, JobSpec, SubmitRequest, UpdateNodesRequest};
use spur_proto::wire::USER_HEADER;
use spur_vocab::JobState;
use std::sync::Arc;
use std::time::Duration;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

/// Sends the demo user's name with every request, as the CLI does.
#[derive(Clone)]
pub struct As(Option<MetadataValue<Ascii>>);

impl Interceptor for As {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert(USER_HEADER, v.clone());
        }
        Ok(req)
    }
}

/// A loopback client of the demo's controller.
#[derive(Clone)]
pub struct Client {
    channel: Channel,
}

/// The demo's admin (`adminlevel=Admin` in its seed), who drains and resumes.
const ADMIN: &str = "bob";
/// The node drained and resumed now and then.
const DRAINED: &str = "node06";
/// The node the staged preemption happens on.
const CONTESTED: &str = "node03";

impl Client {
    /// Connects lazily: the first call connects, so the controller may still be starting.
    pub fn new(url: &str) -> anyhow::Result<Client> {
        let channel = Endpoint::from_shared(url.to_string())?.connect_lazy();
        Ok(Client { channel })
    }

    fn jobs(&self, user: &str) -> JobsClient<InterceptedService<Channel, As>> {
        JobsClient::with_interceptor(self.channel.clone(), As(MetadataValue::try_from(user).ok()))
    }

    fn nodes(&self, user: &str) -> NodesClient<InterceptedService<Channel, As>> {
        NodesClient::with_interceptor(self.channel.clone(), As(MetadataValue::try_from(user).ok()))
    }

    /// Submits as `user`; a refusal is only logged, as the demo tries again.
    pub async fn submit(&self, user: &str, spec: JobSpec) -> Option<u64> {
        match self.jobs(user).submit(SubmitRequest { spec: Some(spec) }).await {
            Ok(r) => Some(r.into_inner().job_id),
            Err(e) => {
                tracing::debug!(error = %e, user, "demo submit refused");
                None
            }
        }
    }

    async fn cancel(&self, user: &str, id: u64) {
        let req = CancelRequest { ids: vec![id], ..Default::default() };
        if let Err(e) = self.jobs(user).cancel(req).await {
            tracing::debug!(error = %e, user, id, "demo cancel refused");
        }
    }

    async fn node_state(&self, state: &str, reason: &str) {
        let req = UpdateNodesRequest { nodes: DRAINED.into(), state: state.into(), reason: reason.into() };
        if let Err(e) = self.nodes(ADMIN).update_nodes(req).await {
            tracing::debug!(error = %e, state, "demo node update refused");
        }
    }
}

/// Every few seconds, in turn: cancel one of the stream's jobs (as its
/// owner, who changed their mind), drain node06, and later resume it.
pub fn spawn_activity(jobs: Arc<JobService>, client: Client) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(4));
        // The first tick is at once; the cluster is barely up then.
        tick.tick().await;
        for step in 0u64.. {
            tick.tick().await;
            match step % 6 {
                0 | 3 => {
                    let all = jobs.jobs();
                    let pick = all
                        .iter()
                        .filter(|j| j.is_active() && j.name.starts_with("demo"))
                        .min_by_key(|j| j.id);
                    if let Some(j) = pick {
                        client.cancel(&j.user, j.id).await;
                    }
                }
                1 => client.node_state("drain", "demo: fan check").await,
                4 => client.node_state("resume", "").await,
                _ => {}
            }
        }
    })
}

/// The staged preemption, again every few minutes: dave's `burst` job takes
/// node03 whole, then his `normal` job asks for node03 whole too; normal
/// may preempt burst (requeue), so the pass preempts it once burst has run
/// past `preempt_exempt_time`.
pub fn spawn_preemption(
    jobs: Arc<JobService>,
    client: Client,
    base: impl Fn(String, u64) -> JobSpec + Send + Sync + 'static,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        for round in 0u64.. {
            let contested = |qos: &str, name: String, secs: u64| JobSpec {
                qos: qos.into(),
                nodelist: CONTESTED.into(),
                exclusive: true,
                ..base(name, secs)
            };
            let Some(low) = client.submit("dave", contested("burst", format!("burst{round}"), 600)).await
            else {
                tokio::time::sleep(Duration::from_secs(5)).await;
                continue;
            };
            // Until it runs (the node may be busy a while), then past its exempt time.
            let mut poll = tokio::time::interval(Duration::from_secs(1));
            loop {
                match jobs.job(low).map(|j| j.state) {
                    Some(JobState::Running) => break,
                    Some(s) if s.is_active() => poll.tick().await,
                    _ => break,
                };
            }
            tokio::time::sleep(Duration::from_secs(6)).await;
            client.submit("dave", contested("normal", format!("urgent{round}"), 45)).await;
            tokio::time::sleep(Duration::from_secs(240)).await;
            client.cancel("dave", low).await;
        }
    })
}
