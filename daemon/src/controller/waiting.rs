//! `spurctld`'s waiting phase: the accounting database, which also holds
//! the job queue, node state and admission tokens, cannot be opened. The
//! controller keeps its port and answers every RPC with Unavailable naming
//! the database, so nothing is shown that could be false (an empty queue)
//! and nothing is accepted that could be lost, while it retries the open
//! with backoff. Agents back off and keep their jobs running. Once the store
//! opens, the caller starts the real controller on the same socket, so the
//! port never closes.

use crate::store::fence::Fence;
use crate::store::{self, Store};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The first retry of the open; each failure doubles it, up to [`RETRY_CAP`].
pub const RETRY_FIRST: Duration = Duration::from_millis(250);

/// Long enough not to hammer a database that is down for maintenance,
/// short enough that the controller is back soon after it is.
pub const RETRY_CAP: Duration = Duration::from_secs(30);

/// How long connections to the waiting server get to close at the handoff.
const HANDOFF_GRACE: Duration = Duration::from_secs(2);

/// The delay after `delay`: doubled, capped at [`RETRY_CAP`].
pub fn next_delay(delay: Duration) -> Duration {
    backoff(delay, RETRY_CAP)
}

/// The delay after `delay`: doubled, capped at `cap`.
pub fn backoff(delay: Duration, cap: Duration) -> Duration {
    delay.saturating_mul(2).min(cap)
}

/// Opens the store at `url`. When the first attempt fails, serves
/// Unavailable on `listener` (a clone of it: the socket stays the caller's)
/// and retries with backoff until the open succeeds; `on_waiting` runs once
/// the refusals are being served. Returns the store and whether it waited.
///
/// Dropping the future (a shutdown signal while waiting) stops the server.
pub async fn open_store(
    url: &str,
    listener: &std::net::TcpListener,
    on_waiting: impl FnOnce(),
    fence: Option<Arc<Fence>>,
) -> anyhow::Result<(Arc<dyn Store>, bool)> {
    let error = match store::open_fenced(url, fence.clone()).await {
        Ok(s) => return Ok((s, false)),
        Err(e) => e,
    };
    let db: Arc<str> = store::redact(url).into();
    let mut delay = RETRY_FIRST;
    let mut attempt = 1;
    let last = Arc::new(Mutex::new(Attempt::failed(attempt, &error, delay)));
    log_failure(&db, attempt, &error, delay);
    let server = Waiting::start(listener, Refusal { db: db.clone(), last: last.clone() })?;
    on_waiting();
    loop {
        tokio::time::sleep(delay).await;
        match store::open_fenced(url, fence.clone()).await {
            Ok(s) => {
                server.stop().await;
                tracing::info!(database = %db, attempts = attempt + 1, "accounting database reachable");
                return Ok((s, true));
            }
            Err(e) => {
                attempt += 1;
                delay = next_delay(delay);
                if let Ok(mut l) = last.lock() {
                    *l = Attempt::failed(attempt, &e, delay);
                }
                log_failure(&db, attempt, &e, delay);
            }
        }
    }
}

fn log_failure(db: &str, attempt: u32, error: &crate::error::Error, retry_in: Duration) {
    tracing::warn!(
        database = %db,
        attempt,
        error = %error,
        retry_in = ?retry_in,
        "the accounting database is unreachable; answering every RPC with Unavailable until it opens"
    );
}

/// The last failed open, for the refusal message.
struct Attempt {
    number: u32,
    error: String,
    next_at: Instant,
}

impl Attempt {
    fn failed(number: u32, error: &crate::error::Error, delay: Duration) -> Attempt {
        // A client prints the message as one line.
        let error = error.to_string().split_whitespace().collect::<Vec<_>>().join(" ");
        Attempt { number, error, next_at: Instant::now() + delay }
    }
}

/// Answers every request, whatever its path, with gRPC Unavailable.
#[derive(Clone)]
struct Refusal {
    db: Arc<str>,
    last: Arc<Mutex<Attempt>>,
}

impl Refusal {
    fn message(&self) -> String {
        let Ok(a) = self.last.lock() else {
            return format!("the accounting database {} is unreachable; spurctld is retrying", self.db);
        };
        let next = match a.next_at.checked_duration_since(Instant::now()) {
            Some(d) if !d.is_zero() => format!("next in {}", short(d)),
            _ => "trying again now".into(),
        };
        format!(
            "the accounting database {} is unreachable ({}); spurctld is retrying (attempt {}, {next})",
            self.db, a.error, a.number
        )
    }
}

/// `250ms`, `2s`: a delay as a person reads it, rounded up.
fn short(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis().max(1))
    } else {
        format!("{}s", d.as_secs() + u64::from(d.subsec_nanos() > 0))
    }
}

impl<B> tower::Service<http::Request<B>> for Refusal {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = std::future::Ready<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _req: http::Request<B>) -> Self::Future {
        std::future::ready(Ok(tonic::Status::unavailable(self.message()).into_http()))
    }
}

/// A stand-in server on a clone of the caller's listening socket: the
/// refusals here, a follower's forwarding (`ha/forward.rs`).
pub(crate) struct Waiting {
    stop: Option<oneshot::Sender<()>>,
    served: JoinHandle<()>,
    cut: tokio_util::sync::CancellationToken,
}

impl Waiting {
    pub(crate) fn start<S, R>(listener: &std::net::TcpListener, refusal: S) -> anyhow::Result<Waiting>
    where
        S: tower::Service<http::Request<tonic::body::Body>, Response = http::Response<R>>
            + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
        S::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send,
        R: http_body::Body<Data = bytes::Bytes> + Send + 'static,
        R::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let clone =
            listener.try_clone().map_err(|e| anyhow::anyhow!("cannot share the listening socket: {e}"))?;
        clone.set_nonblocking(true)?;
        let cut = tokio_util::sync::CancellationToken::new();
        let incoming = crate::server::cut::incoming(tokio::net::TcpListener::from_std(clone)?, cut.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        let served = tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            let r = tonic::transport::Server::builder()
                .initial_stream_window_size(Some(spur_proto::wire::WINDOW))
                .initial_connection_window_size(Some(spur_proto::wire::WINDOW))
                .serve_with_incoming_shutdown(refusal, incoming, shutdown);
            if let Err(e) = r.await {
                tracing::error!(error = %e, "the waiting server stopped");
            }
        });
        Ok(Waiting { stop: Some(stop), served, cut })
    }

    /// Stops accepting: the caller's socket stays open, so new connections
    /// queue for the controller; requests in flight go on.
    pub(crate) fn stop_accepting(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Stops accepting and lets open connections close.
    pub(crate) async fn stop(mut self) {
        self.stop_accepting();
        if tokio::time::timeout(HANDOFF_GRACE, &mut self.served).await.is_err() {
            tracing::info!("closing connections to the waiting server still open after {HANDOFF_GRACE:?}");
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        // A stream held open (a console's watch through a follower) ends here,
        // and its client reconnects to whatever serves the socket now.
        self.cut.cancel();
        self.served.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_doubles_up_to_the_cap() {
        let mut d = RETRY_FIRST;
        let mut seen = vec![];
        for _ in 0..10 {
            seen.push(d.as_millis());
            d = next_delay(d);
        }
        assert_eq!(seen, [250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    }

    #[test]
    fn the_refusal_names_the_database_the_error_and_the_retry() {
        let error = crate::error::Error::Store("unable to open\n database file".into());
        let r = Refusal {
            db: "postgresql://u:***@db/spur".into(),
            last: Arc::new(Mutex::new(Attempt::failed(4, &error, Duration::from_millis(1500)))),
        };
        let m = r.message();
        assert!(
            m.starts_with(
                "the accounting database postgresql://u:***@db/spur is unreachable \
                 (store: unable to open database file); spurctld is retrying (attempt 4, next in "
            ),
            "{m}"
        );
        assert_eq!(short(Duration::from_millis(1500)), "2s");
        assert_eq!(short(Duration::from_millis(250)), "250ms");
        if let Ok(mut a) = r.last.lock() {
            a.next_at = Instant::now();
        }
        assert!(r.message().ends_with("(attempt 4, trying again now)"), "{}", r.message());
    }
}
