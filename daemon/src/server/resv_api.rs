//! The Reservations service: `scontrol create|update|delete|show
//! reservation` and `sinfo -T` (changes need Operator and up, audited as
//! entity `reservation` through the gate like every change).

use super::gate::{Gate, Note};
use super::path::reservations as path;
use crate::jobs::JobService;
use crate::sched::model::Resv;
use crate::store::{Action, now_ms};
use serde_json::json;
use spur_proto::v1 as pb;
use spur_proto::v1::reservations_server::Reservations;
use spur_vocab::hostlist;
use spur_vocab::resv::render_licenses;
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub struct ResvApi {
    gate: Arc<Gate>,
    jobs: Arc<JobService>,
}

impl ResvApi {
    pub fn new(gate: Arc<Gate>, jobs: Arc<JobService>) -> Self {
        ResvApi { gate, jobs }
    }
}

/// A reservation on the wire, its state by `now`.
pub fn wire(r: &Resv, now: i64) -> pb::Reservation {
    pb::Reservation {
        name: r.name.clone(),
        start_ms: r.start_ms,
        end_ms: r.end_ms,
        nodes: hostlist::compress(&r.nodes),
        node_count: r.nodes.len() as u32,
        partition: r.partition.clone(),
        users: r.users().render(),
        accounts: r.accounts().render(),
        licenses: render_licenses(&r.licenses),
        flags: r.flags().to_string(),
        state: r.state(now).into(),
        maint: r.maint(),
    }
}

fn reply(r: &Resv, now: i64) -> pb::ReservationReply {
    pb::ReservationReply { reservation: Some(wire(r, now)) }
}

#[tonic::async_trait]
impl Reservations for ResvApi {
    async fn create_reservation(
        &self,
        req: Request<pb::CreateReservationRequest>,
    ) -> Result<Response<pb::ReservationReply>, Status> {
        self.gate
            .run(path::CREATE_RESERVATION, req, |caller, r| async move {
                let now = now_ms();
                let cluster = self.jobs.resv_cluster(now);
                // Slurm names an unnamed reservation after its creator.
                let default = format!("{}_{}", caller.caller.user, self.jobs.resvs.list().len() + 1);
                let made = self.jobs.resvs.create(&r.words, &cluster, now, &default).await?;
                self.jobs.kick.notify_one();
                let note = Note { action: Action::Create, name: made.name.clone(), info: json!({}) };
                Ok((reply(&made, now), vec![note]))
            })
            .await
    }

    async fn update_reservation(
        &self,
        req: Request<pb::UpdateReservationRequest>,
    ) -> Result<Response<pb::ReservationReply>, Status> {
        self.gate
            .run(path::UPDATE_RESERVATION, req, |_, r| async move {
                let now = now_ms();
                let cluster = self.jobs.resv_cluster(now);
                let changed = self.jobs.resvs.update(&r.words, &cluster, now).await?;
                self.jobs.kick.notify_one();
                let note = Note { action: Action::Update, name: changed.name.clone(), info: json!({}) };
                Ok((reply(&changed, now), vec![note]))
            })
            .await
    }

    async fn delete_reservation(
        &self,
        req: Request<pb::DeleteReservationRequest>,
    ) -> Result<Response<pb::ReservationReply>, Status> {
        self.gate
            .run(path::DELETE_RESERVATION, req, |_, r| async move {
                let gone = self.jobs.resvs.delete(&r.name).await?;
                self.jobs.kick.notify_one();
                let note = Note { action: Action::Delete, name: gone.name.clone(), info: json!({}) };
                Ok((reply(&gone, now_ms()), vec![note]))
            })
            .await
    }

    async fn list_reservations(
        &self,
        req: Request<pb::ListReservationsRequest>,
    ) -> Result<Response<pb::ListReservationsResponse>, Status> {
        self.gate
            .run(path::LIST_RESERVATIONS, req, |_, r| async move {
                let now = now_ms();
                let all = self.jobs.resvs.list();
                let reservations = (all.iter().filter(|x| r.name.is_empty() || x.name == r.name))
                    .map(|x| wire(x, now))
                    .collect();
                Ok((pb::ListReservationsResponse { reservations, now_ms: now }, vec![]))
            })
            .await
    }
}
