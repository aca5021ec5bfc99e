//! The embedded store: one SQLite file in WAL mode with `synchronous=FULL`,
//! so an acknowledged write is on disk. One writer connection serializes
//! writes (which also makes the read-modify-write of a mutation atomic);
//! reads use a separate pool.

use super::sql::store_common;
use crate::error::Result;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use std::str::FromStr;
use std::time::Duration;

store_common!(sqlx::Sqlite, sqlx::sqlite::SqliteRow);

pub struct SqliteStore {
    writer: SqlitePool,
    reader: SqlitePool,
}

impl SqliteStore {
    pub async fn open(path: &str) -> Result<Self> {
        let opts = SqliteConnectOptions::from_str(&format!("sqlite://{path}"))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        // No ping before each use: the connections are in this process, and
        // the ping was one more hand-off to the worker thread per commit.
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .connect_with(opts.clone())
            .await?;
        migrate(&writer, |m| m.sqlite).await?;
        let reader = SqlitePoolOptions::new()
            .max_connections(4)
            .test_before_acquire(false)
            .connect_with(opts.read_only(true))
            .await?;
        Ok(SqliteStore { writer, reader })
    }
}

#[async_trait::async_trait]
impl super::Store for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    async fn load(&self, kind: &str) -> Result<Vec<(String, serde_json::Value)>> {
        load_kind(&self.reader, kind).await
    }

    async fn load_each(&self, kind: &str, visit: super::Visit<'_>) -> Result<usize> {
        each_kind(&self.reader, kind, visit).await
    }

    async fn load_page(&self, kind: &str, after: &str, limit: i64) -> Result<Vec<(String, String)>> {
        page_kind(&self.reader, kind, after, limit).await
    }

    async fn mutate(
        &self,
        kind: &str,
        name: &str,
        f: super::Mutator,
        head: TxnHead,
    ) -> Result<(Written, TxnRow)> {
        let mut tx = self.writer.begin().await?;
        let out = mutate_in(&mut tx, kind, name, f, head).await?;
        tx.commit().await?;
        Ok(out)
    }

    async fn insert_txns(&self, rows: &[TxnRow]) -> Result<Vec<i64>> {
        let mut tx = self.writer.begin().await?;
        let ids = insert_txns_tx(&mut tx, rows).await?;
        tx.commit().await?;
        Ok(ids)
    }

    async fn list_txn(&self, q: &crate::store::TxnQuery) -> Result<Vec<TxnRow>> {
        list_txn_from(&self.reader, q).await
    }

    async fn delete_txn_before(&self, ms: i64) -> Result<u64> {
        let mut tx = self.writer.begin().await?;
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
        let mut tx = self.writer.begin().await?;
        let ids = put_tx(&mut tx, kind, docs, rows).await?;
        tx.commit().await?;
        Ok(ids)
    }

    async fn close(&self) {
        self.reader.close().await;
        self.writer.close().await;
    }
}
