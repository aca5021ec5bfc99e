//! The Audit service: `sacctmgr show txn` and the live tail.

use super::convert;
use super::gate::Gate;
use crate::audit::Hub;
use crate::error::{Error, Result};
use crate::store::{Store, TxnQuery, TxnRow};
use spur_client::vocab::txn::{RowView, TxnFilter};
use spur_proto::v1 as pb;
use spur_proto::v1::audit_server::Audit;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

/// Rows per page when replaying from the store.
const PAGE: i64 = 1000;

pub struct AuditApi {
    gate: Arc<Gate>,
}

impl AuditApi {
    pub fn new(gate: Arc<Gate>) -> Self {
        AuditApi { gate }
    }
}

fn view(r: &TxnRow) -> RowView<'_> {
    RowView {
        actor: &r.head.actor,
        action: &r.action,
        entity: &r.entity,
        name: &r.name,
        outcome: &r.outcome,
        peer: &r.head.peer,
        time_ms: r.head.time_ms,
    }
}

fn filter_of(kvs: &[pb::KeyValue]) -> Result<TxnFilter> {
    let pairs: Vec<(String, String)> = kvs.iter().map(|kv| (kv.key.clone(), kv.value.clone())).collect();
    Ok(TxnFilter::parse(&pairs, chrono::Local::now())?)
}

type Event = std::result::Result<pb::TailTxnEvent, Status>;
type TailStream = Pin<Box<dyn Stream<Item = Event> + Send>>;

fn row_event(r: &TxnRow) -> Event {
    Ok(pb::TailTxnEvent { event: Some(pb::tail_txn_event::Event::Row(convert::txn(r))) })
}

/// Sends the stored rows after `after`; returns the last id sent, or None
/// when the subscriber has gone.
async fn replay(
    store: &dyn Store,
    filter: &TxnFilter,
    mut after: i64,
    tx: &mpsc::Sender<Event>,
) -> Option<i64> {
    loop {
        let q = TxnQuery { filter: TxnFilter { limit: PAGE, ..filter.clone() }, after_id: Some(after) };
        let rows = match store.list_txn(&q).await {
            Ok(r) => r,
            Err(e) => {
                let _ = tx.send(Err(Status::unavailable(format!("replaying the txn log: {e}")))).await;
                return None;
            }
        };
        for r in &rows {
            tx.send(row_event(r)).await.ok()?;
            after = after.max(r.id);
        }
        if (rows.len() as i64) < PAGE {
            return Some(after);
        }
    }
}

/// Forwards live rows; a subscriber that falls behind the broadcast is told
/// so and caught up from the store, with no gap and no duplicate.
async fn tail(
    hub: Arc<Hub>,
    mut rx: broadcast::Receiver<Arc<TxnRow>>,
    filter: TxnFilter,
    after: Option<i64>,
    tx: mpsc::Sender<Event>,
) {
    let store = hub.store().cloned();
    let mut last = after;
    if let (Some(a), Some(s)) = (after, &store) {
        match replay(s.as_ref(), &filter, a, &tx).await {
            Some(l) => last = Some(l),
            None => return,
        }
    }
    loop {
        match rx.recv().await {
            Ok(row) => {
                if last.is_some_and(|l| row.id <= l) {
                    continue;
                }
                last = Some(row.id);
                if filter.matches(&view(&row)) && tx.send(row_event(&row)).await.is_err() {
                    return;
                }
            }
            Err(broadcast::error::RecvError::Lagged(n)) => {
                let note = format!("fell {n} rows behind the live stream; resuming from the store");
                let lagged = pb::TailTxnEvent { event: Some(pb::tail_txn_event::Event::Lagged(note)) };
                if tx.send(Ok(lagged)).await.is_err() {
                    return;
                }
                if let (Some(l), Some(s)) = (last, &store) {
                    match replay(s.as_ref(), &filter, l, &tx).await {
                        Some(l) => last = Some(l),
                        None => return,
                    }
                }
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

#[tonic::async_trait]
impl Audit for AuditApi {
    async fn list_txn(
        &self,
        req: Request<pb::ListRequest>,
    ) -> std::result::Result<Response<pb::ListTxnResponse>, Status> {
        let hub = self.gate.hub.clone();
        self.gate
            .run("/spur.v1.Audit/ListTxn", req, |_, r| async move {
                let filter = filter_of(&r.filter)?;
                let rows = match hub.store() {
                    Some(s) => s.list_txn(&TxnQuery { filter, after_id: None }).await?,
                    None => vec![],
                };
                Ok((pb::ListTxnResponse { rows: rows.iter().map(convert::txn).collect() }, vec![]))
            })
            .await
    }

    type TailTxnStream = TailStream;

    async fn tail_txn(
        &self,
        req: Request<pb::TailTxnRequest>,
    ) -> std::result::Result<Response<TailStream>, Status> {
        let hub = self.gate.hub.clone();
        self.gate
            .run("/spur.v1.Audit/TailTxn", req, |_, r| async move {
                let filter = filter_of(&r.filter)?;
                if r.after_id.is_some_and(|a| a < 0) {
                    return Err(Error::invalid("after_id", "must be 0 or more"));
                }
                // Subscribe before replaying so no row commits unseen in between.
                let rx = hub.subscribe();
                let (tx, out) = mpsc::channel(256);
                tokio::spawn(tail(hub, rx, filter, r.after_id, tx));
                Ok((Box::pin(tokio_stream::wrappers::ReceiverStream::new(out)) as TailStream, vec![]))
            })
            .await
    }
}
