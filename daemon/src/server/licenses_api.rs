//! The Licenses service: `scontrol show license` and `scontrol update
//! HRESName=...` (Administrator, audited through the gate like every change).

use super::gate::{Gate, Note};
use super::path::licenses as path;
use crate::jobs::JobService;
use crate::licenses::{HresUpdate, LicenseService};
use crate::store::Action;
use serde_json::json;
use spur_proto::v1 as pb;
use spur_proto::v1::licenses_server::Licenses;
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub struct LicensesApi {
    gate: Arc<Gate>,
    licenses: Arc<LicenseService>,
    jobs: Arc<JobService>,
}

impl LicensesApi {
    pub fn new(gate: Arc<Gate>, licenses: Arc<LicenseService>, jobs: Arc<JobService>) -> Self {
        LicensesApi { gate, licenses, jobs }
    }
}

#[tonic::async_trait]
impl Licenses for LicensesApi {
    async fn show_licenses(
        &self,
        req: Request<pb::ShowLicensesRequest>,
    ) -> Result<Response<pb::ShowLicensesResponse>, Status> {
        self.gate
            .run(path::SHOW_LICENSES, req, |_, r| async move {
                let mut licenses = self.licenses.show(&r.name, &self.jobs.license_holders());
                reserved(&mut licenses, &self.jobs.resvs.list(), crate::store::now_ms());
                Ok((pb::ShowLicensesResponse { licenses }, vec![]))
            })
            .await
    }

    async fn update_hres(
        &self,
        req: Request<pb::UpdateHresRequest>,
    ) -> Result<Response<pb::UpdateHresResponse>, Status> {
        self.gate
            .run(path::UPDATE_HRES, req, |_, r| async move {
                let u = HresUpdate {
                    layer: r.layer_name.clone(),
                    nodes: r.nodes.clone(),
                    count: r.count,
                    base: r.base.clone(),
                    disable_layer: r.disable_layer.clone(),
                    disable_hres: r.disable_hres.clone(),
                };
                let changes = self.licenses.update(&r.hres_name, &u).await?;
                self.jobs.kick.notify_one();
                let name = crate::licenses::audit_name(&r.hres_name, &r.layer_name);
                let note = Note { action: Action::Update, name, info: json!({ "changes": changes }) };
                Ok((pb::UpdateHresResponse { changes }, vec![note]))
            })
            .await
    }
}

/// `Reserved=`: what reservations in their window hold of each plain license.
fn reserved(licenses: &mut [pb::License], resvs: &[crate::sched::model::Resv], now: i64) {
    for l in licenses.iter_mut().filter(|l| l.layer_name.is_empty()) {
        l.reserved = (resvs.iter().filter(|r| r.active(now)))
            .flat_map(|r| r.licenses.iter().filter(|(n, _)| *n == l.name).map(|(_, c)| u64::from(*c)))
            .sum();
        // Held for the reservation's jobs: not free to anyone else.
        l.free = l.free.saturating_sub(l.reserved);
    }
}
