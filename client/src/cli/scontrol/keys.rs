//! The keys of `scontrol update job|node|partition`, every one scontrol.1
//! lists, read by the vocabulary's keyword rule (any case, any unambiguous
//! prefix: `timel=5`). Each key is either handled by its subcommand's file,
//! which receives it in its canonical spelling, or accepted with one warning
//! saying why it has no effect in Spur; no Slurm key is "unknown".

use crate::cli::kv::{self, Pair};

/// What `update` changes: the entity its pairs name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entity {
    Job,
    Node,
    Partition,
}

impl Entity {
    pub fn as_str(self) -> &'static str {
        match self {
            Entity::Job => "job",
            Entity::Node => "node",
            Entity::Partition => "partition",
        }
    }

    fn keys(self) -> &'static [Key] {
        match self {
            Entity::Job => JOB,
            Entity::Node => NODE,
            Entity::Partition => PARTITION,
        }
    }
}

/// `(spelling, canonical key, why it has no effect)`: `None` is handled.
type Key = (&'static str, &'static str, Option<&'static str>);

const SIZE: &str = "a job's size and placement are fixed at submission in Spur (cancel and resubmit)";
const TOPOLOGY: &str = "Spur places jobs by nodes and CPUs, not sockets, cores, threads, switches or disks";
const FIXED: &str = "fixed at submission in Spur";
const NO_RESV: &str = "Spur has no advanced reservations";
const NO_FED: &str = "Spur has no federation";
const NO_BB: &str = "Spur has no burst buffers";
const NO_MCS: &str = "Spur has no MCS labels";
const NO_ADMIN_TEXT: &str = "Spur keeps no administrator's or site's text on a job";
const NO_ACCRUE: &str = "Spur's age factor runs from eligibility and cannot be reset";
const NODE_CONF: &str = "a node's configuration comes from spur.conf (edit it and run scontrol reconfigure)";
const NODE_CLOUD: &str = "Spur has no cloud node instances or node certificates";
const PART_CONF: &str = "partitions come from spur.conf (edit it and run scontrol reconfigure; PreemptExemptTime changes at runtime)";

const JOB: &[Key] = &[
    ("JobId", "JobId", None),
    // Slurm reads `job=12` as the job's id.
    ("Job", "JobId", None),
    ("Account", "Account", None),
    ("ArrayTaskThrottle", "ArrayTaskThrottle", None),
    ("Comment", "Comment", None),
    ("Dependency", "Dependency", None),
    ("StartTime", "BeginTime", None),
    ("BeginTime", "BeginTime", None),
    ("EligibleTime", "BeginTime", None),
    ("Features", "Features", None),
    ("MailType", "MailType", None),
    ("MailUser", "MailUser", None),
    ("Nice", "Nice", None),
    ("Partition", "Partition", None),
    ("Priority", "Priority", None),
    ("QOS", "QOS", None),
    ("TimeLimit", "TimeLimit", None),
    ("WCKey", "WCKey", None),
    ("AdminComment", "AdminComment", Some(NO_ADMIN_TEXT)),
    ("Extra", "Extra", Some(NO_ADMIN_TEXT)),
    ("SiteFactor", "SiteFactor", Some("Spur's priority has no site factor")),
    ("BurstBuffer", "BurstBuffer", Some(NO_BB)),
    ("Clusters", "Clusters", Some(NO_FED)),
    ("ClusterFeatures", "ClusterFeatures", Some(NO_FED)),
    ("MCSLabel", "MCSLabel", Some(NO_MCS)),
    ("ReservationName", "ReservationName", Some(NO_RESV)),
    ("ResetAccrueTime", "ResetAccrueTime", Some(NO_ACCRUE)),
    ("Contiguous", "Contiguous", Some(TOPOLOGY)),
    ("CoreSpec", "CoreSpec", Some(TOPOLOGY)),
    ("ThreadSpec", "ThreadSpec", Some(TOPOLOGY)),
    ("ReqCores", "ReqCores", Some(TOPOLOGY)),
    ("ReqSockets", "ReqSockets", Some(TOPOLOGY)),
    ("ReqThreads", "ReqThreads", Some(TOPOLOGY)),
    ("Switches", "Switches", Some(TOPOLOGY)),
    ("wait-for-switch", "wait-for-switch", Some(TOPOLOGY)),
    ("MinTmpDiskNode", "MinTmpDiskNode", Some(TOPOLOGY)),
    ("Reboot", "Reboot", Some("Spur does not reboot nodes for a job")),
    ("DelayBoot", "DelayBoot", Some("Spur does not reboot nodes for a job")),
    ("CPUsPerTask", "CPUsPerTask", Some(SIZE)),
    ("MinCPUsNode", "MinCPUsNode", Some(SIZE)),
    ("MinMemoryCPU", "MinMemoryCPU", Some(SIZE)),
    ("MinMemoryNode", "MinMemoryNode", Some(SIZE)),
    ("NumCPUs", "NumCPUs", Some(SIZE)),
    ("NumNodes", "NumNodes", Some(SIZE)),
    ("ReqNodes", "ReqNodes", Some(SIZE)),
    ("NumTasks", "NumTasks", Some(SIZE)),
    ("ReqProcs", "ReqProcs", Some(SIZE)),
    ("TasksPerNode", "TasksPerNode", Some(SIZE)),
    ("NodeList", "NodeList", Some(SIZE)),
    ("ReqNodeList", "ReqNodeList", Some(SIZE)),
    ("ExcNodeList", "ExcNodeList", Some(SIZE)),
    ("Gres", "Gres", Some(SIZE)),
    ("Licenses", "Licenses", Some(SIZE)),
    ("OverSubscribe", "OverSubscribe", Some(SIZE)),
    ("Shared", "OverSubscribe", Some(SIZE)),
    ("Prefer", "Prefer", Some(SIZE)),
    ("TimeMin", "TimeMin", Some(SIZE)),
    ("Deadline", "Deadline", Some(FIXED)),
    ("EndTime", "EndTime", Some("a job's end follows its start and TimeLimit in Spur")),
    ("JobName", "JobName", Some(FIXED)),
    ("Name", "JobName", Some(FIXED)),
    ("Requeue", "Requeue", Some(FIXED)),
    ("StdErr", "StdErr", Some(FIXED)),
    ("StdIn", "StdIn", Some(FIXED)),
    ("StdOut", "StdOut", Some(FIXED)),
    ("WorkDir", "WorkDir", Some(FIXED)),
    ("UserID", "UserID", Some("a job's owner is fixed at submission in Spur")),
];

const NODE: &[Key] = &[
    ("NodeName", "NodeName", None),
    ("State", "State", None),
    ("Reason", "Reason", None),
    ("ActiveFeatures", "ActiveFeatures", Some(NODE_CONF)),
    ("AvailableFeatures", "AvailableFeatures", Some(NODE_CONF)),
    ("Comment", "Comment", Some(NODE_CONF)),
    ("CpuBind", "CpuBind", Some(NODE_CONF)),
    ("Extra", "Extra", Some(NODE_CONF)),
    ("Gres", "Gres", Some(NODE_CONF)),
    ("NodeAddr", "NodeAddr", Some(NODE_CONF)),
    ("NodeHostname", "NodeHostname", Some(NODE_CONF)),
    ("Topology", "Topology", Some(NODE_CONF)),
    ("Weight", "Weight", Some(NODE_CONF)),
    ("ResumeAfter", "ResumeAfter", Some("Spur resumes a node only when told (State=resume)")),
    ("CertToken", "CertToken", Some(NODE_CLOUD)),
    ("InstanceId", "InstanceId", Some(NODE_CLOUD)),
    ("InstanceType", "InstanceType", Some(NODE_CLOUD)),
];

const PARTITION: &[Key] = &[
    ("PartitionName", "PartitionName", None),
    ("PreemptExemptTime", "PreemptExemptTime", None),
    ("ClearPreemptExemptTime", "ClearPreemptExemptTime", None),
    ("AllocNodes", "AllocNodes", Some(PART_CONF)),
    ("AllowAccounts", "AllowAccounts", Some(PART_CONF)),
    ("AllowGroups", "AllowGroups", Some(PART_CONF)),
    ("AllowQOS", "AllowQOS", Some(PART_CONF)),
    ("Alternate", "Alternate", Some(PART_CONF)),
    ("CpuBind", "CpuBind", Some(PART_CONF)),
    ("Default", "Default", Some(PART_CONF)),
    ("DefaultTime", "DefaultTime", Some(PART_CONF)),
    ("DefMemPerCPU", "DefMemPerCPU", Some(PART_CONF)),
    ("DefMemPerNode", "DefMemPerNode", Some(PART_CONF)),
    ("DenyAccounts", "DenyAccounts", Some(PART_CONF)),
    ("DenyQOS", "DenyQOS", Some(PART_CONF)),
    ("DisableRootJobs", "DisableRootJobs", Some(PART_CONF)),
    ("ExclusiveUser", "ExclusiveUser", Some(PART_CONF)),
    ("GraceTime", "GraceTime", Some(PART_CONF)),
    ("Hidden", "Hidden", Some(PART_CONF)),
    ("JobDefaults", "JobDefaults", Some(PART_CONF)),
    ("MaxCPUsPerNode", "MaxCPUsPerNode", Some(PART_CONF)),
    ("MaxCPUsPerSocket", "MaxCPUsPerSocket", Some(PART_CONF)),
    ("LLN", "LLN", Some(PART_CONF)),
    ("MaxMemPerCPU", "MaxMemPerCPU", Some(PART_CONF)),
    ("MaxMemPerNode", "MaxMemPerNode", Some(PART_CONF)),
    ("MaxNodes", "MaxNodes", Some(PART_CONF)),
    ("MaxTime", "MaxTime", Some(PART_CONF)),
    ("MinNodes", "MinNodes", Some(PART_CONF)),
    ("Nodes", "Nodes", Some(PART_CONF)),
    ("OverSubscribe", "OverSubscribe", Some(PART_CONF)),
    ("Shared", "OverSubscribe", Some(PART_CONF)),
    ("OverTimeLimit", "OverTimeLimit", Some(PART_CONF)),
    ("PowerDownOnIdle", "PowerDownOnIdle", Some(PART_CONF)),
    ("PreemptMode", "PreemptMode", Some(PART_CONF)),
    ("PriorityJobFactor", "PriorityJobFactor", Some(PART_CONF)),
    ("PriorityTier", "PriorityTier", Some(PART_CONF)),
    ("QOS", "QOS", Some(PART_CONF)),
    ("ReqResv", "ReqResv", Some(PART_CONF)),
    ("RootOnly", "RootOnly", Some(PART_CONF)),
    ("State", "State", Some(PART_CONF)),
    ("Topology", "Topology", Some(PART_CONF)),
    ("TRESBillingWeights", "TRESBillingWeights", Some(PART_CONF)),
];

/// The entity `update`'s words name: `job ID ...`, or the first key that is
/// (a prefix of) JobId, NodeName or PartitionName; `HRESName=` is the
/// license file's. `None` when no key names one.
pub fn entity(words: &[String]) -> Option<Entity> {
    if words.first().is_some_and(|w| w.eq_ignore_ascii_case("job") || w.eq_ignore_ascii_case("jobs")) {
        return Some(Entity::Job);
    }
    let all = [Entity::Job, Entity::Node, Entity::Partition]
        .into_iter()
        .flat_map(|e| e.keys().iter().map(|(spelling, canon, _)| (*spelling, *canon)));
    let all: Vec<(&'static str, &'static str)> = all.collect();
    let keys = words.iter().filter_map(|w| w.split_once('=').map(|(k, _)| k));
    let named =
        keys.filter_map(|k| crate::vocab::keyword::resolve_alias(k, all.iter().copied()).ok().flatten());
    named.into_iter().find_map(|canon| match canon {
        "JobId" => Some(Entity::Job),
        "NodeName" => Some(Entity::Node),
        "PartitionName" => Some(Entity::Partition),
        _ => None,
    })
}

/// `update`'s words with every key in its canonical spelling, and one
/// warning per key that has no effect (dropped). A key Slurm does not know
/// for the entity, or a prefix of several, is refused naming it.
pub fn canonical(entity: Entity, words: &[String]) -> Result<(Vec<String>, Vec<String>), String> {
    let table = entity.keys();
    let (mut out, mut warnings) = (vec![], vec![]);
    let mut it = words.iter().peekable();
    // `update job ID ...`: the two words stay as they are.
    if entity == Entity::Job && it.peek().is_some_and(|w| !w.contains('=')) {
        out.extend(it.by_ref().take(2).cloned());
    }
    let rest: Vec<String> = it.cloned().collect();
    for Pair { key, value } in kv::pairs(&rest)? {
        let pairs = table.iter().map(|(spelling, canon, _)| (*spelling, *canon));
        let what = entity.as_str();
        let canon = crate::vocab::keyword::resolve_alias(&key, pairs)
            .map_err(|e| format!("update {what}: {e}"))?
            .ok_or_else(|| {
                format!("update {what}: unknown key '{key}' (Slurm's scontrol has no such {what} key)")
            })?;
        match table.iter().find(|k| k.1 == canon).and_then(|k| k.2) {
            Some(why) => warnings.push(format!("update {what}: {canon} has no effect: {why}")),
            None => out.push(format!("{canon}={value}")),
        }
    }
    Ok((out, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn keys_take_any_unambiguous_prefix_in_any_case() {
        let (out, warn) = canonical(Entity::Job, &w("job=12 timel=5 PRIO=3 qos=hi")).unwrap();
        assert_eq!(out, ["JobId=12", "TimeLimit=5", "Priority=3", "QOS=hi"]);
        assert!(warn.is_empty());
        assert_eq!(entity(&w("job=12 TimeLimit=5")), Some(Entity::Job));
        assert_eq!(entity(&w("NodeN=n1 State=drain")), Some(Entity::Node));
        assert_eq!(entity(&w("PartitionN=p PreemptExemptTime=5")), Some(Entity::Partition));
        assert_eq!(entity(&w("job 12 TimeLimit=5")), Some(Entity::Job));
    }

    #[test]
    fn ambiguous_and_unknown_keys_are_refused_by_name() {
        let e = canonical(Entity::Job, &w("JobId=1 Req=3")).unwrap_err();
        assert!(e.contains("'Req' is ambiguous") && e.contains("ReqCores"), "{e}");
        let e = canonical(Entity::Node, &w("NodeName=n1 Colour=red")).unwrap_err();
        assert!(e.contains("unknown key 'Colour'"), "{e}");
    }

    #[test]
    fn keys_without_effect_warn_once_and_are_dropped() {
        let (out, warn) = canonical(Entity::Job, &w("JobId=1 BurstBuffer=x TimeLimit=5")).unwrap();
        assert_eq!(out, ["JobId=1", "TimeLimit=5"]);
        assert_eq!(warn, ["update job: BurstBuffer has no effect: Spur has no burst buffers"]);
    }
}
