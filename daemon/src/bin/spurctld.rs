//! spurctld: the Spur controller.

use clap::Parser;
use spur_daemon::auth::Authenticator;
use spur_daemon::config::Config;
use spur_daemon::controller::{self, waiting};
use spur_daemon::ha;
use spur_daemon::store::fence::Fence;
use std::path::PathBuf;
use tokio::signal::unix::{Signal, SignalKind, signal};

#[derive(Parser)]
#[command(name = "spurctld", version, about = "The Spur controller")]
struct Args {
    /// Path to spur.conf.
    #[arg(long, short = 'f', default_value = "/etc/spur/spur.conf")]
    config: PathBuf,
    /// Address to listen on (overrides [controller] listen_addr); port 0 picks a free port.
    #[arg(long)]
    listen: Option<String>,
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SPUR_LOG").unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = run(Args::parse()).await {
        eprintln!("spurctld: {e:#}");
        std::process::exit(1);
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let cfg = Config::load(&args.config)?;
    // Before any wait: a broken auth setup is the operator's to fix now.
    Authenticator::from_config(&cfg)?;
    // Made first, so a signal that arrives between the phases is not lost.
    let mut signals = Signals::new()?;
    let listen = args.listen.unwrap_or_else(|| cfg.controller.listen_addr.clone());
    let listener = controller::bind(&listen).await?;
    let addr = listener.local_addr()?;
    let url = cfg.database_url();
    if spur_daemon::store::is_postgres(&url) {
        return run_ha(cfg, listener, signals).await;
    }
    // Held until the process ends: a second controller on the file is refused.
    let mut _lock = None;
    let (running, waited) = if url.is_empty() {
        (controller::start_on(cfg, listener).await?, false)
    } else {
        let Some((store, waited)) = open_store(&url, &listener, None, &mut signals).await? else {
            return Ok(());
        };
        if let Some(path) = url.strip_prefix("sqlite://") {
            _lock = Some(controller::lock_sqlite(std::path::Path::new(path))?);
        }
        (controller::start_with(cfg, Some(store), listener).await?, waited)
    };
    if let Some(m) = running.metrics_addr() {
        println!("spurctld metrics on http://{m}/metrics");
    }
    if waited {
        tracing::info!(%addr, "accounting database reachable; serving");
    } else {
        println!("spurctld listening on {addr}");
        tracing::info!(%addr, "serving");
    }
    signals.recv().await?;
    tracing::info!("shutting down");
    running.shutdown().await
}

/// Opens the store, answering Unavailable on the port while the database
/// cannot be reached (`waiting`); None when a signal stops the wait. The
/// address line is printed as soon as the refusals are served.
async fn open_store(
    url: &str,
    listener: &std::net::TcpListener,
    fence: Option<std::sync::Arc<Fence>>,
    signals: &mut Signals,
) -> anyhow::Result<Option<(std::sync::Arc<dyn spur_daemon::store::Store>, bool)>> {
    let addr = listener.local_addr()?;
    // Tests and scripts read this line to learn the port when listening on port 0.
    let listening = || println!("spurctld listening on {addr}");
    tokio::select! {
        r = waiting::open_store(url, listener, listening, fence) => Ok(Some(r?)),
        r = signals.recv() => {
            r?;
            tracing::info!("shutting down while waiting for the accounting database");
            Ok(None)
        }
    }
}

/// A controller on PostgreSQL: one of any number sharing the database,
/// leading or following (`spur_daemon::ha`).
async fn run_ha(cfg: Config, listener: std::net::TcpListener, mut signals: Signals) -> anyhow::Result<()> {
    let addr = listener.local_addr()?;
    let url = cfg.database_url();
    let fence = std::sync::Arc::new(Fence::for_lease(cfg.controller.leader_lease_secs));
    let Some((store, waited)) = open_store(&url, &listener, Some(fence.clone()), &mut signals).await? else {
        return Ok(());
    };
    // The address line is printed once this controller leads or knows a
    // live leader: a client that reads it never meets the first takeover
    // (unless the line came early, refusing while the database was away).
    let ready: ha::Ready = if waited {
        tracing::info!(%addr, "accounting database reachable");
        Box::new(|| {})
    } else {
        Box::new(move || println!("spurctld listening on {addr}"))
    };
    let shutdown = Box::pin(async move {
        let _ = signals.recv().await;
        tracing::info!("shutting down");
    });
    ha::run(cfg, listener, (store, fence), shutdown, ready).await
}

/// SIGTERM and SIGINT, registered once for the life of the process.
struct Signals {
    term: Signal,
    int: Signal,
}

impl Signals {
    fn new() -> anyhow::Result<Signals> {
        Ok(Signals { term: signal(SignalKind::terminate())?, int: signal(SignalKind::interrupt())? })
    }

    async fn recv(&mut self) -> anyhow::Result<()> {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
        }
        Ok(())
    }
}
