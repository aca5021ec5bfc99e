//! Durable submit throughput: 4 clients submit to a controller on the
//! embedded SQLite store (WAL, synchronous=FULL); every acknowledged job is
//! on disk. Prints jobs/s with one request in flight per client, and with 32.
//! Also times `squeue`'s list call over the resulting queue.
//!
//! `cargo run --release -p spur-tests --example submit_load [-- JOBS_PER_CLIENT]`

use spur_client::conn::{self, Clients, Identity};
use spur_proto::v1 as pb;
use std::time::Instant;

const CLIENTS: usize = 4;

async fn run(clients: &[Clients], per_client: usize, in_flight: usize) -> f64 {
    let started = Instant::now();
    let mut tasks = vec![];
    for c in clients {
        for lane in 0..in_flight {
            let mut c = c.clone();
            let n = per_client / in_flight + usize::from(lane < per_client % in_flight);
            tasks.push(tokio::spawn(async move {
                for _ in 0..n {
                    let spec = pb::JobSpec {
                        name: "load".into(),
                        script: "#!/bin/sh\ntrue\n".into(),
                        ..Default::default()
                    };
                    c.jobs.submit(pb::SubmitRequest { spec: Some(spec) }).await.expect("submit");
                }
            }));
        }
    }
    for t in tasks {
        t.await.expect("client");
    }
    (clients.len() * per_client) as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let per_client: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2500);
    let dir = tempfile::tempdir()?;
    let (running, url) = spur_tests::inproc::pending_only(dir.path()).await?;
    let me = Identity::asserted("load", Some(0));
    let mut clients = vec![];
    for _ in 0..CLIENTS {
        clients.push(conn::connect(&url, me.clone()).await?);
    }
    let one = run(&clients, per_client, 1).await;
    println!("durable submits, {CLIENTS} clients x 1 in flight: {one:.0} jobs/s");
    let many = run(&clients, per_client, 32).await;
    println!("durable submits, {CLIENTS} clients x 32 in flight: {many:.0} jobs/s");
    let mut c = clients[0].clone();
    let t = Instant::now();
    let n = c.jobs.list_jobs(pb::ListRequest::default()).await?.into_inner().jobs.len();
    println!("ListJobs (squeue's call) over {n} jobs: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    running.shutdown().await?;
    Ok(())
}
