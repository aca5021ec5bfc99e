//! The pass's largest working buffers, kept by the caller between passes.
//! At 10,000 pending jobs the queue order and its priorities are about 1 MB
//! together; allocated and freed every pass they pushed the heap over
//! glibc's trim threshold (twice the largest block it has mapped, here the
//! plan's pending list), so each pass gave its pages back and faulted them in
//! again (15% of the pass). Kept here, cleared not freed, the pass allocates
//! little beyond the plan it returns.

use super::nodes::NodeState;
use super::pass::Entry;
use super::priority::PriorityFactors;

/// Buffers one pass leaves for the next ([`crate::schedule_with`]); empty
/// between passes, only their capacity is kept.
#[derive(Default)]
pub struct Scratch {
    pub(crate) order: Vec<Entry>,
    pub(crate) priorities: Vec<PriorityFactors>,
    pub(crate) nodes: Vec<NodeState>,
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Capacities, not contents: between passes the buffers are empty.
        (f.debug_struct("Scratch"))
            .field("order", &self.order.capacity())
            .field("priorities", &self.priorities.capacity())
            .field("nodes", &self.nodes.capacity())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::Scratch;
    use crate::tests::{Fx, MIN, NOW, job};
    use crate::{Job, schedule, schedule_with};

    #[test]
    fn a_pass_reusing_the_last_ones_buffers_decides_as_a_fresh_one_and_keeps_them() {
        let big = (1..=40).fold(Fx::new(4, 8, 16000, 0), |f, id| {
            f.job(Job { time_limit: Some(10 + id), ntasks: 1 + (id % 8) as u32, ..job(id, "alice") })
        });
        let small = Fx::new(2, 8, 16000, 0).job(Job { time_limit: Some(5), ..job(7, "alice") });
        let mut scratch = Scratch::default();
        for fx in [&big, &small, &big] {
            let snap = fx.snap_with_catalog();
            let reused = schedule_with(&snap, NOW + MIN, &mut scratch);
            assert_eq!(reused, schedule(&snap, NOW + MIN));
            assert!(scratch.order.is_empty() && scratch.priorities.is_empty() && scratch.nodes.is_empty());
        }
        assert!(scratch.order.capacity() >= 40, "the queue's order kept for the next pass");
        assert!(scratch.priorities.capacity() >= 40 && scratch.nodes.capacity() >= 4);
    }
}
