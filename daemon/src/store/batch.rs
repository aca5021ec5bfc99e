//! Group commit: concurrent writers of one kind share a transaction, so many
//! small durable writes (job submits) cost one fsync between them. A write
//! is acknowledged only after the transaction holding it has committed, with
//! the txn rows recording it (`audit/claim.rs`) in that same transaction.

use super::{Store, TxnRow, with_ids};
use crate::error::{Error, Result};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// The most documents one transaction takes.
const MAX_BATCH: usize = 1024;

struct Request {
    docs: Vec<(String, Option<String>)>,
    rows: Vec<TxnRow>,
    ack: oneshot::Sender<Result<Vec<TxnRow>>>,
}

#[derive(Clone)]
pub struct BatchWriter {
    tx: mpsc::Sender<Request>,
}

impl BatchWriter {
    pub fn spawn(store: Arc<dyn Store>, kind: &'static str) -> BatchWriter {
        let (tx, mut rx) = mpsc::channel::<Request>(4096);
        tokio::spawn(async move {
            while let Some(first) = rx.recv().await {
                let mut batch = vec![first];
                let mut n = batch[0].docs.len();
                while n < MAX_BATCH {
                    match rx.try_recv() {
                        Ok(r) => {
                            n += r.docs.len();
                            batch.push(r);
                        }
                        Err(_) => break,
                    }
                }
                let (mut docs, mut rows, mut acks) = (Vec::new(), Vec::new(), Vec::new());
                for r in batch {
                    docs.extend(r.docs);
                    acks.push((r.rows.len(), r.ack));
                    rows.extend(r.rows);
                }
                let result = store.commit_raw(kind, &docs, &rows).await.map(|ids| with_ids(rows, ids));
                // The batch's memory goes before the waiters run on.
                drop(docs);
                // Each writer gets its own rows back, as committed, in order.
                let (mut done, failed) = match result {
                    Ok(rows) => (rows.into_iter(), None),
                    Err(e) => (Vec::new().into_iter(), Some(e)),
                };
                for (count, ack) in acks {
                    let mine = match &failed {
                        Some(e) => Err(e.clone()),
                        None => Ok(done.by_ref().take(count).collect()),
                    };
                    let _ = ack.send(mine);
                }
            }
        });
        BatchWriter { tx }
    }

    /// Writes the documents; returns once they are durable.
    pub async fn put(&self, docs: Vec<(String, Option<String>)>) -> Result<()> {
        self.commit(docs, Vec::new()).await.map(drop)
    }

    /// Writes the documents and the txn rows recording them in one
    /// transaction; returns the rows, ids set, once they are durable.
    pub async fn commit(
        &self,
        docs: Vec<(String, Option<String>)>,
        rows: Vec<TxnRow>,
    ) -> Result<Vec<TxnRow>> {
        let (ack, done) = oneshot::channel();
        self.tx
            .send(Request { docs, rows, ack })
            .await
            .map_err(|_| Error::Unavailable("the store writer has stopped".into()))?;
        done.await.map_err(|_| Error::Unavailable("the store writer has stopped".into()))?
    }
}
