//! The gRPC surface: Spur's services behind one authentication layer and one
//! gate (role check and audit), plus gRPC reflection and the standard health
//! service, so clients that are not ours can discover and use the API.
//!
//! - [`rpc`]: every RPC classified once (read / mutation / internal, role, target).
//! - [`layer`]: authentication and `audit_rpc` logging in front of every RPC.
//! - [`gate`]: role checks and txn rows, around every handler.
//! - [`convert`]: domain records to proto messages, in one place.
//! - `packed`: the brief job listing written straight into protobuf bytes.
//! - `accounting`, `audit_api`, `session`, `admission_api`, `nodes_api`, `cluster_api`, `licenses_api`: the services.

mod accounting;
mod admission_api;
mod audit_api;
mod cluster_api;
pub mod convert;
pub mod gate;
mod identity;
mod jobs_api;
pub mod layer;
mod licenses_api;
mod nodes_api;
mod packed;
pub mod rpc;
mod session;

pub use identity::normalize_peer;

use crate::admission::Admission;
use crate::config::Config;
use crate::nodes::NodeService;
use gate::Gate;
use spur_proto::v1::{
    accounting_server::AccountingServer, admission_server::AdmissionServer, agent_server::AgentServer,
    audit_server::AuditServer, cluster_server::ClusterServer, jobs_server::JobsServer,
    licenses_server::LicensesServer, nodes_server::NodesServer, session_server::SessionServer,
};
use std::sync::Arc;
use tonic::service::Routes;

/// Every service the controller serves, ready to mount on a tonic server.
pub async fn routes(
    gate: Arc<Gate>,
    admission: Arc<Admission>,
    nodes: Arc<NodeService>,
    jobs: Arc<crate::jobs::JobService>,
    licenses: Arc<crate::licenses::LicenseService>,
    cfg: &Config,
) -> anyhow::Result<Routes> {
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(spur_proto::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let (health_reporter, health) = tonic_health::server::health_reporter();
    health_reporter.set_serving::<AccountingServer<accounting::AccountingApi>>().await;
    let cluster = cfg.cluster_name.clone();
    let routes = Routes::new(health)
        .add_service(reflection)
        .add_service(AccountingServer::new(accounting::AccountingApi::new(gate.clone(), cluster.clone())))
        .add_service(AuditServer::new(audit_api::AuditApi::new(gate.clone())))
        .add_service(SessionServer::new(session::SessionApi::new(gate.clone(), cluster, cfg.auth.mode)))
        .add_service(AdmissionServer::new(admission_api::AdmissionApi::new(gate.clone(), admission)))
        .add_service(NodesServer::new(nodes_api::NodesApi::new(
            gate.clone(),
            nodes.clone(),
            licenses.clone(),
            cfg.path.clone(),
        )))
        .add_service(AgentServer::new(nodes_api::AgentApi::new(gate.clone(), nodes.clone(), jobs.clone())))
        .add_service(JobsServer::new(jobs_api::JobsApi::new(gate.clone(), jobs.clone())))
        .add_service(LicensesServer::new(licenses_api::LicensesApi::new(
            gate.clone(),
            licenses.clone(),
            jobs.clone(),
        )))
        .add_service(ClusterServer::new(cluster_api::ClusterApi::new(gate, nodes, licenses, jobs)));
    Ok(routes)
}
