//! The Session service: who the controller thinks the caller is.

use super::gate::Gate;
use super::path::session as path;
use crate::config::AuthMode;
use spur_proto::v1 as pb;
use spur_proto::v1::session_server::Session;
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub struct SessionApi {
    gate: Arc<Gate>,
    cluster: String,
    mode: AuthMode,
}

impl SessionApi {
    pub fn new(gate: Arc<Gate>, cluster: String, mode: AuthMode) -> Self {
        SessionApi { gate, cluster, mode }
    }
}

#[tonic::async_trait]
impl Session for SessionApi {
    async fn who_am_i(
        &self,
        req: Request<pb::WhoAmIRequest>,
    ) -> Result<Response<pb::WhoAmIResponse>, Status> {
        self.gate
            .run(path::WHO_AM_I, req, |ctx, _| async move {
                Ok((
                    pb::WhoAmIResponse {
                        user: ctx.caller.user,
                        role: ctx.role.as_str().into(),
                        verified: ctx.caller.verified,
                        cluster_name: self.cluster.clone(),
                        auth_mode: self.mode.as_str().into(),
                    },
                    vec![],
                ))
            })
            .await
    }
}
