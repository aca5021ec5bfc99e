//! Every txn row passes through the hub once it is durable, so a tail
//! subscriber sees it within milliseconds of its commit.

use crate::store::{Store, TxnRow};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{broadcast, oneshot};

/// Delays between the attempts of an after-the-fact write: three retries
/// over about half a second.
const RETRY_DELAYS: [Duration; 3] =
    [Duration::from_millis(100), Duration::from_millis(150), Duration::from_millis(250)];

/// How many rows a subscriber may fall behind before it is told so and
/// resumes from the store.
const TAIL_BUFFER: usize = 4096;

/// After-the-fact rows waiting for the current group commit.
#[derive(Default)]
struct Queue {
    waiting: Vec<(Vec<TxnRow>, oneshot::Sender<()>)>,
    writing: bool,
}

pub struct Hub {
    store: Option<Arc<dyn Store>>,
    queue: std::sync::Mutex<Queue>,
    tx: broadcast::Sender<Arc<TxnRow>>,
    written: AtomicU64,
    dropped: AtomicU64,
}

impl Hub {
    pub fn new(store: Option<Arc<dyn Store>>) -> Hub {
        let (tx, _) = broadcast::channel(TAIL_BUFFER);
        Hub { store, queue: Default::default(), tx, written: AtomicU64::new(0), dropped: AtomicU64::new(0) }
    }

    pub fn store(&self) -> Option<&Arc<dyn Store>> {
        self.store.as_ref()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<TxnRow>> {
        self.tx.subscribe()
    }

    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// A row already committed in the same transaction as its change.
    pub fn committed(&self, row: TxnRow) {
        self.written.fetch_add(1, Ordering::Relaxed);
        let _ = self.tx.send(Arc::new(row));
    }

    /// Writes a row after the fact, retrying; see [`Hub::record_all`].
    pub async fn record(&self, row: TxnRow) {
        self.record_all(vec![row]).await
    }

    /// Writes rows after the fact in one transaction, retrying (Name and
    /// Info cut as [`TxnRow::clipped`] says); rows that
    /// still fail are counted as dropped and each is logged with its actor,
    /// action and entity. Without a store (accounting off) there is no txn
    /// table to write to.
    pub async fn record_all(&self, rows: Vec<TxnRow>) {
        if self.store.is_none() || rows.is_empty() {
            return;
        }
        let rows: Vec<TxnRow> = rows.into_iter().map(TxnRow::clipped).collect();
        // Group commit: the first writer to arrive writes everything queued
        // meanwhile in one transaction; the others wait for its commit.
        let (ack, done) = oneshot::channel();
        let lead = {
            let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            q.waiting.push((rows, ack));
            !std::mem::replace(&mut q.writing, true)
        };
        if lead {
            loop {
                let batch = {
                    let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                    if q.waiting.is_empty() {
                        q.writing = false;
                        break;
                    }
                    std::mem::take(&mut q.waiting)
                };
                self.write_batch(batch).await;
            }
        }
        let _ = done.await;
    }

    async fn write_batch(&self, batch: Vec<(Vec<TxnRow>, oneshot::Sender<()>)>) {
        let Some(store) = &self.store else { return };
        let (groups, acks): (Vec<Vec<TxnRow>>, Vec<oneshot::Sender<()>>) = batch.into_iter().unzip();
        let rows: Vec<TxnRow> = groups.into_iter().flatten().collect();
        let mut last_err = String::new();
        let mut written = false;
        for delay in std::iter::once(Duration::ZERO).chain(RETRY_DELAYS) {
            tokio::time::sleep(delay).await;
            match store.insert_txns(&rows).await {
                Ok(ids) => {
                    for row in crate::store::with_ids(rows.clone(), ids) {
                        self.committed(row);
                    }
                    written = true;
                    break;
                }
                Err(e) => {
                    last_err = e.to_string();
                    // Down, not busy: retrying would only hold the request that waits on this row.
                    if matches!(e, crate::error::Error::Unavailable(_)) {
                        break;
                    }
                }
            }
        }
        if !written {
            for row in &rows {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                tracing::error!(
                    actor = %row.head.actor,
                    action = %row.action,
                    entity = %format!("{}:{}", row.entity, row.name),
                    outcome = %row.outcome,
                    error = %last_err,
                    "audit row dropped after retries"
                );
            }
        }
        for a in acks {
            let _ = a.send(());
        }
    }

    /// Deletes rows older than `days` days, periodically, for the life of the process.
    pub fn spawn_retention(self: &Arc<Self>, days: u64) -> Option<tokio::task::JoinHandle<()>> {
        let store = self.store.clone()?;
        if days == 0 {
            return None;
        }
        Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(3600));
            loop {
                tick.tick().await;
                let days_ms = i64::try_from(days.saturating_mul(86_400_000)).unwrap_or(i64::MAX);
                let cutoff = crate::store::now_ms().saturating_sub(days_ms);
                match store.delete_txn_before(cutoff).await {
                    Ok(n) if n > 0 => tracing::info!(rows = n, days, "txn retention purged old rows"),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "txn retention failed; will retry"),
                }
            }
        }))
    }
}
