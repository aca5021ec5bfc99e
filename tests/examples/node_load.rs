//! Load for the node plane, against the real binaries:
//! - the latency of `scontrol update nodename=node[001-512] state=drain reason=x`
//!   (the UpdateNodes round trip, with its 512 txn rows and state writes);
//! - spurctld's CPU while one `spurd --nodes 'sim[0001-1000]'` heartbeats
//!   every second for all 1,000 nodes (plus 512 more from a second agent).
//!
//! `cargo build --release && cargo run --release -p spur-tests --example node_load [-- SECONDS]`

use spur_client::conn::{self, Identity};
use spur_proto::v1 as pb;
use spur_tests::proc::{Agent, Controller, conf, wait_for};
use std::time::{Duration, Instant};

/// CPU time of every thread of `pid`, in nanoseconds (schedstat is finer than clock ticks).
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    tasks
        .filter_map(|t| t.ok())
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()))
        .sum()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(30);
    let dir = tempfile::tempdir()?;
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let cluster = "[controller]\nheartbeat_interval_secs = 1\nnode_timeout_secs = 10\n\
                   [[nodes]]\nname = \"node[001-512]\"\ncpus = 64\n[[nodes]]\nname = \"sim[0001-1000]\"\n\
                   [[partitions]]\nname = \"batch\"\nnodes = \"ALL\"\ndefault = true\n";
    let c = Controller::start(dir.path(), &conf(&db, cluster));
    let _a = Agent::start(&c.url, "node[001-512]", &[]);
    let _b = Agent::start(&c.url, "sim[0001-1000]", &[]);
    let me = Identity::asserted("load", Some(0));
    let mut cl = conn::connect(&c.url, me).await?;
    let up = |nodes: &[pb::Node]| nodes.iter().filter(|n| n.base_state == "IDLE").count();
    let mut probe = cl.clone();
    let rt = tokio::runtime::Handle::current();
    tokio::task::block_in_place(|| {
        wait_for("1,512 nodes to register", || {
            let nodes =
                rt.block_on(probe.nodes.list_nodes(pb::ListRequest::default())).ok()?.into_inner().nodes;
            (up(&nodes) == 1512).then_some(())
        })
    });

    let mut drains = vec![];
    for _ in 0..5 {
        let t = Instant::now();
        let req = pb::UpdateNodesRequest {
            nodes: "node[001-512]".into(),
            state: "drain".into(),
            reason: "x".into(),
        };
        let r = cl.nodes.update_nodes(req).await?.into_inner();
        drains.push(t.elapsed());
        assert_eq!(r.updated.len(), 512);
        let req = pb::UpdateNodesRequest {
            nodes: "node[001-512]".into(),
            state: "resume".into(),
            reason: String::new(),
        };
        cl.nodes.update_nodes(req).await?;
    }
    drains.sort();
    println!(
        "scontrol update nodename=node[001-512] state=drain reason=x: median {:.1} ms (min {:.1}, max {:.1}) over 5 runs",
        drains[2].as_secs_f64() * 1e3,
        drains[0].as_secs_f64() * 1e3,
        drains[4].as_secs_f64() * 1e3
    );

    let pid = c.pid();
    let before = cpu_ns(pid);
    let t = Instant::now();
    tokio::time::sleep(Duration::from_secs(secs)).await;
    let used = cpu_ns(pid).saturating_sub(before) as f64 / 1e9;
    println!(
        "spurctld CPU with 1,512 nodes heartbeating every 1 s from 2 agents: {:.3}% of one core ({:.3} s CPU in {:.0} s)",
        100.0 * used / t.elapsed().as_secs_f64(),
        used,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
