//! The Queue pane: one row per job, as `squeue` shows them, built only for
//! the jobs on screen. The state is the compact code with a symbol (`◷ PD`,
//! `▶ R`, `✗ F`); pending jobs show `(Reason)` where running ones show their
//! nodes, as squeue's `%R` does, and the detail view adds the reason's facts.
//! [`Queue`] holds the jobs (see [`crate::model::jobs`]) and where their
//! re-reads stand. A job array is one row until opened (see `array_rows`).

mod array_rows;

use crate::model::format;
use crate::model::jobs::{
    self, BORROWED_CELL, JobOp, JobRec, JobSet, OrderKey, StateFilter, TIME_COL, WHERE_COL, id_list,
};
use crate::model::table::{Alert, Column, Detail, Row, RowSource, Rows, TableModel, Target};
use crate::model::view::{PaneView, Refetch};
use spur_proto::v1::JobsChanged;

use spur_vocab::time::squeue_secs;
use spur_vocab::time::{format_limit, format_seconds};
use spur_vocab::txn::time_or;
use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Status {
    /// Not read yet on this connection.
    #[default]
    Loading,
    Loaded,
    /// The controller has no Jobs service (an older one, or a test double).
    Unsupported,
    /// The read failed; shown in the pane while there are no jobs to show.
    Failed(String),
}

#[derive(Debug, Clone, Default)]
pub struct Queue {
    /// None until the first read answers.
    pub jobs: Option<Arc<JobSet>>,
    pub status: Status,
    pub refetch: Refetch,
    /// Job actions sent whose answer has not come back; each answer re-reads
    /// unless the watch pushes job changes.
    pub writes: u32,
    /// This connection's watch pushes job changes.
    pub pushed: bool,
    /// Pushed batches waiting for the read under way.
    pub waiting: Vec<JobsChanged>,
}

/// Title and body of a job action's confirmation: the ids (the first 40,
/// so a thousand marked jobs still fit), whose they are, what happens and
/// the equivalent command.
pub fn describe(op: JobOp, ids: &[u64], owners: &[String]) -> (String, Vec<String>) {
    const SHOWN: usize = 40;
    let title = match ids {
        [one] => format!("{} job {one}?", op.title()),
        many => format!("{} {} jobs?", op.title(), many.len()),
    };
    let body = vec![
        format!("Jobs:   {}", id_list(ids, ",", SHOWN)),
        format!("Owner:  {}", owners.join(", ")),
        op.effect().to_string(),
        format!("= {}", op.command(ids, SHOWN)),
    ];
    (title, body)
}

const fn col(name: &'static str, priority: u8, max: u16, numeric: bool) -> Column {
    Column { name, priority, max, numeric, sparse: false }
}

/// Who, what state and why come first; account, QOS and the node count go
/// first on narrow terminals (the detail view shows them), and Borrowed
/// before them: the State cell's `⇄` says it too. IDs are aligned left, as
/// sacct's are, so an array's records line up under it; they may be as
/// wide as squeue's `%.18i` (`4812_[3-99%10]` under its tree glyph).
pub const COLUMNS: &[Column] = &[
    col("ID", 0, 18, false),
    col("User", 1, 12, false),
    col("Account", 4, 12, false),
    col("QOS", 5, 10, false),
    col("Partition", 3, 12, false),
    // `✗ OOM ⇄`: the longest code, on a borrowed run.
    col("State", 0, 7, false),
    col("Time", 2, 11, true),
    col("Nodes", 6, 5, true),
    // Only while the queue holds a borrowed run: without idle-fill it would be blank.
    Column { sparse: true, ..col("Borrowed", 7, 8, false) },
    // Only while a job asks for a reservation; the Partition cell's `®` says it at any width.
    Column { sparse: true, ..col("Reservation", 7, 14, false) },
    // Finished jobs' CPU% and Mem% of what they asked (`↓` under a quarter),
    // as seff reckons them; left out but in the Finished filter.
    Column { sparse: true, ..col("Eff", 2, 12, true) },
    col("NodeList(Reason)", 1, 30, false),
];

pub fn alert(r: &JobRec) -> Option<Alert> {
    if jobs::failed(r.state) {
        Some(Alert::JobFailed)
    } else if r.class() == jobs::Class::Finished {
        Some(Alert::JobEnded)
    } else {
        None
    }
}

/// squeue's TIME: `M:SS`, `H:MM:SS`, `D-HH:MM:SS`.
pub fn time_cell(r: &JobRec, now_ms: i64) -> String {
    squeue_secs(r.run_secs(now_ms))
}

pub fn row(r: &JobRec, now_ms: i64) -> Row {
    let cells = vec![
        r.id_cell(),
        r.user.to_string(),
        r.account.to_string(),
        r.qos.to_string(),
        r.partition_cell(),
        r.state_cell(),
        time_cell(r, now_ms),
        r.num_nodes.to_string(),
        if r.borrowed { BORROWED_CELL } else { "" }.to_string(),
        r.reservation.to_string(),
        r.eff.map(|e| e.cell()).unwrap_or_default(),
        r.where_.to_string(),
    ];
    // Lazy rows are ordered by `sort` on the records, so they carry no sort keys.
    let row = Row::new(r.id.to_string(), Target::Job(r.id), cells, Vec::new());
    Row { alert: alert(r), ..row }
}

/// The jobs as a row source; `now_ms` is the clock the Time cells are read at.
#[derive(Debug)]
struct JobRows {
    set: Arc<JobSet>,
    now_ms: i64,
}

impl RowSource for JobRows {
    fn len(&self) -> usize {
        self.set.jobs.len()
    }

    fn row(&self, index: usize) -> Row {
        row(&self.set.jobs[index], self.now_ms)
    }

    fn key(&self, index: usize) -> String {
        self.set.jobs[index].id.to_string()
    }

    fn find(&self, key: &str) -> Option<usize> {
        self.set.find(key.parse().ok()?)
    }
}

/// A text sort key as the other panes order text: ignoring (ASCII) case,
/// empty last, then the exact text so the order is the same every time.
fn text_key(s: &str) -> (bool, Vec<u8>, &str) {
    (s.is_empty(), s.bytes().map(|c| c.to_ascii_lowercase()).collect(), s)
}

/// Each job's rank among the distinct values of a text column. The text
/// columns are shared strings (a queue has far fewer users than jobs), so
/// only the distinct values are compared and no job's key is allocated.
fn text_ranks(order: &[u32], set: &JobSet, field: fn(&JobRec) -> &Arc<str>) -> Vec<u32> {
    let mut slot_of_ptr: HashMap<*const u8, u32> = HashMap::new();
    let mut names: Vec<&str> = Vec::new();
    let slots: Vec<u32> = order
        .iter()
        .map(|&i| {
            let s = field(&set.jobs[i as usize]);
            *slot_of_ptr.entry(Arc::as_ptr(s).cast::<u8>()).or_insert_with(|| {
                names.push(s);
                (names.len() - 1) as u32
            })
        })
        .collect();
    let mut by_text: Vec<u32> = (0..names.len() as u32).collect();
    by_text.sort_by_cached_key(|&n| text_key(names[n as usize]));
    let mut rank = vec![0u32; names.len()];
    for (r, &n) in by_text.iter().enumerate() {
        rank[n as usize] = r as u32;
    }
    slots.into_iter().map(|s| rank[s as usize]).collect()
}

/// Sort `order` (indexes into `set.jobs`) by a column, stably (ties keep
/// the id order). Keys are computed once per job rather than per
/// comparison: a sort of 100,000 jobs compares 1.7 million times. Time is
/// read at the set's fetch time, so the order of running jobs does not
/// change between re-reads.
pub fn sort(order: &mut Vec<u32>, set: &JobSet, col: usize, desc: bool) {
    let text: Option<fn(&JobRec) -> &Arc<str>> = match col {
        1 => Some(|r| &r.user),
        2 => Some(|r| &r.account),
        3 => Some(|r| &r.qos),
        4 => Some(|r| &r.partition),
        jobs::RESV_COL => Some(|r| &r.reservation),
        WHERE_COL => Some(|r| &r.where_),
        _ => None,
    };
    let keys: Vec<u64> = match text {
        Some(field) => text_ranks(order, set, field).into_iter().map(u64::from).collect(),
        None => order
            .iter()
            .map(|&i| {
                let r = &set.jobs[i as usize];
                match col {
                    0 => r.id,
                    5 => r.state.rank() as u64,
                    6 => r.run_secs(set.fetched_ms),
                    7 => u64::from(r.num_nodes),
                    // Borrowed runs first, as `yes` sorts before blank text.
                    jobs::BORROWED_COL => u64::from(!r.borrowed),
                    // Least efficient first; jobs without figures last.
                    jobs::EFF_COL => r.eff.map_or(u64::MAX, |e| e.key()),
                    _ => 0,
                }
            })
            .collect(),
    };
    let mut keyed: Vec<(u64, u32)> = keys.into_iter().zip(order.iter().copied()).collect();
    if desc {
        keyed.sort_by_key(|&(k, _)| Reverse(k));
    } else {
        keyed.sort_by_key(|&(k, _)| k);
    }
    *order = keyed.into_iter().map(|(_, i)| i).collect();
}

fn order_key(view: &PaneView) -> OrderKey {
    OrderKey {
        filter: view.filter.as_ref().map(|f| f.text.clone()),
        sort: view.sort,
        states: view.job_states,
    }
}

/// The display order for a view: the `t` state filter, the `/` filter on
/// each job's text, then a stable sort, memoised in the set.
fn order(set: &JobSet, view: &PaneView) -> Arc<[u32]> {
    set.order(order_key(view), || {
        let mut order: Vec<u32> = (0..set.jobs.len())
            .filter(|&i| {
                let r = &set.jobs[i];
                view.job_states.admits(r.class()) && view.filter.as_ref().is_none_or(|f| f.matches(&r.text))
            })
            .map(|i| i as u32)
            .collect();
        if let Some((col, desc)) = view.sort {
            sort(&mut order, set, col, desc);
        }
        order
    })
}

pub fn table(set: &Arc<JobSet>, view: &PaneView, now_ms: i64) -> TableModel {
    let plain = view.filter.is_none() && view.sort.is_none() && view.job_states == StateFilter::All;
    let order = (!plain).then(|| order(set, view));
    let mut widths = set.widths.clone();
    widths[TIME_COL] = format::width(&squeue_secs(set.longest_run(now_ms)));
    // The Eff column belongs to the Finished filter: elsewhere it is left out as empty.
    if view.job_states != StateFilter::Finished {
        widths[jobs::EFF_COL] = 0;
    }
    if set.has_arrays() {
        return array_rows::table(set, view, order, widths, now_ms);
    }
    TableModel {
        columns: COLUMNS,
        rows: Rows::Lazy { source: Arc::new(JobRows { set: set.clone(), now_ms }), order },
        total: set.jobs.len(),
        cell_widths: Some(widths),
    }
}

fn or(s: &str, none: &str) -> String {
    if s.is_empty() { none.to_string() } else { s.to_string() }
}

pub fn detail(set: &JobSet, key: &str, now_ms: i64) -> Option<Detail> {
    let r = set.get(key.parse().ok()?)?;
    let f = |label: &str, value: String| (label.to_string(), value);
    let time = |ms: i64| time_or(ms, "Unknown");
    let mut fields = vec![
        f("JobId", r.id.to_string()),
        f("Name", r.name.to_string()),
        f("User", r.user.to_string()),
        f("Account", or(&r.account, "(null)")),
        f("QOS", or(&r.qos, "(null)")),
        f("Partition", r.partition.to_string()),
        f("State", format!("{} ({})", jobs::state_cell(r.state), r.state)),
        f("Reason", r.reason.to_string()),
        // The facts behind a pending reason: which limit, at what level.
        f("Why", r.reason_detail.to_string()),
        f("Held", if r.held { "yes" } else { "no" }.into()),
        // squeue's %W: whether idle-fill lent this run its nodes.
        f("Borrowed", if r.borrowed { format!("yes {}", jobs::BORROWED) } else { "no".into() }),
        f("Priority", format!("{:.0}", r.priority.max(0.0))),
        f("TimeLimit", format_limit(r.time_limit)),
        f("RunTime", format_seconds(r.run_secs(now_ms))),
        f("SubmitTime", time(r.submit_ms)),
        f("StartTime", time(r.start_ms)),
        f("EndTime", time(r.end_ms)),
        f("NodeList", or(&r.nodelist, "(null)")),
        f("NumNodes", r.num_nodes.to_string()),
        f("NumCPUs", r.num_cpus.to_string()),
    ];
    if r.reclaims > 0 {
        // Earlier borrowed runs idle-fill took back (each requeued the job); after Borrowed.
        let at = fields.iter().position(|(label, _)| label == "Borrowed").map_or(fields.len(), |i| i + 1);
        fields.insert(at, f("Reclaims", r.reclaims.to_string()));
    }
    if let Some(a) = r.array.as_deref() {
        // An array's record: which tasks it holds (`12_[3-99%10]` pending, or `12_3`).
        fields.insert(1, f("Array", a.name.to_string()));
    }
    if r.mem_mb > 0 {
        fields.push(f("Memory/node", format::mem(r.mem_mb)));
    }
    if r.gpus_per_node > 0 {
        fields.push(f("GPUs/node", r.gpus_per_node.to_string()));
    }
    fields.push(f("ExitCode", format!("{}:0", r.exit_code)));
    fields.push(f("WorkDir", or(&r.workdir, "(null)")));
    if !r.comment.is_empty() {
        fields.push(f("Comment", r.comment.to_string()));
    }
    if !r.reservation.is_empty() {
        fields.push(f("Reservation", r.reservation.to_string()));
    }
    let title = format!("Job {} — {} ({}) {}", r.id, r.name, r.user, r.state_cell());
    Some(Detail { title, crumb: format!("job {}", r.id), fields, body: steps(r, now_ms) })
}

/// The detail view's Steps section: id, name, state, nodes, elapsed (none for a job without steps).
fn steps(r: &jobs::JobRec, now_ms: i64) -> Vec<String> {
    if r.steps.is_empty() {
        return vec![];
    }
    let id = |s: &jobs::StepLine| format!("{}.{}", r.id, s.id);
    let w = r.steps.iter().map(|s| id(s).len()).max().unwrap_or(0).max(6);
    let mut out = vec![
        "Steps".to_string(),
        format!("  {:<w$}  {:<10} {:<10} {:<15} ELAPSED", "STEPID", "NAME", "STATE", "NODES"),
    ];
    out.extend(r.steps.iter().map(|s| {
        let name: String = s.name.chars().take(10).collect();
        let secs = format_seconds(s.run_secs(now_ms));
        format!("  {:<w$}  {name:<10} {:<10} {:<15} {secs}", id(s), s.state, s.nodes)
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::filter::Filter;
    use spur_proto::v1 as pb;

    #[test]
    fn text_order_ignores_case_and_puts_blanks_last() {
        assert!(text_key("alice") < text_key("Bob"));
        assert!(text_key("") > text_key("a"));
        assert!(text_key("A") < text_key("a") && text_key("a") < text_key("B"));
    }

    #[test]
    fn a_job_s_detail_lists_its_steps() {
        let step = |id, state: &str| pb::Step {
            id,
            name: "hostname".into(),
            state: spur_proto::states::state_named(state),
            nodes: vec!["node01".into(), "node02".into()],
            start_ms: 1_000,
            end_ms: if state == "RUNNING" { 0 } else { 4_000 },
            ..Default::default()
        };
        let j = pb::Job {
            id: 12,
            state: spur_proto::states::state_named("RUNNING"),
            steps: vec![step(0, "COMPLETED"), step(1, "RUNNING")],
            ..Default::default()
        };
        let set = JobSet::from_pb(vec![j, pb::Job { id: 13, ..Default::default() }], 0);
        let d = detail(&set, "12", 61_000).unwrap();
        assert_eq!(d.body[0], "Steps");
        assert!(d.body[1].contains("STEPID") && d.body[1].ends_with("ELAPSED"), "{:?}", d.body);
        assert!(
            d.body[2].starts_with("  12.0    hostname   COMPLETED  node[01-02]")
                && d.body[2].ends_with("00:00:03")
        );
        assert!(d.body[3].contains("RUNNING") && d.body[3].ends_with("00:01:00"), "{:?}", d.body);
        assert!(detail(&set, "13", 0).unwrap().body.is_empty(), "no section without steps");
    }

    #[test]
    fn a_borrowed_run_is_marked_after_its_state_and_in_its_column_and_found_by_slash_borrowed() {
        let run = |id, state: &str, borrowed| pb::Job {
            id,
            state: spur_proto::states::state_named(state),
            name: "sim".into(),
            nodes: vec!["n1".into()],
            start_ms: 1_000,
            borrowed,
            reclaims: u32::from(id == 3),
            ..Default::default()
        };
        let set = Arc::new(JobSet::from_pb(
            vec![run(1, "RUNNING", false), run(2, "RUNNING", true), run(3, "COMPLETED", true)],
            0,
        ));
        let cells = |i: usize| row(&set.jobs[i], 0).cells;
        assert_eq!(COLUMNS[jobs::BORROWED_COL].name, "Borrowed");
        assert_eq!((cells(0)[5].as_str(), cells(0)[jobs::BORROWED_COL].as_str()), ("▶ R", ""));
        assert_eq!((cells(1)[5].as_str(), cells(1)[jobs::BORROWED_COL].as_str()), ("▶ R ⇄", "yes"));
        // Kept after its end, as squeue and sacct report it.
        assert_eq!((cells(2)[5].as_str(), cells(2)[jobs::BORROWED_COL].as_str()), ("✓ CD ⇄", "yes"));
        assert_eq!(set.widths[jobs::BORROWED_COL], 3, "`yes`; its header makes the column 8 wide");

        // `/borrowed` lists the borrowed runs, `!borrowed` the others; `t` narrows to the running ones.
        let shown = |filter: &str, states| {
            let view = PaneView {
                filter: Filter::parse(filter).unwrap(),
                job_states: states,
                ..PaneView::default()
            };
            table(&set, &view, 0).rows.into_iter().map(|r| r.key).collect::<Vec<_>>()
        };
        assert_eq!(shown("borrowed", StateFilter::All), ["2", "3"]);
        assert_eq!(shown("!borrowed", StateFilter::All), ["1"]);
        assert_eq!(shown("borrowed", StateFilter::Running), ["2"]);
        // Sorting by the column puts borrowed runs first, in id order.
        let view = PaneView { sort: Some((jobs::BORROWED_COL, false)), ..PaneView::default() };
        let keys: Vec<String> = table(&set, &view, 0).rows.into_iter().map(|r| r.key).collect();
        assert_eq!(keys, ["2", "3", "1"]);

        let field = |id: &str, label: &str| {
            let d = detail(&set, id, 0).unwrap();
            d.fields.into_iter().find(|(l, _)| l == label).map(|(_, v)| v)
        };
        assert_eq!(field("1", "Borrowed").as_deref(), Some("no"));
        assert_eq!(field("2", "Borrowed").as_deref(), Some("yes ⇄"));
        assert_eq!((field("2", "Reclaims"), field("3", "Reclaims").as_deref()), (None, Some("1")));
    }

    #[test]
    fn pending_jobs_show_their_reason_and_running_ones_their_nodes() {
        let pending = pb::Job {
            id: 1,
            state: spur_proto::states::state_named("PENDING"),
            reason: spur_proto::states::reason_named("Priority"),
            ..Default::default()
        };
        let running = pb::Job {
            id: 2,
            state: spur_proto::states::state_named("RUNNING"),
            nodes: vec!["node01".into(), "node02".into()],
            start_ms: 1_000,
            ..Default::default()
        };
        let set = JobSet::from_pb(vec![pending, running], 0);
        let rows: Vec<Row> = (0..2).map(|i| row(&set.jobs[i], 3_723_000)).collect();
        assert_eq!(rows[0].cells[WHERE_COL], "(Priority)");
        assert_eq!(rows[0].cells[6], "0:00");
        assert_eq!(rows[1].cells[WHERE_COL], "node[01-02]");
        assert_eq!(rows[1].cells[6], "1:02:02");
    }
}
