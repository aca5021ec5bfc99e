//! The production store: PostgreSQL, which several controllers can share.
//! A mutation takes a transaction-scoped advisory lock on its record, so
//! concurrent writers (even for a record that does not exist yet) serialize.
//! A leader's store is fenced (`fence.rs`): each write transaction first
//! checks that the leader's epoch is still the store's.

use super::fence::{self, Fence};
use super::sql::store_common;
use crate::error::Result;
use sqlx::Connection;
use sqlx::postgres::{PgConnection, PgPool, PgPoolOptions};
use std::sync::Arc;
use std::time::Duration;

store_common!(sqlx::Postgres, sqlx::postgres::PgRow);

/// How long a first connection may take before the open counts as failed.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

pub struct PgStore {
    pool: PgPool,
    /// None: writes are unconditional (one controller's tools and tests).
    fence: Option<Arc<Fence>>,
}

impl PgStore {
    pub async fn open(url: &str) -> Result<Self> {
        Self::open_fenced(url, None).await
    }

    /// Opens the store; with a fence, every write checks it first.
    pub async fn open_fenced(url: &str, fence: Option<Arc<Fence>>) -> Result<Self> {
        // One direct connection first: a pool retries a refused connection
        // until its acquire timeout and then reports only "timed out", while
        // spurctld, waiting for the database, should say why within a moment.
        let probe =
            tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect(url)).await.map_err(|_| {
                crate::error::Error::Unavailable(format!("no answer within {}s", CONNECT_TIMEOUT.as_secs()))
            })??;
        let _ = probe.close().await;
        let mut opts: sqlx::postgres::PgConnectOptions = url.parse()?;
        if let Some(f) = fence.as_ref().filter(|f| f.stall_secs > 0) {
            // A leader stopped mid-write must not hold the lease row's share
            // lock (which a takeover waits for) for long: fence.rs.
            opts = opts.options([("idle_in_transaction_session_timeout", format!("{}s", f.stall_secs))]);
        }
        let pool = PgPoolOptions::new()
            .max_connections(8)
            // Short: a write waiting for a connection to a database that went
            // away should fail fast (Unavailable), not hold its caller.
            .acquire_timeout(Duration::from_secs(3))
            .connect_with(opts)
            .await?;
        // Two controllers starting at once must not both run the migrations.
        let mut conn = pool.acquire().await?;
        sqlx::query("SELECT pg_advisory_lock(6817)").execute(&mut *conn).await?;
        let migrated = migrate(&pool, |m| m.postgres).await;
        sqlx::query("SELECT pg_advisory_unlock(6817)").execute(&mut *conn).await?;
        migrated?;
        Ok(PgStore { pool, fence })
    }

    /// A write transaction, its fence checked.
    async fn begin(&self) -> Result<sqlx::Transaction<'static, sqlx::Postgres>> {
        let mut tx = self.pool.begin().await?;
        if let Some(f) = &self.fence {
            let stored: Option<i64> = sqlx::query_scalar(fence::READ_EPOCH).fetch_optional(&mut *tx).await?;
            f.check(stored)?;
        }
        Ok(tx)
    }
}

#[async_trait::async_trait]
impl super::Store for PgStore {
    fn backend(&self) -> &'static str {
        "postgresql"
    }

    async fn load(&self, kind: &str) -> Result<Vec<(String, serde_json::Value)>> {
        load_kind(&self.pool, kind).await
    }

    async fn load_each(&self, kind: &str, visit: super::Visit<'_>) -> Result<usize> {
        each_kind(&self.pool, kind, visit).await
    }

    async fn load_page(&self, kind: &str, after: &str, limit: i64) -> Result<Vec<(String, String)>> {
        page_kind(&self.pool, kind, after, limit).await
    }

    async fn mutate(
        &self,
        kind: &str,
        name: &str,
        f: super::Mutator,
        head: TxnHead,
    ) -> Result<(Written, TxnRow)> {
        let mut tx = self.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(format!("{kind}:{name}"))
            .execute(&mut *tx)
            .await?;
        let out = mutate_in(&mut tx, kind, name, f, head).await?;
        tx.commit().await?;
        Ok(out)
    }

    async fn insert_txns(&self, rows: &[TxnRow]) -> Result<Vec<i64>> {
        let mut tx = self.begin().await?;
        let ids = insert_txns_tx(&mut tx, rows).await?;
        tx.commit().await?;
        Ok(ids)
    }

    async fn list_txn(&self, q: &crate::store::TxnQuery) -> Result<Vec<TxnRow>> {
        list_txn_from(&self.pool, q).await
    }

    async fn delete_txn_before(&self, ms: i64) -> Result<u64> {
        let mut tx = self.begin().await?;
        let n = delete_txn_before_tx(&mut tx, ms).await?;
        tx.commit().await?;
        Ok(n)
    }

    async fn commit_raw(
        &self,
        kind: &str,
        docs: &[(String, Option<String>)],
        rows: &[TxnRow],
    ) -> Result<Vec<i64>> {
        let mut tx = self.begin().await?;
        let ids = put_tx(&mut tx, kind, docs, rows).await?;
        tx.commit().await?;
        Ok(ids)
    }

    async fn close(&self) {
        self.pool.close().await;
    }
}
