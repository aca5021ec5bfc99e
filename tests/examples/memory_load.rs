//! spurctld's memory and pass time with a full cluster, end to end: seeds
//! PENDING pending jobs (10,000 by default) and RUNNING running ones (1,000)
//! straight into a SQLite store, starts the real `spurctld` on it with
//! preemption and backfill on, and plays the agent of `sim[00001-RUNNING]`
//! (registered with the running jobs, heartbeating, reporting the end of
//! every job it is told to signal) so the running jobs are real to the
//! controller without RUNNING processes. Every job is as sbatch leaves one
//! by default: no time limit under an UNLIMITED partition, a short script
//! and 20 environment variables; one pending job in 20 has a base priority
//! that passes the 2x gap, so victims are chosen every pass.
//!
//! It prints spurctld's resident memory (now and peak), the scheduler's pass
//! time from `/metrics`, how long the RPC behind each console pane and
//! `scontrol explain` takes on that queue, and then what cancelling every
//! pending job in one request costs.
//!
//! `cargo build --release --bins && cargo run --release -p spur-tests --example memory_load [-- PENDING RUNNING]`

use spur_client::conn::{self, Identity};
use spur_client::vocab::{Hold, JobState};
use spur_daemon::jobs::{KIND_JOB, env::Env, record::JobRecord};
use spur_proto::v1 as pb;
use spur_proto::v1::agent_client::AgentClient;
use spur_tests::proc::{Controller, conf};
use std::time::{Duration, Instant};

const PASSES: u64 = 5;

fn node(i: u64) -> String {
    format!("sim{i:05}")
}

/// A job as sbatch leaves one without -t: its script, environment and workdir.
fn base(id: u64, now_ms: i64) -> JobRecord {
    JobRecord {
        id,
        name: format!("job{}", id % 1000),
        user: format!("user{}", id % 50),
        partition: "batch".into(),
        submit_ms: now_ms - (id as i64 % 86_400) * 1000,
        num_nodes: 1,
        ntasks: 1,
        cpus_per_task: 1 + (id % 8) as u32,
        requeue: true,
        script: format!("#!/bin/sh\n#SBATCH -J job{id}\nsrun ./simulate --step {id} --out /scratch/run\n"),
        env: {
            let vars: Vec<(String, String)> =
                (0..20).map(|i| (format!("VAR{i}"), format!("value-{i}-{id}"))).collect();
            Env::from_pairs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))).expect("plain names")
        },
        workdir: "/home/user/project".into(),
        ..JobRecord::default()
    }
}

fn running(id: u64, now_ms: i64) -> JobRecord {
    JobRecord {
        cpus_per_task: 64,
        exclusive: true,
        state: JobState::Running,
        nodes: vec![node(id)],
        start_ms: now_ms - 600_000,
        alloc: (64, 0, 0),
        ..base(id, now_ms)
    }
}

fn pending(id: u64, now_ms: i64) -> JobRecord {
    JobRecord {
        priority: id.is_multiple_of(20).then_some(1_000_000),
        hold: Hold::None,
        state: JobState::Pending,
        reason: "Priority".into(),
        ..base(id, now_ms)
    }
}

fn rss_kib(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap_or("");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// One figure from the Prometheus text at `url`.
async fn metric(url: &str, name: &str) -> anyhow::Result<f64> {
    let addr = url.trim_start_matches("http://");
    let (host, path) = addr.split_once('/').unwrap_or((addr, "metrics"));
    let mut s = tokio::net::TcpStream::connect(host).await?;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    s.write_all(format!("GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes()).await?;
    let mut body = String::new();
    s.read_to_string(&mut body).await?;
    let line = body.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or("");
    Ok(line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0.0))
}

/// Registers as the agent of every simulated node with the running jobs,
/// heartbeats, and reports each signalled job ended, as spurd would.
async fn play_agent(url: String, nodes: Vec<String>, jobs: Vec<pb::RunningJob>) -> anyhow::Result<()> {
    let mut a = AgentClient::connect(url).await?;
    let req = pb::RegisterRequest { nodes, hostname: "sim".into(), running: jobs, ..Default::default() };
    let reg = a.register(req).await?.into_inner();
    let (id, key) = (reg.agent_id.clone(), reg.agent_key.clone());
    let mut hb = a.clone();
    let beat = Duration::from_secs(u64::from(reg.heartbeat_interval_secs.max(1)));
    let hb_req = pb::HeartbeatRequest { agent_id: id.clone(), agent_key: key.clone() };
    tokio::spawn(async move {
        loop {
            let _ = hb.heartbeat(hb_req.clone()).await;
            tokio::time::sleep(beat).await;
        }
    });
    let mut cmds =
        a.commands(pb::CommandsRequest { agent_id: id.clone(), agent_key: key.clone() }).await?.into_inner();
    while let Some(cmd) = cmds.message().await? {
        if let Some(pb::agent_command::Cmd::Signal(s)) = cmd.cmd {
            let report = pb::JobReport {
                agent_id: id.clone(),
                agent_key: key.clone(),
                job_id: s.job_id,
                state: "failed".into(),
                signal: s.signal,
                ..Default::default()
            };
            a.report_job(report).await?;
        }
    }
    Ok(())
}

async fn time<T, F: std::future::Future<Output = anyhow::Result<T>>>(
    label: &str,
    f: impl Fn() -> F,
) -> anyhow::Result<T> {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..3 {
        let t = Instant::now();
        out = Some(f().await?);
        best = best.min(t.elapsed());
    }
    println!("  {label}: {:.1} ms", best.as_secs_f64() * 1e3);
    Ok(out.expect("ran"))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let arg = |i: usize, d: u64| std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (pend, run) = (arg(1, 10_000), arg(2, 1_000));
    let dir = tempfile::tempdir()?;
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let t = Instant::now();
    let store = spur_daemon::store::open(&db).await?;
    let now = spur_daemon::store::now_ms();
    let ids: Vec<u64> = (1..=run + pend).collect();
    for chunk in ids.chunks(10_000) {
        let docs = chunk
            .iter()
            .map(|&id| {
                let rec = if id <= run { running(id, now) } else { pending(id, now) };
                Ok((id.to_string(), Some(serde_json::to_value(rec)?)))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        store.put(KIND_JOB, &docs).await?;
    }
    store.close().await;
    println!("seeded {pend} pending and {run} running jobs in {:.1} s", t.elapsed().as_secs_f64());

    let cluster = format!(
        "[controller]\nheartbeat_interval_secs = 5\nnode_timeout_secs = 120\n\
         [scheduler]\npreemption_enabled = true\nbackfill_enabled = true\nmin_preemption_runtime = 0\n\
         max_job_count = {}\n\
         [metrics]\nlisten_addr = \"127.0.0.1:0\"\n\
         [[nodes]]\nname = \"sim[00001-{run:05}]\"\ncpus = 64\nmemory_mb = 256000\n\
         [[partitions]]\nname = \"batch\"\nnodes = \"ALL\"\ndefault = true\npreempt_mode = \"requeue\"\n",
        (pend + run) * 2
    );
    let t = Instant::now();
    let c = Controller::start(dir.path(), &conf(&db, &cluster));
    let metrics = c.metrics.clone().expect("metrics endpoint");
    println!(
        "spurctld up in {:.1} s: {} MiB resident",
        t.elapsed().as_secs_f64(),
        rss_kib(c.pid(), "VmRSS:") / 1024
    );

    let names: Vec<String> = (1..=run).map(node).collect();
    let jobs: Vec<pb::RunningJob> =
        (1..=run).map(|id| pb::RunningJob { job_id: id, node: node(id) }).collect();
    let agent = tokio::spawn(play_agent(c.url.clone(), names, jobs));

    // Passes counted from the agent's registration, when the nodes are up.
    let me = Identity { user: "root".into(), uid: Some(0), token: None };
    let mut cl = conn::connect(&c.url, me).await?;
    let deadline = Instant::now() + Duration::from_secs(600);
    let up =
        |ns: &[pb::Node]| ns.iter().filter(|n| n.base_state != "UNKNOWN" && n.base_state != "DOWN").count();
    while up(&cl.nodes.list_nodes(pb::ListRequest::default()).await?.into_inner().nodes) < run as usize {
        anyhow::ensure!(
            Instant::now() < deadline && !agent.is_finished(),
            "the simulated nodes never came up"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let first = metric(&metrics, "spur_sched_passes_total").await? as u64;
    while (metric(&metrics, "spur_sched_passes_total").await? as u64) < first + PASSES {
        anyhow::ensure!(Instant::now() < deadline, "the scheduler did not run {PASSES} passes");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let last = metric(&metrics, "spur_sched_last_pass_seconds").await?;
    let max = metric(&metrics, "spur_sched_max_pass_seconds").await?;
    let (n, total) = (
        metric(&metrics, "spur_sched_passes_total").await?,
        metric(&metrics, "spur_sched_pass_seconds_total").await?,
    );
    println!(
        "{pend} pending x {run} running, preemption and backfill on: pass {:.1} ms (mean {:.1}, max {:.1} over {n} passes)",
        last * 1e3,
        total / n.max(1.0) * 1e3,
        max * 1e3
    );
    println!(
        "spurctld resident: {} MiB now, {} MiB peak",
        rss_kib(c.pid(), "VmRSS:") / 1024,
        rss_kib(c.pid(), "VmHWM:") / 1024
    );

    println!("the console's panes and explain, answering on this queue:");
    let view = |v: &str| vec![pb::KeyValue { key: "view".into(), value: v.into() }];
    let q = cl.clone();
    let listed = time("jobs (ListJobs, full view, as the console fetches it)", || {
        let mut q = q.clone();
        async move { Ok(q.jobs.list_jobs(pb::ListRequest::default()).await?.into_inner().jobs) }
    })
    .await?;
    // An urgent job still pending (they start oldest first, as victims are evicted), else any pending one.
    let pending_ids: Vec<u64> = listed.iter().filter(|j| j.state == "PENDING").map(|j| j.id).collect();
    let urgent = pending_ids.iter().find(|id| **id > run && id.is_multiple_of(20));
    let job_id = *urgent.or(pending_ids.first()).ok_or_else(|| anyhow::anyhow!("no job is pending"))?;
    let q = cl.clone();
    time("jobs (StreamJobs, brief view, all)", || {
        let mut q = q.clone();
        let req = pb::ListRequest { filter: view("brief") };
        async move {
            let pages = q.jobs.stream_jobs(req).await?.into_inner();
            Ok(spur_client::cli::listing::collect(pages).await.map_err(anyhow::Error::msg)?.len())
        }
    })
    .await?;
    let q = cl.clone();
    time("nodes (ListNodes)", || {
        let mut q = q.clone();
        async move { Ok(q.nodes.list_nodes(pb::ListRequest::default()).await?.into_inner().nodes.len()) }
    })
    .await?;
    let q = cl.clone();
    time("audit (ListTxn, 100 rows)", || {
        let mut q = q.clone();
        async move {
            let filter = vec![pb::KeyValue { key: "limit".into(), value: "100".into() }];
            let req = pb::ListTxnRequest { filter, before_id: None };
            Ok(q.audit.list_txn(req).await?.into_inner().rows.len())
        }
    })
    .await?;
    let q = cl.clone();
    let explained = time(&format!("preemption (scontrol explain job {job_id})"), || {
        let mut q = q.clone();
        async move {
            let req = pb::ExplainRequest { job_id, candidate_id: None };
            Ok(q.jobs.explain(req).await?.into_inner())
        }
    })
    .await?;
    println!("  explain: {} candidates considered; {}", explained.considered, explained.outcome);
    println!(
        "spurctld resident after the panes: {} MiB now, {} MiB peak",
        rss_kib(c.pid(), "VmRSS:") / 1024,
        rss_kib(c.pid(), "VmHWM:") / 1024
    );
    // A bulk operation: every pending job cancelled by one filter, as
    // `scancel --state=PENDING` sends it; memory must stay near one chunk's.
    let before = rss_kib(c.pid(), "VmRSS:");
    let t = Instant::now();
    let filter = vec![pb::KeyValue { key: "state".into(), value: "PENDING".into() }];
    let req = pb::CancelRequest { ids: vec![], filter, signal: 0 };
    let cancelled = cl.jobs.cancel(req).await?.into_inner().cancelled.len();
    println!(
        "cancelled {cancelled} pending jobs in one request: {:.1} s; resident {} -> {} MiB, peak {} MiB",
        t.elapsed().as_secs_f64(),
        before / 1024,
        rss_kib(c.pid(), "VmRSS:") / 1024,
        rss_kib(c.pid(), "VmHWM:") / 1024
    );
    agent.abort();
    Ok(())
}
