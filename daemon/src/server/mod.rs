//! The gRPC surface: Spur's services behind one authentication layer and one
//! gate (role check and audit), plus gRPC reflection and the standard health
//! service, so clients that are not ours can discover and use the API.
//!
//! - [`path`]: every RPC path spelled once, for the handlers and [`rpc`].
//! - [`rpc`]: every RPC classified once (read / mutation / internal, role, target).
//! - [`rpc_stats`]: calls and time per RPC, for sdiag.
//! - [`layer`]: authentication and `audit_rpc` logging in front of every RPC.
//! - [`gate`]: role checks and txn rows, around every handler.
//! - [`convert`]: domain records to proto messages, in one place.
//! - `filter`: the one parser of the listings' `key=value` filters, typed keys per listing.
//! - [`limits`]: message sizes, repeated-field caps, txn page size.
//! - [`streams`]: Watch and TailTxn streams per user, and dropping a subscriber that stops reading.
//! - `fuzzing` (feature `fuzzing`, never shipped): the filter parsers for `daemon/fuzz`.
//! - `packed`: the brief job listing written straight into protobuf bytes.
//! - `show_config`: `scontrol show config`'s Slurm keys from spur.conf.
//! - `accounting`, `audit_api`, `session`, `admission_api`, `nodes_api`, `cluster_api`, `licenses_api`,
//!   `steps_api` (srun's steps): the services.

mod accounting;
mod admission_api;
mod audit_api;
mod cluster_api;
pub mod convert;
pub mod cut;
mod filter;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod gate;
pub(crate) mod identity;
mod jobs_api;
pub mod layer;
mod licenses_api;
pub mod limits;
mod nodes_api;
mod packed;
pub mod path;
pub(crate) mod resv_api;
pub mod rpc;
pub mod rpc_stats;
mod session;
mod show_config;
mod steps_api;
pub mod streams;

pub use identity::normalize_peer;

use crate::admission::Admission;
use crate::config::Config;
use crate::nodes::NodeService;
use gate::Gate;
use limits::{MAX_LISTING_BYTES, MAX_REQUEST_BYTES, MAX_RESPONSE_BYTES};
use spur_proto::v1::{
    accounting_server::AccountingServer, admission_server::AdmissionServer, agent_server::AgentServer,
    audit_server::AuditServer, cluster_server::ClusterServer, jobs_server::JobsServer,
    licenses_server::LicensesServer, nodes_server::NodesServer, reservations_server::ReservationsServer,
    session_server::SessionServer, steps_server::StepsServer,
};
use std::sync::Arc;
use tonic::service::Routes;

/// Sets a generated service's request and answer limits.
macro_rules! limited {
    ($svc:expr) => {
        limited!($svc, MAX_RESPONSE_BYTES)
    };
    ($svc:expr, $answer:expr) => {
        $svc.max_decoding_message_size(MAX_REQUEST_BYTES).max_encoding_message_size($answer)
    };
}

/// Every service the controller serves, ready to mount on a tonic server,
/// each with the limits of [`limits`].
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
    // Only a leader serves; a follower answers NOT_SERVING for it (ha/forward.rs).
    health_reporter
        .set_service_status(spur_proto::wire::LEADER_SERVICE, tonic_health::ServingStatus::Serving)
        .await;
    let cluster = cfg.cluster_name.clone();
    let g = || gate.clone();
    let routes = Routes::new(limited!(health))
        .add_service(limited!(reflection))
        .add_service(limited!(AccountingServer::new(accounting::AccountingApi::new(g(), cluster.clone()))))
        .add_service(limited!(AuditServer::new(audit_api::AuditApi::new(g()))))
        .add_service(limited!(SessionServer::new(session::SessionApi::new(g(), cluster, cfg.auth.mode))))
        .add_service(limited!(AdmissionServer::new(admission_api::AdmissionApi::new(
            g(),
            admission,
            nodes.clone(),
        ))))
        .add_service(limited!(NodesServer::new(nodes_api::NodesApi::new(
            g(),
            nodes.clone(),
            (licenses.clone(), jobs.clone()),
            cfg.path.clone(),
        ))))
        .add_service(limited!(AgentServer::new(nodes_api::AgentApi::new(g(), nodes.clone(), jobs.clone()))))
        .add_service(limited!(JobsServer::new(jobs_api::JobsApi::new(g(), jobs.clone())), MAX_LISTING_BYTES))
        .add_service(limited!(StepsServer::new(steps_api::StepsApi::new(g(), jobs.clone()))))
        .add_service(limited!(ReservationsServer::new(resv_api::ResvApi::new(g(), jobs.clone()))))
        .add_service(limited!(LicensesServer::new(licenses_api::LicensesApi::new(
            g(),
            licenses.clone(),
            jobs.clone(),
        ))))
        .add_service(limited!(
            ClusterServer::new(cluster_api::ClusterApi::new(g(), nodes, licenses, jobs, cfg)),
            MAX_LISTING_BYTES
        ));
    Ok(routes)
}
