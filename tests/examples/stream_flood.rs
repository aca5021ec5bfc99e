//! A user with no adminlevel opens Watch streams and never reads them while
//! jobs are submitted: what `bench/request-caps.sh` measures the controller
//! under (peak RSS, the longest `sinfo` answer) before and after the stream
//! caps. Prints how many streams the controller took and how many it refused.
//!
//! `cargo run --release -p spur-tests --example stream_flood -- URL [STREAMS] [CONNS] [SUBMITS]`
//! (defaults 2,000 streams over 40 connections, 2,000 submits), under
//! `plugin = "none"` (the user is asserted as `mallory`, uid 1000).

use spur_client::conn::{self, Identity};
use spur_proto::v1 as pb;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let url =
        args.first().ok_or_else(|| anyhow::anyhow!("usage: stream_flood URL [STREAMS] [CONNS] [SUBMITS]"))?;
    let num = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (streams, conns, submits) = (num(1, 2000), num(2, 40).max(1), num(3, 2000));
    let mut clients = vec![];
    for _ in 0..conns {
        clients.push(conn::connect(url, Identity::asserted("mallory", Some(1000))).await?);
    }
    let (mut held, mut refused) = (vec![], 0usize);
    for i in 0..streams {
        let mut c = clients[i % conns].cluster.clone();
        match tokio::time::timeout(DEADLINE, c.watch(pb::WatchRequest::default())).await? {
            Ok(s) => held.push(s.into_inner()),
            Err(_) => refused += 1,
        }
    }
    // The submits on a connection of their own: a connection's stream slots are the server's to cap.
    let mut c = conn::connect(url, Identity::asserted("mallory", Some(1000))).await?;
    for i in 0..submits {
        let spec = pb::JobSpec {
            name: format!("flood{i}"),
            script: format!("#!/bin/sh\n# {}\ntrue\n", "x".repeat(4096)),
            ..Default::default()
        };
        tokio::time::timeout(DEADLINE, c.jobs.submit(pb::SubmitRequest { spec: Some(spec) })).await??;
    }
    println!("streams held {} refused {refused}; {submits} submits", held.len());
    drop(held);
    Ok(())
}
