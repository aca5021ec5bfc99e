//! The typed [`Reason`]: a Slurm reason code (the table is `spur_vocab`'s
//! [`ReasonCode`]) plus the facts behind it. The console and the CLI
//! render these; they never recompute scheduler logic.

use super::job::{JobId, Shape};
pub use spur_vocab::ReasonCode;
use spur_vocab::hostlist;
use spur_vocab::time::{format_minutes, format_seconds};
use std::fmt;

/// Whose limit it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Qos(String),
    QosUser { qos: String, user: String },
    QosAccount { qos: String, account: String },
    Assoc { user: String, account: String },
    Account(String),
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Qos(q) => write!(f, "QOS {q}"),
            Scope::QosUser { qos, user } => write!(f, "user {user} under QOS {qos}"),
            Scope::QosAccount { qos, account } => write!(f, "account {account} under QOS {qos}"),
            Scope::Assoc { user, account } => write!(f, "user {user} in account {account}"),
            Scope::Account(a) => write!(f, "account {a}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Cpus,
    MemMb,
    Gpus,
    Nodes,
    RunningJobs,
    SubmittedJobs,
    Minutes,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Cpus => "CPUs",
            Unit::MemMb => "MB of memory",
            Unit::Gpus => "GPUs",
            Unit::Nodes => "nodes",
            Unit::RunningJobs => "running jobs",
            Unit::SubmittedJobs => "submitted jobs",
            Unit::Minutes => "minutes",
        }
    }
}

/// How a limit reads: a shared cap being full, a per-job cap, a wall cap, or a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    Aggregate,
    PerJob,
    Wall,
    Budget,
}

/// A limit with its value, the current usage and what the job asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitFacts {
    pub kind: LimitKind,
    pub scope: Scope,
    /// The sacctmgr key, e.g. `grptres`, `maxjobsperuser`.
    pub key: &'static str,
    pub unit: Unit,
    pub cap: u64,
    pub used: u64,
    /// None only for a wall limit on an unbounded job.
    pub asks: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Facts {
    None,
    /// Boxed: the largest facts, and a pass keeps a reason for every pending job.
    Limit(Box<LimitFacts>),
    UnknownPartition {
        partition: String,
    },
    PartitionState {
        partition: String,
        state: String,
    },
    PartitionTime {
        partition: String,
        max_time: u64,
        time_limit: Option<u64>,
    },
    PartitionNodes {
        partition: String,
        nodes: u64,
        asks: u64,
    },
    NodesUnavailable {
        partition: String,
        nodes: Vec<String>,
    },
    /// provisioners.yaml: every definition's refusal; `annotated`: the job has
    /// annotations to match, so nodes in no definition cannot serve it;
    /// `unpooled`: the partition has nodes in no definition.
    NoDefinition {
        partition: String,
        refusals: std::sync::Arc<Vec<crate::provision::refusal::Refusal>>,
        annotated: bool,
        unpooled: bool,
    },
    /// The dynamic definition that would get the job nodes failed upstream
    /// and asks for none until `retry_in_s` has passed.
    ProvisionerUnavailable {
        definition: String,
        error: std::sync::Arc<str>,
        retry_in_s: u64,
    },
    /// No room now; the reservation holder also knows when it expects to start.
    Resources {
        partition: String,
        ask: Box<Shape>,
        start_ms: Option<i64>,
        start_in_s: Option<u64>,
    },
    /// Fits now only on nodes reserved for a higher job, and would not end before it starts.
    Reserved {
        job: JobId,
        start_ms: i64,
        start_in_s: u64,
    },
    /// Backfill is off and a higher job is blocked on the same nodes.
    BlockedBehind {
        partition: String,
        job: JobId,
    },
    QueueDepth {
        depth: usize,
    },
    Accounting {
        qos: Option<String>,
        account: Option<String>,
    },
    Missing {
        what: &'static str,
        name: String,
    },
    License {
        name: String,
        free: u32,
        asks: u32,
    },
    /// What is left is held by a reservation the job may not use, for its window
    /// (a hierarchical resource's hold is on `layer`).
    Held {
        name: String,
        layer: Option<String>,
        resv: String,
        held: u64,
        asks: u64,
    },
    /// A hierarchical resource has too little left: on `layer` when one is to blame.
    Hres {
        name: String,
        layer: Option<String>,
        free: u64,
        asks: u64,
    },
    /// Disabled: the whole resource (DisableHRES), or every layer that could serve the job.
    HresDisabled {
        name: String,
        whole: bool,
    },
    BeginTime {
        begin_ms: i64,
        in_s: u64,
    },
    /// A reservation's window: its nodes are held for the jobs it admits
    /// (`starts_in_s` 0 once it is active).
    Window {
        name: String,
        maint: bool,
        start_ms: i64,
        end_ms: i64,
        starts_in_s: u64,
        ends_in_s: u64,
    },
    /// The job's reservation: missing, or not letting the job's user or account in.
    ResvRefused {
        name: String,
        why: &'static str,
    },
    /// An array's `%N`: its running tasks are at the limit.
    ArrayThrottle {
        limit: u32,
        running: u32,
    },
    /// The dependency item that decides (`afterok:12`) and its job's state.
    Dependency {
        item: String,
        state: String,
    },
    /// What an HRES plugin said (`resource: message`).
    Plugin {
        message: std::sync::Arc<str>,
    },
}

/// Why a job is pending or was rejected: the code, and the facts behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    pub code: ReasonCode,
    pub facts: Facts,
}

impl Reason {
    pub fn new(code: ReasonCode, facts: Facts) -> Reason {
        Reason { code, facts }
    }

    pub fn limit(code: ReasonCode, facts: LimitFacts) -> Reason {
        Reason { code, facts: Facts::Limit(Box::new(facts)) }
    }

    /// The sentence without the code.
    pub fn sentence(&self) -> String {
        let mut out = String::new();
        self.write_sentence(&mut out);
        out
    }

    /// [`Reason::sentence`] into `out` (cleared first): a pass compares every
    /// pending job's sentence with the last one without allocating each.
    pub fn write_sentence(&self, out: &mut String) {
        use fmt::Write;
        out.clear();
        match &self.facts {
            Facts::None => out.push_str(self.code.description()),
            // Writing to a String cannot fail.
            f => {
                let _ = write!(out, "{f}");
            }
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.sentence())
    }
}

fn wall(m: Option<u64>) -> String {
    spur_vocab::time::format_limit(m)
}

impl fmt::Display for LimitFacts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (scope, key, unit) = (&self.scope, self.key, self.unit.as_str());
        match self.kind {
            LimitKind::Aggregate => write!(
                f,
                "{scope} is at {}/{} {unit} ({key}); the job needs {} more",
                self.used,
                self.cap,
                self.asks.unwrap_or(0)
            ),
            LimitKind::PerJob => write!(
                f,
                "the job asks for {} {unit}; {scope} allows {} per job ({key})",
                self.asks.unwrap_or(0),
                self.cap
            ),
            LimitKind::Wall => match self.asks {
                Some(t) => write!(
                    f,
                    "the job's time limit {} exceeds {scope}'s {key} of {}",
                    format_minutes(t),
                    format_minutes(self.cap)
                ),
                None => {
                    write!(f, "the job has no time limit; {scope}'s {key} is {}", format_minutes(self.cap))
                }
            },
            LimitKind::Budget => write!(
                f,
                "{scope} has used {} of its {key} budget of {}",
                format_minutes(self.used),
                format_minutes(self.cap)
            ),
        }
    }
}

impl fmt::Display for Facts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Facts::None => Ok(()),
            Facts::Limit(l) => l.fmt(f),
            Facts::Plugin { message } => f.write_str(message),
            Facts::UnknownPartition { partition } => write!(f, "partition '{partition}' does not exist"),
            Facts::PartitionState { partition, state } => write!(f, "partition {partition} is {state}"),
            Facts::PartitionTime { partition, max_time, time_limit } => write!(
                f,
                "the job's time limit {} exceeds partition {partition}'s MaxTime {}",
                wall(*time_limit),
                format_minutes(*max_time)
            ),
            Facts::PartitionNodes { partition, nodes, asks } => {
                write!(f, "the job asks for {asks} nodes; partition {partition} has {nodes}")
            }
            Facts::Window { name, maint, starts_in_s, ends_in_s, .. } => {
                let kind = if *maint { "maintenance reservation" } else { "reservation" };
                match starts_in_s {
                    0 => write!(
                        f,
                        "{kind} {name} holds the nodes it fits on (ends in {})",
                        format_seconds(*ends_in_s)
                    ),
                    s => write!(
                        f,
                        "{kind} {name} holds the nodes it fits on from in {} to in {}, within the job's time limit",
                        format_seconds(*s),
                        format_seconds(*ends_in_s)
                    ),
                }
            }
            Facts::ResvRefused { name, why } => write!(f, "reservation {name}: {why}"),
            Facts::NodesUnavailable { partition, nodes } => write!(
                f,
                "required node(s) {} are down, drained or not in partition {partition}",
                hostlist::compress(nodes)
            ),
            Facts::NoDefinition { partition, refusals, annotated, unpooled } => {
                write!(f, "no provisioner definition admits the job in partition {partition}")?;
                if *annotated && *unpooled {
                    write!(f, " (its annotations keep it off nodes in no definition)")?;
                }
                for r in refusals.iter() {
                    write!(f, "; {r}")?;
                }
                Ok(())
            }
            Facts::ProvisionerUnavailable { definition, error, retry_in_s } => write!(
                f,
                "provisioner definition {definition} is unavailable (retried in {}): {error}",
                format_seconds(*retry_in_s)
            ),
            Facts::Resources { partition, ask, start_in_s, .. } => {
                write!(f, "partition {partition} has no room now for {ask}")?;
                match start_in_s {
                    Some(s) => write!(f, "; expected to start in {}", format_seconds(*s)),
                    None => Ok(()),
                }
            }
            Facts::Reserved { job, start_in_s, .. } => write!(
                f,
                "it fits now only on nodes reserved for higher-priority job {job}, which is expected \
                 to start in {}, and it would not end before then",
                format_seconds(*start_in_s)
            ),
            Facts::BlockedBehind { partition, job } => {
                write!(f, "backfill is off and higher-priority job {job} is waiting in partition {partition}")
            }
            Facts::QueueDepth { depth } => write!(
                f,
                "not tried this pass: only the first {depth} jobs behind a blocked one are (scheduler.queue_depth)"
            ),
            Facts::Accounting { qos, account } => {
                write!(f, "the accounting cache has not loaded, so the limits of")?;
                match (qos, account) {
                    (Some(q), Some(a)) => write!(f, " QOS {q} and account {a}")?,
                    (Some(q), None) => write!(f, " QOS {q}")?,
                    (None, Some(a)) => write!(f, " account {a}")?,
                    (None, None) => write!(f, " the job")?,
                }
                write!(f, " cannot be checked; the job starts once it loads")
            }
            Facts::Missing { what, name } => write!(f, "{what} '{name}' does not exist"),
            Facts::License { name, free, asks } => {
                write!(f, "license {name} has {free} free; the job asks for {asks}")
            }
            Facts::Held { name, layer: None, resv, held, asks } => write!(
                f,
                "license {name}: reservation {resv} holds {held} for its window; the job asks for {asks}"
            ),
            Facts::Held { name, layer: Some(layer), resv, held, asks } => write!(
                f,
                "hres {name}: reservation {resv} holds {held} on layer {layer} for its window; the job asks for {asks}"
            ),
            Facts::Hres { name, layer: Some(layer), free, asks } => {
                write!(f, "hres {name}: layer {layer} has {free} free; the job needs {asks} there")
            }
            Facts::Hres { name, layer: None, asks, .. } => {
                write!(
                    f,
                    "hres {name}: too few of the job's candidate nodes have {asks} free on their layers"
                )
            }
            Facts::HresDisabled { name, whole: true } => write!(f, "hres {name} is disabled (DisableHRES)"),
            Facts::HresDisabled { name, whole: false } => {
                write!(
                    f,
                    "hres {name}: no enabled layer over enough of the job's candidate nodes (DisableLayer)"
                )
            }
            Facts::BeginTime { in_s, .. } => write!(f, "the job may start in {}", format_seconds(*in_s)),
            Facts::ArrayThrottle { limit, running } => {
                write!(f, "{running} of the array's tasks run, its limit (%{limit})")
            }
            Facts::Dependency { item, state } if item == "singleton" => {
                write!(f, "singleton: another job of the same user and name is {state}")
            }
            Facts::Dependency { item, state } => write!(f, "{item}: job is {state}"),
        }
    }
}
