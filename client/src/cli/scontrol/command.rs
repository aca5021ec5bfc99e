//! What a parsed scontrol command line is: its [`Flags`] and one [`Command`].
//! The types sit below every subcommand file, so each file parses into them
//! and runs from them without importing a sibling or the dispatcher.

use spur_proto::v1 as pb;

/// scontrol's global flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags {
    pub oneliner: bool,
    pub quiet: bool,
    pub json: bool,
    /// `-d`: what a record only counts, listed (a node's modaliases).
    pub details: bool,
    pub help: bool,
    pub controller: Option<String>,
    /// What the command line asked that has no effect in Spur (a Slurm
    /// key of `update`), one line each, printed unless `-Q`.
    pub warnings: Vec<String>,
}

/// A parsed command. `UpdateJobs` carries canonical keys (`TimeLimit`,
/// `Priority`, `QOS`, `Partition`) with checked values; `JobAction` is
/// `hold`, `release` or `requeue`, sent as `action=`.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `show license [NAME]` (`license.rs`).
    ShowLicenses(Option<String>),
    /// `show config`: the Slurm keys Spur has.
    ShowConfig,
    /// `update HRESName=...` (`license.rs`).
    UpdateHres(Box<pb::UpdateHresRequest>),
    /// `show node [LIST]` (`show_node.rs`).
    ShowNodes(Option<String>),
    /// `show provisioner [ID]` (`provisioner.rs`).
    ShowProvisioners(Option<String>),
    /// `show partition [NAME]` (`show_partition.rs`).
    ShowPartitions(Option<String>),
    /// `show hostnames LIST` (`hostlist.rs`).
    ShowHostnames(String),
    /// `show hostlist[sorted] NAMES` (`hostlist.rs`).
    ShowHostlist {
        names: String,
        sorted: bool,
    },
    /// `update NodeName=... State=...` (`update_node.rs`).
    UpdateNodes {
        nodes: String,
        state: String,
        reason: String,
    },
    /// `show job [ID]` (`job.rs`).
    ShowJobs(Option<u64>),
    /// `show job 12_3`: one task of an array.
    ShowTask(u64, u32),
    /// `update JobId=...` (`job.rs`).
    UpdateJobs {
        ids: Vec<u64>,
        set: Vec<(String, String)>,
    },
    /// `hold|release|requeue IDS` (`job.rs`).
    JobAction {
        action: &'static str,
        ids: Vec<u64>,
    },
    /// `explain job ID` (`explain.rs`).
    ExplainJob(u64),
    /// `explain preempt PENDING RUNNING` (`explain.rs`).
    ExplainPair(u64, u64),
    /// `update PartitionName=P PreemptExemptTime=...` (`update_partition.rs`).
    UpdatePartition {
        name: String,
        exempt_secs: Option<u64>,
        clear: bool,
    },
    /// `show step [ID[.STEP]]` (`step.rs`).
    ShowSteps(Option<(u64, Option<u32>)>),
    /// `reconfigure` (`reconfigure.rs`).
    Reconfigure,
    /// `ping` (`ping.rs`): each controller, primary or backup.
    Ping,
    /// `takeover [INDEX]` (`takeover.rs`): that backup takes over.
    Takeover(usize),
    /// `show reservation [NAME]` (`reservation.rs`).
    ShowReservations(Option<String>),
    /// `create reservation ...`: the name when given, and the words as given.
    CreateReservation {
        name: String,
        words: Vec<String>,
    },
    /// `update ReservationName=...`.
    UpdateReservation {
        name: String,
        words: Vec<String>,
    },
    /// `delete ReservationName=...`.
    DeleteReservation(String),
    /// `create NodeName=N ... State=CLOUD|FUTURE` (`create_node.rs`).
    CreateNode {
        name: String,
        node: pb::DynamicNode,
    },
    /// `delete NodeName=N` (`create_node.rs`).
    DeleteNode(String),
    /// An `update` whose every change has no effect in Spur (each warned about).
    Nothing,
    Help,
}
