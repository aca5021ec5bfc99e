//! QOS, accounts, users and associations. Limits are `Option<u64>`: `None`
//! is "no limit" and `Some(0)` is a literal 0 that blocks.

use serde::{Deserialize, Serialize};
use spur_vocab::names::{AdminLevel, PreemptMode, QosFlags};
use spur_vocab::tres::{self, TresMap};

/// The account every parentless account hangs under. It always exists and is not stored.
pub const ROOT_ACCOUNT: &str = "root";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Qos {
    pub name: String,
    pub description: String,
    pub priority: i64,
    pub preempt_mode: PreemptMode,
    pub preempt: Vec<String>,
    /// Seconds; `None` inherits the partition or global value.
    pub preempt_exempt_time: Option<u64>,
    pub usage_factor: f64,
    pub max_jobs_per_user: Option<u64>,
    /// Minutes.
    pub max_wall: Option<u64>,
    #[serde(with = "tres::as_string")]
    pub max_tres_per_job: TresMap,
    pub max_submit_jobs_per_user: Option<u64>,
    pub max_submit_jobs_per_account: Option<u64>,
    pub grp_submit: Option<u64>,
    #[serde(with = "tres::as_string")]
    pub max_tres_per_user: TresMap,
    #[serde(with = "tres::as_string")]
    pub grp_tres: TresMap,
    /// Minutes.
    pub grp_wall: Option<u64>,
    pub flags: QosFlags,
    pub idle_fill_preemptable: bool,
}

impl Default for Qos {
    fn default() -> Self {
        Qos {
            name: String::new(),
            description: String::new(),
            priority: 0,
            preempt_mode: PreemptMode::Off,
            preempt: vec![],
            preempt_exempt_time: None,
            usage_factor: 1.0,
            max_jobs_per_user: None,
            max_wall: None,
            max_tres_per_job: TresMap::new(),
            max_submit_jobs_per_user: None,
            max_submit_jobs_per_account: None,
            grp_submit: None,
            max_tres_per_user: TresMap::new(),
            grp_tres: TresMap::new(),
            grp_wall: None,
            flags: QosFlags::default(),
            idle_fill_preemptable: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Account {
    pub name: String,
    pub description: String,
    pub organization: String,
    pub parent: String,
    pub fairshare: f64,
    pub max_jobs: Option<u64>,
    #[serde(with = "tres::as_string")]
    pub grp_tres: TresMap,
    /// Submitted (pending + running) jobs of the account and its subtree.
    pub grp_submit: Option<u64>,
}

impl Default for Account {
    fn default() -> Self {
        Account {
            name: String::new(),
            description: String::new(),
            organization: String::new(),
            parent: ROOT_ACCOUNT.into(),
            fairshare: 1.0,
            max_jobs: None,
            grp_tres: TresMap::new(),
            grp_submit: None,
        }
    }
}

/// A user binds to accounts through associations; the user record holds them
/// so a user and its associations change in one write.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct User {
    pub name: String,
    pub admin_level: AdminLevel,
    pub default_account: String,
    pub assocs: Vec<Assoc>,
}

/// The (cluster, account, user, partition) tuple with its limits and QOS allow-list.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Assoc {
    pub account: String,
    /// Empty: every partition.
    pub partition: String,
    pub qos: Vec<String>,
    pub default_qos: String,
    pub max_jobs: Option<u64>,
    pub max_submit_jobs: Option<u64>,
    pub grp_submit: Option<u64>,
    #[serde(with = "tres::as_string")]
    pub max_tres_per_job: TresMap,
    #[serde(with = "tres::as_string")]
    pub grp_tres: TresMap,
    /// Minutes.
    pub max_wall: Option<u64>,
}

impl User {
    pub fn assoc(&self, account: &str, partition: &str) -> Option<&Assoc> {
        self.assocs.iter().find(|a| a.account == account && a.partition == partition)
    }
}
