//! Runtime partition overrides (`scontrol update PartitionName=...`). They
//! change the in-memory partition only: spur.conf stays the source of truth,
//! so a reconfigure or a restart drops them, as the spec says.

use super::NodeService;
use crate::error::{Error, Result};
use crate::model::Partition;

/// One override of a partition's preemption exemption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExemptChange {
    Set(u64),
    /// Back to the global `scheduler.preempt_exempt_time`.
    Clear,
}

impl NodeService {
    /// Applies the change and wakes whoever follows the partition's nodes (the scheduler, watchers).
    pub fn update_partition(&self, name: &str, change: ExemptChange) -> Result<Partition> {
        let updated = {
            let mut c = self.write();
            let p = (c.partitions.iter_mut().find(|p| p.name == name))
                .ok_or_else(|| Error::NotFound(format!("partition '{name}' does not exist")))?;
            p.preempt_exempt_time = match change {
                ExemptChange::Set(s) => Some(s),
                ExemptChange::Clear => None,
            };
            p.clone()
        };
        self.publish(updated.nodes.clone());
        Ok(updated)
    }
}
