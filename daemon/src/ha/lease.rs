//! The leader lease: one row of PostgreSQL (`leader`, migration 0002) that
//! names the leader, its address and its epoch, and expires unless renewed.
//!
//! A standby takes the lease when it has expired, or at once when the
//! holder's lease session is gone from `pg_stat_activity` (a leader killed
//! with -9: the kernel closes its socket, so its standby need not wait out
//! the lease). A stalled leader (SIGSTOP, a partition) keeps its session,
//! so it is replaced when its lease runs out, and its writes are refused
//! from then on by the fence (`store/fence.rs`). Times are the database's
//! clock (`clock_timestamp()`), never a controller's, so skew between
//! controllers cannot make two leaders.

use crate::error::{Error, Result};
use sqlx::Connection;
use sqlx::postgres::PgConnection;
use std::time::Duration;

/// The longest one lease statement may take; a slower database counts as
/// unreachable for this round.
const STATEMENT: Duration = Duration::from_secs(2);

const TAKE: &str = "UPDATE leader SET epoch = epoch + 1, holder = $1, addr = $2, pid = pg_backend_pid(), \
     expires_at = clock_timestamp() + make_interval(secs => $3) \
     WHERE id = 1 AND (expires_at < clock_timestamp() OR holder = 'handover:' || $2 \
     OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = leader.pid)) RETURNING epoch";
const RENEW: &str = "UPDATE leader SET expires_at = clock_timestamp() + make_interval(secs => $2), \
     pid = pg_backend_pid() WHERE id = 1 AND epoch = $1 RETURNING epoch";
const RELEASE: &str = "UPDATE leader SET expires_at = '-infinity', pid = 0 WHERE id = 1 AND epoch = $1";
/// `scontrol takeover`: the lease stays live (and the old leader's session
/// holds it) for everyone but the named successor, which takes it at its
/// next poll; no leader address is shown meanwhile, so followers hold
/// their requests. Should the successor not come, the lease expires as usual.
const HAND_OVER: &str = "UPDATE leader SET holder = 'handover:' || $2, addr = '', pid = pg_backend_pid(), \
     expires_at = clock_timestamp() + make_interval(secs => $3) WHERE id = 1 AND epoch = $1";
const CURRENT: &str = "SELECT epoch, holder, addr, expires_at > clock_timestamp() FROM leader WHERE id = 1";

/// Who leads, as the lease row says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    pub epoch: i64,
    pub holder: String,
    pub addr: String,
    /// Whether the lease is still within its time.
    pub live: bool,
}

/// One controller's side of the lease, on a connection of its own (the
/// session `pg_stat_activity` shows while it leads).
pub struct Lease {
    url: String,
    conn: Option<PgConnection>,
    /// This process, unique among the controllers (host, pid, start).
    pub holder: String,
    /// Where the others forward to.
    pub addr: String,
    secs: f64,
}

impl Lease {
    pub fn new(url: &str, holder: String, addr: String, secs: u32) -> Lease {
        Lease { url: url.to_string(), conn: None, holder, addr, secs: f64::from(secs) }
    }

    async fn conn(&mut self) -> Result<&mut PgConnection> {
        if self.conn.is_none() {
            let mut c = tokio::time::timeout(STATEMENT, PgConnection::connect(&self.url))
                .await
                .map_err(|_| Error::Unavailable("the lease's database did not answer".into()))??;
            // A leader stopped inside a write holds the row's share lock
            // until PostgreSQL ends its transaction: never wait on it here.
            sqlx::query("SET lock_timeout = '1s'").execute(&mut c).await?;
            self.conn = Some(c);
        }
        self.conn.as_mut().ok_or_else(|| Error::Unavailable("no lease connection".into()))
    }

    /// Runs one statement with a deadline; a failure drops the connection
    /// so the next round opens a new one.
    async fn run<T>(
        &mut self,
        f: impl for<'c> FnOnce(&'c mut PgConnection) -> futures_util::future::BoxFuture<'c, Result<T>>,
    ) -> Result<T> {
        let conn = self.conn().await?;
        let out = match tokio::time::timeout(STATEMENT, f(conn)).await {
            Ok(r) => r,
            Err(_) => Err(Error::Unavailable("a lease statement took longer than 2s".into())),
        };
        if out.is_err() {
            self.conn = None;
        }
        out
    }

    /// Takes the lease if it is free; the new epoch when taken.
    pub async fn try_take(&mut self) -> Result<Option<i64>> {
        let (holder, addr, secs) = (self.holder.clone(), self.addr.clone(), self.secs);
        self.run(move |c| {
            Box::pin(async move {
                let epoch: Option<i64> = sqlx::query_scalar(TAKE)
                    .bind(holder)
                    .bind(addr)
                    .bind(secs)
                    .fetch_optional(&mut *c)
                    .await
                    .or_else(lock_busy)?;
                Ok(epoch)
            })
        })
        .await
    }

    /// Renews the lease of `epoch`; false when another has taken it.
    pub async fn renew(&mut self, epoch: i64) -> Result<bool> {
        let secs = self.secs;
        self.run(move |c| {
            Box::pin(async move {
                let held: Option<i64> =
                    sqlx::query_scalar(RENEW).bind(epoch).bind(secs).fetch_optional(&mut *c).await?;
                Ok(held.is_some())
            })
        })
        .await
    }

    /// Gives the lease up (a clean shutdown), so a standby takes over at once.
    pub async fn release(&mut self, epoch: i64) {
        let r = self
            .run(move |c| {
                Box::pin(async move {
                    sqlx::query(RELEASE).bind(epoch).execute(&mut *c).await?;
                    Ok(())
                })
            })
            .await;
        if let Err(e) = r {
            tracing::warn!(error = %e, "could not release the leader lease; a standby waits for it to expire");
        }
    }

    /// Gives the lease of `epoch` to the controller advertising `to` only;
    /// false when `epoch` no longer holds it.
    pub async fn hand_over(&mut self, epoch: i64, to: &str) -> Result<bool> {
        let (to, secs) = (to.to_string(), self.secs);
        self.run(move |c| {
            Box::pin(async move {
                let done = sqlx::query(HAND_OVER).bind(epoch).bind(to).bind(secs).execute(&mut *c).await?;
                Ok(done.rows_affected() == 1)
            })
        })
        .await
    }

    /// Who leads now.
    pub async fn current(&mut self) -> Result<Leader> {
        self.run(|c| {
            Box::pin(async move {
                let (epoch, holder, addr, live): (i64, String, String, bool) =
                    sqlx::query_as(CURRENT).fetch_one(&mut *c).await?;
                Ok(Leader { epoch, holder, addr, live })
            })
        })
        .await
    }
}

/// A lock the lease row is held under (a leader mid-write): not taken this round.
fn lock_busy(e: sqlx::Error) -> Result<Option<i64>> {
    match &e {
        sqlx::Error::Database(d) if d.code().as_deref() == Some("55P03") => Ok(None),
        _ => Err(e.into()),
    }
}
