//! Round trips of sacctmgr's commands to a controller (process start not
//! counted): `sacctmgr -i add qos` and `sacctmgr -n -P show qos` with 1,000 QOS.
//! Target: under 5 ms each. Run with `cargo bench -p spur-tests --bench accounting`.

use criterion::{Criterion, criterion_group, criterion_main};
use spur_client::cli::{args, sacctmgr};
use spur_client::conn::{self, Identity};
use spur_daemon::controller::Running;
use std::sync::atomic::{AtomicU64, Ordering};

fn cmd(line: &str) -> args::Command {
    args::parse(&line.split_whitespace().map(String::from).collect::<Vec<_>>()).unwrap()
}

/// A controller on a fresh SQLite store, and a connected client.
fn controller(rt: &tokio::runtime::Runtime, dir: &std::path::Path) -> (Running, conn::Clients) {
    let mut cfg = spur_daemon::config::Config::default();
    cfg.accounting.database_url = format!("sqlite://{}", dir.join("bench.db").display());
    let running = rt.block_on(spur_daemon::controller::start(cfg, "127.0.0.1:0")).unwrap();
    let url = format!("http://{}", running.addr());
    let clients = rt.block_on(conn::connect(&url, Identity::local())).unwrap();
    (running, clients)
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (running, clients) = controller(&rt, dir.path());

    let n = AtomicU64::new(0);
    c.bench_function("sacctmgr -i add qos (durable upsert + audit row)", |b| {
        b.iter(|| {
            let i = n.fetch_add(1, Ordering::Relaxed);
            let line = format!("-i add qos name=q{i:05} priority={i} maxwall=60 grptres=cpu=8");
            rt.block_on(sacctmgr::execute(&cmd(&line), clients.clone())).unwrap()
        })
    });
    rt.block_on(running.shutdown()).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let (running, clients) = controller(&rt, dir.path());
    for i in 0..1000 {
        let line = format!("-i add qos name=q{i:05} priority={i} maxwall=60 grptres=cpu=8");
        rt.block_on(sacctmgr::execute(&cmd(&line), clients.clone())).unwrap();
    }
    let show = cmd("-n -P show qos");
    let out = rt.block_on(sacctmgr::execute(&show, clients.clone())).unwrap();
    assert_eq!(out.lines().count(), 1000);
    c.bench_function("sacctmgr -n -P show qos (1000 QOS, all default columns)", |b| {
        b.iter(|| rt.block_on(sacctmgr::execute(&show, clients.clone())).unwrap())
    });
    rt.block_on(running.shutdown()).unwrap();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(100).measurement_time(std::time::Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
