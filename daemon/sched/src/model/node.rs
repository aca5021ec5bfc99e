//! Nodes and partitions: their configured shape, what is allocated on them,
//! and the admin state (drain/down with who set the reason, and when).

use serde::{Deserialize, Serialize};
use spur_vocab::names::PreemptMode;

/// Why a node is out of service, with who said so and when. This is what
/// `sinfo -R` shows without reading the txn log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    pub text: String,
    pub user: String,
    pub uid: Option<i64>,
    pub time_ms: i64,
    /// Set by the controller itself (e.g. "Not responding"), so it clears
    /// itself when the agent returns.
    #[serde(default)]
    pub system: bool,
}

/// The admin-settable part of a node, persisted across controller restarts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NodeAdmin {
    pub drain: bool,
    pub down: bool,
    pub reason: Option<Reason>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseState {
    /// Never registered since the controller started.
    Unknown,
    Idle,
    Mixed,
    Allocated,
    Down,
}

impl BaseState {
    pub fn as_str(self) -> &'static str {
        match self {
            BaseState::Unknown => "UNKNOWN",
            BaseState::Idle => "IDLE",
            BaseState::Mixed => "MIXED",
            BaseState::Allocated => "ALLOCATED",
            BaseState::Down => "DOWN",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub name: String,
    pub cpus: u32,
    pub memory_mb: u64,
    pub gres: Vec<(String, u64)>,
    pub features: Vec<String>,
    pub weight: u32,
    pub partitions: Vec<String>,
    pub alloc_cpus: u32,
    pub alloc_memory_mb: u64,
    pub alloc_gres: Vec<(String, u64)>,
    pub running_jobs: u32,
    pub admin: NodeAdmin,
    pub registered: bool,
    pub responding: bool,
    pub agent_id: Option<String>,
    pub agent_host: String,
    pub last_heartbeat_ms: i64,
    /// What the node's agent said of its host at registration (None before).
    pub facts: Option<std::sync::Arc<super::HostFacts>>,
    /// The provisioner definitions whose condition holds for the node, by id.
    pub definitions: Vec<String>,
    /// provisioners.yaml's nodeAnnotations and those of the node's definitions.
    pub annotations: Vec<(String, String)>,
    /// Not in spur.conf (`spurd --dynamic`, `scontrol create`): how it waits
    /// for its agent until one registers it.
    pub dynamic: Option<spur_vocab::nodestate::Dynamic>,
}

impl Node {
    /// Whether an agent hosts it: registered, or holding an agent id.
    pub fn hosted(&self) -> bool {
        self.registered || self.agent_id.is_some()
    }

    /// Its dynamic state now: a created CLOUD or FUTURE node is an ordinary
    /// dynamic one (NORM) once an agent hosts it.
    pub fn dynamic_now(&self) -> Option<spur_vocab::nodestate::Dynamic> {
        use spur_vocab::nodestate::Dynamic;
        self.dynamic.map(|d| if self.agent_id.is_some() { Dynamic::Norm } else { d })
    }

    pub fn base_state(&self) -> BaseState {
        if self.admin.down || (self.registered && !self.responding) {
            BaseState::Down
        } else if !self.registered {
            BaseState::Unknown
        } else if self.alloc_cpus == 0 && self.running_jobs == 0 {
            BaseState::Idle
        } else if self.alloc_cpus >= self.cpus {
            BaseState::Allocated
        } else {
            BaseState::Mixed
        }
    }

    /// Up, registered and not drained: in service even when full, since a
    /// full node frees up as jobs end (the reservation needs it; a pool counts it).
    pub fn in_service(&self) -> bool {
        !matches!(self.base_state(), BaseState::Down | BaseState::Unknown) && !self.admin.drain
    }

    /// A borrowed node requested upstream whose agent has not registered
    /// yet (`POWERING_UP`), not drained or down: a pass may place jobs on
    /// it, which stay CONFIGURING until the agent registers (Slurm's jobs
    /// on powering-up cloud nodes).
    pub fn booting(&self) -> bool {
        self.dynamic == Some(spur_vocab::nodestate::Dynamic::PoweringUp)
            && !self.hosted()
            && !self.admin.drain
            && !self.admin.down
    }

    /// Whether new work may be placed here.
    pub fn schedulable(&self) -> bool {
        matches!(self.base_state(), BaseState::Idle | BaseState::Mixed) && !self.admin.drain
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    pub name: String,
    pub nodes: Vec<String>,
    pub is_default: bool,
    /// Minutes; None is unlimited.
    pub max_time: Option<u64>,
    pub default_time: Option<u64>,
    pub priority_tier: u32,
    pub preempt_mode: PreemptMode,
    /// Seconds.
    pub preempt_exempt_time: Option<u64>,
    pub state: String,
}
