//! Requests no cluster could ever run, refused at submit instead of pending
//! forever, as Slurm refuses them ("Requested node configuration is not
//! available"): more nodes than the partition has, more CPUs, memory or
//! GPUs per node than its largest node, or fewer nodes offering all of them
//! at once than the job needs. Judged on the nodes as configured, whatever
//! their state, since a drained or down node may return. Also the counts
//! that overflow what a job record holds, and a time limit past the largest.
//! Pure: the caller passes the job, its partition's name and its nodes.

use super::job::Job;
use crate::model::Node;
use spur_vocab::time;
use std::collections::HashSet;
use std::fmt;

/// What one configured node could ever give a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity<'a> {
    pub name: &'a str,
    pub cpus: u32,
    pub mem_mb: u64,
    pub gpus: u64,
    pub features: &'a [String],
    /// What its agent reported of it (None before it registered).
    pub facts: Option<&'a crate::model::HostFacts>,
}

impl<'a> Capacity<'a> {
    pub fn of(n: &'a Node) -> Capacity<'a> {
        let gpus = (n.gres.iter())
            .filter(|(name, _)| name == "gpu" || name.starts_with("gpu:"))
            .map(|(_, c)| *c)
            .fold(0u64, u64::saturating_add);
        let facts = n.facts.as_deref();
        Capacity { name: &n.name, cpus: n.cpus, mem_mb: n.memory_mb, gpus, features: &n.features, facts }
    }
}

/// A per-node resource, with the sbatch options that ask for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    Cpus,
    Memory,
    Gpus,
}

impl Dim {
    fn unit(self) -> &'static str {
        match self {
            Dim::Cpus => "CPUs",
            Dim::Memory => "MB of memory",
            Dim::Gpus => "GPUs",
        }
    }

    fn options(self) -> &'static str {
        match self {
            Dim::Cpus => "-n/-c",
            Dim::Memory => "--mem",
            Dim::Gpus => "--gres",
        }
    }
}

/// Why a job can never run; its text is the refusal the submitter sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("time_limit: {}", time::check_limit(*.0).err().unwrap_or_default())]
    TimeLimit(u64),
    #[error(
        "ntasks: {tasks} tasks × {per_task} CPUs per task is {} CPUs, more than a job may ask for ({})",
        u64::from(*tasks) * u64::from(*per_task),
        u32::MAX
    )]
    Cpus { tasks: u32, per_task: u32 },
    #[error("Requested node configuration is not available: {0}")]
    Unavailable(Unavailable),
}

/// The facts behind "Requested node configuration is not available".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// `-N` above the nodes the partition has (after `--exclude`).
    Nodes { partition: String, asked: u32, has: usize },
    /// One node must give more of `dim` than the partition's largest.
    PerNode { partition: String, dim: Dim, asked: u64, largest: u64 },
    /// Fewer nodes give all the job asks at once than it needs.
    Fit { partition: String, asked: u32, fit: usize },
    /// A node named with `--nodelist` is too small for the job.
    Named { node: String },
    /// Fewer nodes have the `-C` features than the job needs.
    Features { partition: String, constraint: String, asked: u32, has: usize },
    /// Fewer nodes meet `--tmp` or the layout options than the job needs;
    /// `option` is the first one its best node lacks, and that node's value.
    Layout { partition: String, option: &'static str, asked: u64, largest: u64, nodes: u32, has: usize },
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: u64| if n == 1 { "" } else { "s" };
        match self {
            Unavailable::Nodes { partition, asked, has } => write!(
                f,
                "the job asks for {asked} node{} (-N) and partition '{partition}' has {has}",
                plural(u64::from(*asked))
            ),
            Unavailable::PerNode { partition, dim, asked, largest } => write!(
                f,
                "the job asks for {asked} {} per node ({}) and the largest node of partition \
                 '{partition}' has {largest}",
                dim.unit(),
                dim.options()
            ),
            Unavailable::Fit { partition, asked, fit } => write!(
                f,
                "the job asks for {asked} node{} with all it needs per node and partition \
                 '{partition}' has {fit} such",
                plural(u64::from(*asked))
            ),
            Unavailable::Named { node } => {
                write!(f, "node '{node}' (--nodelist) is too small for what the job asks per node")
            }
            Unavailable::Layout { partition, option, asked, largest, nodes, has } => {
                let what = match (option.starts_with("--"), *option == "--tmp") {
                    (true, true) => format!("{option}={asked} MB"),
                    (true, false) => format!("{option}={asked}"),
                    (false, _) => format!("{asked} {option}"),
                };
                write!(
                    f,
                    "the job asks for {nodes} node{} with {what} and partition '{partition}' has {has} \
                     such (the most a node there reports is {largest})",
                    plural(u64::from(*nodes)),
                )
            }
            Unavailable::Features { partition, constraint, asked, has } => write!(
                f,
                "the job asks for {asked} node{} with features '{constraint}' (-C) and partition \
                 '{partition}' has {has} such",
                plural(u64::from(*asked))
            ),
        }
    }
}

/// Whether `job` could ever run in `partition`, made of `nodes`.
pub fn check<'a>(
    job: &Job,
    partition: &str,
    nodes: impl IntoIterator<Item = Capacity<'a>>,
) -> Result<(), Refusal> {
    if let Some(t) = job.time_limit.filter(|t| time::check_limit(*t).is_err()) {
        return Err(Refusal::TimeLimit(t));
    }
    let shape = job.shape();
    let tasks = job.ntasks.max(shape.nodes);
    let per_task = job.cpus_per_task.max(1);
    if tasks.checked_mul(per_task).is_none() {
        return Err(Refusal::Cpus { tasks, per_task });
    }
    let excluded: HashSet<&str> = job.exclude.iter().map(String::as_str).collect();
    let candidates: Vec<Capacity<'a>> = nodes.into_iter().filter(|n| !excluded.contains(n.name)).collect();
    let unavailable = |u| Err(Refusal::Unavailable(u));
    let part = || partition.to_string();
    if candidates.len() < shape.nodes as usize {
        return unavailable(Unavailable::Nodes {
            partition: part(),
            asked: shape.nodes,
            has: candidates.len(),
        });
    }
    let featured = candidates.iter().filter(|n| job.constraint.holds(n.features)).count();
    if !job.constraint.is_empty() && featured < shape.nodes as usize {
        let constraint = job.constraint.to_string();
        return unavailable(Unavailable::Features {
            partition: part(),
            constraint,
            asked: shape.nodes,
            has: featured,
        });
    }
    let candidates: Vec<Capacity<'a>> =
        candidates.into_iter().filter(|n| job.constraint.holds(n.features)).collect();
    let fitting = candidates.iter().filter(|n| job.needs.fits(n.facts)).count();
    if fitting < shape.nodes as usize
        && let Some((option, asked, _)) = candidates.iter().find_map(|n| job.needs.unmet(n.facts))
    {
        let largest = (candidates.iter())
            .filter_map(|n| job.needs.asks().find(|(_, o, _)| *o == option).map(|(fact, _, _)| (n, fact)))
            .filter_map(|(n, fact)| n.facts.map(|f| f.number(fact)))
            .max()
            .unwrap_or(0);
        return unavailable(Unavailable::Layout {
            partition: part(),
            option,
            asked,
            largest,
            nodes: shape.nodes,
            has: fitting,
        });
    }
    let candidates: Vec<Capacity<'a>> = candidates.into_iter().filter(|n| job.needs.fits(n.facts)).collect();
    let asks = [(Dim::Cpus, u64::from(shape.cpus)), (Dim::Memory, shape.mem_mb), (Dim::Gpus, shape.gpus)];
    let has = |n: &Capacity, dim| match dim {
        Dim::Cpus => u64::from(n.cpus),
        Dim::Memory => n.mem_mb,
        Dim::Gpus => n.gpus,
    };
    for (dim, asked) in asks {
        let largest = candidates.iter().map(|n| has(n, dim)).max().unwrap_or(0);
        if asked > largest {
            return unavailable(Unavailable::PerNode { partition: part(), dim, asked, largest });
        }
    }
    let fits = |n: &Capacity| asks.iter().all(|&(dim, asked)| has(n, dim) >= asked);
    let fit: HashSet<&str> = candidates.iter().filter(|n| fits(n)).map(|n| n.name).collect();
    if fit.len() < shape.nodes as usize {
        return unavailable(Unavailable::Fit { partition: part(), asked: shape.nodes, fit: fit.len() });
    }
    // A named node outside the partition pends (ReqNodeNotAvail), as before;
    // one inside it that can never hold the job's share is refused.
    let named: HashSet<&str> = candidates.iter().map(|n| n.name).collect();
    let small = job.nodelist.iter().find(|n| named.contains(n.as_str()) && !fit.contains(n.as_str()));
    if let Some(node) = small {
        return unavailable(Unavailable::Named { node: node.clone() });
    }
    Ok(())
}
