//! A store made by the builds before the schema moved to
//! `daemon/src/store/migrations/` opens unchanged, on both back-ends: its
//! records and txn rows are read back, no migration re-runs, and it takes
//! writes. The old schema is written here as those builds ran it.

use spur_daemon::store::{self, TxnQuery};
use spur_tests::db::{Backend, fresh_url};
use sqlx::Executor;
use std::str::FromStr;

const OLD_SQLITE: &[&str] = &[
    "CREATE TABLE entities (kind TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (kind, name))",
    "CREATE TABLE txn (id INTEGER PRIMARY KEY AUTOINCREMENT, time_ms BIGINT NOT NULL, actor TEXT NOT NULL,
       actor_uid BIGINT, verified BOOLEAN NOT NULL, peer TEXT NOT NULL, action TEXT NOT NULL, entity TEXT NOT NULL,
       name TEXT NOT NULL, outcome TEXT NOT NULL, info TEXT NOT NULL, source TEXT NOT NULL)",
    "CREATE INDEX txn_time ON txn (time_ms)",
];

const OLD_POSTGRES: &[&str] = &[
    "CREATE TABLE entities (kind TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (kind, name))",
    "CREATE TABLE txn (id BIGSERIAL PRIMARY KEY, time_ms BIGINT NOT NULL, actor TEXT NOT NULL,
       actor_uid BIGINT, verified BOOLEAN NOT NULL, peer TEXT NOT NULL, action TEXT NOT NULL, entity TEXT NOT NULL,
       name TEXT NOT NULL, outcome TEXT NOT NULL, info TEXT NOT NULL, source TEXT NOT NULL)",
    "CREATE INDEX txn_time ON txn (time_ms)",
];

/// Version 1 recorded, one record and one txn row, as the old runner left them.
const OLD_DATA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    "INSERT INTO schema_version (version) VALUES (1)",
    "INSERT INTO entities (kind, name, data) VALUES ('note', 'kept', '{\"v\":1}')",
    "INSERT INTO txn (time_ms, actor, actor_uid, verified, peer, action, entity, name, outcome, info, source) \
     VALUES (1000, 'old', NULL, FALSE, 'p', 'create', 'qos', 'kept', 'success', '{}', 'api')",
];

/// Runs `sql` on the database at `url` directly; returns the schema versions recorded.
async fn raw(b: Backend, url: &str, sql: &[&str]) -> Vec<i64> {
    let versions = "SELECT CAST(version AS BIGINT) FROM schema_version ORDER BY version";
    match b {
        Backend::Sqlite => {
            let opts = sqlx::sqlite::SqliteConnectOptions::from_str(url).unwrap().create_if_missing(true);
            let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
            for s in sql {
                pool.execute(*s).await.unwrap();
            }
            let v = sqlx::query_scalar(versions).fetch_all(&pool).await.unwrap();
            pool.close().await;
            v
        }
        Backend::Postgres => {
            let pool = sqlx::PgPool::connect(url).await.unwrap();
            for s in sql {
                pool.execute(*s).await.unwrap();
            }
            let v = sqlx::query_scalar(versions).fetch_all(&pool).await.unwrap();
            pool.close().await;
            v
        }
    }
}

async fn an_old_store_opens_unchanged(b: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let Some(url) = fresh_url(b, dir.path()).await else { return };
    let old = if b == Backend::Sqlite { OLD_SQLITE } else { OLD_POSTGRES };
    assert_eq!(raw(b, &url, &[old, OLD_DATA].concat()).await, [1]);

    let s = store::open(&url).await.expect("the old store opens");
    let docs = s.load("note").await.unwrap();
    assert_eq!(docs, [("kept".to_string(), serde_json::json!({"v": 1}))]);
    let mut q = TxnQuery::default();
    q.filter.limit = 10;
    let rows = s.list_txn(&q).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].head.actor.as_str(), rows[0].name.as_str()), ("old", "kept"));
    s.put("note", &[("new".to_string(), Some(serde_json::json!({"v": 2})))]).await.unwrap();
    s.close().await;

    // The later versions were applied once on top of version 1 (2: the leader lease).
    assert_eq!(raw(b, &url, &[]).await, [1, 2], "each migration ran once");
    // Reopened: no migration re-runs, both records there.
    let s = store::open(&url).await.unwrap();
    assert_eq!(s.load("note").await.unwrap().len(), 2);
    s.close().await;
    assert_eq!(raw(b, &url, &[]).await, [1, 2], "no migration re-ran");
}

#[tokio::test]
async fn sqlite_an_old_store_opens_unchanged() {
    an_old_store_opens_unchanged(Backend::Sqlite).await
}

#[tokio::test]
async fn postgres_an_old_store_opens_unchanged() {
    an_old_store_opens_unchanged(Backend::Postgres).await
}
