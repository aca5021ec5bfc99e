//! The gRPC surface: Spur's services plus gRPC reflection and the standard
//! health service, so clients that are not ours can discover and use the API.

mod accounting;
mod convert;
mod identity;

pub use identity::{caller_of, normalize_peer};

use crate::accounting::AcctService;
use spur_proto::v1::accounting_server::AccountingServer;
use std::sync::Arc;
use tonic::service::Routes;

/// Every service the controller serves, ready to mount on a tonic server.
pub async fn routes(acct: Arc<AcctService>, cluster: &str) -> anyhow::Result<Routes> {
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(spur_proto::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let (health_reporter, health) = tonic_health::server::health_reporter();
    health_reporter.set_serving::<AccountingServer<accounting::AccountingApi>>().await;
    let routes = Routes::new(health)
        .add_service(reflection)
        .add_service(AccountingServer::new(accounting::AccountingApi::new(acct, cluster.to_string())));
    Ok(routes)
}
