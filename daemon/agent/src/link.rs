//! The controller, as what the agent runs reaches back to it: a client with
//! the agent's id and key, for a step's stream and for the reports of work
//! that is not a supervised job's end (an HRES node function on a step node).

use spur_proto::credential::Credentials;
use spur_proto::v1 as pb;
use spur_proto::v1::agent_client::AgentClient;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

/// The agent's channel: each call carries a MUNGE credential where munged
/// runs, which a controller under `munge` requires of the agent protocol.
pub type AgentChannel = InterceptedService<Channel, Credentials>;

#[derive(Clone)]
pub struct Link {
    pub client: AgentClient<AgentChannel>,
    pub agent_id: String,
    pub agent_key: String,
}

impl Link {
    /// Sends `r` as this agent's report (its id and key filled in).
    pub async fn report(&self, r: pb::JobReport) -> Result<(), tonic::Status> {
        let r = pb::JobReport { agent_id: self.agent_id.clone(), agent_key: self.agent_key.clone(), ..r };
        self.client.clone().report_job(r).await.map(|_| ())
    }
}
