//! A synthetic queue for the benches: 100,000 jobs from 500 users in 50
//! accounts, most pending with a reason and its sentence, a third running
//! on multi-node hostlists, the rest ended; specs filled as the controller
//! fills them (paths, workdir), so the wire size and decode cost are real.
#![allow(dead_code, clippy::needless_update)]

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use spur_console::model::state::{Clock, Settings, State};
use spur_console::{Action, JobSet, Msg, PaneId, dispatch, render};
use spur_proto::v1::{Job, JobSpec};
use std::sync::Arc;

pub const NOW: i64 = 1_772_300_000_000;

/// A small deterministic generator, so every run draws the same queue.
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed)
    }

    pub fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

const REASONS: &[(&str, &str)] = &[
    ("Priority", "12 jobs of higher priority wait for batch"),
    ("Resources", "batch has 0 idle nodes of the 4 the job needs"),
    ("QOSGrpNodeLimit", "QOSGrpNodeLimit: QOS gpu is at 2/2 nodes (GrpTRES=node=2)"),
    ("AssocMaxJobsLimit", "AssocMaxJobsLimit: user at 20/20 running jobs in account"),
    ("JobHeldUser", ""),
];
const QOS: &[&str] = &["normal", "highprio", "low", "gpu", ""];
pub const PARTITIONS: &[&str] = &["batch", "gpu", "debug", "bigmem"];

pub fn jobs(n: u64) -> Vec<Job> {
    let mut rng = Lcg(42);
    (1..=n)
        .map(|id| {
            let user = format!("user{:03}", rng.next(500));
            let account = format!("acct{:02}", rng.next(50));
            let qos = QOS[rng.next(QOS.len() as u64) as usize].to_string();
            let partition = PARTITIONS[rng.next(PARTITIONS.len() as u64) as usize].to_string();
            let roll = rng.next(100);
            let (state, reason, detail) = match roll {
                0..60 => {
                    let (r, d) = REASONS[rng.next(REASONS.len() as u64) as usize];
                    ("PENDING", r, d)
                }
                60..90 => ("RUNNING", "", ""),
                90..96 => ("COMPLETED", "", ""),
                96..98 => ("FAILED", "NonZeroExitCode", ""),
                _ => ("TIMEOUT", "TimeLimit", ""),
            };
            let num_nodes = 1 + rng.next(4) as u32;
            let start = rng.next(8);
            let nodes: Vec<String> = if state == "PENDING" {
                Vec::new()
            } else {
                (0..num_nodes).map(|i| format!("node{:04}", start * 100 + u64::from(i))).collect()
            };
            let start_ms = if state == "PENDING" { 0 } else { NOW - rng.next(86_400_000 * 3) as i64 };
            let end_ms = if matches!(state, "PENDING" | "RUNNING") {
                0
            } else {
                start_ms + rng.next(3_600_000) as i64
            };
            Job {
                id,
                name: format!("sim-{}", rng.next(10_000)),
                user,
                account: account.clone(),
                qos: qos.clone(),
                partition: partition.clone(),
                state: spur_proto::states::state_named(state),
                reason: spur_proto::states::reason_named(reason),
                reason_detail: detail.into(),
                priority: rng.next(100_000) as f64,
                time_limit_minutes: Some(60 * (1 + rng.next(48))),
                submit_ms: NOW - 86_400_000 * 4 + id as i64,
                start_ms,
                end_ms,
                nodes,
                num_nodes,
                num_cpus: num_nodes * 16,
                exit_code: i32::from(state == "FAILED"),
                spec: Some(Box::new(JobSpec {
                    name: format!("sim-{id}"),
                    account,
                    partition,
                    qos,
                    num_nodes,
                    ntasks: num_nodes * 16,
                    cpus_per_task: 1,
                    mem_mb: 4096,
                    time_limit_minutes: Some(60),
                    stdout_path: "/scratch/%u/slurm-%j.out".into(),
                    workdir: "/scratch/project/run".into(),
                    requeue: Some(true),
                    ..Default::default()
                })),
                // The proto grows fields (priority factors); they keep their defaults.
                ..Default::default()
            }
        })
        .collect()
}

/// A console on the Queue pane with `n` synthetic jobs, the selection in the middle.
pub fn state(n: u64, size: (u16, u16)) -> State {
    let mut settings = Settings::new("http://localhost:6817");
    settings.clock = Clock::Fixed(NOW);
    let mut state = State::new(settings, size);
    dispatch(&mut state, Action::Net(Msg::Connected));
    let set = JobSet::from_pb(jobs(n), NOW);
    dispatch(&mut state, Action::Net(Msg::Jobs(Arc::new(set))));
    dispatch(&mut state, Action::GoPane(PaneId::Queue));
    state.views[PaneId::Queue.index()].selected = (n / 2) as usize;
    // A resize re-clamps the scroll offset around the selection, as moving there would.
    dispatch(&mut state, Action::Resize(size.0, size.1));
    state
}

pub fn terminal(size: (u16, u16)) -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(size.0, size.1)).unwrap()
}

pub fn frame(term: &mut Terminal<TestBackend>, state: &State) {
    term.draw(|f| render(state, f)).unwrap();
}

/// This process's resident set and its peak, in MiB, from /proc/self/status.
pub fn rss_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
