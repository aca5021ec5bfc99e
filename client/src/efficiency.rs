//! A job's recorded use against what it asked for, as `seff` reckons it
//! ([`spur_vocab::efficiency`]): here, outside `cli`, because the console's
//! Eff column shows the same figures and must not reckon them apart.

use crate::vocab::efficiency::{MemAsked, Usage};
use spur_proto::v1 as pb;

/// The memory the job asked for, as Slurm's ReqMem counts it.
pub fn mem_asked(j: &pb::Job) -> MemAsked {
    let Some(s) = j.spec.as_deref() else { return MemAsked::None };
    MemAsked::of(s.mem_mb, s.mem_per_cpu_mb, s.mem_per_gpu_mb, s.gpus_per_node)
}

/// `j`'s figures: `used` its CPU time and peak memory (recorded once it
/// has ended; none before), over `elapsed_secs` of wall-clock time.
pub fn usage(j: &pb::Job, used: Option<pb::JobUsage>, elapsed_secs: u64) -> Usage {
    let used = used.unwrap_or_default();
    Usage {
        cpu_us: used.user_cpu_us.saturating_add(used.sys_cpu_us),
        elapsed_secs,
        cpus: j.num_cpus,
        nodes: j.num_nodes,
        max_rss_kb: used.max_rss_kb,
        mem: mem_asked(j),
    }
}
