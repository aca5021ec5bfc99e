//! spurd: the Spur node agent. One process may host many nodes.

use clap::Parser;
use spur_agent::{AgentOpts, facts, facts_file, run, stepd};
use spur_vocab::hostlist;

#[derive(Parser)]
#[command(name = "spurd", version, about = "The Spur node agent")]
struct Args {
    /// The controller, e.g. http://ctl:6817.
    #[arg(long, env = "SPUR_CONTROLLER_ADDR", default_value = spur_proto::wire::DEFAULT_CONTROLLER)]
    controller: String,
    /// The nodes this agent hosts, as a hostlist: node[01-04].
    #[arg(long)]
    nodes: String,
    // The doc is clap's --help text, where `[admission]` is spur.conf's table, not a link.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// Admission token, needed when the controller runs [admission] mode = "token".
    #[arg(long, env = "SPUR_ADMISSION_TOKEN")]
    token: Option<String>,
    /// The host name reported to the controller.
    #[arg(long)]
    hostname: Option<String>,
    /// Where running jobs are recorded, so a restarted spurd adopts them
    /// (Slurm's SlurmdSpoolDir). Default: /var/spool/spurd/FIRST_NODE-DIGEST as
    /// root, else $TMPDIR/spurd-UID/FIRST_NODE-DIGEST, DIGEST naming the
    /// controller and the node list, so each agent has its own.
    #[arg(long, env = "SPURD_STATE_DIR")]
    state_dir: Option<std::path::PathBuf>,
    /// A YAML file of facts for some of the nodes, over the host's: a list of
    /// `- nodes: HOSTLIST`, `facts: {cpuinfo.cpu_cores: 64, ...}` and
    /// optionally `modaliases: [...]`, which replaces the host's list.
    #[arg(long, value_name = "FILE")]
    facts: Option<std::path::PathBuf>,
    /// Register the one node of --nodes although spur.conf does not define it
    /// (Slurm's slurmd -Z); the controller must allow dynamic nodes
    /// (max_dynamic_nodes). Needs --cpus and --memory-mb.
    #[arg(long)]
    dynamic: bool,
    /// With --dynamic: the node's CPU count.
    #[arg(long)]
    cpus: Option<u32>,
    /// With --dynamic: the node's memory in MB (Slurm's RealMemory).
    #[arg(long)]
    memory_mb: Option<u64>,
    /// With --dynamic: its generic resources, e.g. gpu:1.
    #[arg(long)]
    gres: Option<String>,
    /// With --dynamic: its features, comma-separated.
    #[arg(long)]
    features: Option<String>,
    /// With --dynamic: the HRES layers it joins, a JSON list:
    /// '[{"hres_name":"power","layer_name":"rack2"}]'.
    #[arg(long)]
    hres: Option<String>,
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if let Some(code) = stepd::dispatch(&argv) {
        std::process::exit(code);
    }
    agent_main();
}

#[tokio::main]
async fn agent_main() {
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
    let flags = spur_agent::dynamic::Flags {
        dynamic: args.dynamic,
        cpus: args.cpus,
        memory_mb: args.memory_mb,
        gres: args.gres.clone(),
        features: args.features.clone(),
        hres: args.hres.clone(),
    };
    let dynamic = spur_agent::dynamic::shape(&nodes, &flags).unwrap_or_else(|e| {
        eprintln!("spurd: error: {e}");
        std::process::exit(1);
    });
    let fact_overrides = match &args.facts {
        Some(path) => facts_file::load(path, &nodes).unwrap_or_else(|e| {
            eprintln!("spurd: error: --facts {e}");
            std::process::exit(1);
        }),
        None => vec![],
    };
    let hostname = args.hostname.unwrap_or_else(|| {
        std::fs::read_to_string("/etc/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "localhost".into())
    });
    let controller = spur_proto::wire::resolve_controller(Some(&args.controller));
    let state_dir = args.state_dir.unwrap_or_else(|| spur_agent::default_state_dir(&controller, &nodes));
    let stepd = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("spurd: error: cannot find its own program to supervise jobs with: {e}");
            std::process::exit(1);
        }
    };
    let opts = AgentOpts {
        controller,
        nodes,
        token: args.token,
        hostname,
        state_dir,
        stepd,
        facts: facts::collect(),
        fact_overrides,
        dynamic,
    };
    tokio::select! {
        r = run(opts) => if let Err(e) = r {
            eprintln!("spurd: error: {e:#}");
            std::process::exit(1);
        },
        _ = tokio::signal::ctrl_c() => {}
    }
}
