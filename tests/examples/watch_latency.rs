//! Latency of job changes on `Cluster.Watch`, against an in-process
//! controller on the embedded SQLite store: for SUBMITS sequential submits,
//! the time from the submit call to
//! 1. the job's batch arriving on a raw Watch stream, and
//! 2. the job being in the console's own model (`State`), through the
//!    console's network task, its watch batching and `dispatch`, the path a
//!    frame is drawn from (the next frame follows at once).
//!
//! Prints p50/p99/max of each, in milliseconds.
//!
//! `cargo run --release -p spur-tests --example watch_latency [-- SUBMITS]`

use spur_client::conn::{self, Clients, Identity};
use spur_console::{Action, Effect, dispatch, net};
use spur_console::{Settings, State};
use spur_proto::v1 as pb;
use spur_proto::v1::cluster_event::Event;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

const DEADLINE: Duration = Duration::from_secs(30);

fn report(what: &str, mut v: Vec<Duration>) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let at = |q: f64| v[((v.len() as f64 * q) as usize).min(v.len() - 1)];
    println!(
        "{what}: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} submits)",
        ms(at(0.5)),
        ms(at(0.99)),
        ms(v[v.len() - 1]),
        v.len()
    );
}

async fn submit(c: &mut Clients, i: usize) -> anyhow::Result<u64> {
    let spec =
        pb::JobSpec { name: format!("w{i}"), script: "#!/bin/sh\ntrue\n".into(), ..Default::default() };
    Ok(c.jobs.submit(pb::SubmitRequest { spec: Some(spec) }).await?.into_inner().job_id)
}

async fn raw(c: &mut Clients, n: usize) -> anyhow::Result<Vec<Duration>> {
    let mut stream = c.cluster.watch(pb::WatchRequest {}).await?.into_inner();
    let mut out = vec![];
    for i in 0..n {
        let t = Instant::now();
        let id = submit(c, i).await?;
        loop {
            let ev = tokio::time::timeout(DEADLINE, stream.message()).await??;
            if let Some(pb::ClusterEvent { event: Some(Event::Jobs(b)) }) = ev
                && b.jobs.iter().any(|j| j.id == id)
            {
                break;
            }
        }
        out.push(t.elapsed());
    }
    Ok(out)
}

async fn console(c: &mut Clients, url: &str, n: usize) -> anyhow::Result<Vec<Duration>> {
    let (rpc_tx, rpc_rx) = mpsc::unbounded_channel();
    let (msg_tx, mut msgs) = mpsc::unbounded_channel();
    let who = Identity::asserted("bench", Some(1000));
    let task = net::spawn(url.to_string(), who, rpc_rx, msg_tx);
    let mut state = State::new(Settings::new(url.to_string()), (120, 40));
    let mut pump = async |state: &mut State, done: &dyn Fn(&State) -> bool| -> anyhow::Result<()> {
        while !done(state) {
            let msg = tokio::time::timeout(DEADLINE, msgs.recv()).await?.ok_or(anyhow::anyhow!("closed"))?;
            for effect in dispatch(state, Action::Net(msg)) {
                if let Effect::Rpc(rpc) = effect {
                    let _ = rpc_tx.send(rpc);
                }
            }
        }
        Ok(())
    };
    pump(&mut state, &|s: &State| s.queue.jobs.is_some() && s.queue.pushed).await?;
    let mut out = vec![];
    for i in 0..n {
        let t = Instant::now();
        let id = submit(c, i).await?;
        pump(&mut state, &|s: &State| s.queue.jobs.as_ref().is_some_and(|j| j.get(id).is_some())).await?;
        out.push(t.elapsed());
    }
    task.abort();
    Ok(out)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    let dir = tempfile::tempdir()?;
    let (running, url) = spur_tests::inproc::pending_only(dir.path()).await?;
    let mut c = conn::connect(&url, Identity::asserted("load", Some(0))).await?;
    report("submit -> batch on a raw Cluster.Watch", raw(&mut c, n).await?);
    report("submit -> job in the console's model", console(&mut c, &url, n).await?);
    running.shutdown().await?;
    Ok(())
}
