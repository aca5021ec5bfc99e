//! Where the executor's commands to node agents go: the agents' command
//! streams ([`NodeService`]) in the controller, a recording in the
//! executor's tests, so the order of persist, install and act is tested for
//! every transition without agents.

use crate::error::Result;
use crate::nodes::NodeService;
use spur_proto::v1 as pb;

/// Sends one command to the agent of `node`.
#[async_trait::async_trait]
pub trait AgentLink: Send + Sync {
    async fn send(&self, node: &str, cmd: pb::AgentCommand) -> Result<()>;
}

#[async_trait::async_trait]
impl AgentLink for NodeService {
    async fn send(&self, node: &str, cmd: pb::AgentCommand) -> Result<()> {
        NodeService::send(self, node, cmd).await
    }
}

#[cfg(test)]
impl super::JobService {
    /// The service sending its commands to `link` rather than to the agents.
    pub(crate) fn with_link(mut self, link: std::sync::Arc<dyn AgentLink>) -> Self {
        self.link = link;
        self
    }
}
