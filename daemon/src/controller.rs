//! A configured controller on a listener: open the store, load the catalog,
//! serve, refresh caches, and shut down cleanly.

use crate::accounting::AcctService;
use crate::admission::Admission;
use crate::audit::{self, Hub};
use crate::auth::Authenticator;
use crate::config::Config;
use crate::jobs::JobService;
use crate::licenses::LicenseService;
use crate::nodes::NodeService;
use crate::server::{gate::Gate, layer::AuthLayer};
use crate::store::{self, Store};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub mod waiting;

/// How long in-flight requests get to finish at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// The floor the spec puts under `fairshare_refresh_secs`.
const MIN_REFRESH_SECS: u64 = 10;

pub struct Running {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    pub acct: Arc<AcctService>,
    pub hub: Arc<Hub>,
    pub nodes: Arc<NodeService>,
    pub jobs: Arc<JobService>,
    stop: Option<oneshot::Sender<()>>,
    served: JoinHandle<Result<(), tonic::transport::Error>>,
    /// Background loops (cache refresh, retention, metrics), aborted on shutdown.
    tasks: Vec<JoinHandle<()>>,
    /// Cuts the connections still open after the grace period (`server/cut.rs`).
    cut: tokio_util::sync::CancellationToken,
}

impl Running {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// Stops accepting, lets in-flight requests finish, and closes the store.
    /// Streams that never end on their own (a console's tail, a health watch,
    /// an agent's command stream) are cut after a short grace period.
    pub async fn shutdown(mut self) -> anyhow::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        for t in &self.tasks {
            t.abort();
        }
        let served = match tokio::time::timeout(SHUTDOWN_GRACE, &mut self.served).await {
            Ok(r) => r?,
            Err(_) => {
                tracing::info!("closing the streams still open after {SHUTDOWN_GRACE:?}");
                self.cut.cancel();
                self.served.abort();
                Ok(())
            }
        };
        // Connections' own tasks outlive the server's: none may answer after this.
        self.cut.cancel();
        if let Some(store) = self.acct.store() {
            store.close().await;
        }
        served?;
        Ok(())
    }
}

/// Binds `listen` (a `host:port`; port 0 picks one). The socket is handed
/// over as a std listener so `spurctld` can keep it open across the waiting
/// server and the controller that replaces it.
pub async fn bind(listen: &str) -> anyhow::Result<std::net::TcpListener> {
    // tokio's bind, not std's: it listens with a deeper backlog (1024, not 128).
    let l =
        TcpListener::bind(listen).await.map_err(|e| anyhow::anyhow!("cannot listen on '{listen}': {e}"))?;
    Ok(l.into_std()?)
}

/// Takes the one-controller lock of an SQLite store: several controllers
/// share only a PostgreSQL database (`ha`), and two on one SQLite file
/// would each schedule the same queue. The lock is the file's own `flock`,
/// released when the process ends, however it ends.
pub fn lock_sqlite(path: &std::path::Path) -> anyhow::Result<nix::fcntl::Flock<std::fs::File>> {
    use nix::fcntl::{Flock, FlockArg};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| anyhow::anyhow!("accounting store sqlite://{}: {e}", path.display()))?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| {
        anyhow::anyhow!(
            "accounting store sqlite://{} is in use by another spurctld ({e}): one controller per SQLite \
             file; several controllers (high availability) need a postgresql:// database_url",
            path.display()
        )
    })
}

/// Binds `listen` (a `host:port`; port 0 picks one) and starts serving.
pub async fn start(cfg: Config, listen: &str) -> anyhow::Result<Running> {
    start_on(cfg, bind(listen).await?).await
}

/// Opens the store `cfg` names and starts serving on `listener`. An
/// unreachable database is an error here; `spurctld` waits for it instead
/// (see [`waiting`]).
pub async fn start_on(cfg: Config, listener: std::net::TcpListener) -> anyhow::Result<Running> {
    let url = cfg.database_url();
    let store = if url.is_empty() {
        tracing::warn!("accounting is off: [accounting] database_url is empty");
        None
    } else {
        let shown = store::redact(&url);
        Some(store::open(&url).await.map_err(|e| anyhow::anyhow!("accounting store {shown}: {e}"))?)
    };
    start_with(cfg, store, listener).await
}

/// Starts serving on `listener` over an opened store (None: accounting off).
pub async fn start_with(
    cfg: Config,
    store: Option<Arc<dyn Store>>,
    listener: std::net::TcpListener,
) -> anyhow::Result<Running> {
    let auth = Arc::new(Authenticator::from_config(&cfg)?);
    let hub = Arc::new(Hub::new(store.clone()));
    let acct = Arc::new(AcctService::new(hub.clone()).await);
    let admission = Arc::new(Admission::load(cfg.admission.mode, store.clone()).await?);
    let nodes = Arc::new(NodeService::new(&cfg, store.clone(), hub.clone(), admission.clone()).await?);
    let licenses = Arc::new(LicenseService::new(&cfg, store.clone()).await?);
    for (name, layers) in nodes.dynamic_hres() {
        if !layers.is_empty() {
            licenses.join_dynamic(&name, &layers).await;
        }
    }
    let jobs = Arc::new(JobService::new(&cfg, store, acct.clone(), nodes.clone(), licenses.clone()).await?);
    let pilots = cfg.upstream.slurm.clone().map(|u| {
        let weak = Arc::downgrade(&jobs);
        let holding = Box::new(move |n: &str| weak.upgrade().map(|j| j.jobs_on(n)).unwrap_or_default());
        let p = Arc::new(crate::pilots::Pilots::new(
            nodes.clone(),
            admission.clone(),
            crate::pilots::upstream::Upstream { cfg: u },
            holding,
        ));
        let _ = jobs.pilots.set(p.clone());
        p
    });
    // Idempotent; a caller's own listener may still be blocking.
    listener.set_nonblocking(true)?;
    let listener = TcpListener::from_std(listener)?;
    let addr = listener.local_addr()?;
    let streams = crate::server::streams::Streams::default();
    let rpc_stats = crate::server::rpc_stats::RpcStats::counting(jobs.diag.rpc_counter());
    let gate =
        Arc::new(Gate { auth: auth.clone(), acct: acct.clone(), hub: hub.clone(), streams, rpc_stats });
    let routes = crate::server::routes(gate, admission, nodes.clone(), jobs.clone(), licenses, &cfg).await?;
    let layer = AuthLayer::new(auth, cfg.logging.audit_rpcs);
    let (stop, stopped) = oneshot::channel::<()>();
    let cut = tokio_util::sync::CancellationToken::new();
    let incoming = crate::server::cut::incoming(listener, cut.clone());
    let served = tokio::spawn(async move {
        tonic::transport::Server::builder()
            .max_concurrent_streams(Some(crate::server::streams::MAX_STREAMS_PER_CONNECTION))
            .layer(layer)
            .initial_stream_window_size(Some(spur_proto::wire::WINDOW))
            .initial_connection_window_size(Some(spur_proto::wire::WINDOW))
            .add_routes(routes)
            .serve_with_incoming_shutdown(incoming, async {
                let _ = stopped.await;
            })
            .await
    });
    let mut tasks = vec![spawn_refresher(acct.clone(), jobs.clone(), cfg.accounting.fairshare_refresh_secs)];
    tasks.extend(hub.spawn_retention(cfg.accounting.txn_retention_days));
    tasks.push(nodes.spawn_monitor());
    tasks.extend(jobs.spawn(Duration::from_secs(cfg.scheduler.interval)));
    tasks.extend(pilots.map(|p| p.spawn()));
    tasks.push(jobs.spawn_purger(Duration::from_secs(cfg.scheduler.interval)));
    tasks.push(jobs.spawn_step_watch());
    tasks.push(jobs.spawn_maintenance());
    // Pending jobs' plugin arguments are checked again with the scripts as loaded now,
    // and jobs caught CONFIGURING lost their asynchronous pre-run.
    jobs.requeue_configuring().await;
    jobs.revalidate(None, "restart").await;
    let mut metrics_addr = None;
    if !cfg.metrics.listen_addr.is_empty() {
        let l = TcpListener::bind(&cfg.metrics.listen_addr)
            .await
            .map_err(|e| anyhow::anyhow!("metrics.listen_addr '{}': {e}", cfg.metrics.listen_addr))?;
        metrics_addr = Some(l.local_addr()?);
        let j = jobs.clone();
        tasks.push(audit::metrics::spawn(
            l,
            hub.clone(),
            Arc::new(move || j.pass_stats.render() + &crate::ha::render_metrics()),
        ));
    }
    Ok(Running { addr, metrics_addr, acct, hub, nodes, jobs, stop: Some(stop), served, tasks, cut })
}

/// Reloads the catalog so changes made by another controller sharing the
/// database show up within one refresh interval. A catalog that has never
/// loaded holds back every job naming a QOS or account, so until it loads
/// the retries come quickly; its first load kicks a scheduling pass so those
/// jobs start without waiting for the next one.
fn spawn_refresher(acct: Arc<AcctService>, jobs: Arc<JobService>, secs: u64) -> JoinHandle<()> {
    let period = Duration::from_secs(secs.max(MIN_REFRESH_SECS));
    tokio::spawn(async move {
        // A catalog that has never loaded retries as an unreachable database
        // does, but capped at the refresh period.
        let mut retry = waiting::RETRY_FIRST;
        loop {
            let loaded = acct.catalog().loaded;
            tokio::time::sleep(if loaded { period } else { retry }).await;
            match acct.reload().await {
                Ok(()) if !loaded => {
                    tracing::info!(
                        "accounting catalog loaded; jobs held for AccountingUnavailable may start"
                    );
                    jobs.kick.notify_one();
                }
                Ok(()) => {}
                Err(e) if loaded => {
                    tracing::warn!(error = %e, "accounting cache refresh failed; keeping the last snapshot");
                }
                Err(e) => {
                    retry = waiting::backoff(retry, period);
                    tracing::warn!(error = %e, retry_in = ?retry, "accounting catalog still cannot be read");
                }
            }
        }
    })
}
