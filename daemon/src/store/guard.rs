//! Every store call, bounded: a database that went away (stopped, cut off,
//! a pool with no connection to give) fails the call within [`OP_TIMEOUT`]
//! as `Unavailable`, naming the database, instead of hanging its caller.
//! Callers do not apply what failed, so memory never gets ahead of the
//! store. A timed-out commit is ambiguous (it may have landed): the caller
//! was told it failed, and a restart shows whatever the store holds.

use super::{Mutator, Store, TxnHead, TxnQuery, TxnRow, Written};
use crate::error::{Error, Result};
use serde_json::Value;
use std::future::Future;
use std::time::Duration;

/// The longest one write or query may take.
pub const OP_TIMEOUT: Duration = Duration::from_secs(5);
/// Whole-table reads and purges (start-up loads of every job, retention).
pub const BULK_TIMEOUT: Duration = Duration::from_secs(120);

pub struct Guarded {
    inner: Box<dyn Store>,
    /// The database as logs may show it (no password).
    db: String,
}

impl Guarded {
    pub fn new(inner: Box<dyn Store>, url: &str) -> Guarded {
        Guarded { inner, db: super::redact(url) }
    }

    async fn bounded<T>(&self, f: impl Future<Output = Result<T>>) -> Result<T> {
        self.within(OP_TIMEOUT, f).await
    }

    async fn within<T>(&self, limit: Duration, f: impl Future<Output = Result<T>>) -> Result<T> {
        match tokio::time::timeout(limit, f).await {
            Ok(Err(Error::Unavailable(m))) => Err(self.unreachable(&m)),
            Ok(r) => r,
            Err(_) => Err(self.unreachable(&format!("no answer within {}s", limit.as_secs()))),
        }
    }

    fn unreachable(&self, why: &str) -> Error {
        Error::Unavailable(format!("the accounting database {} is unreachable ({why}); retry later", self.db))
    }
}

#[async_trait::async_trait]
impl Store for Guarded {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    async fn load(&self, kind: &str) -> Result<Vec<(String, Value)>> {
        self.within(BULK_TIMEOUT, self.inner.load(kind)).await
    }
    async fn load_each(&self, kind: &str, visit: super::Visit<'_>) -> Result<usize> {
        self.within(BULK_TIMEOUT, self.inner.load_each(kind, visit)).await
    }
    async fn load_page(&self, kind: &str, after: &str, limit: i64) -> Result<Vec<(String, String)>> {
        self.bounded(self.inner.load_page(kind, after, limit)).await
    }
    async fn mutate(&self, kind: &str, name: &str, f: Mutator, head: TxnHead) -> Result<(Written, TxnRow)> {
        self.bounded(self.inner.mutate(kind, name, f, head)).await
    }
    async fn commit_raw(
        &self,
        kind: &str,
        docs: &[(String, Option<String>)],
        rows: &[TxnRow],
    ) -> Result<Vec<i64>> {
        self.bounded(self.inner.commit_raw(kind, docs, rows)).await
    }
    async fn insert_txns(&self, rows: &[TxnRow]) -> Result<Vec<i64>> {
        self.bounded(self.inner.insert_txns(rows)).await
    }
    async fn list_txn(&self, q: &TxnQuery) -> Result<Vec<TxnRow>> {
        self.bounded(self.inner.list_txn(q)).await
    }
    async fn delete_txn_before(&self, ms: i64) -> Result<u64> {
        self.within(BULK_TIMEOUT, self.inner.delete_txn_before(ms)).await
    }
    async fn close(&self) {
        self.inner.close().await
    }
}
