//! The layer in front of every RPC: authenticate (refusals are logged at
//! warn and get no txn row; a MUNGE decode runs on a blocking thread), put the [`Caller`](crate::accounting::service::Caller) in the request, refuse paths
//! that are not classified, and log every RPC on `audit_rpc` when asked.

use super::identity::peer_of;
use super::rpc;
use crate::auth::{AuthError, Authenticator};
use futures_util::future::BoxFuture;
use std::sync::Arc;
use std::task::{Context, Poll};

#[derive(Clone)]
pub struct AuthLayer {
    auth: Arc<Authenticator>,
    audit_rpcs: bool,
}

impl AuthLayer {
    pub fn new(auth: Arc<Authenticator>, audit_rpcs: bool) -> Self {
        AuthLayer { auth, audit_rpcs }
    }
}

impl<S> tower::Layer<S> for AuthLayer {
    type Service = AuthService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AuthService { inner, auth: self.auth.clone(), audit_rpcs: self.audit_rpcs }
    }
}

#[derive(Clone)]
pub struct AuthService<S> {
    inner: S,
    auth: Arc<Authenticator>,
    audit_rpcs: bool,
}

type HttpResponse = http::Response<tonic::body::Body>;

impl<S, B> tower::Service<http::Request<B>> for AuthService<S>
where
    S: tower::Service<http::Request<B>, Response = HttpResponse> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = HttpResponse;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<HttpResponse, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<B>) -> Self::Future {
        let path = req.uri().path().to_string();
        let peer = peer_of(&req);
        if rpc::classify(&path).is_none() {
            tracing::warn!(path, peer, "refused an RPC that is not classified");
            return Box::pin(async move {
                Ok(tonic::Status::unimplemented(format!("unknown RPC {path}")).into_http())
            });
        }
        if rpc::OPEN.contains(&path.as_str()) {
            req.extensions_mut().insert(crate::accounting::Caller {
                user: "anonymous".into(),
                peer,
                ..Default::default()
            });
            let clone = self.inner.clone();
            let mut inner = std::mem::replace(&mut self.inner, clone);
            return Box::pin(async move { inner.call(req).await });
        }
        let agent = rpc::UNAUTHENTICATED.contains(&path.as_str());
        let auth = self.auth.clone();
        let establish = move |headers: &http::HeaderMap, peer: String| {
            // A follower's hop: the caller it established, sealed (ha/forward.rs).
            if let Some(handed) = auth.unseal(headers, &peer) {
                return handed;
            }
            let mut caller = if agent {
                auth.authenticate_agent(headers, peer)
            } else {
                auth.authenticate(headers, peer)
            }?;
            caller.forwarded = auth.marked_forwarded(headers);
            Ok(caller)
        };
        // The clone is ready only after poll_ready on self; swap so the ready one is used.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let (audit_rpcs, blocks) = (self.audit_rpcs, self.auth.blocks());
        Box::pin(async move {
            let caller = if blocks {
                // munged answers over a socket: off the async workers.
                let headers = req.headers().clone();
                let p = peer.clone();
                tokio::task::spawn_blocking(move || establish(&headers, p))
                    .await
                    .unwrap_or_else(|e| Err(AuthError::Munge(format!("decoding failed: {e}"))))
            } else {
                establish(req.headers(), peer.clone())
            };
            let caller = match caller {
                Ok(c) => c,
                Err(e) => {
                    let reason = e.to_string();
                    // No verified actor to attribute a row to, so no txn row.
                    tracing::warn!(path, peer, reason, "refused a credential");
                    return Ok(tonic::Status::unauthenticated(reason).into_http());
                }
            };
            let log = audit_rpcs.then(|| (caller.user.clone(), caller.uid, caller.verified));
            req.extensions_mut().insert(caller);
            let resp = inner.call(req).await?;
            if let Some((user, uid, verified)) = log {
                let status = resp
                    .headers()
                    .get("grpc-status")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("0")
                    .to_string();
                tracing::info!(target: "audit_rpc", method = %path, user, uid = ?uid, verified, peer, grpc_status = %status);
            }
            Ok(resp)
        })
    }
}
