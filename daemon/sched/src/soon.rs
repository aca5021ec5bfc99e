//! Nodes of a partition whose reservation window is still to come, as a
//! pass sees them: those with no window at all (a job that every window to
//! come keeps out scans only these), and what a scan would count of the
//! others for such a job (`window_fit` keeps the counts). Plain data.

use super::job::Shape;
use super::nodes::{NodeState, PartNodes};
use super::windows::Windows;

/// A partition with windows still to come on some of its nodes.
#[derive(Debug)]
pub(crate) struct Soon {
    /// The partition's nodes with no window at all, in placement order.
    pub plain: PartNodes,
    /// Its nodes with a window still to come (none now), in placement order.
    pub nodes: Vec<u32>,
    /// The latest first-window start among its nodes not in a window now: a
    /// job ending after it is kept off all of them.
    pub latest: i64,
}

/// The nodes of a partition whose windows are still to come, as [`Soon`];
/// `None` when it has none.
pub(crate) fn soon_nodes(part: &PartNodes, nodes: &[NodeState], windows: &Windows<'_>) -> Option<Soon> {
    let first = |i: u32| windows.blocks_from(i, None, i64::MAX);
    let latest = (part.order.iter())
        .filter(|&&i| !nodes[i as usize].walled)
        .filter_map(|&i| first(i).map(|(_, start)| start))
        .max()?;
    let plain = part.order.iter().copied().filter(|&i| first(i).is_none()).collect();
    let soon = (part.order.iter().copied()).filter(|&i| !nodes[i as usize].walled && first(i).is_some());
    Some(Soon { plain: PartNodes::new(plain, nodes), nodes: soon.collect(), latest })
}

/// What a scan of a partition's nodes with a window still to come would
/// count for a job kept off all of them ([`Pass::soon_fit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SoonFit {
    /// Those that would take the shape now.
    pub nodes: usize,
    /// The first of them in placement order (its place in [`Soon::nodes`]), and its window.
    pub first: Option<(u32, u16)>,
    /// The latest of their windows' starts (`i64::MIN` when none), and how many start then.
    pub latest: i64,
    pub at_latest: usize,
}

/// Whether a scan would consider node `n` (not in a window now) for `shape`, and find it fits.
pub(crate) fn counted(n: &NodeState, shape: &Shape) -> bool {
    !n.walled && !n.closed() && n.fits(shape)
}

/// What one node is asked for: the key of both counts, since whether a node
/// takes a shape does not depend on how many nodes it asks for (wide jobs of
/// any width share one count).
pub(crate) fn per_node(shape: &Shape) -> Shape {
    Shape { nodes: 1, ..*shape }
}
