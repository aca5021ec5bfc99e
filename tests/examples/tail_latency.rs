//! Load: 200 accounting mutations per second from 4 clients against a
//! controller on the embedded SQLite store, with one `TailTxn` subscriber.
//! Prints p50/p99/max latency from each row's timestamp (taken before its
//! transaction commits) to its delivery on the tail.
//!
//! `cargo run --release -p spur-tests --example tail_latency [-- SECONDS]`

use spur_client::conn::{self, Identity};
use spur_proto::v1 as pb;
use std::time::{Duration, Instant};

const CLIENTS: usize = 4;
const RATE_PER_CLIENT: u64 = 50;

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let dir = tempfile::tempdir()?;
    let mut cfg = spur_daemon::config::Config::default();
    cfg.accounting.database_url = format!("sqlite://{}", dir.path().join("load.db").display());
    let running = spur_daemon::controller::start(cfg, "127.0.0.1:0").await?;
    let url = format!("http://{}", running.addr());
    // uid 0 under the `none` plugin is an Administrator.
    let me = Identity::asserted("load", Some(0));

    let mut tail_client = conn::connect(&url, me.clone()).await?;
    let mut stream =
        tail_client.audit.tail_txn(pb::TailTxnRequest { filter: vec![], after_id: None }).await?.into_inner();
    let expected = CLIENTS as u64 * RATE_PER_CLIENT * secs;
    let collector = tokio::spawn(async move {
        let mut lat = Vec::with_capacity(expected as usize);
        while (lat.len() as u64) < expected {
            match tokio::time::timeout(Duration::from_secs(10), stream.message()).await {
                Ok(Ok(Some(pb::TailTxnEvent { event: Some(pb::tail_txn_event::Event::Row(r)) }))) => {
                    lat.push(now_ms() - r.time_ms)
                }
                Ok(Ok(Some(_))) => {}
                _ => break,
            }
        }
        lat
    });

    let started = Instant::now();
    let mut writers = vec![];
    for c in 0..CLIENTS {
        let mut client = conn::connect(&url, me.clone()).await?;
        writers.push(tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / RATE_PER_CLIENT));
            for i in 0..RATE_PER_CLIENT * secs {
                tick.tick().await;
                let kv = |k: &str, v: String| pb::KeyValue { key: k.into(), value: v };
                let req = pb::SetRequest {
                    mode: pb::SetMode::Add as i32,
                    r#where: vec![],
                    set: vec![kv("name", format!("c{c}q{}", i % 50)), kv("priority", i.to_string())],
                    dry_run: false,
                };
                client.accounting.set_qos(req).await.expect("mutation");
            }
        }));
    }
    for w in writers {
        w.await?;
    }
    let elapsed = started.elapsed();
    let mut lat = collector.await?;
    lat.sort_unstable();
    let pct = |p: f64| lat[((lat.len() as f64 * p).ceil() as usize).saturating_sub(1).min(lat.len() - 1)];
    println!(
        "{} mutations in {:.1} s ({:.0}/s) from {CLIENTS} clients; tail delivered {} rows",
        expected,
        elapsed.as_secs_f64(),
        expected as f64 / elapsed.as_secs_f64(),
        lat.len()
    );
    println!(
        "commit-to-tail latency: p50 {} ms, p99 {} ms, max {} ms",
        pct(0.50),
        pct(0.99),
        lat[lat.len() - 1]
    );
    running.shutdown().await?;
    Ok(())
}
