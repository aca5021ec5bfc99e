//! One pure scheduler pass (`sched::schedule`) with EASY backfill over a
//! synthetic cluster: a mixed queue (small, multi-node exclusive, GPU and
//! wide jobs) from 200 users in 10 accounts under QOS limits, with a third of
//! the nodes busy with running jobs whose ends the reservation plans around.
//! Targets: 10,000 pending × 1,000 nodes under 50 ms; 100,000 × 5,000 under 1 s.
//! Each size runs with the default `queue_depth` (64) and with no bound.
//! Each size also prints one pass over a full cluster with preemption on
//! (every pending job weighed against every running one) and the resident
//! memory its plan holds.
//! Then idle-fill: the same size of queue with 2,000 borrow candidates and
//! 500 borrowed runs, on and off (target: on within 1.5× of off).
//! Provisioner definitions: the same queue with 20 definitions, each with a
//! policy and annotations, half the jobs annotated (target: under 2× the
//! pass without; `SPUR_BENCH_PROVISION=1` runs that pair alone).
//! Reservations: 50 windows (half in force, half upcoming) over the same
//! queue (target: within 1.3× of none; `SPUR_BENCH_RESV=1` runs that pair alone,
//! first interleaved, the fastest of 200 passes each, since load on a shared
//! machine skews two criterion runs one after the other).
//! Last, one pass at a million pending jobs × 10,000 nodes (target under
//! 1 s), timed once with its memory.
//! Run with `cargo bench -p spur-daemon --bench sched` (`-- nomatch` prints
//! only the one-shot figures).

use criterion::{Criterion, criterion_group, criterion_main};
use spur_daemon::accounting::Catalog;
use spur_daemon::model::{Account, Assoc, Partition, Qos, User};
use spur_daemon::sched::job::ArrayAsk;
use spur_daemon::sched::model::Resv;
use spur_daemon::sched::{
    Job, JobState, PreemptConfig, SchedConfig, SchedNode, Scratch, Snapshot, schedule, schedule_with,
};
use spur_vocab::names::PreemptMode;
use spur_vocab::resv::ResvFlags;
use spur_vocab::tres::parse_map;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

const NOW: i64 = 1_700_000_000_000;
const MIN: i64 = 60_000;

/// A small deterministic generator, so every run schedules the same queue.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

fn partition(name: &str, nodes: Vec<String>) -> Partition {
    Partition {
        name: name.into(),
        nodes,
        is_default: name == "batch",
        max_time: Some(7 * 1440),
        default_time: None,
        priority_tier: 1,
        preempt_mode: PreemptMode::Off,
        preempt_exempt_time: None,
        state: "UP".into(),
    }
}

fn catalog() -> Catalog {
    let mut c = Catalog { loaded: true, ..Catalog::default() };
    let normal = Qos { name: "normal".into(), max_jobs_per_user: Some(400), ..Qos::default() };
    let gpu = Qos {
        name: "gpu".into(),
        priority: 500,
        grp_tres: parse_map("gres/gpu=256,node=60").unwrap_or_default(),
        max_tres_per_user: parse_map("gres/gpu=32").unwrap_or_default(),
        ..Qos::default()
    };
    c.qos.insert("normal".into(), normal);
    c.qos.insert("gpu".into(), gpu);
    for a in 0..10 {
        let name = format!("acct{a}");
        let acct = Account {
            name: name.clone(),
            fairshare: 1.0 + a as f64,
            max_jobs: Some(3000),
            ..Account::default()
        };
        c.accounts.insert(name, acct);
    }
    for u in 0..200 {
        let name = format!("user{u:03}");
        let account = format!("acct{}", u % 10);
        let assoc = Assoc { account: account.clone(), max_jobs: Some(300), ..Assoc::default() };
        c.users.insert(
            name.clone(),
            User { name, default_account: account, assocs: vec![assoc], ..User::default() },
        );
    }
    c
}

/// `pending` queued jobs on `nodes` nodes (a tenth of them GPU nodes).
fn snapshot(pending: usize, nodes: usize, queue_depth: usize) -> Snapshot {
    shaped(pending, nodes, queue_depth, 3)
}

/// `snapshot`, with every `busy_every`-th node running a job; with 1 the
/// cluster is full and no job has a time limit (sbatch's default under an
/// UNLIMITED partition), so every pending job is blocked on resources and
/// weighed for preemption against the running ones.
fn shaped(pending: usize, nodes: usize, queue_depth: usize, busy_every: usize) -> Snapshot {
    let unbounded = busy_every == 1;
    let mut rng = Lcg(42);
    let gpu_nodes = nodes / 10;
    let mut list: Vec<SchedNode> = (0..nodes)
        .map(|i| {
            let mut n = if i < gpu_nodes {
                SchedNode::idle(&format!("g{i:05}"), 32, 512_000, 8)
            } else {
                SchedNode::idle(&format!("c{i:05}"), 64, 256_000, 0)
            };
            n.weight = 1 + (i % 4) as u32;
            n
        })
        .collect();
    let gpu_names: Vec<String> = list[..gpu_nodes].iter().map(|n| n.name.clone()).collect();
    let cpu_names: Vec<String> = list[gpu_nodes..].iter().map(|n| n.name.clone()).collect();
    let mut jobs = Vec::with_capacity(pending + nodes);
    // A third of the nodes (by default) run an exclusive job ending within the next 8 hours.
    for (i, n) in list.iter_mut().enumerate().filter(|(i, _)| i % busy_every == 0) {
        (n.free_cpus, n.free_mem_mb, n.free_gpus) = (0, 0, 0);
        let user = format!("user{:03}", rng.next(200));
        let part = if i < gpu_nodes { "gpu" } else { "batch" };
        jobs.push(Job {
            account: Some(format!("acct{}", user[4..].parse::<u64>().unwrap_or(0) % 10)),
            qos: Some(if i < gpu_nodes { "gpu" } else { "normal" }.into()),
            exclusive: true,
            time_limit: (!unbounded).then_some(480),
            state: JobState::Running {
                nodes: vec![n.name.clone()],
                start_ms: NOW - rng.next(480) as i64 * MIN,
            },
            ..Job::new(1_000_000 + i as u64, &user, part)
        });
    }
    for id in 0..pending as u64 {
        let user = format!("user{:03}", rng.next(200));
        let account = Some(format!("acct{}", user[4..].parse::<u64>().unwrap_or(0) % 10));
        let base = Job {
            account,
            qos: Some("normal".into()),
            submit_ms: NOW - rng.next(7 * 1440) as i64 * MIN,
            time_limit: (!unbounded).then(|| 10 + rng.next(1430)),
            mem_mb: 1000 * (1 + rng.next(8)),
            ..Job::new(id, &user, "batch")
        };
        let job = match rng.next(100) {
            0..70 => Job { ntasks: 1 + rng.next(16) as u32, ..base },
            70..90 => Job { num_nodes: 2 + rng.next(7) as u32, exclusive: true, ..base },
            90..95 => Job {
                partition: "gpu".into(),
                qos: Some("gpu".into()),
                ntasks: 4,
                gpus: 1 + rng.next(4),
                ..base
            },
            _ => Job { num_nodes: 32 + rng.next(97) as u32, exclusive: true, ..base },
        };
        jobs.push(job);
    }
    Snapshot {
        nodes: list,
        partitions: vec![partition("batch", cpu_names), partition("gpu", gpu_names)],
        jobs,
        catalog: Arc::new(catalog()),
        config: SchedConfig {
            backfill_enabled: true,
            queue_depth,
            accounting_enabled: true,
            ..SchedConfig::default()
        },
        ..Snapshot::default()
    }
}

fn bench(c: &mut Criterion) {
    // `SPUR_BENCH_MILLION=1 cargo bench -p spur-daemon --bench sched`: the million pass alone.
    if std::env::var_os("SPUR_BENCH_MILLION").is_some() {
        return million();
    }
    // `SPUR_BENCH_ARRAY=1 cargo bench -p spur-daemon --bench sched`: the array pair alone.
    if std::env::var_os("SPUR_BENCH_ARRAY").is_some() {
        return array(c);
    }
    // `SPUR_BENCH_PROVISION=1 cargo bench -p spur-daemon --bench sched`: the provisioner pair alone.
    if std::env::var_os("SPUR_BENCH_PROVISION").is_some() {
        return provision(c);
    }
    // `SPUR_BENCH_RESV=1 cargo bench -p spur-daemon --bench sched`: the reservations pair alone.
    if std::env::var_os("SPUR_BENCH_RESV").is_some() {
        return reservations(c);
    }
    // `SPUR_BENCH_IDLE_FILL=1 cargo bench -p spur-daemon --bench sched`: the idle-fill pair alone.
    if std::env::var_os("SPUR_BENCH_IDLE_FILL").is_some() {
        return idle_fill(c);
    }
    let sizes = [(10_000, 1_000), (100_000, 5_000)];
    for (pending, nodes) in sizes {
        for (depth, label) in
            [(SchedConfig::default().queue_depth, "queue_depth 64"), (usize::MAX, "no queue_depth")]
        {
            let snap = snapshot(pending, nodes, depth);
            let plan = schedule(&snap, NOW);
            assert_eq!(plan.starts.len() + plan.pending.len(), pending, "every pending job is decided");
            assert!(!plan.starts.is_empty() && !plan.reservations.is_empty());
            println!(
                "{pending} pending × {nodes} nodes, {label}: {} starts, {} reservations",
                plan.starts.len(),
                plan.reservations.len()
            );
            let name = format!("schedule {pending} pending x {nodes} nodes, backfill, {label}");
            c.bench_function(&name, |b| b.iter(|| schedule(black_box(&snap), NOW)));
        }
        // The same queue with preemption weighed for every job blocked on resources.
        let mut snap = snapshot(pending, nodes, SchedConfig::default().queue_depth);
        snap.config.preempt =
            PreemptConfig { enabled: true, min_runtime_secs: 0, ..PreemptConfig::default() };
        snap.partitions.iter_mut().for_each(|p| p.preempt_mode = PreemptMode::Requeue);
        let plan = schedule(&snap, NOW);
        println!(
            "{pending} pending × {nodes} nodes, preemption on: {} verdicts, {} evictions",
            plan.verdicts.len(),
            plan.preemptions.len()
        );
        let name = format!("schedule {pending} pending x {nodes} nodes, backfill, preemption on");
        c.bench_function(&name, |b| b.iter(|| schedule(black_box(&snap), NOW)));
        full_cluster_memory(pending, nodes);
    }
    array(c);
    idle_fill(c);
    // Last, so its freed memory does not hide what the plans above hold.
    million();
}

/// A pass with one 100,000-task array pending (one record, as the
/// controller holds it) beside 10,000 pending jobs on 1,000 nodes, against
/// the same pass without it: the array must cost about one job, not 100,000.
fn array(c: &mut Criterion) {
    let plain = snapshot(10_000, 1_000, SchedConfig::default().queue_depth);
    let mut with = plain.clone();
    with.jobs.push(Job {
        account: Some("acct1".into()),
        qos: Some("normal".into()),
        submit_ms: NOW,
        time_limit: Some(60),
        array: Some(ArrayAsk { pending: 100_000, throttle: 0, running: 0 }),
        ..Job::new(2_000_000, "user001", "batch")
    });
    let plan = schedule(&with, NOW);
    let started = plan.starts.iter().filter(|s| s.job == 2_000_000).count();
    println!("10000 pending + a 100000-task array × 1000 nodes: {started} of its tasks start in the pass");
    c.bench_function("schedule 10000 pending x 1000 nodes, queue_depth 64", |b| {
        b.iter(|| schedule(black_box(&plain), NOW))
    });
    c.bench_function("schedule 10000 pending + a 100000-task array x 1000 nodes, queue_depth 64", |b| {
        b.iter(|| schedule(black_box(&with), NOW))
    });
}

/// 20 static definitions of 50 nodes each (the first two the GPU nodes), each
/// with a policy and annotations; half the pending jobs carry a `tier`
/// annotation that five definitions match. Each pass first refreshes the
/// verdicts from the cache, as the controller does.
fn provision(c: &mut Criterion) {
    use spur_daemon::sched::provision::{AdmitCache, parse, prepare};
    let plain = snapshot(10_000, 1_000, SchedConfig::default().queue_depth);
    let mut yaml = String::from("definitions:\n");
    for i in 0..20 {
        yaml.push_str(&format!(
            "- id: pool{i}\n  provisioner: static\n  annotations: {{tier: t{}, nvidia.com/gpu.count: {}}}\n  \
             policy: request.job_resource.cpu.cores <= 64 && request.owner.account_id != \"acct{i}x\" && \
             request.multinode_nodes <= definition.nodes\n  \
             provisionerSpec: {{condition: 'true', costPerHour: {}}}\n",
            i % 4,
            if i < 2 { 8 } else { 0 },
            (i % 5) as f64 * 0.25
        ));
    }
    let p = Arc::new(parse(&yaml, 1).expect("bench yaml"));
    let mut with = plain.clone();
    for (i, n) in with.nodes.iter_mut().enumerate() {
        n.definitions = vec![(i / 50) as u16];
    }
    for (k, j) in with.jobs.iter_mut().enumerate().filter(|(_, j)| j.is_pending()) {
        if k % 2 == 0 {
            j.annotations = vec![("tier".into(), format!("t{}", k % 4 / 2 * 2))];
        }
    }
    with.provision = Some(p);
    let mut cache = AdmitCache::default();
    let t = std::time::Instant::now();
    prepare(&mut with, &mut cache, NOW);
    println!(
        "provisioner verdicts, cold: {:.1} ms for {} pending jobs ({} distinct requests)",
        t.elapsed().as_secs_f64() * 1e3,
        with.admits.len(),
        cache.len()
    );
    let plan = schedule(&with, NOW);
    println!("with 20 definitions: {} starts, {} pending", plan.starts.len(), plan.pending.len());
    let plain_plan = schedule(&plain, NOW);
    println!("without: {} starts, {} pending", plain_plan.starts.len(), plain_plan.pending.len());
    c.bench_function("schedule 10000 pending x 1000 nodes, no definitions", |b| {
        b.iter(|| schedule(black_box(&plain), NOW))
    });
    c.bench_function("provisioner verdicts from the cache alone, 10000 pending", |b| {
        b.iter(|| prepare(black_box(&mut with), &mut cache, NOW))
    });
    c.bench_function("schedule 10000 pending x 1000 nodes, 20 definitions (the pass alone)", |b| {
        b.iter(|| schedule(black_box(&with), NOW))
    });
    c.bench_function("schedule 10000 pending x 1000 nodes, 20 definitions (verdicts from the cache)", |b| {
        b.iter(|| {
            prepare(&mut with, &mut cache, NOW);
            schedule(black_box(&with), NOW)
        })
    });
}

/// Idle-fill on a busy queue: 10,000 pending × 1,000 nodes where half the
/// nodes run a job, 499 of them borrowed runs of QOS `team` (capped at one
/// node, which its one in-quota run holds) and 2,000 of the pending jobs are
/// team's, over its cap: borrow candidates. Against the same pass with
/// idle-fill off (target: within 1.5×): lending, the ceilings and reclaim
/// attempts for blocked jobs with a claim are the difference.
fn idle_fill(c: &mut Criterion) {
    let mut on = shaped(10_000, 1_000, SchedConfig::default().queue_depth, 2);
    let mut cat = catalog();
    let team =
        Qos { name: "team".into(), grp_tres: parse_map("node=1").unwrap_or_default(), ..Qos::default() };
    cat.qos.insert("team".into(), team);
    on.catalog = Arc::new(cat);
    let mut running = 0;
    for j in on.jobs.iter_mut().filter(|j| j.is_running() && j.partition == "batch") {
        j.qos = Some("team".into());
        j.time_limit = Some(480);
        j.borrowed = running > 0;
        running += 1;
        if running == 500 {
            break;
        }
    }
    for j in on.jobs.iter_mut().filter(|j| !j.is_running() && j.partition == "batch").take(2_000) {
        j.qos = Some("team".into());
    }
    on.config.idle_fill.enabled = true;
    let mut off = on.clone();
    off.config.idle_fill.enabled = false;
    let plan = schedule(&on, NOW);
    let borrowed = plan.starts.iter().filter(|s| s.borrowed).count();
    let reclaims = plan.preemptions.iter().filter(|p| p.reclaim).count();
    println!(
        "10000 pending (2000 borrow candidates) + 500 borrowed runs × 1000 nodes: {borrowed} loans, {reclaims} reclaims"
    );
    c.bench_function("schedule 10000 pending x 1000 nodes, 500 borrowed runs, idle-fill off", |b| {
        b.iter(|| schedule(black_box(&off), NOW))
    });
    c.bench_function("schedule 10000 pending x 1000 nodes, 500 borrowed runs, idle-fill on", |b| {
        b.iter(|| schedule(black_box(&on), NOW))
    });
}

/// 50 admin reservations over the same queue: 25 in force and 25 starting
/// within two hours, ten nodes each (half the cluster in some window), one
/// in five jobs naming one of them (target: within 1.3x of none).
fn reservations(c: &mut Criterion) {
    let none = snapshot(10_000, 1_000, SchedConfig::default().queue_depth);
    let mut with = none.clone();
    let names: Vec<String> = none.nodes.iter().map(|n| n.name.clone()).collect();
    let resvs: Vec<Resv> = (0..50)
        .map(|k| {
            let start = if k < 25 { NOW - 10 * MIN } else { NOW + (k as i64 - 20) * 5 * MIN };
            Resv {
                name: format!("r{k}"),
                start_ms: start,
                end_ms: start + 240 * MIN,
                nodes: names[k * 10..k * 10 + 10].to_vec(),
                partition: String::new(),
                users: (0..200).filter(|u| u % 50 == k % 50).map(|u| format!("user{u:03}")).collect(),
                users_deny: false,
                accounts: vec![],
                accounts_deny: false,
                licenses: vec![],
                flags: if k % 2 == 0 { ResvFlags::MAINT.bits() } else { 0 },
            }
        })
        .collect();
    for (i, j) in with
        .jobs
        .iter_mut()
        .filter(|j| !j.is_running())
        .enumerate()
        .filter(|(i, _)| i % 5 == 0 && std::env::var_os("NOMEM").is_none())
    {
        j.reservation = Some(format!("r{}", i % 50));
    }
    with.resvs = Arc::new(resvs);
    let plan = schedule(&with, NOW);
    println!(
        "10000 pending x 1000 nodes, 50 reservations: {} started, {} pending",
        plan.starts.len(),
        plan.pending.len()
    );
    // Interleaved, so load on a shared machine weighs on both alike: the
    // fastest of 200 passes each, and the ratio the target is about.
    // Each case keeps its pass's buffers from one pass to the next, as the controller does.
    let (mut best_none, mut best_with) = (Duration::MAX, Duration::MAX);
    let (mut scratch_none, mut scratch_with) = (Scratch::default(), Scratch::default());
    for _ in 0..200 {
        let t = std::time::Instant::now();
        black_box(schedule_with(black_box(&none), NOW, &mut scratch_none));
        best_none = best_none.min(t.elapsed());
        let t = std::time::Instant::now();
        black_box(schedule_with(black_box(&with), NOW, &mut scratch_with));
        best_with = best_with.min(t.elapsed());
    }
    println!(
        "interleaved, fastest of 200: none {:.2} ms, 50 reservations {:.2} ms ({:.2}x)",
        best_none.as_secs_f64() * 1e3,
        best_with.as_secs_f64() * 1e3,
        best_with.as_secs_f64() / best_none.as_secs_f64()
    );
    c.bench_function("schedule 10000 pending x 1000 nodes, no reservations", |b| {
        b.iter(|| schedule_with(black_box(&none), NOW, &mut scratch_none))
    });
    c.bench_function("schedule 10000 pending x 1000 nodes, 50 reservations", |b| {
        b.iter(|| schedule_with(black_box(&with), NOW, &mut scratch_with))
    });
}

/// A full cluster with preemption on: every pending job is weighed against
/// the running ones, and one in 20 is in an `urgent` QOS whose priority
/// passes the gap, so victims are chosen up to the per-pass cap. Prints the
/// pass time and what holding its plan costs in resident memory (the
/// controller keeps the last plan for `explain`), which must grow with the
/// pending jobs, not with pending × running.
fn full_cluster_memory(pending: usize, nodes: usize) {
    let mut snap = shaped(pending, nodes, SchedConfig::default().queue_depth, 1);
    snap.config.preempt = PreemptConfig { enabled: true, min_runtime_secs: 0, ..PreemptConfig::default() };
    let mut cat = catalog();
    let urgent = Qos { name: "urgent".into(), priority: 5000, ..Qos::default() };
    cat.qos.insert("urgent".into(), urgent);
    snap.catalog = Arc::new(cat);
    (snap.jobs.iter_mut().filter(|j| j.is_pending() && j.partition == "batch").step_by(20))
        .for_each(|j| j.qos = Some("urgent".into()));
    snap.partitions.iter_mut().for_each(|p| (p.preempt_mode, p.max_time) = (PreemptMode::Requeue, None));
    let before = rss_kib();
    let t = std::time::Instant::now();
    let plan = schedule(&snap, NOW);
    let took = t.elapsed();
    let held = rss_kib().saturating_sub(before);
    println!(
        "{pending} pending × {nodes} running (full cluster, no time limits), preemption on: pass {:.1} ms, \
         {} verdicts, {} evictions, plan held: {:.1} MiB resident ({} bytes a pending job)",
        took.as_secs_f64() * 1000.0,
        plan.verdicts.len(),
        plan.preemptions.len(),
        held as f64 / 1024.0,
        held * 1024 / pending.max(1) as u64
    );
    black_box(plan);
}

/// One pass over 1,000,000 pending jobs × 10,000 nodes (a third busy) with
/// backfill, timed once: the figure for a controller at a million jobs.
/// Prints the pass time, the resident memory of the snapshot the controller
/// would hold, and the plan's.
fn million() {
    let before = rss_kib();
    let t = std::time::Instant::now();
    let snap = snapshot(1_000_000, 10_000, SchedConfig::default().queue_depth);
    let built = t.elapsed();
    let held = rss_kib().saturating_sub(before);
    let t = std::time::Instant::now();
    let plan = schedule(&snap, NOW);
    let took = t.elapsed();
    let peak = peak_rss_kib();
    println!(
        "1000000 pending × 10000 nodes, backfill, queue_depth 64: pass {:.0} ms, {} starts, {} reservations; \
         snapshot {:.0} MiB resident (built in {:.1} s), peak {:.0} MiB",
        took.as_secs_f64() * 1000.0,
        plan.starts.len(),
        plan.reservations.len(),
        held as f64 / 1024.0,
        built.as_secs_f64(),
        peak as f64 / 1024.0
    );
}

/// This process's resident memory in KiB, from /proc (0 where there is none).
fn rss_kib() -> u64 {
    status_kib("VmRSS:")
}

/// This process's peak resident memory in KiB.
fn peak_rss_kib() -> u64 {
    status_kib("VmHWM:")
}

fn status_kib(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap_or("");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0)
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
