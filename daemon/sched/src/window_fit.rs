//! What scans leave out of a partition's nodes because of reservation
//! windows, counted once per shape instead: nodes in a window now (no job
//! outside it may start there this pass) and nodes whose window is still to
//! come, for a job every such window keeps out (it would still be running at
//! their latest start). A scan that met each of them would count it as kept
//! out by its window; these give the same count, the same first window in
//! placement order and the same latest start, without the walk.

use super::job::Shape;
use super::nodes::NodeState;
use super::pass_state::Pass;
use super::soon::{SoonFit, counted, per_node};
use std::cmp::Ordering;

impl<'a> Pass<'a> {
    /// How many of the partition's (or pool class's) nodes in a window now would
    /// take `shape`, and the first such window; remembered per shape.
    pub(super) fn walled_fit(
        &mut self,
        pi: usize,
        class: Option<u32>,
        shape: &Shape,
    ) -> (usize, Option<u16>) {
        let key = (pi, class, per_node(shape));
        if let Some(hit) = self.walled_fit.get(&key) {
            return *hit;
        }
        let order = match class {
            Some(c) => &self.pools.classes[c as usize].nodes.order,
            None => &self.parts[pi].nodes.order,
        };
        let (mut n, mut first) = (0, None);
        for &i in
            order.iter().filter(|&&i| self.nodes[i as usize].walled && self.nodes[i as usize].fits(shape))
        {
            n += 1;
            first = first.or(self.windows.blocks(i, None, i64::MAX));
        }
        self.walled_fit.insert(key, (n, first));
        (n, first)
    }

    /// How many of the partition's nodes with a window still to come would
    /// take `shape`, the first one's window and their latest start: what a
    /// scan meeting each of them would have counted for a job ending after
    /// every such start; remembered per shape until a job starts on a node with a window.
    pub(super) fn soon_fit(&mut self, pi: usize, shape: &Shape) -> SoonFit {
        let key = (pi, per_node(shape));
        if let Some(hit) = self.soon_fit.get(&key) {
            return *hit;
        }
        let mut fit = SoonFit { nodes: 0, first: None, latest: i64::MIN, at_latest: 0 };
        let soon = self.parts[pi].soon.as_ref().map_or(&[][..], |s| s.nodes.as_slice());
        for (pos, &i) in soon.iter().enumerate().filter(|(_, i)| counted(&self.nodes[**i as usize], shape)) {
            let Some((k, start)) = self.windows.blocks_from(i, None, i64::MAX) else { continue };
            fit.nodes += 1;
            fit.first = fit.first.or(Some((pos as u32, k)));
            match start.cmp(&fit.latest) {
                Ordering::Greater => (fit.latest, fit.at_latest) = (start, 1),
                Ordering::Equal => fit.at_latest += 1,
                Ordering::Less => {}
            }
        }
        self.soon_fit.insert(key, fit);
        fit
    }

    /// After a start: the counts of shapes that node `i`, with a window to
    /// come, no longer takes (it was `before`) drop by it; the first node
    /// moves on to the next that still takes the shape (those before it never
    /// did, and room only shrinks). A count whose latest start only `i` gave
    /// is forgotten, to be counted afresh.
    pub(super) fn soon_taken(&mut self, i: u32, before: &NodeState) {
        let Some((_, start)) = self.windows.blocks_from(i, None, i64::MAX) else { return };
        if self.nodes[i as usize].walled {
            return;
        }
        let (parts, nodes, windows) = (&self.parts, &self.nodes, &self.windows);
        let now = &nodes[i as usize];
        self.soon_fit.retain(|(pi, shape), fit| {
            if !parts[*pi].nodes.member[i as usize] || !counted(before, shape) || counted(now, shape) {
                return true;
            }
            let Some(soon) = &parts[*pi].soon else { return false };
            fit.nodes -= 1;
            if start == fit.latest {
                fit.at_latest -= 1;
                if fit.at_latest == 0 {
                    return false;
                }
            }
            if let Some((pos, _)) = fit.first.filter(|(pos, _)| soon.nodes[*pos as usize] == i) {
                let mut next = (soon.nodes.iter().enumerate().skip(pos as usize + 1))
                    .filter(|(_, j)| counted(&nodes[**j as usize], shape));
                fit.first =
                    next.find_map(|(p, &j)| Some((p as u32, windows.blocks_from(j, None, i64::MAX)?.0)));
            }
            true
        });
    }
}
