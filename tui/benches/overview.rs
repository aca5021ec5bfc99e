//! The Overview pane with 100,000 jobs and 5,000 nodes: one redraw into a
//! 200x50 (and 80x24) `TestBackend` (target: under 2 ms), and apart from it
//! the aggregation the pane makes once per change of the jobs or nodes
//! (a walk of each), which a frame never pays.
//! Run with `cargo bench -p spur-console --bench overview`.

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use spur_console::model::overview::aggregate;
use spur_console::model::state::State;
use spur_console::{Action, ClusterUpdate, JobSet, Msg, PaneId, dispatch};
use spur_proto::v1 as pb;
use std::hint::black_box;
use std::time::Duration;

const JOBS: u64 = 100_000;
const NODES: u32 = 5_000;

/// 5,000 nodes over four partitions (some in two), in every state, the gpu ones with GPUs.
fn nodes() -> Vec<pb::Node> {
    // A fixed sequence, so every run draws the same cluster.
    let mut lcg = common::Lcg::new(7);
    let mut next = |n: u64| lcg.next(n);
    (0..NODES)
        .map(|i| {
            let part = common::PARTITIONS[(i % 4) as usize];
            let mut partitions = vec![part.to_string()];
            if i % 10 == 0 {
                partitions.push("debug".into());
            }
            let base = ["IDLE", "MIXED", "ALLOCATED", "ALLOCATED", "DOWN"][next(5) as usize];
            let cpus = 64;
            let alloc = match base {
                "IDLE" | "DOWN" => 0,
                "MIXED" => 1 + next(63) as u32,
                _ => cpus,
            };
            let gpu = part == "gpu";
            pb::Node {
                name: format!("node{i:04}"),
                base_state: base.into(),
                drain: next(50) == 0,
                cpus,
                alloc_cpus: alloc,
                memory_mb: 512 * 1024,
                alloc_memory_mb: u64::from(alloc) * 4096,
                gres: if gpu { "gpu:8".into() } else { String::new() },
                gres_used: if gpu { format!("gpu:{}", alloc / 8) } else { String::new() },
                partitions,
                ..Default::default()
            }
        })
        .collect()
}

/// sdiag's answer with an hour of samples and 40 RPC types.
fn diag() -> pb::DiagResponse {
    let history = (0..60)
        .map(|m| pb::DiagSample {
            time: common::NOW / 1000 - 3600 + m * 60,
            last_pass_us: 20_000 + (m as u64 % 9) * 3_000,
            jobs_started: 100 + (m as u64 * 7) % 50,
            bf_backfilled_jobs: (m as u64 * 3) % 20,
            rpcs_per_sec: 40.0 + (m % 11) as f64,
            jobs_pending: 60_000,
            jobs_running: 30_000,
        })
        .collect();
    let rpcs = (0..40)
        .map(|i| pb::RpcStat {
            name: format!("Svc/Rpc{i}"),
            id: i,
            count: 1 + u64::from(i) * 10,
            total_us: 1_000_000,
        })
        .collect();
    pb::DiagResponse { schedule_cycle_last: 25_000, rpcs, history, ..Default::default() }
}

fn state(size: (u16, u16)) -> State {
    let mut state = common::state(JOBS, size);
    let update = ClusterUpdate { snapshot: true, nodes: nodes(), ..Default::default() };
    dispatch(&mut state, Action::Net(Msg::Cluster(update)));
    dispatch(&mut state, Action::GoPane(PaneId::Overview));
    dispatch(&mut state, Action::Net(Msg::Diag(Box::new(diag()))));
    state
}

fn render(c: &mut Criterion) {
    let mut g = c.benchmark_group("overview_render_100k_jobs_5k_nodes");
    g.measurement_time(Duration::from_secs(5));
    for size in [(200, 50), (80, 24)] {
        let state = state(size);
        let mut term = common::terminal(size);
        g.bench_function(format!("{}x{}", size.0, size.1), |b| {
            b.iter(|| common::frame(&mut term, black_box(&state)))
        });
    }
    g.finish();
}

fn aggregation(c: &mut Criterion) {
    let mut g = c.benchmark_group("overview_aggregate");
    g.sample_size(20).measurement_time(Duration::from_secs(5));
    let set = JobSet::from_pb(common::jobs(JOBS), common::NOW);
    let nodes = nodes();
    g.bench_function("100k_jobs_5k_nodes", |b| b.iter(|| aggregate(Some(black_box(&set)), Some(&nodes))));
    g.finish();
}

criterion_group!(benches, render, aggregation);
criterion_main!(benches);
