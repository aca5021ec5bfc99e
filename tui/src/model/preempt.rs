//! The Preemption pane: one pending job's running candidates, each with its
//! effective priority and a ✓/✗ for the gap and every guard in the
//! scheduler's order, and the check that decided. Above the table, the
//! pending reason with its facts, the job-level checks, the outcome and
//! each provisioner definition's verdict on the job ([`Preempt::summary`]).
//! Enter shows a candidate's whole verdict as sentences.
//!
//! All of it is the controller's `Jobs.Explain` answer as sent: the
//! console shows the scheduler's marks and sentences; it never recomputes
//! a verdict.

use crate::model::table::{Column, Detail, Row, SortKey, TableModel, Target, filter_and_sort, text_key};
use crate::model::view::{PaneView, Refetch};
use spur_proto::v1::{self as pb, Mark, PairExplanation};

/// The pane's job and the controller's explanation of it.
#[derive(Debug, Clone, Default)]
pub struct Preempt {
    /// The job the pane is about.
    pub job: Option<u64>,
    /// The last answer for `job`.
    pub data: Option<pb::Explanation>,
    /// Why the last read failed (the job ended, is not pending, ...).
    pub error: Option<String>,
    pub refetch: Refetch,
}

const fn col(name: &'static str, priority: u8, max: u16) -> Column {
    Column { name, priority, max, numeric: false, sparse: false }
}

/// The controller's guard names, in its order: the columns PMode to Nodes.
const GUARDS: [&str; 7] = [
    "partition mode",
    "qos allow-list",
    "preempt mode",
    "exempt time",
    "min runtime",
    "reservation",
    "node overlap",
];

/// What decided comes right after the job, so it survives 80 columns.
pub const COLUMNS: &[Column] = &[
    col("Job", 0, 10),
    col("Verdict", 0, 22),
    Column { name: "Priority", priority: 1, max: 12, numeric: true, sparse: false },
    col("Gap", 1, 4),
    col("PMode", 3, 6),
    col("Allow", 2, 6),
    col("Mode", 2, 5),
    col("Exempt", 2, 7),
    col("MinRun", 3, 7),
    col("Resv", 4, 5),
    col("Nodes", 2, 6),
    col("User", 5, 10),
    col("QOS", 5, 10),
    col("Part", 6, 10),
];

/// One mark for everything that passes or fails, so checks, guards and
/// definitions read alike.
fn pass_mark(passes: bool) -> &'static str {
    if passes { "✓" } else { "✗" }
}

fn tick(m: Option<&Mark>) -> String {
    m.map_or("-", |m| pass_mark(m.passes)).into()
}

/// `✓ requeue` or `✗ exempt time`.
pub fn verdict(p: &PairExplanation) -> String {
    if p.eligible { format!("✓ {}", p.action) } else { format!("✗ {}", p.decided_by) }
}

fn row(p: &PairExplanation) -> Row {
    let c = p.candidate.clone().unwrap_or_default();
    let eff = c.priority.as_ref().map_or(0.0, |t| t.effective);
    let guard = |name: &str| tick(p.guards.iter().find(|g| g.name == name));
    let mut cells = vec![c.job_id.to_string(), verdict(p), format!("{eff:.1}"), tick(p.gap.as_ref())];
    cells.extend(GUARDS.iter().map(|name| guard(name)));
    cells.extend([
        c.user.clone(),
        if c.qos.is_empty() { "-".into() } else { c.qos.clone() },
        c.partition.clone(),
    ]);
    let mut sort = vec![SortKey::Num(c.job_id as f64), text_key(&cells[1]), SortKey::Num(eff)];
    sort.extend(cells[3..].iter().map(|s| text_key(s)));
    Row::new(c.job_id.to_string(), Target::Job(c.job_id), cells, sort)
}

pub fn table(e: &Preempt, view: &PaneView) -> TableModel {
    let cands: &[PairExplanation] = e.data.as_ref().map(|d| d.candidates.as_slice()).unwrap_or_default();
    let rows = filter_and_sort(cands.iter().map(row).collect(), view);
    TableModel { columns: COLUMNS, rows: rows.into(), total: cands.len(), cell_widths: None }
}

pub fn detail(e: &Preempt, key: &str) -> Option<Detail> {
    let d = e.data.as_ref()?;
    let p =
        d.candidates.iter().find(|p| p.candidate.as_ref().is_some_and(|c| c.job_id.to_string() == key))?;
    let c = p.candidate.clone().unwrap_or_default();
    Some(Detail {
        title: format!("job {} vs running job {key}", d.job_id),
        crumb: format!("vs {key}"),
        fields: vec![
            ("Verdict".into(), verdict(p)),
            ("User".into(), c.user),
            ("QOS".into(), c.qos),
            ("Partition".into(), c.partition),
        ],
        body: p.lines.clone(),
    })
}

impl Preempt {
    /// The lines above the table: the reason with its facts, the job-level checks, the outcome.
    pub fn summary(&self) -> Vec<(String, bool)> {
        let e = self;
        let Some(job) = e.job else {
            return vec![("no job chosen: press w on a Queue row, or :explain ID".into(), false)];
        };
        let Some(d) = e.data.as_ref() else {
            return vec![match &e.error {
                Some(err) => (format!("✗ job {job}: {err}"), true),
                None => ("loading…".into(), false),
            }];
        };
        let mut out = Vec::new();
        if let Some(err) = &e.error {
            out.push((format!("✗ {err} (showing the last answer)"), true));
        }
        let reason =
            if d.reason.is_empty() { "not pending in the last pass".to_string() } else { d.reason.clone() };
        let facts = facts_beside_definitions(d);
        let facts = if facts.is_empty() { String::new() } else { format!(": {facts}") };
        out.push((format!("job {job} pends: {reason}{facts}"), false));
        let mut checks: Vec<String> = d.checks.iter().map(check_label).collect();
        checks.extend(d.dynamic.iter().map(|h| format!("{}{}", pass_mark(!h.blocks), h.definition)));
        if !checks.is_empty() {
            out.push((format!("checks: {}", checks.join("  ")), false));
        }
        // The check that stopped preemption before any candidate, in full.
        out.extend(d.checks.iter().filter(|m| !m.passes).map(|m| (format!("✗ {}", m.sentence), true)));
        out.extend(d.dynamic.iter().filter(|h| h.blocks).map(|h| {
            let held = format!("{} of maxNodes {} held", h.held, h.max_nodes);
            (
                format!(
                    "✗ provisioner definition {} can still provision ({held}): preemption waits",
                    h.definition
                ),
                true,
            )
        }));
        out.push((format!("outcome: {}", d.outcome), false));
        if let Some(f) = &d.idle_fill {
            out.extend(idle_fill(f));
        }
        out.extend(definitions(d));
        out
    }
}

/// Definitions listed above the table: with the reason, checks and outcome
/// they still leave rows for candidates at 80x24.
const DEFINITION_LINES: usize = 4;

/// provisioners.yaml's verdicts on the job, in the file's order: `✓ ID:
/// admits the job`, or `✗` and the controller's sentence, which names the
/// definition. Nothing when no definitions are configured.
fn definitions(d: &pb::Explanation) -> Vec<(String, bool)> {
    if d.definitions.is_empty() {
        return Vec::new();
    }
    // When none admits, the refusals are why the job pends: they stand out
    // as a blocking check does. Otherwise a refusal is only a place it won't go.
    let blocking = !d.definitions.iter().any(|v| v.admitted);
    let mut out = vec![("Provisioner definitions:".to_string(), false)];
    for v in d.definitions.iter().take(DEFINITION_LINES) {
        out.push(if v.admitted {
            (format!("{} {}: admits the job", pass_mark(true), v.id), false)
        } else if v.why.is_empty() {
            (format!("{} {}: refused ({})", pass_mark(false), v.id, v.kind), blocking)
        } else {
            (format!("{} {}", pass_mark(false), v.why), blocking)
        });
    }
    let more = d.definitions.len().saturating_sub(DEFINITION_LINES);
    if more > 0 {
        out.push((format!("… {more} more definition(s) (scontrol explain job {})", d.job_id), false));
    }
    out
}

/// The reason's facts less the refusals the definitions section lists:
/// NoProvisionerDefinition's facts end with every refusal, and saying them
/// twice would push the section off an 80x24 screen. Only the exact
/// sentences shown below are taken out; anything else stays as sent.
fn facts_beside_definitions(d: &pb::Explanation) -> String {
    let shown = d.definitions.iter().take(DEFINITION_LINES);
    shown
        .filter(|v| !v.admitted && !v.why.is_empty())
        .fold(d.reason_detail.clone(), |facts, v| facts.replacen(&format!("; {}", v.why), "", 1))
}

/// Reclaim candidates shown beside preemption's: enough to read at 80x24.
const RECLAIM_LINES: usize = 3;

/// Idle-fill's verdict: the sentence, then each run reclaim weighed with the
/// check that kept it (the controller's words; nothing is recomputed here).
fn idle_fill(f: &spur_proto::v1::IdleFillExplanation) -> Vec<(String, bool)> {
    let mut out = vec![(format!("⇄ {}", f.sentence), f.kind == "borrow" && !f.eligible)];
    for c in f.candidates.iter().take(RECLAIM_LINES) {
        let why = match c.checks.iter().find(|m| !m.passes) {
            None => "reclaimable".to_string(),
            Some(m) => format!("kept: {}", m.sentence),
        };
        out.push((format!("  ⇄ job {} (qos {}, {}): {why}", c.job_id, c.qos, c.qos_priority), false));
    }
    if f.candidates.len() > RECLAIM_LINES || f.considered as usize > f.candidates.len() {
        out.push((
            format!("  … {} opportunistic run(s) weighed in all (scontrol explain job)", f.considered),
            false,
        ));
    }
    out
}

fn check_label(m: &Mark) -> String {
    format!("{}{}", tick(Some(m)), m.name)
}
