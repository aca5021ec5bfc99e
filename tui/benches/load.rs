//! Load figures for the Queue pane, printed rather than sampled:
//!
//! 1. memory: the resident set (VmRSS from /proc/self/status) after the
//!    console state holds 100,000 jobs (target under 150 MB), with the
//!    baseline before and the peak (VmHWM) while the answer was compacted;
//! 2. time to first frame: from spawning the network task against a
//!    loopback Jobs service (the same path `run_console` takes, minus the
//!    terminal) to the first frame drawn, and to the first frame that shows
//!    the jobs, for 100 and 100,000 jobs.
//!
//! Run with `cargo bench -p spur-console --bench load`.

mod common;
#[path = "../tests/fake/jobs.rs"]
mod fake;

use spur_client::conn::Identity;
use spur_console::model::state::{Settings, State};
use spur_console::{Action, Effect, JobSet, Msg, PaneId, dispatch, net};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

const JOBS: u64 = 100_000;

fn memory() {
    let (base, _) = common::rss_mib();
    let wire = common::jobs(JOBS);
    let (with_pb, _) = common::rss_mib();
    let started = Instant::now();
    let set = JobSet::from_pb(wire, common::NOW);
    let compact = started.elapsed();
    let mut state = common::state(0, (120, 40));
    dispatch(&mut state, Action::Net(Msg::Jobs(Arc::new(set))));
    let mut term = common::terminal((120, 40));
    common::frame(&mut term, &state);
    let (rss, peak) = common::rss_mib();
    println!("memory, {JOBS} jobs:");
    println!("  baseline VmRSS            {base:7.1} MiB");
    println!("  + protobuf jobs (decoded) {with_pb:7.1} MiB");
    println!("  state built, one frame    {rss:7.1} MiB   (target < 150 MB; peak VmHWM {peak:.1} MiB)");
    println!("  compacting took           {:7.1} ms", compact.as_secs_f64() * 1e3);
    drop(state);
}

/// Connect, ask for what `Connected` asks for, draw after every report;
/// returns (first frame, first frame showing the jobs).
async fn first_frame(url: String) -> (Duration, Duration) {
    let started = Instant::now();
    let (rpc_tx, rpc_rx) = mpsc::unbounded_channel();
    let (msg_tx, mut msgs) = mpsc::unbounded_channel();
    let who = Identity::asserted("bench", Some(1000));
    let task = net::spawn(url.clone(), who, rpc_rx, msg_tx);
    let mut state = State::new(Settings::new(url), (120, 40));
    let mut term = common::terminal((120, 40));
    common::frame(&mut term, &state);
    let first = started.elapsed();
    assert_eq!(state.pane, PaneId::Queue);
    while state.queue.jobs.is_none() {
        let msg = tokio::time::timeout(Duration::from_secs(60), msgs.recv())
            .await
            .expect("no report")
            .expect("closed");
        for effect in dispatch(&mut state, Action::Net(msg)) {
            if let Effect::Rpc(rpc) = effect {
                let _ = rpc_tx.send(rpc);
            }
        }
        common::frame(&mut term, &state);
    }
    let with_jobs = started.elapsed();
    task.abort();
    (first, with_jobs)
}

/// One `ListJobs` round trip on its own: what the first frame with jobs
/// waits for before compaction (the fake builds and encodes the answer too).
async fn list_once(url: String) -> (Duration, usize) {
    use spur_proto::v1::jobs_client::JobsClient;
    let mut client = JobsClient::connect(url).await.unwrap().max_decoding_message_size(1 << 30);
    let started = Instant::now();
    let jobs = client.list_jobs(spur_proto::v1::ListRequest::default()).await.unwrap().into_inner().jobs;
    (started.elapsed(), jobs.len())
}

fn main() {
    memory();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    println!("time to first frame (loopback Jobs service, 120x40):");
    for n in [100, JOBS] {
        let server = rt.block_on(fake::serve(common::jobs(n)));
        let (list, count) = rt.block_on(list_once(server.url.clone()));
        println!("  {count:>6} jobs: ListJobs round trip alone {:7.1} ms", list.as_secs_f64() * 1e3);
        let (first, with_jobs) = rt.block_on(first_frame(server.url));
        println!(
            "  {n:>6} jobs: first frame {:6.1} ms, first frame with the jobs {:7.1} ms",
            first.as_secs_f64() * 1e3,
            with_jobs.as_secs_f64() * 1e3
        );
    }
}
