//! The Licenses service: `scontrol show license` and `scontrol update
//! HRESName=...` (Administrator, audited through the gate like every change).

use super::gate::{Gate, Note};
use super::path::licenses as path;
use crate::jobs::JobService;
use crate::licenses::{HresUpdate, LicenseService};
use crate::sched::model::{HresResource, Resv};
use crate::sched::resv::hold_chain;
use crate::store::Action;
use serde_json::json;
use spur_proto::v1 as pb;
use spur_proto::v1::licenses_server::Licenses;
use spur_vocab::resv::split_layer;
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
                let hres = self.licenses.hres();
                reserved(&mut licenses, &self.jobs.resvs.list(), &hres, crate::store::now_ms());
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

/// `Reserved=`: what reservations in their window hold of each plain license
/// and of each layer (a Mode 3 hold counts on the layer named and each above it).
fn reserved(licenses: &mut [pb::License], resvs: &[Resv], hres: &[HresResource], now: i64) {
    let active: Vec<&Resv> = resvs.iter().filter(|r| r.active(now)).collect();
    for l in licenses.iter_mut() {
        let holds = active.iter().flat_map(|r| r.licenses.iter());
        l.reserved = if l.layer_name.is_empty() {
            holds.filter(|(n, _)| *n == l.name).map(|(_, c)| u64::from(*c)).sum()
        } else {
            let Some(res) = hres.iter().find(|h| h.name == l.name) else { continue };
            let over = |n: &str| match split_layer(n) {
                (rn, Some(layer)) if rn == res.name => res
                    .layer(layer)
                    .is_some_and(|at| hold_chain(res, at).any(|j| res.layers[j].name == l.layer_name)),
                _ => false,
            };
            holds.filter(|(n, _)| over(n)).map(|(_, c)| u64::from(*c)).sum()
        };
        // Held for the reservation's jobs: not free to anyone else.
        l.free = l.free.saturating_sub(l.reserved);
    }
}
