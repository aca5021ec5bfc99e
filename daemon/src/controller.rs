//! A configured controller on a listener: open the store, load the catalog,
//! serve, refresh caches, and shut down cleanly.

use crate::accounting::AcctService;
use crate::config::Config;
use crate::store;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The floor the spec puts under `fairshare_refresh_secs`.
const MIN_REFRESH_SECS: u64 = 10;

pub struct Running {
    addr: SocketAddr,
    pub acct: Arc<AcctService>,
    stop: Option<oneshot::Sender<()>>,
    served: JoinHandle<Result<(), tonic::transport::Error>>,
    refresher: JoinHandle<()>,
}

impl Running {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, lets in-flight requests finish, and closes the store.
    pub async fn shutdown(mut self) -> anyhow::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.refresher.abort();
        let served = (&mut self.served).await;
        if let Some(store) = self.acct.store() {
            store.close().await;
        }
        served??;
        Ok(())
    }
}

/// Binds `listen` (a `host:port`; port 0 picks one) and starts serving.
pub async fn start(cfg: Config, listen: &str) -> anyhow::Result<Running> {
    let url = cfg.database_url();
    let store = if url.is_empty() {
        tracing::warn!("accounting is off: [accounting] database_url is empty");
        None
    } else {
        let shown = store::redact(&url);
        Some(store::open(&url).await.map_err(|e| anyhow::anyhow!("accounting store {shown}: {e}"))?)
    };
    let acct = Arc::new(AcctService::new(store).await?);
    let listener =
        TcpListener::bind(listen).await.map_err(|e| anyhow::anyhow!("cannot listen on '{listen}': {e}"))?;
    let addr = listener.local_addr()?;
    let routes = crate::server::routes(acct.clone(), &cfg.cluster_name).await?;
    let (stop, stopped) = oneshot::channel::<()>();
    // Nagle plus delayed ACKs would add ~40 ms to every other response.
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    let served = tokio::spawn(async move {
        tonic::transport::Server::builder()
            .initial_stream_window_size(Some(spur_client::conn::WINDOW))
            .initial_connection_window_size(Some(spur_client::conn::WINDOW))
            .add_routes(routes)
            .serve_with_incoming_shutdown(incoming, async {
                let _ = stopped.await;
            })
            .await
    });
    let refresher = spawn_refresher(acct.clone(), cfg.accounting.fairshare_refresh_secs);
    Ok(Running { addr, acct, stop: Some(stop), served, refresher })
}

/// Reloads the catalog so changes made by another controller sharing the
/// database show up within one refresh interval.
fn spawn_refresher(acct: Arc<AcctService>, secs: u64) -> JoinHandle<()> {
    let period = Duration::from_secs(secs.max(MIN_REFRESH_SECS));
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period);
        tick.tick().await;
        loop {
            tick.tick().await;
            if let Err(e) = acct.reload().await {
                tracing::warn!(error = %e, "accounting cache refresh failed; keeping the last snapshot");
            }
        }
    })
}
