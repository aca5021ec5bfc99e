//! Slurm's reason codes, why a job pends, is refused or ended: one table
//! of the codes, their spellings and meanings (the proto's `ReasonCode`
//! enum is checked against it, number for number). The facts behind a reason stay typed where the
//! scheduler makes them.

use std::fmt;

/// Declares the code table once: variant, Slurm spelling, meaning.
macro_rules! codes {
    ($($v:ident => $text:literal, $doc:literal;)*) => {
        /// A Slurm reason code, as `squeue %r` and `scontrol show job` print it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ReasonCode { $(#[doc = $doc] $v,)* }

        impl ReasonCode {
            /// Every code, in the table's order.
            pub const ALL: &'static [ReasonCode] = &[$(ReasonCode::$v,)*];

            /// Slurm's spelling.
            pub fn as_str(self) -> &'static str {
                match self { $(ReasonCode::$v => $text,)* }
            }

            /// The code's name as an identifier (the proto's value names
            /// it): Slurm's spelling, but for a spelling with blanks in it.
            pub fn ident(self) -> &'static str {
                match self { $(ReasonCode::$v => stringify!($v),)* }
            }

            /// One line for docs and for a reason that carries no facts.
            pub fn description(self) -> &'static str {
                match self { $(ReasonCode::$v => $doc,)* }
            }
        }
    };
}

codes! {
    Priority => "Priority", "higher-priority jobs are ahead of this one";
    Resources => "Resources", "the job is waiting for resources to free up";
    JobHeldUser => "JobHeldUser", "held by its user; release with scontrol release";
    JobHeldAdmin => "JobHeldAdmin", "held by an administrator; an operator must release it";
    HresPluginHeld => "HresPluginHeld",
        "held because an HRES plugin refused it (pre-run or argument check); an operator must release it";
    HresRemoteFail => "HresRemoteFail",
        "an HRES plugin's service was unavailable at the pre-run; the job is tried again next pass";
    BeginTime => "BeginTime", "the job's begin time has not been reached";
    Dependency => "Dependency", "the job waits for a job it depends on";
    JobArrayTaskLimit => "JobArrayTaskLimit", "the array's %N limit of running tasks is reached";
    DependencyNeverSatisfied => "DependencyNeverSatisfied",
        "a job it depends on ended in a way that can never satisfy the dependency";
    PartitionTimeLimit => "PartitionTimeLimit", "the job's time limit exceeds the partition's MaxTime";
    PartitionNodeLimit => "PartitionNodeLimit", "the job asks for more nodes than the partition has";
    PartitionDown => "PartitionDown", "the partition is DOWN";
    PartitionInactive => "PartitionInactive", "the partition is INACTIVE";
    PartitionConfig => "PartitionConfig", "the job's partition does not exist";
    ReqNodeNotAvail => "ReqNodeNotAvail", "a required node is down, drained or outside the partition";
    Licenses => "Licenses", "the job is waiting for licenses";
    NoProvisionerDefinition => "NoProvisionerDefinition",
        "no provisioner definition admits the job, or none of theirs has a usable node";
    HRESDisabled => "HRESDisabled", "no enabled layer of a hierarchical resource can serve the job";
    AccountingUnavailable => "AccountingUnavailable",
        "the accounting cache has not loaded, so the job's limits cannot be checked";
    InvalidQOS => "InvalidQOS", "the job's QOS does not exist";
    InvalidAccount => "InvalidAccount", "the job's account does not exist or is not the user's";
    QOSGrpNodeLimit => "QOSGrpNodeLimit", "the QOS grptres node cap is reached";
    QOSGrpCpuLimit => "QOSGrpCpuLimit", "the QOS grptres cpu cap is reached";
    QOSGrpMemLimit => "QOSGrpMemLimit", "the QOS grptres mem cap is reached";
    QOSGrpGRES => "QOSGrpGRES", "the QOS grptres gres cap is reached";
    QOSGrpWallLimit => "QOSGrpWallLimit", "the QOS grpwall budget is used up";
    QOSMaxJobsPerUserLimit => "QOSMaxJobsPerUserLimit", "the user's running jobs under the QOS are at maxjobsperuser";
    QOSMaxCpuPerUserLimit => "QOSMaxCpuPerUserLimit", "the user's CPUs under the QOS are at maxtresperuser";
    QOSMaxMemoryPerUser => "QOSMaxMemoryPerUser", "the user's memory under the QOS is at maxtresperuser";
    QOSMaxGRESPerUser => "QOSMaxGRESPerUser", "the user's GPUs under the QOS are at maxtresperuser";
    QOSMaxNodePerUserLimit => "QOSMaxNodePerUserLimit", "the user's nodes under the QOS are at maxtresperuser";
    QOSMaxCpuPerJobLimit => "QOSMaxCpuPerJobLimit", "the job asks for more CPUs than the QOS maxtresperjob";
    QOSMaxNodePerJobLimit => "QOSMaxNodePerJobLimit", "the job asks for more nodes than the QOS maxtresperjob";
    QOSMaxMemoryPerJob => "QOSMaxMemoryPerJob", "the job asks for more memory than the QOS maxtresperjob";
    QOSMaxGRESPerJob => "QOSMaxGRESPerJob", "the job asks for more GPUs than the QOS maxtresperjob";
    QOSMaxWallDurationPerJobLimit => "QOSMaxWallDurationPerJobLimit", "the job's time limit exceeds the QOS maxwall";
    QOSMaxSubmitJobPerUserLimit => "QOSMaxSubmitJobPerUserLimit", "the user's submitted jobs under the QOS are at maxsubmitjobsperuser";
    MaxSubmitJobsPerAccount => "MaxSubmitJobsPerAccount", "the account's submitted jobs under the QOS are at maxsubmitjobsperaccount";
    QOSGrpSubmitJobsLimit => "QOSGrpSubmitJobsLimit", "the QOS's submitted jobs are at grpsubmit";
    AssocMaxJobsLimit => "AssocMaxJobsLimit", "the association's running jobs are at maxjobs";
    AssocGrpJobsLimit => "AssocGrpJobsLimit", "the account's running jobs are at maxrunningjobs";
    AssocGrpNodeLimit => "AssocGrpNodeLimit", "the association grptres node cap is reached";
    AssocGrpCpuLimit => "AssocGrpCpuLimit", "the association grptres cpu cap is reached";
    AssocGrpMemLimit => "AssocGrpMemLimit", "the association grptres mem cap is reached";
    AssocGrpGRES => "AssocGrpGRES", "the association grptres gres cap is reached";
    AssocMaxCpuPerJobLimit => "AssocMaxCpuPerJobLimit", "the job asks for more CPUs than the association maxtresperjob";
    AssocMaxNodePerJobLimit => "AssocMaxNodePerJobLimit", "the job asks for more nodes than the association maxtresperjob";
    AssocMaxMemoryPerJob => "AssocMaxMemoryPerJob", "the job asks for more memory than the association maxtresperjob";
    AssocMaxGRESPerJob => "AssocMaxGRESPerJob", "the job asks for more GPUs than the association maxtresperjob";
    AssocMaxWallDurationPerJobLimit => "AssocMaxWallDurationPerJobLimit", "the job's time limit exceeds the association maxwall";
    AssocMaxSubmitJobLimit => "AssocMaxSubmitJobLimit", "the association's submitted jobs are at maxsubmitjobs";
    AssocGrpSubmitJobsLimit => "AssocGrpSubmitJobsLimit", "the association's (a user's in an account, or an account's subtree) submitted jobs are at grpsubmit";
    TimeLimit => "TimeLimit", "the job ran to its time limit";
    NonZeroExitCode => "NonZeroExitCode", "the job's batch script exited with a non-zero code";
    RaisedSignal => "RaisedSignal", "a signal killed the job's batch script";
    NodeDown => "NodeDown", "a node of the job went down";
    JobLostOnNode => "JobLostOnNode", "the job's node agent restarted without it";
    JobLaunchFailure => "JobLaunchFailure", "the node agent could not start the job";
    Prolog => "Prolog", "a job prolog failed on the job's node";
    Preempted => "Preempted", "a preemption cancelled the job";
    Reservation => "Reservation", "the job waits for its reservation to start, or for room inside it";
    ReservationDeleted => "ReservationDeleted", "the job's reservation was deleted; it is held until it is updated or released";
    ReservationInvalid => "ReservationInvalid", "the job may not use its reservation (user or account not allowed, or no such reservation)";
    ReqNodeNotAvailMaint => "ReqNodeNotAvail, Reserved for maintenance",
        "the nodes the job fits on are in a maintenance reservation for the job's time limit";
    ProvisionerUnavailable => "ProvisionerUnavailable",
        "the provisioner definition that would get the job nodes failed upstream and is backing off";
}

impl ReasonCode {
    /// Exact Slurm spelling first, then case-insensitive.
    pub fn parse(raw: &str) -> Result<ReasonCode, String> {
        let raw = raw.trim();
        Self::ALL
            .iter()
            .find(|c| c.as_str() == raw)
            .or_else(|| Self::ALL.iter().find(|c| c.as_str().eq_ignore_ascii_case(raw)))
            .copied()
            .ok_or_else(|| format!("unknown reason code '{raw}'"))
    }
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}
