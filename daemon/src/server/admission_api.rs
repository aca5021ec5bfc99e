//! The Admission service: `spur token create|list|revoke`.

use super::gate::{Gate, Note};
use super::path::admission as path;
use crate::admission::{Admission, TokenSpec, create_info};
use crate::nodes::NodeService;
use crate::store::{Action, now_ms};
use serde_json::json;
use spur_proto::v1 as pb;
use spur_proto::v1::admission_server;
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub struct AdmissionApi {
    gate: Arc<Gate>,
    admission: Arc<Admission>,
    /// A token's hostlist is bounded by the cluster's size, like every hostlist a client sends.
    nodes: Arc<NodeService>,
}

impl AdmissionApi {
    pub fn new(gate: Arc<Gate>, admission: Arc<Admission>, nodes: Arc<NodeService>) -> Self {
        AdmissionApi { gate, admission, nodes }
    }
}

#[tonic::async_trait]
impl admission_server::Admission for AdmissionApi {
    async fn create_token(
        &self,
        req: Request<pb::CreateTokenRequest>,
    ) -> Result<Response<pb::CreateTokenResponse>, Status> {
        self.gate
            .run(path::CREATE_TOKEN, req, |_, r| async move {
                let spec = TokenSpec { ttl_secs: r.ttl_secs, nodes: r.nodes, once: r.once };
                let (rec, token) = self.admission.create(spec, self.nodes.token_bounds(), now_ms()).await?;
                let note = Note { action: Action::Create, name: rec.id.clone(), info: create_info(&rec) };
                Ok((pb::CreateTokenResponse { id: rec.id, token, expires_ms: rec.expires_ms }, vec![note]))
            })
            .await
    }

    async fn list_tokens(
        &self,
        req: Request<pb::ListTokensRequest>,
    ) -> Result<Response<pb::ListTokensResponse>, Status> {
        self.gate
            .run(path::LIST_TOKENS, req, |_, _| async move {
                let tokens = self
                    .admission
                    .list()
                    .into_iter()
                    .map(|t| pb::AdmissionToken {
                        id: t.id,
                        created_ms: t.created_ms,
                        expires_ms: t.expires_ms,
                        revoked: t.revoked,
                        nodes: t.nodes.unwrap_or_default(),
                        once: t.once,
                        used_ms: t.used_ms,
                    })
                    .collect();
                Ok((pb::ListTokensResponse { tokens }, vec![]))
            })
            .await
    }

    async fn revoke_token(
        &self,
        req: Request<pb::RevokeTokenRequest>,
    ) -> Result<Response<pb::RevokeTokenResponse>, Status> {
        self.gate
            .run(path::REVOKE_TOKEN, req, |_, r| async move {
                self.admission.revoke(&r.id).await?;
                let note = Note { action: Action::Update, name: r.id, info: json!({"revoked": true}) };
                Ok((pb::RevokeTokenResponse {}, vec![note]))
            })
            .await
    }
}
