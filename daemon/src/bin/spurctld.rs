//! spurctld: the Spur controller.

use clap::Parser;
use spur_daemon::config::Config;
use std::path::PathBuf;

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
    let listen = args.listen.unwrap_or_else(|| cfg.controller.listen_addr.clone());
    let running = spur_daemon::controller::start(cfg, &listen).await?;
    if let Some(m) = running.metrics_addr() {
        println!("spurctld metrics on http://{m}/metrics");
    }
    // Tests and scripts read this line to learn the port when listening on port 0.
    println!("spurctld listening on {}", running.addr());
    tracing::info!(addr = %running.addr(), "serving");
    wait_for_signal().await?;
    tracing::info!("shutting down");
    running.shutdown().await
}

async fn wait_for_signal() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r?,
        _ = term.recv() => {}
    }
    Ok(())
}
