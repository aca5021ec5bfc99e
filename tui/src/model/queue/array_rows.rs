//! The Queue's rows when it holds job arrays: one row per array, `▸ 12_*`,
//! saying how many tasks are in each state (`100 tasks: 20 R, 80 PD
//! (Priority)`); opened (`▾`), the array's records follow beneath it as
//! squeue lists them (`├─12_3`, `└─12_[4-99]`). What a row says comes from
//! the records; see [`crate::model::jobs::Listing`] for how they are grouped.

use super::{alert, order_key, row};
use crate::model::jobs::{self, Group, JobSet, Line, Listing, ListingKey, RowKey, WHERE_COL};
use crate::model::table::{Alert, Row, RowSource, Rows, TableModel, Target};
use crate::model::view::PaneView;
use spur_vocab::time::squeue_secs;
use std::sync::Arc;

/// Tree glyphs before the ID: an array's fold mark, a record's branch.
const GLYPHS: u16 = 2;

/// The table of a set with arrays, in `order` (None: the set's own).
pub(super) fn table(
    set: &Arc<JobSet>,
    view: &PaneView,
    order: Option<Arc<[u32]>>,
    mut widths: Vec<u16>,
    now_ms: i64,
) -> TableModel {
    let key = ListingKey { order: order_key(view), expanded: view.expanded.clone() };
    let listing = set.listing(key, || match &order {
        Some(order) => Listing::build(set, order.iter().copied(), &view.expanded),
        None => Listing::build(set, 0..set.jobs.len() as u32, &view.expanded),
    });
    widths[0] += GLYPHS;
    widths[WHERE_COL] = widths[WHERE_COL].max(listing.tasks_width);
    // Time needs nothing more: an array's longest run is one of the set's, which sized it.
    TableModel {
        columns: super::COLUMNS,
        total: set.line_count(&view.expanded),
        rows: Rows::Lazy { source: Arc::new(Grouped { set: set.clone(), listing, now_ms }), order: None },
        cell_widths: Some(widths),
    }
}

/// The lines of a listing as a row source.
#[derive(Debug)]
struct Grouped {
    set: Arc<JobSet>,
    listing: Arc<Listing>,
    now_ms: i64,
}

impl RowSource for Grouped {
    fn len(&self) -> usize {
        self.listing.lines.len()
    }

    fn row(&self, index: usize) -> Row {
        match self.listing.lines[index] {
            Line::Job(i) => row(&self.set.jobs[i as usize], self.now_ms),
            Line::Task { job, last } => {
                let prefix = if last { "└─" } else { "├─" };
                Row { prefix: prefix.into(), ..row(&self.set.jobs[job as usize], self.now_ms) }
            }
            Line::Array(g) => array_row(&self.set, &self.listing.groups[g as usize], self.now_ms),
        }
    }

    fn key(&self, index: usize) -> String {
        match self.listing.lines[index] {
            Line::Job(i) | Line::Task { job: i, .. } => self.set.jobs[i as usize].id.to_string(),
            Line::Array(g) => RowKey::Array(self.listing.groups[g as usize].id).to_string(),
        }
    }

    fn find(&self, key: &str) -> Option<usize> {
        self.listing.find(&self.set, RowKey::parse(key)?)
    }
}

/// An array's row: who and where from its most active record (arrays
/// share them), its longest run, the nodes its tasks hold, and its tasks.
pub fn array_row(set: &JobSet, g: &Group, now_ms: i64) -> Row {
    let lead = &set.jobs[g.lead as usize];
    let cells = vec![
        RowKey::Array(g.id).to_string(),
        lead.user.to_string(),
        lead.account.to_string(),
        lead.qos.to_string(),
        lead.partition_cell(),
        jobs::state_cell(lead.state),
        squeue_secs(g.run_secs(now_ms)),
        if g.nodes > 0 { g.nodes.to_string() } else { String::new() },
        // Loans are per run: opened, the array shows which of its records borrowed.
        String::new(),
        lead.reservation.to_string(),
        // Efficiency is per record: opened, the array shows each task's.
        String::new(),
        g.tasks.to_string(),
    ];
    // A failed task marks its array; an array is dimmed only once all of it has ended.
    let alert = match (g.failed, g.ended) {
        (true, _) => Some(Alert::JobFailed),
        (false, true) => alert(lead),
        (false, false) => None,
    };
    let row = Row::new(RowKey::Array(g.id).to_string(), Target::Job(g.id), cells, Vec::new());
    Row { prefix: if g.open { "▾ " } else { "▸ " }.into(), alert, ..row }
}

#[cfg(test)]
mod tests {
    use crate::model::jobs::{JobSet, WHERE_COL};
    use crate::model::queue::table;
    use crate::model::table::{Alert, Row, Target};
    use crate::model::view::PaneView;
    use spur_proto::v1 as pb;
    use std::sync::Arc;

    /// Job 5, and array 7 of four tasks: task 0 running on n1 (record 8) since
    /// the epoch, 1-3 waiting in the array's own record.
    fn set(task_state: &str) -> Arc<JobSet> {
        let job = |id, state: &str| pb::Job {
            id,
            user: "ann".into(),
            state: spur_proto::states::state_named(state),
            ..Default::default()
        };
        let rest = pb::Job {
            array_job_id: 7,
            array_pending: "1-3".into(),
            reason: spur_proto::states::reason_named("Resources"),
            ..job(7, "PENDING")
        };
        let task = pb::Job {
            array_job_id: 7,
            array_task_id: Some(0),
            nodes: vec!["n1".into()],
            num_nodes: 1,
            start_ms: 1,
            ..job(8, task_state)
        };
        Arc::new(JobSet::from_pb(vec![job(5, "RUNNING"), rest, task], 0))
    }

    fn rows(set: &Arc<JobSet>, view: &PaneView) -> Vec<Row> {
        table(set, view, 90_001).rows.into_iter().collect()
    }

    #[test]
    fn an_array_is_one_row_that_counts_its_tasks_and_says_why_they_wait() {
        let set = set("RUNNING");
        let view = PaneView::default();
        let rows = rows(&set, &view);
        let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["5", "7_*"]);
        let array = &rows[1];
        assert_eq!((array.prefix.as_str(), &array.target), ("▸ ", &Target::Job(7)));
        assert_eq!(array.cells[..2], ["7_*", "ann"]);
        assert_eq!(array.cells[5..], ["▶ R", "1:30", "1", "", "", "", "4 tasks: 1 R, 3 PD (Resources)"]);
        assert_eq!(array.alert, None);
        let t = table(&set, &view, 0);
        assert_eq!(t.total, 2);
        let widths = t.cell_widths.unwrap();
        assert_eq!(widths[0], 7 + 2, "`7_[1-3]` under its branch");
        assert_eq!(widths[WHERE_COL], 30);
    }

    #[test]
    fn opened_its_records_follow_it_on_branches() {
        let set = set("RUNNING");
        let mut view = PaneView::default();
        view.expanded.toggle(7);
        let rows = rows(&set, &view);
        let lines: Vec<String> = rows.iter().map(|r| format!("{}{}", r.prefix, r.cells[0])).collect();
        assert_eq!(lines, ["5", "▾ 7_*", "├─7_[1-3]", "└─7_0"]);
        assert_eq!(rows[2].cells[WHERE_COL], "(Resources)");
        let t = table(&set, &view, 0);
        assert_eq!((t.total, t.rows.position("8"), t.rows.position("7_*")), (4, Some(3), Some(1)));
        view.expanded.toggle(7);
        assert_eq!(table(&set, &view, 0).rows.position("8"), None, "folded again");
    }

    #[test]
    fn an_array_that_failed_stands_out_and_one_that_ended_is_dimmed() {
        let set = set("FAILED");
        let array = rows(&set, &PaneView::default()).remove(1);
        assert_eq!(array.cells[5], "◷ PD", "what still waits comes before what failed");
        assert_eq!(array.cells[WHERE_COL], "4 tasks: 3 PD (Resources), 1 F");
        assert_eq!(array.alert, Some(Alert::JobFailed));
        let done = |id, state: &str| pb::Job {
            id,
            state: spur_proto::states::state_named(state),
            array_job_id: 9,
            array_task_id: Some(id as u32),
            ..Default::default()
        };
        let set = Arc::new(JobSet::from_pb(vec![done(9, "COMPLETED")], 0));
        let array = rows(&set, &PaneView::default()).remove(0);
        assert_eq!((array.cells[WHERE_COL].as_str(), array.alert), ("1 task: 1 CD", Some(Alert::JobEnded)));
    }
}
