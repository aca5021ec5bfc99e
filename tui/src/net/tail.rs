//! One subscription to the txn log: fill from `ListTxn`, then `TailTxn`
//! after the last row, forwarding rows in batches.
//!
//! Batching is what keeps a busy log smooth: the app redraws once per
//! message, so rows that arrive within [`WINDOW`] of each other travel
//! together (at 200 rows/s that is ~20 redraws a second, not 200).

use crate::model::action::{Msg, TailSpec};
use crate::model::audit::FILL;
use spur_client::conn::Svc;
use spur_proto::v1::audit_client::AuditClient;
use spur_proto::v1::tail_txn_event::Event;
use spur_proto::v1::{KeyValue, ListTxnRequest, TailTxnEvent, TailTxnRequest, TxnRow};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;
use tonic::Status;

pub type Client = AuditClient<Svc>;

/// How long a batch waits for more rows after its first.
const WINDOW: Duration = Duration::from_millis(50);
/// A batch is sent early when it gets this big (a replay after a long absence).
const MAX_BATCH: usize = 1_000;

#[derive(Default)]
struct Batch {
    rows: Vec<TxnRow>,
    lagged: Option<String>,
}

impl Batch {
    fn add(&mut self, ev: TailTxnEvent) {
        match ev.event {
            Some(Event::Row(r)) => self.rows.push(r),
            Some(Event::Lagged(note)) => self.lagged = Some(note),
            None => {}
        }
    }
}

fn is_limit(key: &str) -> bool {
    key.eq_ignore_ascii_case("limit")
}

/// Run one subscription until the stream ends (Ok) or fails (the status:
/// PermissionDenied for a caller below Operator, Unavailable when the
/// controller went away). Returns Ok too when the app has hung up.
pub async fn run(mut client: Client, spec: TailSpec, msgs: UnboundedSender<Msg>) -> Result<(), Status> {
    let TailSpec { sub, filter, after_id } = spec;
    // limit= sizes the fill only; the tail itself has no limit.
    let pairs: Vec<KeyValue> =
        filter.iter().filter(|(k, _)| !is_limit(k)).map(|(k, v)| KeyValue::new(k, v)).collect();
    let after = match after_id {
        Some(a) => a,
        None => {
            let mut list = pairs.clone();
            match filter.iter().find(|(k, _)| is_limit(k)) {
                Some((k, v)) => list.push(KeyValue::new(k, v)),
                None => list.push(KeyValue::new("limit", &FILL.to_string())),
            }
            // The newest page is enough to fill the pane; the tail carries on from it.
            let req = ListTxnRequest { filter: list, before_id: None };
            let rows = client.list_txn(req).await?.into_inner().rows;
            // 0 for an empty list, so rows committed since the list are replayed, not lost.
            let last = rows.iter().map(|r| r.id).max().unwrap_or(0);
            if msgs.send(Msg::AuditRows { sub, rows, lagged: None }).is_err() {
                return Ok(());
            }
            last
        }
    };
    let req = TailTxnRequest { filter: pairs, after_id: Some(after) };
    let mut stream = client.tail_txn(req).await?.into_inner();
    loop {
        let Some(first) = stream.message().await? else { return Ok(()) };
        let mut batch = Batch::default();
        batch.add(first);
        let deadline = Instant::now() + WINDOW;
        let mut end = None;
        while batch.rows.len() < MAX_BATCH {
            // `message()` keeps its progress in the stream, so timing it out loses nothing.
            match tokio::time::timeout_at(deadline, stream.message()).await {
                Err(_) => break,
                Ok(Ok(Some(ev))) => batch.add(ev),
                Ok(Ok(None)) => {
                    end = Some(Ok(()));
                    break;
                }
                Ok(Err(s)) => {
                    end = Some(Err(s));
                    break;
                }
            }
        }
        if msgs.send(Msg::AuditRows { sub, rows: batch.rows, lagged: batch.lagged }).is_err() {
            return Ok(());
        }
        if let Some(end) = end {
            return end;
        }
    }
}
