//! Provisioner definitions' pools: which nodes each static definition's
//! condition admits, evaluated when a node registers and on reconfigure.

use super::NodeService;
use crate::error::Result;
use spur_proto::v1 as pb;

impl NodeService {
    /// `scontrol show provisioner [ID]`.
    pub fn provisioners(&self, _id: &str) -> Result<pb::ListProvisionersResponse> {
        Ok(pb::ListProvisionersResponse::default())
    }
}
