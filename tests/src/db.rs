//! One fresh database per test, so tests run in parallel on both back-ends.

use std::sync::atomic::{AtomicU32, Ordering};

pub const PG_ENV: &str = "SPUR_TEST_PG_URL";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The PostgreSQL server to test against. CI must provide one, so there a
/// missing variable fails instead of silently skipping half the suite.
pub fn pg_base_url() -> Option<String> {
    match std::env::var(PG_ENV) {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            assert!(
                std::env::var("CI").is_err(),
                "{PG_ENV} must name a PostgreSQL server when CI is set (see .ci/run)"
            );
            eprintln!("note: {PG_ENV} is not set; skipping the PostgreSQL half of this test");
            None
        }
    }
}

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A database URL for a fresh, empty database on `backend`, or None when
/// PostgreSQL is not available outside CI.
pub async fn fresh_url(backend: Backend, dir: &std::path::Path) -> Option<String> {
    match backend {
        Backend::Sqlite => Some(format!("sqlite://{}", dir.join("spur.db").display())),
        Backend::Postgres => {
            let base = pg_base_url()?;
            let name = format!(
                "spur_t_{}_{}_{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed),
                chrono_free_nanos()
            );
            let pool = sqlx::PgPool::connect(&base).await.expect("connect to SPUR_TEST_PG_URL");
            if !SWEPT.swap(true, Ordering::Relaxed) {
                sweep(&pool).await;
            }
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(&pool)
                .await
                .expect("create test database");
            pool.close().await;
            Some(with_database(&base, &name))
        }
    }
}

static SWEPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Drops the databases of test processes that have ended (named
/// `spur_t_PID_...`, PID no longer running), once per process: a machine
/// that runs the suite again and again would otherwise keep them all, and
/// PostgreSQL's start-up (fsync of every database) grows with them. A
/// database still open elsewhere is left for a later sweep.
async fn sweep(pool: &sqlx::PgPool) {
    let names: Vec<String> =
        sqlx::query_scalar("SELECT datname FROM pg_database WHERE datname LIKE 'spur\\_t\\_%'")
            .fetch_all(pool)
            .await
            .unwrap_or_default();
    for name in names {
        let pid = name.split('_').nth(2).and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|p| !std::path::Path::new(&format!("/proc/{p}")).exists()) {
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name}")).execute(pool).await;
        }
    }
}

fn chrono_free_nanos() -> u32 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0)
}

/// Replaces the database name of a PostgreSQL URL.
fn with_database(base: &str, name: &str) -> String {
    let (head, query) = match base.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (base, None),
    };
    let scheme_end = head.find("://").map(|i| i + 3).unwrap_or(0);
    let root = match head[scheme_end..].find('/') {
        Some(i) => &head[..scheme_end + i],
        None => head,
    };
    match query {
        Some(q) => format!("{root}/{name}?{q}"),
        None => format!("{root}/{name}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn database_name_is_replaced() {
        assert_eq!(super::with_database("postgresql://u:p@h/postgres", "x"), "postgresql://u:p@h/x");
        assert_eq!(super::with_database("postgresql://h:5432", "x"), "postgresql://h:5432/x");
        assert_eq!(
            super::with_database("postgresql://h/db?sslmode=disable", "x"),
            "postgresql://h/x?sslmode=disable"
        );
    }
}
