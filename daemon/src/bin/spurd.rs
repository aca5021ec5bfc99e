//! spurd: the Spur node agent. One process may host many nodes.

use clap::Parser;
use spur_client::vocab::hostlist;
use spur_daemon::agent::{AgentOpts, run};

#[derive(Parser)]
#[command(name = "spurd", version, about = "The Spur node agent")]
struct Args {
    /// The controller, e.g. http://ctl:6817.
    #[arg(long, env = "SPUR_CONTROLLER_ADDR", default_value = "http://localhost:6817")]
    controller: String,
    /// The nodes this agent hosts, as a hostlist: node[01-04].
    #[arg(long)]
    nodes: String,
    /// Admission token, needed when the controller runs [admission] mode = "token".
    #[arg(long, env = "SPUR_ADMISSION_TOKEN")]
    token: Option<String>,
    /// The host name reported to the controller.
    #[arg(long)]
    hostname: Option<String>,
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SPUR_LOG").unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let nodes = match hostlist::expand(&args.nodes) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("spurd: error: --nodes: {e}");
            std::process::exit(1);
        }
    };
    let hostname = args.hostname.unwrap_or_else(|| {
        std::fs::read_to_string("/etc/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "localhost".into())
    });
    let controller = spur_client::conn::resolve_controller(Some(&args.controller));
    let opts = AgentOpts { controller, nodes, token: args.token, hostname };
    tokio::select! {
        r = run(opts) => if let Err(e) = r {
            eprintln!("spurd: error: {e:#}");
            std::process::exit(1);
        },
        _ = tokio::signal::ctrl_c() => {}
    }
}
