//! `squeue` over a large queue, end to end: seeds JOBS jobs (100,000 by
//! default) straight into a SQLite store, starts the real `spurctld` on it,
//! and times the real `squeue` binary (process start, connect, ListJobs,
//! sort, format, print) with its default columns, `-l`, and one user's jobs;
//! then the real `sprio` (the prio view, streamed the same way).
//! Seeding the store directly keeps the set-up to seconds; the controller
//! loads the jobs as it would after a restart.
//!
//! `cargo build --release --bins && cargo run --release -p spur-tests --example squeue_load [-- JOBS]`

use spur_client::conn::{self, Identity};
use spur_client::vocab::{Hold, JobState};
use spur_daemon::jobs::record::JobRecord;
use spur_proto::v1 as pb;
use spur_tests::proc::{Controller, conf, run, wait_for};
use spur_tests::seed;
use std::time::{Duration, Instant};

const USERS: u64 = 50;
const RUNS: usize = 7;

/// A pending job the way sbatch leaves one: a script, an environment, and a
/// reason; every tenth is held.
fn job(id: u64, now_ms: i64) -> JobRecord {
    let held = id.is_multiple_of(10);
    JobRecord {
        id,
        name: format!("job{}", id % 1000),
        user: format!("user{}", id % USERS),
        account: Some(format!("acct{}", id % 10)),
        qos: Some("normal".into()),
        partition: if id.is_multiple_of(3) { "gpu".into() } else { "batch".into() },
        submit_ms: now_ms - (id as i64) * 10,
        num_nodes: 1,
        ntasks: 1,
        cpus_per_task: 1 + (id % 4) as u32,
        time_limit: Some(60),
        hold: if held { Hold::User } else { Hold::None },
        reason: Some(if held {
            spur_vocab::reason::ReasonCode::JobHeldUser
        } else {
            spur_vocab::reason::ReasonCode::Resources
        }),
        requeue: true,
        script: seed::script(id),
        env: seed::env(id),
        workdir: "/home/user/project".into(),
        state: JobState::Pending,
        eff_priority: 1000.0 + (id % 997) as f64,
        ..JobRecord::default()
    }
}

fn stats(mut v: Vec<Duration>) -> String {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!("median {:.0} ms, min {:.0} ms, max {:.0} ms", ms(v[v.len() / 2]), ms(v[0]), ms(v[v.len() - 1]))
}

/// Runs `squeue ARGS` RUNS times; returns the timings and the line count.
fn time_squeue(url: &str, args: &[&str]) -> (Vec<Duration>, usize) {
    time_cmd("squeue", url, args)
}

/// Runs `CMD ARGS` RUNS times; returns the timings and the line count.
fn time_cmd(cmd: &str, url: &str, args: &[&str]) -> (Vec<Duration>, usize) {
    let mut times = vec![];
    let mut lines = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        let out = run(cmd, url, args);
        times.push(t.elapsed());
        assert!(out.status.success(), "{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        lines = out.stdout.iter().filter(|b| **b == b'\n').count();
    }
    (times, lines)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let jobs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let dir = tempfile::tempdir()?;
    let db = format!("sqlite://{}/spur.db", dir.path().display());

    let t = Instant::now();
    let now = spur_daemon::store::now_ms();
    seed::jobs(&db, 1..=jobs, |id| job(id, now)).await?;
    println!("seeded {jobs} jobs in {:.1} s", t.elapsed().as_secs_f64());

    // No agents: the nodes never come up, so every job stays pending.
    let cluster = "[[nodes]]\nname = \"node[001-500]\"\ncpus = 64\n\
                   [[nodes]]\nname = \"gpu[001-100]\"\ncpus = 64\ngres = \"gpu:8\"\n\
                   [[partitions]]\nname = \"batch\"\nnodes = \"node[001-500]\"\ndefault = true\n\
                   [[partitions]]\nname = \"gpu\"\nnodes = \"gpu[001-100]\"\n";
    let t = Instant::now();
    let c = Controller::start(dir.path(), &conf(&db, cluster));
    println!("spurctld up with {jobs} jobs in {:.1} s", t.elapsed().as_secs_f64());

    let me = Identity::asserted("load", Some(0));
    let mut cl = conn::connect(&c.url, me).await?;
    let view = |v: &str| vec![pb::KeyValue { key: "view".into(), value: v.into() }];
    for (label, filter) in
        [("ListJobs full", vec![]), ("ListJobs view=brief", view("brief")), ("StreamJobs", vec![])]
    {
        let mut times = vec![];
        let mut n = 0;
        for _ in 0..RUNS {
            let t = Instant::now();
            let req = pb::ListRequest { filter: filter.clone() };
            n = if label == "StreamJobs" {
                let pages = cl.jobs.stream_jobs(req).await?.into_inner();
                spur_client::cli::listing::collect(pages).await.map_err(anyhow::Error::msg)?.len()
            } else {
                cl.jobs.list_jobs(req).await?.into_inner().jobs.len()
            };
            times.push(t.elapsed());
        }
        println!("{label} over {n} jobs: {}", stats(times));
    }

    let url = c.url.clone();
    let (times, lines) = tokio::task::block_in_place(|| {
        // The first listing may overlap the controller's first scheduling pass.
        wait_for("the queue to load", || {
            (time_squeue(&url, &["-h", "-t", "PD"]).1 as u64 == jobs).then_some(())
        });
        time_squeue(&url, &[])
    });
    println!("squeue over {jobs} jobs ({lines} lines): {}", stats(times));
    let (times, lines) = tokio::task::block_in_place(|| time_squeue(&url, &["-l"]));
    println!("squeue -l over {jobs} jobs ({lines} lines): {}", stats(times));
    let (times, lines) = tokio::task::block_in_place(|| time_squeue(&url, &["-u", "user7"]));
    println!("squeue -u user7 ({lines} lines): {}", stats(times));
    let (times, lines) = tokio::task::block_in_place(|| time_cmd("sprio", &url, &[]));
    println!("sprio over {jobs} jobs ({lines} lines): {}", stats(times));
    Ok(())
}
