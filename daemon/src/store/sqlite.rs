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
        let writer = SqlitePoolOptions::new().max_connections(1).connect_with(opts.clone()).await?;
        migrate(&writer, |m| m.sqlite).await?;
        let reader = SqlitePoolOptions::new().max_connections(4).connect_with(opts.read_only(true)).await?;
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

    async fn mutate(
        &self,
        kind: &str,
        name: &str,
        f: super::Mutator,
        head: TxnHead,
    ) -> Result<(Written, i64)> {
        let mut tx = self.writer.begin().await?;
        let out = mutate_in(&mut tx, kind, name, f, head).await?;
        tx.commit().await?;
        Ok(out)
    }

    async fn insert_txn(&self, row: &TxnRow) -> Result<i64> {
        insert_txn_in(&self.writer, row).await
    }

    async fn list_txn(&self, after_id: i64, limit: i64) -> Result<Vec<TxnRow>> {
        list_txn_from(&self.reader, after_id, limit).await
    }

    async fn close(&self) {
        self.reader.close().await;
        self.writer.close().await;
    }
}
