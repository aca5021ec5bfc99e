//! Which nodes idle-fill has lent out, derived from the jobs the console
//! already holds: a node is on loan while a borrowed run that has not ended
//! sits on it. The controller sends no such list; the Nodes pane marks these
//! nodes (`  MIXED ⇄`) and names the runs in a node's detail.
//!
//! Worked out once per read or batch of pushed changes, not per frame: the
//! Nodes pane builds its rows on every draw, and a queue may hold 100,000
//! jobs, of which only the borrowed ones are looked at closely.

use super::JobRec;
use spur_vocab::hostlist;
use std::collections::BTreeMap;

/// Node name → the borrowed runs on it, by job id (ascending).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loans(BTreeMap<Box<str>, Vec<u64>>);

/// No jobs read yet: no node is known to be on loan.
pub static NO_LOANS: Loans = Loans(BTreeMap::new());

impl Loans {
    /// The loans among `jobs` (sorted by id, so each node's ids are too).
    pub fn of(jobs: &[JobRec]) -> Loans {
        let mut map: BTreeMap<Box<str>, Vec<u64>> = BTreeMap::new();
        for r in jobs.iter().filter(|r| r.on_loan()) {
            // The record keeps its nodes compressed; a malformed list lends nothing
            // rather than failing the read (the Queue still shows the job).
            for node in hostlist::expand(&r.nodelist).unwrap_or_default() {
                map.entry(node.into_boxed_str()).or_default().push(r.id);
            }
        }
        Loans(map)
    }

    /// The borrowed runs on `node`; empty when it is not on loan.
    pub fn on(&self, node: &str) -> &[u64] {
        self.0.get(node).map_or(&[], Vec::as_slice)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many nodes are on loan.
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::JobSet;
    use spur_proto::v1 as pb;

    fn job(id: u64, state: &str, nodes: &[&str], borrowed: bool) -> pb::Job {
        let nodes = nodes.iter().map(|n| n.to_string()).collect();
        pb::Job { id, state: spur_proto::states::state_named(state), nodes, borrowed, ..Default::default() }
    }

    #[test]
    fn nodes_under_a_borrowed_run_that_has_not_ended_are_on_loan() {
        let set = JobSet::from_pb(
            vec![
                job(1, "RUNNING", &["n1"], false),
                job(2, "RUNNING", &["n2", "n3"], true),
                // Still holds its node while it completes.
                job(3, "COMPLETING", &["n3"], true),
                // Kept borrowed after its end, but gave its node back.
                job(4, "COMPLETED", &["n4"], true),
            ],
            0,
        );
        let loans = &set.loans;
        assert_eq!(loans.len(), 2);
        assert!(loans.on("n1").is_empty() && loans.on("n4").is_empty());
        assert_eq!((loans.on("n2"), loans.on("n3")), (&[2][..], &[2, 3][..]));
        assert!(JobSet::from_pb(vec![job(1, "RUNNING", &["n1"], false)], 0).loans.is_empty());
    }

    #[test]
    fn pushed_changes_redo_the_loans() {
        let mut set = JobSet::from_pb(vec![job(2, "RUNNING", &["n2"], true)], 0);
        set.apply(vec![job(2, "COMPLETED", &["n2"], true), job(5, "RUNNING", &["n5"], true)], 1, 10);
        assert_eq!((set.loans.on("n2"), set.loans.on("n5")), (&[][..], &[5][..]));
        // A requeue clears the stamp and frees the node.
        set.apply(vec![job(5, "PENDING", &[], false)], 2, 20);
        assert!(set.loans.is_empty());
    }
}
