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
use spur_daemon::jobs::record::JobRecord;
use spur_proto::v1 as pb;
use spur_proto::v1::agent_client::AgentClient;
use spur_tests::proc::{Controller, conf};
use spur_tests::seed;
use spur_tests::wait::wait_until;
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
        script: seed::script(id),
        env: seed::env(id),
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
        reason: Some(spur_vocab::reason::ReasonCode::Priority),
        ..base(id, now_ms)
    }
}

/// MiB of a KiB figure from /proc (0 where there is none).
fn mib(kib: Option<u64>) -> u64 {
    kib.unwrap_or(0) / 1024
}

/// One figure from spurctld's `/metrics`.
fn metric(c: &Controller, name: &str) -> f64 {
    let body = tokio::task::block_in_place(|| c.metrics_text());
    let line = body.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or("");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0.0)
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
    let now = spur_daemon::store::now_ms();
    seed::jobs(&db, 1..=run + pend, |id| if id <= run { running(id, now) } else { pending(id, now) }).await?;
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
    println!("spurctld up in {:.1} s: {} MiB resident", t.elapsed().as_secs_f64(), mib(c.rss_kib()));

    let names: Vec<String> = (1..=run).map(node).collect();
    let jobs: Vec<pb::RunningJob> =
        (1..=run).map(|id| pb::RunningJob { job_id: id, node: node(id), run_id: String::new() }).collect();
    let agent = tokio::spawn(play_agent(c.url.clone(), names, jobs));

    // Passes counted from the agent's registration, when the nodes are up.
    let me = Identity::asserted("root", Some(0));
    let mut cl = conn::connect(&c.url, me).await?;
    let up =
        |ns: &[pb::Node]| ns.iter().filter(|n| n.base_state != "UNKNOWN" && n.base_state != "DOWN").count();
    wait_until("the simulated nodes to come up", || {
        let mut cl = cl.clone();
        async move {
            let nodes = cl.nodes.list_nodes(pb::ListRequest::default()).await.map_err(|e| e.to_string())?;
            let n = up(&nodes.into_inner().nodes);
            if n < run as usize { Err(format!("{n} of {run} up")) } else { Ok(()) }
        }
    })
    .await;
    let first = metric(&c, "spur_sched_passes_total") as u64;
    wait_until(format!("{PASSES} scheduler passes"), || async {
        (metric(&c, "spur_sched_passes_total") as u64 >= first + PASSES).then_some(())
    })
    .await;
    let last = metric(&c, "spur_sched_last_pass_seconds");
    let max = metric(&c, "spur_sched_max_pass_seconds");
    let (n, total) = (metric(&c, "spur_sched_passes_total"), metric(&c, "spur_sched_pass_seconds_total"));
    println!(
        "{pend} pending x {run} running, preemption and backfill on: pass {:.1} ms (mean {:.1}, max {:.1} over {n} passes)",
        last * 1e3,
        total / n.max(1.0) * 1e3,
        max * 1e3
    );
    println!("spurctld resident: {} MiB now, {} MiB peak", mib(c.rss_kib()), mib(c.peak_rss_kib()));

    println!("the console's panes and explain, answering on this queue:");
    let view = |v: &str| vec![pb::KeyValue { key: "view".into(), value: v.into() }];
    let q = cl.clone();
    let listed = time("jobs (ListJobs, full view, as the console fetches it)", || {
        let mut q = q.clone();
        async move { Ok(q.jobs.list_jobs(pb::ListRequest::default()).await?.into_inner().jobs) }
    })
    .await?;
    // An urgent job still pending (they start oldest first, as victims are evicted), else any pending one.
    let pending_ids: Vec<u64> =
        listed.iter().filter(|j| j.job_state() == JobState::Pending).map(|j| j.id).collect();
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
        mib(c.rss_kib()),
        mib(c.peak_rss_kib())
    );
    // A bulk operation: every pending job cancelled by one filter, as
    // `scancel --state=PENDING` sends it; memory must stay near one chunk's.
    let before = mib(c.rss_kib());
    let t = Instant::now();
    let filter = vec![pb::KeyValue { key: "state".into(), value: "PENDING".into() }];
    let req = pb::CancelRequest { filter, ..Default::default() };
    let cancelled = cl.jobs.cancel(req).await?.into_inner().cancelled.len();
    println!(
        "cancelled {cancelled} pending jobs in one request: {:.1} s; resident {} -> {} MiB, peak {} MiB",
        t.elapsed().as_secs_f64(),
        before,
        mib(c.rss_kib()),
        mib(c.peak_rss_kib())
    );
    agent.abort();
    Ok(())
}
