//! Table-driven tests of the pure scheduler and the submit gate, one file per
//! concern, sharing a small cluster builder.

mod backfill;
mod demand;
mod depend;
mod feasible;
mod hostile;
mod hres;
mod idle_fill;
mod pending;
mod placement;
mod pools;
mod preempt;
mod preempt_screen;
mod priority;
mod provision;
mod reasons;
mod resv;
mod submit;
mod submit_groups;

use super::{Job, JobState, Plan, SchedConfig, SchedNode, Snapshot, schedule};
use crate::catalog::Catalog;
use crate::model::{Account, Assoc, Partition, Qos, User};
use spur_vocab::names::PreemptMode;
use spur_vocab::tres::{TresMap, parse_map};
use std::sync::Arc;

pub const NOW: i64 = 1_700_000_000_000;
pub const MIN: i64 = 60_000;

pub fn tres(s: &str) -> TresMap {
    parse_map(s).unwrap()
}

pub fn qos(name: &str) -> Qos {
    Qos { name: name.into(), ..Qos::default() }
}

pub fn account(name: &str, parent: &str) -> Account {
    Account { name: name.into(), parent: parent.into(), ..Account::default() }
}

pub fn assoc(account: &str) -> Assoc {
    Assoc { account: account.into(), ..Assoc::default() }
}

pub fn user(name: &str, default_account: &str, assocs: Vec<Assoc>) -> User {
    User { name: name.into(), default_account: default_account.into(), assocs, ..User::default() }
}

pub fn partition(name: &str, nodes: &[&str]) -> Partition {
    Partition {
        name: name.into(),
        nodes: nodes.iter().map(|n| n.to_string()).collect(),
        is_default: true,
        max_time: None,
        default_time: None,
        priority_tier: 1,
        preempt_mode: PreemptMode::Off,
        preempt_exempt_time: None,
        state: "UP".into(),
    }
}

/// A pending job of `user` in partition `batch`, submitted at NOW.
pub fn job(id: u64, user: &str) -> Job {
    Job { submit_ms: NOW, ..Job::new(id, user, "batch") }
}

pub fn run_on(mut j: Job, nodes: &[&str], start_ms: i64) -> Job {
    j.state = JobState::Running { nodes: nodes.iter().map(|n| n.to_string()).collect(), start_ms };
    j
}

/// A cluster of `n` identical nodes `n1..` in partition `batch`, accounting on
/// and loaded with QOS `normal`, account `phys` and user `alice` in it.
pub struct Fx {
    pub snap: Snapshot,
    pub catalog: Catalog,
}

impl Fx {
    pub fn new(n: usize, cpus: u32, mem_mb: u64, gpus: u64) -> Fx {
        let nodes: Vec<SchedNode> =
            (1..=n).map(|i| SchedNode::idle(&format!("n{i}"), cpus, mem_mb, gpus)).collect();
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        let part = partition("batch", &names);
        let mut catalog = Catalog { loaded: true, ..Catalog::default() };
        catalog.qos.insert("normal".into(), qos("normal"));
        catalog.accounts.insert("phys".into(), account("phys", "root"));
        catalog.users.insert("alice".into(), user("alice", "phys", vec![assoc("phys")]));
        let config = SchedConfig { accounting_enabled: true, ..SchedConfig::default() };
        Fx { snap: Snapshot { nodes, partitions: vec![part], config, ..Snapshot::default() }, catalog }
    }

    pub fn qos(mut self, q: Qos) -> Fx {
        self.catalog.qos.insert(q.name.clone(), q);
        self
    }

    pub fn account(mut self, a: Account) -> Fx {
        self.catalog.accounts.insert(a.name.clone(), a);
        self
    }

    pub fn user(mut self, u: User) -> Fx {
        self.catalog.users.insert(u.name.clone(), u);
        self
    }

    pub fn job(mut self, j: Job) -> Fx {
        self.snap.jobs.push(j);
        self
    }

    /// Marks a running job's resources used on its nodes, as the controller's node table would.
    pub fn running(mut self, j: Job) -> Fx {
        if let JobState::Running { nodes, .. } = &j.state {
            let shape = j.shape();
            for n in self.snap.nodes.iter_mut().filter(|n| nodes.contains(&n.name)) {
                if shape.exclusive {
                    (n.free_cpus, n.free_mem_mb, n.free_gpus) = (0, 0, 0);
                } else {
                    n.free_cpus = n.free_cpus.saturating_sub(shape.cpus);
                    n.free_mem_mb = n.free_mem_mb.saturating_sub(shape.mem_mb);
                    n.free_gpus = n.free_gpus.saturating_sub(shape.gpus);
                }
            }
        }
        self.job(j)
    }

    /// Preemption on in requeue mode, with no exemption, no runtime floor and a
    /// threshold every full pool meets.
    pub fn preempting(self) -> Fx {
        self.with(|f| {
            f.snap.partitions[0].preempt_mode = PreemptMode::Requeue;
            f.snap.config.preempt = crate::PreemptConfig {
                enabled: true,
                min_runtime_secs: 0,
                threshold_pct: 50.0,
                ..crate::PreemptConfig::default()
            };
        })
    }

    pub fn with(mut self, f: impl FnOnce(&mut Fx)) -> Fx {
        f(&mut self);
        self
    }

    pub fn plan(&self) -> Plan {
        schedule(&self.snap_with_catalog(), NOW)
    }

    /// What `scontrol explain job` shows after this fixture's pass: the
    /// pass's checks and outcome, the candidates computed on demand.
    pub fn explained(&self, id: u64) -> super::JobVerdict {
        let plan = self.plan();
        super::explain_job(&self.snap_with_catalog(), Some(&plan), NOW, id).unwrap()
    }

    pub fn snap_with_catalog(&self) -> Snapshot {
        Snapshot { catalog: Arc::new(self.catalog.clone()), ..self.snap.clone() }
    }
}

/// The nodes a job started on, or its reason.
pub fn outcome(plan: &Plan, id: u64) -> Result<Vec<String>, String> {
    match plan.start_of(id) {
        Some(s) => Ok(s.nodes.clone()),
        None => {
            Err(plan.reason_of(id).map_or_else(|| "neither started nor pending".into(), |r| r.to_string()))
        }
    }
}
