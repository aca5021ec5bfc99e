//! What a pass remembers about jobs that found no room, so a large queue of
//! similar jobs costs one scan per shape rather than one per job. Both
//! memories rely on the same fact: within a pass, free resources only shrink
//! and reservations only grow.

use super::job::{JobId, Shape};
use super::reason::Reason;
use std::collections::HashMap;

/// Entries kept per memory; a bound keeps each lookup cheap.
const MEMORY: usize = 64;

fn push_bounded<T>(list: &mut Vec<T>, item: T) {
    if list.len() >= MEMORY {
        list.remove(0);
    }
    list.push(item);
}

/// What kept a shape out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Blocker {
    /// No room even ignoring reservations and windows.
    NoRoom,
    /// Room only on nodes this job reserved (backfill).
    Reserved(JobId),
    /// Room only in this admin reservation's window.
    Window(u16),
}

#[derive(Debug)]
struct Failure {
    shape: Shape,
    end_ms: i64,
    /// Every window or reservation start that kept nodes from the job was at
    /// or before this: a job of the same shape ending after it meets the
    /// same holes as one ending at `end_ms` (`i64::MIN` when none did).
    lo: i64,
    by: Blocker,
}

/// Shapes that found no room in one partition this pass.
#[derive(Debug, Default)]
pub(crate) struct RoomFailures {
    list: Vec<Failure>,
}

impl RoomFailures {
    /// `NoRoom`: a job asking at least as much has no room either. Otherwise
    /// the same shape, ending no earlier, fits only on a job's reserved nodes
    /// or in a window (both only grow within a pass, and end times only widen
    /// them); so does one ending earlier but after every start that kept
    /// nodes from the first (`lo`), since it meets exactly the same holes.
    pub fn recall(&self, shape: &Shape, end_ms: i64) -> Option<Blocker> {
        // One walk (every job not started asks): a no-room entry answers
        // first, else the earliest other entry that does.
        let mut other = None;
        for f in &self.list {
            if f.by == Blocker::NoRoom {
                if shape.covers(&f.shape) {
                    return Some(Blocker::NoRoom);
                }
            } else if other.is_none() && f.shape == *shape && (end_ms >= f.end_ms || end_ms > f.lo) {
                other = Some(f.by);
            }
        }
        other
    }

    /// `lo`: the latest start that kept nodes from the job (see [`Failure`]).
    pub fn remember(&mut self, shape: Shape, end_ms: i64, lo: i64, by: Blocker) {
        if by == Blocker::NoRoom {
            // Entries asking at least as much are implied by the new one.
            self.list.retain(|e| e.by != Blocker::NoRoom || !e.shape.covers(&shape));
        }
        push_bounded(&mut self.list, Failure { shape, end_ms, lo, by });
    }
}

/// Jobs refused by a distinct-node cap, per (partition, tight groups): the
/// shape, the groups' occupied-node total then, and the reason. Packing room
/// only shrinks until one of those groups occupies a new node.
#[derive(Debug, Default)]
pub(crate) struct NodeCapFailures {
    map: HashMap<CapKey, Vec<(Shape, usize, Reason)>>,
}

/// A partition and the tight groups' ids.
pub(crate) type CapKey = (usize, Vec<u32>);

impl NodeCapFailures {
    pub fn recall(&self, key: &CapKey, shape: &Shape, occupied: usize) -> Option<&Reason> {
        let list = self.map.get(key)?;
        list.iter().find(|(s, o, _)| s == shape && *o == occupied).map(|(.., r)| r)
    }

    pub fn remember(&mut self, key: CapKey, shape: Shape, occupied: usize, reason: Reason) {
        push_bounded(self.map.entry(key).or_default(), (shape, occupied, reason));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_failure_answers_the_same_shape_ending_after_every_start_that_kept_it_out() {
        let shape = Shape { nodes: 1, cpus: 4, mem_mb: 0, gpus: 0, exclusive: false, workflow: 0 };
        let mut m = RoomFailures::default();
        // Kept out at end 500 by windows starting at 100 and 300.
        m.remember(shape, 500, 300, Blocker::Window(7));
        assert_eq!(m.recall(&shape, 900), Some(Blocker::Window(7)), "ending later: the same holes and more");
        assert_eq!(m.recall(&shape, 301), Some(Blocker::Window(7)), "ending after 300: the same holes");
        assert_eq!(m.recall(&shape, 300), None, "ending at 300 the later window no longer meets it");
        let bigger = Shape { cpus: 8, ..shape };
        assert_eq!(m.recall(&bigger, 900), None, "only the same shape");
    }
}
