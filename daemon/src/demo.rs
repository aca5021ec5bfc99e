//! An in-process controller for `spur-console --demo`: the embedded SQLite
//! store in a caller-owned directory, seeded with a small cluster's
//! accounting, licenses, hierarchical resources and reservations so every pane has life.
//! Its users' ongoing work (submits, cancels, a drain and resume, a staged
//! preemption) goes through the RPCs a client would use (`live.rs`), so each
//! makes its audit row.

use crate::accounting::{Caller, SetMode};
use crate::agent::AgentOpts;
use crate::config::Config;
use crate::controller::{self, Running};
use spur_vocab::keys::Entity;
use std::path::Path;

mod live;

pub struct Demo {
    running: Running,
    agents: Vec<tokio::task::JoinHandle<()>>,
    /// The agents' state directories.
    spools: Vec<std::path::PathBuf>,
}

impl Demo {
    pub fn url(&self) -> String {
        format!("http://{}", self.running.addr())
    }

    pub async fn shutdown(self) {
        for a in &self.agents {
            a.abort();
        }
        // The demo's jobs go with it, though jobs outlive a real agent.
        for dir in &self.spools {
            crate::agent::state::StateDir(dir.clone()).kill_all();
        }
        if let Err(e) = self.running.shutdown().await {
            tracing::warn!(error = %e, "demo controller did not stop cleanly");
        }
    }
}

/// The demo's seed, as the sacctmgr lines an admin would type.
const SEED: &[(Entity, &str)] = &[
    (Entity::Qos, "name=burst priority=-5000 preemptmode=requeue description=overflow"),
    (Entity::Qos, "name=normal priority=0 preempt=burst maxwall=1-00:00:00 maxjobsperuser=20"),
    (
        Entity::Qos,
        "name=highprio priority=100 maxjobsperuser=8 maxwall=1-00:00:00 maxtresperjob=node=2,cpu=64 grptres=gres/gpu=8 preemptmode=cancel",
    ),
    (Entity::Qos, "name=reserved priority=50000 flags=DenyOnLimit grpwall=10:00"),
    // One node of its own; idle-fill lends it more (examples/demo/spur.conf turns it on).
    (Entity::Qos, "name=ifteam priority=0 grptres=node=1 description=idle-fill"),
    (Entity::Account, "name=research description=Research organization=science fairshare=100"),
    (Entity::Account, "name=ml parent=research fairshare=50 grptres=gres/gpu=16"),
    (Entity::Account, "name=physics parent=research fairshare=30 maxjobs=40"),
    (Entity::Account, "name=ops description=Operations organization=it fairshare=10"),
    (Entity::User, "name=alice account=ml qos=highprio,normal defaultqos=highprio"),
    (Entity::User, "name=bob account=research adminlevel=Admin"),
    (Entity::User, "name=carol account=ml maxjobs=4 maxsubmitjobs=8 maxwall=1-00:00:00 grptres=cpu=64"),
    (Entity::User, "name=dave account=physics qos=normal,burst defaultqos=normal"),
    (Entity::User, "name=erin account=ops adminlevel=Operator"),
    (Entity::User, "name=frank account=physics qos=ifteam defaultqos=ifteam"),
];

/// The demo cluster's nodes and partitions, as an admin would write them in spur.conf.
const CLUSTER: &str = include_str!("../../examples/demo/spur.conf");

/// The demo's hierarchical resources, written beside its spur.conf.
const RESOURCES: &str = include_str!("../../examples/demo/resources.yaml");
/// The demo QPU's hres/lua plugin, written beside resources.yaml.
const QPU_LUA: &str = include_str!("../../examples/demo/qpu.lua");

/// The demo's provisioner definitions and the facts overrides that give it its pools.
const PROVISIONERS: &str = include_str!("../../examples/demo/provisioners.yaml");
const FACTS: &str = include_str!("../../examples/demo/facts.yaml");

/// Jobs that exercise the definitions: (user, account, partition, annotation, seconds).
/// The last asks for a tier no definition offers, so it pends with NoProvisionerDefinition.
const POOL_JOBS: &[(&str, &str, &str, &str, u64)] = &[
    ("alice", "ml", "gpu", "nvidia.com/gpu.product=a100", 45),
    ("dave", "physics", "batch", "memory.class=high", 60),
    ("carol", "ml", "batch", "", 30),
    ("bob", "research", "batch", "tier=gold", 30),
];

/// Keeps one of each pool job active.
fn spawn_pool_jobs(
    jobs: std::sync::Arc<crate::jobs::JobService>,
    client: live::Client,
    dir: std::path::PathBuf,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(5));
        loop {
            tick.tick().await;
            for (i, (user, account, part, annotation, secs)) in POOL_JOBS.iter().enumerate() {
                let name = format!("pool{i}");
                if jobs.jobs().iter().any(|j| j.is_active() && j.name == name) {
                    continue;
                }
                let annotations = (annotation.split_once('='))
                    .map(|(k, v)| spur_proto::v1::KeyValue { key: k.into(), value: v.into() })
                    .into_iter()
                    .collect();
                let spec = spur_proto::v1::JobSpec {
                    partition: (*part).into(),
                    ntasks: 4,
                    annotations,
                    ..sleeper(name, account, *secs, &dir)
                };
                client.submit(user, spec).await;
            }
        }
    })
}

/// One node, one task, a 10-minute limit, sleeping `secs` with its output discarded.
fn sleeper(name: String, account: &str, secs: u64, dir: &Path) -> spur_proto::v1::JobSpec {
    spur_proto::v1::JobSpec {
        name,
        account: account.into(),
        num_nodes: 1,
        ntasks: 1,
        cpus_per_task: 1,
        time_limit_minutes: Some(10),
        script: format!("#!/bin/sh\nsleep {secs}\n"),
        workdir: dir.display().to_string(),
        stdout_path: "/dev/null".into(),
        ..Default::default()
    }
}

/// A demo job: (user, account, qos, nodes, cpus, seconds, licenses).
type Submit = (&'static str, &'static str, &'static str, u32, u32, u64, &'static str);

/// Who submits what in the demo; the licenses keep the HRES pane moving.
const STREAM: &[Submit] = &[
    ("alice", "ml", "highprio", 1, 8, 40, "power:300"),
    ("carol", "ml", "", 1, 4, 25, "scratch:6"),
    ("dave", "physics", "normal", 2, 16, 60, "bandwidth:2,power:200"),
    ("dave", "physics", "burst", 1, 2, 15, "matlab:1"),
    ("alice", "ml", "normal", 1, 16, 90, "scratch:8"),
    ("carol", "ml", "", 4, 16, 120, "power:250"),
    ("bob", "research", "", 1, 1, 10, ""),
    ("carol", "ml", "", 1, 2, 45, "qpu:1[mode=fast]"),
];

/// Keeps a trickle of jobs coming so the queue has running and pending work.
fn spawn_job_stream(
    jobs: std::sync::Arc<crate::jobs::JobService>,
    client: live::Client,
    dir: std::path::PathBuf,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(3));
        for (i, (user, account, qos, nodes, cpus, secs, licenses)) in STREAM.iter().cycle().enumerate() {
            tick.tick().await;
            let active = jobs.jobs().iter().filter(|j| j.is_active()).count();
            if active >= 24 {
                continue;
            }
            let spec = spur_proto::v1::JobSpec {
                qos: (*qos).into(),
                num_nodes: *nodes,
                ntasks: *cpus,
                licenses: (*licenses).into(),
                ..sleeper(format!("demo{i}"), account, *secs, &dir)
            };
            client.submit(user, spec).await;
        }
    })
}

/// The idle-fill team: (user, account, QOS, partition, jobs kept active).
/// frank's QOS may hold one node, and the demo's stream uses only one of the
/// three gpu nodes (its GPU-pool job), so of his two whole-node jobs one runs in quota and the other
/// on the idle gpu node idle-fill lends it. Whichever ends is replaced, and
/// the pair settles the same way again: no license (a licensed job is never
/// lent) and a time limit (a job without one is never lent either).
const TEAM: (&str, &str, &str, &str, usize) = ("frank", "physics", "ifteam", "gpu", 2);

/// Keeps the team's jobs coming, as [`spawn_job_stream`] does the others.
fn spawn_team(
    jobs: std::sync::Arc<crate::jobs::JobService>,
    client: live::Client,
    dir: std::path::PathBuf,
) -> tokio::task::JoinHandle<()> {
    let (user, account, qos, partition, keep) = TEAM;
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(3));
        for i in 0u64.. {
            tick.tick().await;
            if jobs.jobs().iter().filter(|j| j.is_active() && j.user == user).count() >= keep {
                continue;
            }
            let spec = spur_proto::v1::JobSpec {
                qos: qos.into(),
                partition: partition.into(),
                // A whole node each, so two jobs need two nodes and the cap bites.
                exclusive: true,
                time_limit_minutes: Some(30),
                // Staggered, so the in-quota and the borrowed run do not end together.
                ..sleeper(format!("team{i}"), account, 150 + 60 * (i % 3), &dir)
            };
            client.submit(user, spec).await;
        }
    })
}

/// Starts the demo in `dir`; `stepd` supervises its jobs (a program that
/// answers `__stepd`: spurd, or spur-console itself).
pub async fn start_demo(dir: &Path, stepd: std::path::PathBuf) -> anyhow::Result<Demo> {
    let path = dir.join("spur.conf");
    let db = dir.join("spur.db");
    std::fs::write(
        &path,
        format!("{CLUSTER}\n[accounting]\ndatabase_url = \"sqlite://{}\"\n", db.display()),
    )?;
    std::fs::write(dir.join("resources.yaml"), RESOURCES)?;
    std::fs::write(dir.join("qpu.lua"), QPU_LUA)?;
    std::fs::write(dir.join("provisioners.yaml"), PROVISIONERS)?;
    let cfg = Config::load(&path)?;
    let running = controller::start(cfg, "127.0.0.1:0").await?;
    let caller = Caller {
        user: "demo".into(),
        peer: "127.0.0.1:0".into(),
        role: crate::auth::Role::Administrator,
        ..Caller::default()
    };
    for (entity, line) in SEED {
        let pairs: Vec<(String, String)> = line
            .split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        running.acct.set(*entity, &caller, SetMode::Add, &[], &pairs, false).await?;
    }
    // Whoever runs the demo administers it.
    let me = spur_proto::wire::local_user();
    if spur_vocab::keys::parse_name(&me).is_ok() {
        let pairs = [("name", me.as_str()), ("account", "ops"), ("adminlevel", "Admin")]
            .map(|(k, v)| (k.to_string(), v.to_string()));
        running.acct.set(Entity::User, &caller, SetMode::Add, &[], &pairs, false).await?;
    }
    seed_reservations(&running.jobs).await?;
    let url = format!("http://{}", running.addr());
    // Two agents host the nodes, as two spurd processes would.
    let spool = |host: &str| dir.join("spool").join(host);
    let hosts = [("node[01-06]", "demo-a"), ("gpu[01-03]", "demo-b")];
    let facts = crate::agent::facts::collect();
    let spools = hosts.iter().map(|(_, h)| spool(h)).collect();
    let agents = hosts
        .into_iter()
        .map(|(nodes, host)| {
            let opts = AgentOpts {
                controller: url.clone(),
                nodes: nodes_of(nodes),
                token: None,
                hostname: host.into(),
                state_dir: spool(host),
                stepd: stepd.clone(),
                facts: facts.clone(),
                fact_overrides: overrides_for(nodes),
                dynamic: None,
            };
            tokio::spawn(async move {
                if let Err(e) = crate::agent::run(opts).await {
                    tracing::warn!(error = %e, "demo agent stopped");
                }
            })
        })
        .collect();
    let mut agents: Vec<tokio::task::JoinHandle<()>> = agents;
    // From here on the demo acts as its users would, through the RPCs.
    let client = live::Client::new(&url)?;
    let jobs = &running.jobs;
    let here = dir.to_path_buf();
    // First, so the burst job finds node03 free before the stream spreads over the nodes.
    let base = move |name, secs| sleeper(name, "physics", secs, &here);
    agents.push(live::spawn_preemption(jobs.clone(), client.clone(), base));
    agents.push(spawn_job_stream(jobs.clone(), client.clone(), dir.to_path_buf()));
    agents.push(spawn_team(jobs.clone(), client.clone(), dir.to_path_buf()));
    agents.push(spawn_pool_jobs(jobs.clone(), client.clone(), dir.to_path_buf()));
    agents.push(live::spawn_activity(jobs.clone(), client));
    Ok(Demo { running, agents, spools })
}

/// An upcoming maintenance window and a day's reservation for account
/// physics, so the Reservations pane and the reasons they give have life.
async fn seed_reservations(jobs: &crate::jobs::JobService) -> anyhow::Result<()> {
    let now = crate::store::now_ms();
    let cluster = jobs.resv_cluster(now);
    let made = [
        "ReservationName=maint StartTime=now+2hours Duration=2:00:00 Nodes=node[05-06] Users=root Flags=MAINT",
        "ReservationName=physics-day StartTime=now Duration=1-00:00:00 Nodes=node04 Accounts=physics",
    ];
    for line in made {
        let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        jobs.resvs.create(&words, &cluster, now, "demo").await?;
    }
    Ok(())
}

/// The demo's facts file, the entries naming this agent's nodes.
fn overrides_for(nodes: &str) -> Vec<spur_proto::v1::FactsOverride> {
    let all = nodes_of("node[01-06],gpu[01-03]");
    let mine = nodes_of(nodes);
    let parsed = crate::agent::facts_file::parse(FACTS, &all).unwrap_or_default();
    parsed.into_iter().filter(|o| nodes_of(&o.nodes).iter().all(|n| mine.contains(n))).collect()
}

fn nodes_of(list: &str) -> Vec<String> {
    spur_vocab::hostlist::expand(list).unwrap_or_default()
}
