//! The production store: PostgreSQL, which several controllers can share.
//! A mutation takes a transaction-scoped advisory lock on its record, so
//! concurrent writers (even for a record that does not exist yet) serialize.

use super::sql::store_common;
use crate::error::Result;
use sqlx::Connection;
use sqlx::postgres::{PgConnection, PgPool, PgPoolOptions};
use std::time::Duration;

store_common!(sqlx::Postgres, sqlx::postgres::PgRow);

/// How long a first connection may take before the open counts as failed.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    pub async fn open(url: &str) -> Result<Self> {
        // One direct connection first: a pool retries a refused connection
        // until its acquire timeout and then reports only "timed out", while
        // spurctld, waiting for the database, should say why within a moment.
        let probe =
            tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect(url)).await.map_err(|_| {
                crate::error::Error::Unavailable(format!("no answer within {}s", CONNECT_TIMEOUT.as_secs()))
            })??;
        let _ = probe.close().await;
        let pool = PgPoolOptions::new()
            .max_connections(8)
            // Short: a write waiting for a connection to a database that went
            // away should fail fast (Unavailable), not hold its caller.
            .acquire_timeout(Duration::from_secs(3))
            .connect(url)
            .await?;
        // Two controllers starting at once must not both run the migrations.
        let mut conn = pool.acquire().await?;
        sqlx::query("SELECT pg_advisory_lock(6817)").execute(&mut *conn).await?;
        let migrated = migrate(&pool, |m| m.postgres).await;
        sqlx::query("SELECT pg_advisory_unlock(6817)").execute(&mut *conn).await?;
        migrated?;
        Ok(PgStore { pool })
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
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(format!("{kind}:{name}"))
            .execute(&mut *tx)
            .await?;
        let out = mutate_in(&mut tx, kind, name, f, head).await?;
        tx.commit().await?;
        Ok(out)
    }

    async fn insert_txns(&self, rows: &[TxnRow]) -> Result<Vec<i64>> {
        insert_txns_in(&self.pool, rows).await
    }

    async fn list_txn(&self, q: &crate::store::TxnQuery) -> Result<Vec<TxnRow>> {
        list_txn_from(&self.pool, q).await
    }

    async fn delete_txn_before(&self, ms: i64) -> Result<u64> {
        delete_txn_before_in(&self.pool, ms).await
    }

    async fn commit_raw(
        &self,
        kind: &str,
        docs: &[(String, Option<String>)],
        rows: &[TxnRow],
    ) -> Result<Vec<i64>> {
        put_in(&self.pool, kind, docs, rows).await
    }

    async fn close(&self) {
        self.pool.close().await;
    }
}
