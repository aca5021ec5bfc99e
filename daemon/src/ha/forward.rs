//! A follower's server: every RPC goes to the leader, with the caller this
//! controller authenticated handed over (`auth/handoff.rs`). The hop is
//! HTTP/2 as it came, so unary calls and streams (a console's watch, an
//! agent's command stream, srun's step I/O) all pass through one path and
//! no RPC needs a forwarding method of its own. Health is answered here:
//! `NOT_SERVING` for [`LEADER_SERVICE`], so a load balancer can tell.
//!
//! While no leader is known (a takeover under way) a request waits for one,
//! at most the lease time plus a margin, then is refused Unavailable.

use super::HA;
use crate::auth::{AuthError, Authenticator};
use crate::server::identity::peer_of;
use crate::server::rpc;
use futures_util::future::BoxFuture;
use spur_proto::wire::{LEADER_SERVICE, WINDOW};
use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::watch;
use tonic::Status;
use tonic::body::Body;
use tonic::service::Routes;
use tonic::transport::{Channel, Endpoint};
use tower::{Service, ServiceExt};

/// The leader's address as this follower knows it; None during a takeover.
pub type LeaderAddr = watch::Receiver<Option<String>>;

#[derive(Clone)]
pub struct Forwarder {
    inner: Arc<Inner>,
}

struct Inner {
    auth: Arc<Authenticator>,
    leader: LeaderAddr,
    channel: Mutex<Option<(String, Channel)>>,
    health: Routes,
    /// How long a request waits for a leader.
    wait: Duration,
    audit_rpcs: bool,
}

impl Forwarder {
    /// A follower advertising `advertised` (its `host:port`).
    pub async fn new(
        auth: Arc<Authenticator>,
        leader: LeaderAddr,
        wait: Duration,
        audit_rpcs: bool,
        advertised: &str,
    ) -> Self {
        let (reporter, health) = tonic_health::server::health_reporter();
        reporter.set_service_status(LEADER_SERVICE, tonic_health::ServingStatus::NotServing).await;
        let backup_as = format!("{}{advertised}", spur_proto::wire::BACKUP_AS);
        reporter.set_service_status(backup_as, tonic_health::ServingStatus::Serving).await;
        let health = Routes::new(health);
        let inner = Inner { auth, leader, channel: Mutex::new(None), health, wait, audit_rpcs };
        Forwarder { inner: Arc::new(inner) }
    }
}

type HttpResponse = http::Response<Body>;

impl<B> Service<http::Request<B>> for Forwarder
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = HttpResponse;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<HttpResponse, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let inner = self.inner.clone();
        Box::pin(async move { Ok(inner.forward(req.map(Body::new)).await.unwrap_or_else(Status::into_http)) })
    }
}

impl Inner {
    async fn forward(&self, mut req: http::Request<Body>) -> Result<HttpResponse, Status> {
        let path = req.uri().path().to_string();
        if path.starts_with("/grpc.health.v1.Health/") {
            let mut health = self.health.clone();
            return health.call(req).await.map_err(|e| Status::internal(format!("health: {e}")));
        }
        if rpc::classify(&path).is_none() {
            return Err(Status::unimplemented(format!("unknown RPC {path}")));
        }
        let peer = peer_of(&req);
        let agent = rpc::UNAUTHENTICATED.contains(&path.as_str());
        let headers = std::mem::take(req.headers_mut());
        let auth = self.auth.clone();
        let p = peer.clone();
        // munged answers over a socket: off the async workers.
        let sealed = tokio::task::spawn_blocking(move || {
            let caller =
                if agent { auth.authenticate_agent(&headers, p) } else { auth.authenticate(&headers, p) }?;
            let mut headers = headers;
            auth.seal(&caller, &mut headers)?;
            Ok::<_, AuthError>((headers, caller))
        })
        .await
        .unwrap_or_else(|e| Err(AuthError::Munge(format!("decoding failed: {e}"))));
        let (headers, caller) = match sealed {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(path, peer, reason = %e, "refused a credential");
                return Err(Status::unauthenticated(e.to_string()));
            }
        };
        if self.audit_rpcs {
            tracing::info!(target: "audit_rpc", method = %path, user = %caller.user, uid = ?caller.uid, verified = caller.verified, peer, forwarded = true);
        }
        *req.headers_mut() = headers;
        let pq = req.uri().path_and_query().cloned();
        *req.uri_mut() = http::Uri::from_parts({
            let mut parts = http::uri::Parts::default();
            parts.path_and_query = pq;
            parts
        })
        .map_err(|e| Status::internal(format!("forwarding {path}: {e}")))?;
        let (addr, mut channel) = self.channel().await?;
        let ready = channel.ready().await.map_err(|e| self.unreachable(&addr, &e))?;
        let resp = ready.call(req).await.map_err(|e| self.broke_off(&addr, &e))?;
        HA.forwarded.fetch_add(1, Ordering::Relaxed);
        Ok(resp.map(Body::new))
    }

    /// A channel to the leader, waiting for one to be known. The connection
    /// is made before the request is handed over, so a leader that died
    /// (refused) costs a wait for the next one, not the request.
    async fn channel(&self) -> Result<(String, Channel), Status> {
        let deadline = tokio::time::Instant::now() + self.wait;
        let mut rx = self.leader.clone();
        let none = || {
            Status::unavailable(format!(
                "no leader controller within {}s; a takeover may be under way, retry",
                self.wait.as_secs()
            ))
        };
        loop {
            let addr = match tokio::time::timeout_at(deadline, rx.wait_for(Option::is_some)).await {
                Ok(Ok(a)) => a.clone().unwrap_or_default(),
                _ => return Err(none()),
            };
            if let Some(c) = self.cached(&addr) {
                return Ok((addr, c));
            }
            let endpoint = Endpoint::from_shared(format!("http://{addr}"))
                .map_err(|e| Status::internal(format!("leader address '{addr}': {e}")))?
                .connect_timeout(Duration::from_secs(2))
                .tcp_nodelay(true)
                // A leader stopped (not dead) keeps its sockets: the pings end
                // the streams held through it, and their clients reconnect.
                .http2_keep_alive_interval(Duration::from_secs(2))
                .keep_alive_timeout(Duration::from_secs(3))
                .keep_alive_while_idle(true)
                .initial_stream_window_size(Some(WINDOW))
                .initial_connection_window_size(Some(WINDOW));
            match endpoint.connect().await {
                Ok(c) => {
                    if let Ok(mut held) = self.channel.lock() {
                        *held = Some((addr.clone(), c.clone()));
                    }
                    return Ok((addr, c));
                }
                Err(e) => {
                    tracing::debug!(leader = %addr, error = %e, "the leader does not answer; waiting for the next");
                    let moved = rx.wait_for(|a| a.as_deref() != Some(addr.as_str()));
                    if tokio::time::timeout_at(deadline, moved).await.is_err() {
                        return Err(Status::unavailable(format!(
                            "the leader controller at {addr} cannot be reached ({e}); retry"
                        )));
                    }
                }
            }
        }
    }

    fn cached(&self, addr: &str) -> Option<Channel> {
        let held = self.channel.lock().ok()?;
        held.as_ref().filter(|(a, _)| a == addr).map(|(_, c)| c.clone())
    }

    fn forget(&self) {
        if let Ok(mut held) = self.channel.lock() {
            *held = None;
        }
    }

    /// Nothing was sent: the request may be sent again as it is.
    fn unreachable(&self, addr: &str, e: &dyn std::fmt::Display) -> Status {
        self.forget();
        Status::unavailable(format!("the leader controller at {addr} cannot be reached ({e}); retry"))
    }

    /// Sent, and the connection failed before the answer: the leader may
    /// have applied it, so "retry" is not said (a second submit would be a
    /// second job).
    fn broke_off(&self, addr: &str, e: &dyn std::fmt::Display) -> Status {
        self.forget();
        Status::unavailable(format!(
            "the leader controller at {addr} failed before it answered ({e}); the request may have been applied: check before sending it again"
        ))
    }
}
