//! The jobs the Queue pane shows, compacted from `Jobs.ListJobs`.
//!
//! A busy cluster's queue holds 100,000 jobs. A protobuf `Job` with its spec
//! costs over a kilobyte; the console keeps only what the pane and its detail
//! view show, and shares the strings that repeat from job to job (user,
//! account, QOS, partition, state, reason and the reason's sentence), so such
//! a queue fits in a few tens of megabytes. The set is built in the network
//! task, off the UI thread, and never changes afterwards: a re-read replaces it.
//!
//! Table rows are not stored: `model::queue` builds them only for the jobs on
//! screen. What every frame would otherwise have to scan for is computed here
//! once: the filter text, the widest cell of each column, and the display
//! order for the current filter and sort (memoised, see [`JobSet::order`]),
//! and, when the queue holds job arrays, its lines with each array folded
//! into one (see [`Listing`]).

mod apply;
mod arrays;
mod eff;
mod loans;
mod op;
mod step;

use apply::run_bounds;
pub use arrays::{ArrayPart, Expanded, Group, Line, Listing, ListingKey, RowKey};
pub use eff::{Eff, WASTE_MARK};
pub use loans::{Loans, NO_LOANS};
pub use op::{JobOp, id_list};
use spur_proto::v1 as pb;
use spur_vocab::JobState;
use spur_vocab::hostlist;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};
pub use step::StepLine;

/// A job as the console keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRec {
    pub id: u64,
    pub name: Box<str>,
    pub user: Arc<str>,
    pub account: Arc<str>,
    pub qos: Arc<str>,
    pub partition: Arc<str>,
    pub state: JobState,
    pub reason: Arc<str>,
    pub reason_detail: Arc<str>,
    pub priority: f64,
    pub time_limit: Option<u64>,
    pub submit_ms: i64,
    pub start_ms: i64,
    pub end_ms: i64,
    /// The nodes as a hostlist (`node[01-04]`).
    pub nodelist: Arc<str>,
    /// squeue's `%R`: `(Reason)` for waiting or failed jobs, else the nodes
    /// (shared: most pending jobs wait for one of a few reasons).
    pub where_: Arc<str>,
    pub num_nodes: u32,
    pub num_cpus: u32,
    pub exit_code: i32,
    pub mem_mb: u64,
    pub gpus_per_node: u32,
    pub held: bool,
    /// Idle-fill lent this run its nodes (kept after it ends; a requeue clears it).
    pub borrowed: bool,
    /// How many of the job's runs idle-fill took back.
    pub reclaims: u32,
    pub workdir: Arc<str>,
    pub comment: Box<str>,
    /// `--reservation`: the admin reservation the job runs in ("" for none).
    pub reservation: Arc<str>,
    /// What `/` matches: every static cell, `borrowed` for a borrowed run,
    /// the job name and the long state.
    pub text: Box<str>,
    /// An array's record (`12_[3-99%10]`, `12_3`); None for other jobs.
    /// Boxed: most jobs are no array's, and each pays only the pointer.
    pub array: Option<Box<ArrayPart>>,
    /// The job's steps (srun), for its detail view; empty for most jobs.
    pub steps: Box<[StepLine]>,
    /// What an ended job used of what it asked for (the Eff column); None
    /// while it has not ended or when its use was not recorded.
    pub eff: Option<Eff>,
}

pub use spur_vocab::jobs::Class;

impl JobRec {
    /// The ID column: the job id, or an array's name for its records.
    pub fn id_cell(&self) -> String {
        self.array.as_ref().map_or_else(|| self.id.to_string(), |a| a.name.to_string())
    }

    pub fn class(&self) -> Class {
        self.state.class()
    }

    /// The State column: [`state_cell`], then [`BORROWED`] for a borrowed
    /// run, so a loan reads without colour and even when the Borrowed
    /// column is hidden on a narrow terminal.
    /// The partition, marked [`RESV_MARK`] when the job asks for a reservation.
    pub fn partition_cell(&self) -> String {
        match self.reservation.is_empty() {
            true => self.partition.to_string(),
            false => format!("{} {RESV_MARK}", self.partition),
        }
    }

    pub fn state_cell(&self) -> String {
        let cell = state_cell(self.state);
        if self.borrowed { format!("{cell} {BORROWED}") } else { cell }
    }

    /// Whether the job holds nodes idle-fill lent it now: a borrowed run
    /// that has not ended (a completing one still holds them).
    pub fn on_loan(&self) -> bool {
        self.borrowed && self.class() == Class::Running
    }

    /// Seconds run: none while pending, up to `now` while running (as squeue's TIME).
    pub fn run_secs(&self, now_ms: i64) -> u64 {
        if self.start_ms <= 0 || self.state == JobState::Pending {
            return 0;
        }
        let end = if self.end_ms > 0 { self.end_ms } else { now_ms };
        u64::try_from(end.saturating_sub(self.start_ms) / 1000).unwrap_or(0)
    }
}

/// The `t` key's quick filter on the Queue pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum StateFilter {
    #[default]
    All,
    Pending,
    Running,
    Finished,
}

impl StateFilter {
    pub fn next(self) -> StateFilter {
        match self {
            StateFilter::All => StateFilter::Pending,
            StateFilter::Pending => StateFilter::Running,
            StateFilter::Running => StateFilter::Finished,
            StateFilter::Finished => StateFilter::All,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            StateFilter::All => "all",
            StateFilter::Pending => "pending",
            StateFilter::Running => "running",
            StateFilter::Finished => "finished",
        }
    }

    pub fn admits(self, class: Class) -> bool {
        match self {
            StateFilter::All => true,
            StateFilter::Pending => class == Class::Pending,
            StateFilter::Running => class == Class::Running,
            StateFilter::Finished => class == Class::Finished,
        }
    }
}

/// `◷ PD`, `▶ R`, `✗ F`: the compact code with a symbol, so a state reads
/// without colour and the symbols line the codes up.
pub fn state_cell(state: JobState) -> String {
    use JobState::*;
    let symbol = match state {
        Pending => "◷",
        Running => "▶",
        Completing => "▷",
        Suspended => "‖",
        Completed => "✓",
        Cancelled => "⊘",
        Preempted | Requeued | RequeueHold => "↺",
        s if failed(s) => "✗",
        _ => "·",
    };
    format!("{symbol} {}", state.code())
}

/// The mark of a borrowed run after its state (`▶ R ⇄`) and of a node on
/// loan (`  MIXED ⇄`): capacity that goes back when a job with a claim needs it.
pub const BORROWED: &str = "⇄";

/// The word `/` finds borrowed runs by (the Borrowed column's `yes` would
/// match too much), so `/borrowed` lists them and `!borrowed` hides them.
pub const BORROWED_WORD: &str = "borrowed";

/// Compact codes of jobs that ended badly; shown BOLD with `✗`.
pub fn failed(state: JobState) -> bool {
    use JobState::*;
    matches!(state, Failed | Timeout | NodeFail | OutOfMemory | BootFail | Deadline)
}

/// The Time column: its cells and width follow the clock, so they are not kept here.
pub const TIME_COL: usize = 6;
/// The Borrowed column, and what it says for a borrowed run (blank otherwise).
pub const BORROWED_COL: usize = 8;
pub const BORROWED_CELL: &str = "yes";
/// The Reservation column: the reservation a job asks for (squeue's `%v`).
pub const RESV_COL: usize = 9;
/// The mark after the partition of a job that asks for a reservation
/// (`batch ®`), so a terminal too narrow for the column still tells it.
pub const RESV_MARK: &str = "®";
/// The Eff column: CPU and memory used of what was asked (the Finished filter's).
pub const EFF_COL: usize = 10;
/// squeue's `%R`, the last column: `(Reason)` or the nodes.
pub const WHERE_COL: usize = 11;

/// Cached display order for one (filter, sort, state filter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderKey {
    pub filter: Option<String>,
    pub sort: Option<(usize, bool)>,
    pub states: StateFilter,
}

/// The last value computed and its key. Not part of the set's value: a
/// clone starts empty, equality ignores it. A lock, not a cell, so a set
/// can be shared with the network task that built it.
struct Memo<K, V>(Mutex<Option<(K, V)>>);

impl<K, V> Default for Memo<K, V> {
    fn default() -> Self {
        Memo(Mutex::new(None))
    }
}

impl<K, V> Clone for Memo<K, V> {
    fn clone(&self) -> Self {
        Memo::default()
    }
}

impl<K: PartialEq, V: Clone> Memo<K, V> {
    fn get_or(&self, key: K, compute: impl FnOnce() -> V) -> V {
        let mut memo = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((k, v)) = memo.as_ref()
            && *k == key
        {
            return v.clone();
        }
        let v = compute();
        *memo = Some((key, v.clone()));
        v
    }
}

/// Every job of one `ListJobs` answer, sorted by id, and what frames need precomputed.
#[derive(Clone)]
pub struct JobSet {
    pub jobs: Vec<JobRec>,
    /// The last batch of pushed job changes this set reflects (`ListJobsResponse.seq`).
    pub seq: u64,
    /// When the controller answered: the clock the Time sort uses, so the
    /// memoised order does not go stale as seconds pass.
    pub fetched_ms: i64,
    /// The widest static cell of each column (Time's entry is 0).
    pub widths: Vec<u16>,
    /// The longest run of an ended job, and the earliest start of a running
    /// one: the Time column's width at any moment, without measuring every job.
    longest_ended: u64,
    earliest_running: Option<i64>,
    /// How many records each array has here, by array id.
    arrays: HashMap<u64, u32>,
    /// The nodes borrowed runs sit on, for the Nodes pane.
    pub loans: Loans,
    order: Memo<OrderKey, Arc<[u32]>>,
    listing: Memo<ListingKey, Arc<Listing>>,
}

impl PartialEq for JobSet {
    fn eq(&self, other: &Self) -> bool {
        self.fetched_ms == other.fetched_ms && self.jobs == other.jobs
    }
}

impl fmt::Debug for JobSet {
    // 100,000 records in a test failure message help nobody.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JobSet {{ {} jobs, fetched_ms: {} }}", self.jobs.len(), self.fetched_ms)
    }
}

/// Shares equal strings: a queue has few users and partitions but many jobs.
#[derive(Default)]
struct Interner(HashSet<Arc<str>>);

impl Interner {
    fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.0.get(s) {
            return a.clone();
        }
        let a: Arc<str> = s.into();
        self.0.insert(a.clone());
        a
    }
}

fn compact(mut j: pb::Job, strings: &mut Interner) -> JobRec {
    let eff = Eff::of(&j);
    let spec = j.spec.take().unwrap_or_default();
    let array = (j.array_job_id != 0).then(|| Box::new(ArrayPart::of(&j)));
    let nodelist = strings.get(&hostlist::compress(&j.nodes));
    let (state, reason) = (j.job_state(), j.reason_text());
    let where_ = if state.shows_reason() { strings.get(&format!("({reason})")) } else { nodelist.clone() };
    let reason = strings.get(&reason);
    JobRec {
        id: j.id,
        // Moved, not copied: most of the wire strings become the record's.
        name: std::mem::take(&mut j.name).into_boxed_str(),
        user: strings.get(&j.user),
        account: strings.get(&j.account),
        qos: strings.get(&j.qos),
        partition: strings.get(&j.partition),
        state,
        reason,
        // A reason told in words is shown once, as the reason.
        reason_detail: strings.get(if j.reason_in_words() { "" } else { &j.reason_detail }),
        priority: j.priority,
        time_limit: j.time_limit_minutes,
        submit_ms: j.submit_ms,
        start_ms: j.start_ms,
        end_ms: j.end_ms,
        nodelist,
        where_,
        num_nodes: j.num_nodes,
        num_cpus: j.num_cpus,
        exit_code: j.exit_code,
        mem_mb: spec.mem_mb,
        gpus_per_node: spec.gpus_per_node,
        held: spec.hold || j.held,
        borrowed: j.borrowed,
        reclaims: j.reclaims,
        workdir: strings.get(&spec.workdir),
        comment: spec.comment.into_boxed_str(),
        reservation: strings.get(&spec.reservation),
        text: Box::default(),
        array,
        steps: j.steps.iter().map(StepLine::from_pb).collect(),
        eff,
    }
}

/// The filter text, and the static cells' widths folded into `widths`,
/// without building the ten cells (this runs for every job of every read).
fn measure(r: &JobRec, widths: &mut [u16]) -> Box<str> {
    let (id, state, nodes) = (r.id_cell(), r.state_cell(), r.num_nodes.to_string());
    let cells: [(usize, &str); 9] = [
        (0, &id),
        (1, &r.user),
        (2, &r.account),
        (3, &r.qos),
        (4, &r.partition_cell()),
        (5, &state),
        (7, &nodes),
        (RESV_COL, &r.reservation),
        (WHERE_COL, &r.where_),
    ];
    let mut text = String::with_capacity(128);
    for (col, cell) in cells {
        widths[col] = widths[col].max(crate::model::format::width(cell));
        if !cell.is_empty() {
            text.push_str(cell);
            text.push(' ');
        }
    }
    if let Some(e) = r.eff {
        widths[EFF_COL] = widths[EFF_COL].max(crate::model::format::width(&e.cell()));
    }
    if r.borrowed {
        widths[BORROWED_COL] = widths[BORROWED_COL].max(crate::model::format::width(BORROWED_CELL));
        text.push_str(BORROWED_WORD);
        text.push(' ');
    }
    text.push_str(&r.name);
    text.push(' ');
    text.push_str(r.state.as_str());
    text.into_boxed_str()
}

impl JobSet {
    /// Compact a `ListJobs` answer fetched at `now_ms`.
    pub fn from_pb(jobs: Vec<pb::Job>, now_ms: i64) -> JobSet {
        let mut strings = Interner::default();
        let mut recs: Vec<JobRec> = jobs.into_iter().map(|j| compact(j, &mut strings)).collect();
        recs.sort_by_key(|r| r.id);
        recs.dedup_by_key(|r| r.id);
        recs.shrink_to_fit();
        let mut widths = vec![0u16; WHERE_COL + 1];
        for r in &mut recs {
            r.text = measure(r, &mut widths);
        }
        let (longest_ended, earliest_running) = run_bounds(&recs, now_ms);
        JobSet {
            arrays: arrays::count(&recs),
            loans: Loans::of(&recs),
            jobs: recs,
            seq: 0,
            fetched_ms: now_ms,
            widths,
            longest_ended,
            earliest_running,
            order: Memo::default(),
            listing: Memo::default(),
        }
    }

    /// The index of job `id`.
    pub fn find(&self, id: u64) -> Option<usize> {
        self.jobs.binary_search_by_key(&id, |r| r.id).ok()
    }

    pub fn get(&self, id: u64) -> Option<&JobRec> {
        self.find(id).map(|i| &self.jobs[i])
    }

    /// The longest run time any job shows at `now_ms`, for the Time column's width.
    pub fn longest_run(&self, now_ms: i64) -> u64 {
        let running = self.earliest_running.map_or(0, |s| u64::try_from((now_ms - s) / 1000).unwrap_or(0));
        self.longest_ended.max(running)
    }

    /// The display order for `key`, computed by `compute` at most once per
    /// key: every frame asks for it several times, and filtering and sorting
    /// 100,000 jobs takes milliseconds.
    pub fn order(&self, key: OrderKey, compute: impl FnOnce() -> Vec<u32>) -> Arc<[u32]> {
        self.order.get_or(key, || compute().into())
    }

    /// The lines of a queue with arrays, memoised as [`Self::order`] is
    /// (apart from it: opening an array must not sort 100,000 jobs again).
    pub fn listing(&self, key: ListingKey, compute: impl FnOnce() -> Listing) -> Arc<Listing> {
        self.listing.get_or(key, || Arc::new(compute()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: u64, user: &str, state: &str) -> pb::Job {
        pb::Job { id, user: user.into(), state: spur_proto::states::state_named(state), ..Default::default() }
    }

    #[test]
    fn strings_are_shared_and_jobs_sorted_by_id() {
        let set = JobSet::from_pb(vec![job(3, "alice", "RUNNING"), job(1, "alice", "PENDING")], 0);
        assert_eq!(set.jobs.iter().map(|r| r.id).collect::<Vec<_>>(), [1, 3]);
        assert!(Arc::ptr_eq(&set.jobs[0].user, &set.jobs[1].user));
        assert_eq!(set.get(3).map(|r| r.class()), Some(Class::Running));
        assert!(set.get(2).is_none());
    }

    #[test]
    fn states_read_without_colour() {
        assert_eq!(state_cell(JobState::from_name("PENDING").unwrap()), "◷ PD");
        assert_eq!(state_cell(JobState::from_name("RUNNING").unwrap()), "▶ R");
        assert_eq!(state_cell(JobState::from_name("FAILED").unwrap()), "✗ F");
        assert_eq!(state_cell(JobState::from_name("TIMEOUT").unwrap()), "✗ TO");
        assert_eq!(state_cell(JobState::from_name("COMPLETED").unwrap()), "✓ CD");
        assert_eq!(StateFilter::Finished.next(), StateFilter::All);
        assert!(StateFilter::Running.admits(JobState::Completing.class()));
    }

    #[test]
    fn order_is_computed_once_per_key() {
        let set = JobSet::from_pb(vec![job(1, "a", "PENDING")], 0);
        let key = OrderKey { filter: None, sort: None, states: StateFilter::All };
        let first = set.order(key.clone(), || vec![0]);
        let again = set.order(key, || panic!("recomputed"));
        assert!(Arc::ptr_eq(&first, &again));
    }
}
