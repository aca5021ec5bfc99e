//! What a pass remembers about jobs that found no room, so a large queue of
//! similar jobs costs one scan per shape rather than one per job. Both
//! memories rely on the same fact: within a pass, free resources only shrink
//! and reservations only grow.

use super::job::{JobId, Shape};
use super::reason::Reason;
use rustc_hash::FxHashMap as FxMap;
use std::collections::{HashMap, VecDeque};

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

/// A failure other than no room: when the job would have ended, and `lo`:
/// every window or reservation start that kept nodes from it was at or
/// before this, so a job of the same shape ending after it meets the same
/// holes as one ending at `end_ms` (`i64::MIN` when none did).
#[derive(Debug)]
struct Failure {
    end_ms: i64,
    lo: i64,
    by: Blocker,
}

/// Shapes that found no room in one partition this pass.
#[derive(Debug, Default)]
pub(crate) struct RoomFailures {
    /// Every entry's shape and whether it is `NoRoom`, oldest first: which
    /// entry a full memory forgets.
    list: VecDeque<(Shape, bool)>,
    /// The `NoRoom` entries' shapes, in `list`'s order.
    no_room: Vec<Shape>,
    /// The other entries by shape, in `list`'s order: a job not started asks
    /// at every pass, and with windows the memory holds one per shape they
    /// kept out, so it looks up its own shape rather than walk them all.
    others: FxMap<Shape, VecDeque<Failure>>,
}

impl RoomFailures {
    /// `NoRoom`: a job asking at least as much has no room either. Otherwise
    /// the same shape, ending no earlier, fits only on a job's reserved nodes
    /// or in a window (both only grow within a pass, and end times only widen
    /// them); so does one ending earlier but after every start that kept
    /// nodes from the first (`lo`), since it meets exactly the same holes.
    pub fn recall(&self, shape: &Shape, end_ms: i64) -> Option<Blocker> {
        if self.no_room.iter().any(|s| shape.covers(s)) {
            return Some(Blocker::NoRoom);
        }
        let same = self.others.get(shape)?;
        same.iter().find(|f| end_ms >= f.end_ms || end_ms > f.lo).map(|f| f.by)
    }

    /// `lo`: the latest start that kept nodes from the job (see [`Failure`]).
    pub fn remember(&mut self, shape: Shape, end_ms: i64, lo: i64, by: Blocker) {
        if by == Blocker::NoRoom {
            // Entries asking at least as much are implied by the new one.
            let implied = |e: &Shape| e.covers(&shape);
            self.list.retain(|(e, no_room)| !no_room || !implied(e));
            self.no_room.retain(|e| !implied(e));
        }
        if self.list.len() >= MEMORY
            && let Some((old, no_room)) = self.list.pop_front()
        {
            // The oldest entry is the oldest of its kind (and of its shape).
            if no_room {
                self.no_room.remove(0);
            } else if let Some(same) = self.others.get_mut(&old) {
                same.pop_front();
                if same.is_empty() {
                    self.others.remove(&old);
                }
            }
        }
        match by {
            Blocker::NoRoom => self.no_room.push(shape),
            _ => self.others.entry(shape).or_default().push_back(Failure { end_ms, lo, by }),
        }
        self.list.push_back((shape, by == Blocker::NoRoom));
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

    #[test]
    fn a_full_memory_forgets_its_oldest_entry_of_either_kind_and_answers_the_rest() {
        let shape = |cpus| Shape { nodes: 1, cpus, mem_mb: 0, gpus: 0, exclusive: false, workflow: 0 };
        let mut m = RoomFailures::default();
        m.remember(shape(1000), 500, 0, Blocker::NoRoom);
        (1..MEMORY as u32).for_each(|c| m.remember(shape(c), 500, 0, Blocker::Window(c as u16)));
        assert_eq!(m.recall(&shape(2000), 500), Some(Blocker::NoRoom), "covered by the first");
        assert_eq!(m.recall(&shape(1), 500), Some(Blocker::Window(1)));
        // One more forgets the no-room entry, the next the oldest window one.
        m.remember(shape(900), 500, 0, Blocker::Reserved(9));
        assert_eq!(m.recall(&shape(2000), 500), None);
        assert_eq!(m.recall(&shape(1), 500), Some(Blocker::Window(1)));
        m.remember(shape(901), 500, 0, Blocker::Window(77));
        assert_eq!(m.recall(&shape(1), 500), None, "the oldest window entry is gone");
        assert_eq!(m.recall(&shape(2), 500), Some(Blocker::Window(2)));
        assert_eq!(m.recall(&shape(900), 500), Some(Blocker::Reserved(9)));
        // A second entry of a shape answers once the first is forgotten.
        m.remember(shape(2), 900, 0, Blocker::Window(88));
        m.remember(shape(902), 500, 0, Blocker::NoRoom);
        assert_eq!(m.recall(&shape(2), 900), Some(Blocker::Window(88)));
    }
}
