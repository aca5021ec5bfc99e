//! The Audit service: `sacctmgr show txn` and the live tail.

use super::convert;
use super::gate::Gate;
use super::limits::TXN_PAGE_BYTES;
use super::path::audit as path;
use crate::audit::Hub;
use crate::error::{Error, Result};
use crate::store::{Store, TxnQuery, TxnRow};
use prost::Message;
use spur_proto::v1 as pb;
use spur_proto::v1::audit_server::Audit;
use spur_vocab::txn::{RowView, TxnFilter};
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

/// Rows per page when replaying from the store.
const PAGE: i64 = 1000;
/// Rows per store read while filling a ListTxn answer: with Info capped at
/// 4 KiB, about a megabyte in memory at a time.
const LIST_PAGE: i64 = 256;

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

pub(super) fn filter_of(kvs: &[pb::KeyValue]) -> Result<TxnFilter> {
    let pairs: Vec<(String, String)> = kvs.iter().map(|kv| (kv.key.clone(), kv.value.clone())).collect();
    Ok(TxnFilter::parse(&pairs, chrono::Local::now())?)
}

type Event = std::result::Result<pb::TailTxnEvent, Status>;
type TailStream = Pin<Box<dyn Stream<Item = Event> + Send>>;

fn row_event(r: &TxnRow) -> pb::TailTxnEvent {
    pb::TailTxnEvent { event: Some(pb::tail_txn_event::Event::Row(convert::txn(r))) }
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
        let q = TxnQuery {
            filter: TxnFilter { limit: PAGE, ..filter.clone() },
            after_id: Some(after),
            ..TxnQuery::default()
        };
        let rows = match store.list_txn(&q).await {
            Ok(r) => r,
            Err(e) => {
                let _ = tx.send(Err(Status::unavailable(format!("replaying the txn log: {e}")))).await;
                return None;
            }
        };
        for r in &rows {
            super::streams::send(tx, row_event(r)).await.then_some(())?;
            after = after.max(r.id);
        }
        if (rows.len() as i64) < PAGE {
            return Some(after);
        }
    }
}

/// The newest `filter.limit` rows below `before`, read from the store a page
/// at a time and cut where the answer would pass [`TXN_PAGE_BYTES`]; the
/// cut says where the next page starts.
async fn list_page(store: &dyn Store, filter: TxnFilter, before: Option<i64>) -> Result<pb::ListTxnResponse> {
    let mut newest_first: Vec<pb::TxnRow> = vec![];
    let (mut bytes, mut before, mut next_before_id) = (0usize, before, None);
    'fill: while (newest_first.len() as i64) < filter.limit {
        let want = LIST_PAGE.min(filter.limit - newest_first.len() as i64);
        let q = TxnQuery {
            filter: TxnFilter { limit: want, ..filter.clone() },
            before_id: before,
            after_id: None,
        };
        let rows = store.list_txn(&q).await?;
        for r in rows.iter().rev() {
            let row = convert::txn(r);
            // The field's tag and length prefix as well as the row.
            let size = row.encoded_len() + 8;
            if bytes + size > TXN_PAGE_BYTES && !newest_first.is_empty() {
                next_before_id = newest_first.last().map(|r| r.id);
                break 'fill;
            }
            bytes += size;
            newest_first.push(row);
        }
        match rows.first() {
            Some(oldest) if (rows.len() as i64) == want => before = Some(oldest.id),
            _ => break,
        }
    }
    newest_first.reverse();
    Ok(pb::ListTxnResponse { rows: newest_first, next_before_id })
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
        let next = tokio::select! {
            // The caller hung up: its slot goes now, not at the next row.
            _ = tx.closed() => return,
            r = rx.recv() => r,
        };
        match next {
            Ok(row) => {
                if last.is_some_and(|l| row.id <= l) {
                    continue;
                }
                last = Some(row.id);
                if filter.matches(&view(&row)) && !super::streams::send(&tx, row_event(&row)).await {
                    return;
                }
            }
            Err(broadcast::error::RecvError::Lagged(n)) => {
                let note = format!("fell {n} rows behind the live stream; resuming from the store");
                let lagged = pb::TailTxnEvent { event: Some(pb::tail_txn_event::Event::Lagged(note)) };
                if !super::streams::send(&tx, lagged).await {
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
        req: Request<pb::ListTxnRequest>,
    ) -> std::result::Result<Response<pb::ListTxnResponse>, Status> {
        let hub = self.gate.hub.clone();
        self.gate
            .run(path::LIST_TXN, req, |_, r| async move {
                let filter = filter_of(&r.filter)?;
                let page = match hub.store() {
                    Some(s) => list_page(s.as_ref(), filter, r.before_id).await?,
                    None => pb::ListTxnResponse::default(),
                };
                Ok((page, vec![]))
            })
            .await
    }

    type TailTxnStream = TailStream;

    async fn tail_txn(
        &self,
        req: Request<pb::TailTxnRequest>,
    ) -> std::result::Result<Response<TailStream>, Status> {
        let hub = self.gate.hub.clone();
        let hub_streams = self.gate.streams.clone();
        self.gate
            .run(path::TAIL_TXN, req, |ctx, r| async move {
                let filter = filter_of(&r.filter)?;
                if r.after_id.is_some_and(|a| a < 0) {
                    return Err(Error::invalid("after_id", "must be 0 or more"));
                }
                let slot = hub_streams.open(&ctx.caller.user)?;
                // Subscribe before replaying so no row commits unseen in between.
                let rx = hub.subscribe();
                let (tx, out) = mpsc::channel(256);
                tokio::spawn(async move {
                    tail(hub, rx, filter, r.after_id, tx).await;
                    drop(slot);
                });
                Ok((Box::pin(tokio_stream::wrappers::ReceiverStream::new(out)) as TailStream, vec![]))
            })
            .await
    }
}
