//! The Cluster service: a snapshot of the nodes, then every node,
//! accounting and job change as it happens, so the console never polls.
//! Job changes come in the batches of [`crate::jobs::events`].

use super::convert;
use super::gate::{Gate, Note};
use super::path::cluster as path;
use super::streams;
use crate::accounting::AcctService;
use crate::jobs::JobService;
use crate::licenses::LicenseService;
use crate::nodes::NodeService;
use crate::store::Action;
use spur_proto::v1 as pb;
use spur_proto::v1::cluster_server::Cluster;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::{broadcast::error::RecvError, mpsc};
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

pub struct ClusterApi {
    gate: Arc<Gate>,
    nodes: Arc<NodeService>,
    acct: Arc<AcctService>,
    licenses: Arc<LicenseService>,
    jobs: Arc<JobService>,
    /// `scontrol show config`, as of start-up.
    config: pb::ShowConfigResponse,
    streams: super::streams::Streams,
}

impl ClusterApi {
    pub fn new(
        gate: Arc<Gate>,
        nodes: Arc<NodeService>,
        licenses: Arc<LicenseService>,
        jobs: Arc<JobService>,
        cfg: &crate::config::Config,
    ) -> Self {
        let config = pb::ShowConfigResponse {
            entries: super::show_config::entries(cfg)
                .into_iter()
                .map(|(key, value)| pb::KeyValue { key: key.into(), value })
                .collect(),
            as_of_ms: crate::store::now_ms(),
        };
        let streams = gate.streams.clone();
        ClusterApi { acct: gate.acct.clone(), gate, nodes, licenses, jobs, config, streams }
    }
}

type Event = Result<pb::ClusterEvent, Status>;
type WatchStream = Pin<Box<dyn Stream<Item = Event> + Send>>;

fn nodes_event(nodes: &NodeService, jobs: &JobService, names: Option<&[String]>) -> pb::ClusterEvent {
    let mut list: Vec<pb::Node> = match names {
        Some(ns) => ns.iter().filter_map(|n| nodes.node(n)).map(|n| convert::node(&n)).collect(),
        None => nodes.nodes().iter().map(convert::node).collect(),
    };
    convert::mark_reserved(&mut list, &jobs.resvs.list(), crate::store::now_ms());
    pb::ClusterEvent {
        event: Some(pb::cluster_event::Event::Nodes(pb::NodesChanged {
            nodes: list,
            snapshot: names.is_none(),
        })),
    }
}

/// Every reservation, as of now.
fn resv_event(jobs: &JobService) -> pb::ClusterEvent {
    let now = crate::store::now_ms();
    let reservations = jobs.resvs.list().iter().map(|r| super::resv_api::wire(r, now)).collect();
    let list = pb::ListReservationsResponse { reservations, now_ms: now };
    pb::ClusterEvent { event: Some(pb::cluster_event::Event::Reservations(list)) }
}

fn licenses_event(name: String) -> pb::ClusterEvent {
    pb::ClusterEvent { event: Some(pb::cluster_event::Event::Licenses(pb::LicensesChanged { name })) }
}

/// A batch as the jobs are now; a marked job the queue no longer holds was purged.
fn jobs_event(jobs: &JobService, ids: &[u64], seq: u64) -> pb::ClusterEvent {
    let list = jobs.select(Some(ids), |j| Some(convert::job(j)));
    let removed = if list.len() == ids.len() {
        vec![]
    } else {
        let present: std::collections::HashSet<u64> = list.iter().map(|j| j.id).collect();
        ids.iter().copied().filter(|id| !present.contains(id)).collect()
    };
    let batch = pb::JobsChanged { jobs: list, seq, removed };
    pb::ClusterEvent { event: Some(pb::cluster_event::Event::Jobs(batch)) }
}

async fn watch(
    nodes: Arc<NodeService>,
    acct: Arc<AcctService>,
    licenses: Arc<LicenseService>,
    jobs: Arc<JobService>,
    tx: mpsc::Sender<Event>,
) {
    let mut node_rx = nodes.subscribe();
    let mut acct_rx = acct.subscribe();
    let mut lic_rx = licenses.subscribe();
    let mut job_rx = jobs.subscribe();
    let mut resv_rx = jobs.resvs.subscribe();
    if !streams::send(&tx, nodes_event(&nodes, &jobs, None)).await {
        return;
    }
    // Empty: says job changes follow, numbered after this one.
    if !streams::send(&tx, jobs_event(&jobs, &[], jobs.seq())).await {
        return;
    }
    // Then the reservations, whole (a watcher that knows no reservations skips it).
    if !streams::send(&tx, resv_event(&jobs)).await {
        return;
    }
    loop {
        let ev = tokio::select! {
            // The caller hung up: the slot and the receivers go now, not at the next change.
            _ = tx.closed() => return,
            r = node_rx.recv() => match r {
                Ok(e) => nodes_event(&nodes, &jobs, Some(&e.names)),
                Err(RecvError::Lagged(_)) => nodes_event(&nodes, &jobs, None),
                Err(RecvError::Closed) => return,
            },
            r = acct_rx.recv() => match r {
                Ok(e) => pb::ClusterEvent { event: Some(pb::cluster_event::Event::Catalog(pb::CatalogChanged {
                    entity: e.kind.into(), name: e.name, deleted: e.deleted,
                })) },
                Err(RecvError::Lagged(n)) => pb::ClusterEvent {
                    event: Some(pb::cluster_event::Event::Lagged(format!("missed {n} accounting changes; re-read"))),
                },
                Err(RecvError::Closed) => return,
            },
            r = lic_rx.recv() => match r {
                // A burst of changes reads the same: re-read the licenses.
                Ok(name) => licenses_event(name),
                Err(RecvError::Lagged(_)) => licenses_event(String::new()),
                Err(RecvError::Closed) => return,
            },
            r = resv_rx.recv() => match r {
                Ok(()) | Err(RecvError::Lagged(_)) => {
                    if !streams::send(&tx, resv_event(&jobs)).await {
                        return;
                    }
                    nodes_event(&nodes, &jobs, None)
                }
                Err(RecvError::Closed) => return,
            },
            r = job_rx.recv() => match r {
                Ok(b) => jobs_event(&jobs, &b.ids, b.seq),
                Err(RecvError::Lagged(n)) => pb::ClusterEvent {
                    event: Some(pb::cluster_event::Event::Lagged(format!("missed {n} batches of job changes; re-read"))),
                },
                Err(RecvError::Closed) => return,
            },
        };
        if !streams::send(&tx, ev).await {
            return;
        }
    }
}

#[tonic::async_trait]
impl Cluster for ClusterApi {
    type WatchStream = WatchStream;

    async fn watch(&self, req: Request<pb::WatchRequest>) -> Result<Response<WatchStream>, Status> {
        let (nodes, acct) = (self.nodes.clone(), self.acct.clone());
        let (licenses, jobs) = (self.licenses.clone(), self.jobs.clone());
        let streams = self.streams.clone();
        self.gate
            .run(path::WATCH, req, |ctx, _| async move {
                let slot = streams.open(&ctx.caller.user)?;
                let (tx, rx) = mpsc::channel(64);
                tokio::spawn(async move {
                    watch(nodes, acct, licenses, jobs, tx).await;
                    drop(slot);
                });
                Ok((Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx)) as WatchStream, vec![]))
            })
            .await
    }

    async fn show_config(
        &self,
        req: Request<pb::ShowConfigRequest>,
    ) -> Result<Response<pb::ShowConfigResponse>, Status> {
        let config = self.config.clone();
        self.gate.run(path::SHOW_CONFIG, req, |_, _| async move { Ok((config, vec![])) }).await
    }

    async fn diag(&self, req: Request<pb::DiagRequest>) -> Result<Response<pb::DiagResponse>, Status> {
        let (jobs, gate) = (self.jobs.clone(), self.gate.clone());
        self.gate
            .run(path::DIAG, req, |_, _| async move {
                Ok((diag_response(&jobs, &gate, crate::store::now_ms()), vec![]))
            })
            .await
    }

    async fn reset_diag(
        &self,
        req: Request<pb::ResetDiagRequest>,
    ) -> Result<Response<pb::ResetDiagResponse>, Status> {
        let (jobs, gate) = (self.jobs.clone(), self.gate.clone());
        self.gate
            .run(path::RESET_DIAG, req, |_, _| async move {
                jobs.diag.reset(crate::store::now_ms());
                gate.rpc_stats.reset();
                let note = Note { action: Action::Update, name: String::new(), info: serde_json::json!({}) };
                Ok((pb::ResetDiagResponse {}, vec![note]))
            })
            .await
    }

    async fn takeover(
        &self,
        req: Request<pb::TakeoverRequest>,
    ) -> Result<Response<pb::TakeoverResponse>, Status> {
        self.gate
            .run(path::TAKEOVER, req, |_, r| async move {
                let from = crate::ha::handover::hand_over(&r.to).await?;
                let note = Note {
                    action: Action::Update,
                    name: r.to.clone(),
                    info: serde_json::json!({ "from": from }),
                };
                Ok((pb::TakeoverResponse { from }, vec![note]))
            })
            .await
    }
}

/// sdiag's figures as of `now_ms`: the job side's counters, the queue as it is, the RPCs.
fn diag_response(jobs: &JobService, gate: &Gate, now_ms: i64) -> pb::DiagResponse {
    let f = jobs.diag.read();
    let (pending, running) = jobs.pending_running();
    pb::DiagResponse {
        req_time: now_ms / 1000,
        req_time_start: f.since_ms / 1000,
        jobs_submitted: f.submitted,
        jobs_started: f.started,
        jobs_completed: f.completed,
        jobs_canceled: f.canceled,
        jobs_failed: f.failed,
        job_states_ts: now_ms / 1000,
        jobs_pending: pending,
        jobs_running: running,
        schedule_cycle_last: f.cycle_last,
        schedule_cycle_max: f.cycle_max,
        schedule_cycle_counter: f.cycles,
        schedule_cycle_sum: f.cycle_sum,
        schedule_cycle_depth: f.depth_sum,
        schedule_queue_len: f.queue_len,
        backfill_enabled: jobs.sched.backfill_enabled,
        bf_backfilled_jobs: f.backfilled_total,
        bf_last_backfilled_jobs: f.backfilled,
        bf_when_last_cycle: f.last_pass_ms / 1000,
        rpcs: gate.rpc_stats.read(),
        history: jobs.diag.history().iter().map(sample).collect(),
    }
}

fn sample(s: &crate::jobs::pulse::Sample) -> pb::DiagSample {
    pb::DiagSample {
        time: s.at_ms / 1000,
        last_pass_us: s.last_pass_us,
        jobs_started: s.started,
        bf_backfilled_jobs: s.backfilled,
        rpcs_per_sec: s.rpcs_per_sec,
        jobs_pending: s.pending,
        jobs_running: s.running,
    }
}
