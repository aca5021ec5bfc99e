//! Group commit: concurrent writers of one kind share a transaction, so many
//! small durable writes (job submits) cost one fsync between them. A write
//! is acknowledged only after the transaction holding it has committed.

use super::Store;
use crate::error::{Error, Result};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// The most documents one transaction takes.
const MAX_BATCH: usize = 1024;

type Request = (Vec<(String, Option<String>)>, oneshot::Sender<Result<()>>);

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
                let mut n = batch[0].0.len();
                while n < MAX_BATCH {
                    match rx.try_recv() {
                        Ok(r) => {
                            n += r.0.len();
                            batch.push(r);
                        }
                        Err(_) => break,
                    }
                }
                let (docs, acks): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
                let docs: Vec<(String, Option<String>)> = docs.into_iter().flatten().collect();
                let result = store.put_raw(kind, &docs).await;
                // The batch's memory goes before the waiters run on.
                drop(docs);
                for ack in acks {
                    let _ = ack.send(result.clone());
                }
            }
        });
        BatchWriter { tx }
    }

    /// Writes the documents; returns once they are durable.
    pub async fn put(&self, docs: Vec<(String, Option<String>)>) -> Result<()> {
        let (ack, done) = oneshot::channel();
        self.tx
            .send((docs, ack))
            .await
            .map_err(|_| Error::Unavailable("the store writer has stopped".into()))?;
        done.await.map_err(|_| Error::Unavailable("the store writer has stopped".into()))?
    }
}
