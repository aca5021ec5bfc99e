//! The Nodes pane: one row per node, live from `Cluster.Watch`, with the
//! state an on-call admin scans for (down, draining, drained, not
//! responding) carried by a symbol and BOLD as well as colour, and a node
//! idle-fill has lent out marked `⇄` after its state (see [`Loans`]), and the
//! provisioner definitions whose condition holds for it (`Def`).

use crate::model::format;
use crate::model::jobs::{BORROWED, JobSet, Loans};
use crate::model::table::{
    Alert, Column, Detail, Row, SortKey, TableModel, Target, filter_and_sort, text_key,
};
use crate::model::view::PaneView;
use spur_client::events::{self, Event};
use spur_proto::v1::Node;
use spur_vocab::nodestate::NodeState;
use spur_vocab::txn::format_time;

const fn col(name: &'static str, priority: u8, max: u16, numeric: bool) -> Column {
    Column { name, priority, max, numeric, sparse: false }
}

/// Who set the reason and why come before resources: that is what an
/// on-call reads first, so they survive narrow terminals longest. The
/// definitions rank with them: at 80 columns they push out the partitions,
/// which `sinfo` shows anyway.
pub const COLUMNS: &[Column] = &[
    col("Node", 0, 16, false),
    // `? ALLOCATED* ⇄`: the longest state, not responding and on loan.
    col("State", 0, 14, false),
    col("CPU", 1, 9, true),
    col("Mem", 3, 11, true),
    col("GRES", 5, 18, false),
    col("Partitions", 4, 16, false),
    col("Def", 2, 20, false),
    col("Reason", 1, 30, false),
    col("By", 2, 10, false),
    col("At", 6, 19, false),
];

/// The node's state parts (the wire's one rule).
pub fn state_of(n: &Node) -> NodeState<'_> {
    n.node_state()
}

/// Down wins over drain: a down node runs nothing, drained or not.
pub fn alert(n: &Node) -> Option<Alert> {
    if n.base_state.eq_ignore_ascii_case("DOWN") {
        Some(Alert::Down)
    } else if n.drain {
        Some(Alert::Drain)
    } else if n.not_responding {
        Some(Alert::NotResponding)
    } else {
        None
    }
}

/// `▼ DOWN*`, `◐ DRAINING`, `◐ DRAINED`, `  IDLE`: the symbol column lines the words up.
pub fn state_cell(n: &Node) -> String {
    let symbol = match alert(n) {
        Some(Alert::Down) => "▼",
        Some(Alert::Drain) => "◐",
        Some(Alert::NotResponding) => "?",
        _ => " ",
    };
    format!("{symbol} {}", state_of(n).long().to_uppercase())
}

fn gres(n: &Node) -> String {
    match (n.gres.as_str(), n.gres_used.as_str()) {
        (g, "") => g.to_string(),
        (g, used) => format!("{g} ({used} used)"),
    }
}

/// The definitions a node is in, or `-` for none, so an empty cell never
/// reads as "not loaded".
pub fn definitions(n: &Node) -> String {
    if n.definitions.is_empty() { "-".into() } else { n.definitions.join(",") }
}

/// The Def column: [`definitions`], after `DYNAMIC` for a node not in
/// spur.conf (`spurd --dynamic`, `scontrol create`), as `sinfo` flags it.
fn def_cell(n: &Node) -> String {
    match (n.dynamic.is_empty(), n.definitions.is_empty()) {
        (true, _) => definitions(n),
        (false, true) => "DYNAMIC".into(),
        (false, false) => format!("DYNAMIC {}", definitions(n)),
    }
}

fn reason_time(n: &Node) -> String {
    if n.reason_time_ms > 0 { format_time(n.reason_time_ms) } else { String::new() }
}

/// The State column: [`state_cell`], then `⇄` while borrowed runs sit on
/// the node. After the word, not in the symbol's place: a draining node
/// on loan is both, and trouble keeps the first column.
fn lent_state_cell(n: &Node, lent: bool) -> String {
    let cell = state_cell(n);
    if lent { format!("{cell} {BORROWED}") } else { cell }
}

fn row(n: &Node, loans: &Loans) -> Row {
    let cells = vec![
        n.name.clone(),
        lent_state_cell(n, !loans.on(&n.name).is_empty()),
        format!("{}/{}", n.alloc_cpus, n.cpus),
        format!("{}/{}", format::mem(n.alloc_memory_mb), format::mem(n.memory_mb)),
        gres(n),
        n.partitions.join(","),
        def_cell(n),
        n.reason.clone(),
        n.reason_user.clone(),
        reason_time(n),
    ];
    // Sorting by state puts trouble first: down, then drain, then not responding.
    let rank = match alert(n) {
        Some(Alert::Down) => 0.0,
        Some(Alert::Drain) => 1.0,
        Some(Alert::NotResponding) => 2.0,
        _ => 3.0,
    };
    let sort = vec![
        text_key(&n.name),
        SortKey::Num(rank),
        SortKey::Num(f64::from(n.alloc_cpus)),
        SortKey::Num(n.alloc_memory_mb as f64),
        text_key(&cells[4]),
        text_key(&cells[5]),
        text_key(&n.definitions.join(",")),
        text_key(&n.reason),
        text_key(&n.reason_user),
        if n.reason_time_ms > 0 { SortKey::Num(n.reason_time_ms as f64) } else { SortKey::Blank },
    ];
    Row { alert: alert(n), ..Row::new(n.name.clone(), Target::Node(n.name.clone()), cells, sort) }
}

/// The rows; `loans` says which nodes borrowed runs sit on (from the jobs read).
/// The Nodes pane's data: every node, live from `Cluster.Watch` (pushed,
/// so never re-read: a new watch's first snapshot replaces them).
#[derive(Debug, Clone, Default)]
pub struct Nodes {
    /// None until the watch's first snapshot.
    pub list: Option<Vec<Node>>,
    /// The history of the node whose detail was opened last.
    pub events: Option<NodeEvents>,
}

/// How many of a node's newest txn rows its detail reads.
pub const EVENT_ROWS: usize = 50;
/// How many events the detail shows, newest first.
pub const EVENTS_SHOWN: usize = 5;

/// A node's history as `sacctmgr show event` derives it from the txn log.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeEvents {
    pub node: String,
    /// None while the read is under way.
    pub answer: Option<Result<Vec<Event>, String>>,
}

impl NodeEvents {
    /// `node`'s events in `rows` (oldest first), as the CLI derives them:
    /// an admin's row for several nodes is an event of each, this one's kept.
    pub fn derive(node: &str, rows: &[spur_proto::v1::TxnRow]) -> Vec<Event> {
        events::derive(rows, "", &events::Filter::node(node))
    }

    /// The detail's section: when, state, reason and who, newest first.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!("Events (newest {EVENTS_SHOWN}, as sacctmgr show event)")];
        match &self.answer {
            None => out.push("  reading…".into()),
            Some(Err(e)) => out.push(format!("  not read: {e}")),
            Some(Ok(ev)) if ev.is_empty() => out.push("  none recorded".into()),
            Some(Ok(ev)) => out.extend(ev.iter().rev().take(EVENTS_SHOWN).map(|e| {
                let reason = if e.reason.is_empty() { String::new() } else { format!(" {}", e.reason) };
                let end = e.end_ms.map_or_else(|| "now".into(), format_time);
                format!("  {} {:<5}{reason} (by {}, until {end})", format_time(e.start_ms), e.state, e.user)
            })),
        }
        out
    }
}

pub fn table(nodes: &[Node], view: &PaneView, loans: &Loans) -> TableModel {
    let rows: Vec<Row> = nodes.iter().map(|n| row(n, loans)).collect();
    let total = rows.len();
    TableModel { columns: COLUMNS, rows: filter_and_sort(rows, view).into(), total, cell_widths: None }
}

/// The borrowed runs on a node, as its detail names them: `101 (alice, QOS
/// ifteam)`, or `no`.
fn on_loan_to(node: &str, jobs: Option<&JobSet>) -> String {
    let Some(set) = jobs else { return "no".into() };
    let runs: Vec<String> = (set.loans.on(node).iter())
        .map(|&id| match set.get(id) {
            Some(r) => format!("{id} ({}, QOS {})", r.user, if r.qos.is_empty() { "(null)" } else { &r.qos }),
            None => id.to_string(),
        })
        .collect();
    if runs.is_empty() { "no".into() } else { format!("{BORROWED} {}", runs.join(", ")) }
}

/// A node's page; `jobs` (when read) name the borrowed runs on it.
pub fn detail(
    nodes: &[Node],
    key: &str,
    jobs: Option<&JobSet>,
    events: Option<&NodeEvents>,
) -> Option<Detail> {
    let n = nodes.iter().find(|n| n.name == key)?;
    let f = |label: &str, value: String| (label.to_string(), value);
    let st = state_of(n);
    let fields = vec![
        f("Node", n.name.clone()),
        f("State", format!("{} (scontrol: {})", state_cell(n).trim(), st.scontrol())),
        f("CPUs", format!("{} allocated of {}", n.alloc_cpus, n.cpus)),
        f("Memory", format!("{} allocated of {}", format::mem(n.alloc_memory_mb), format::mem(n.memory_mb))),
        f("GRES", n.gres.clone()),
        f("GRES used", n.gres_used.clone()),
        f("Features", n.features.join(",")),
        f("Weight", n.weight.to_string()),
        f("Partitions", n.partitions.join(",")),
        f("Definitions", definitions(n)),
        f("Annotations", spur_proto::v1::KeyValue::join(&n.annotations, ", ")),
        f("Running jobs", n.running_jobs.to_string()),
        // Lent by idle-fill: taken back when a job with a claim needs the node.
        f("On loan to", on_loan_to(&n.name, jobs)),
        f("Reservation", n.reservation.clone()),
        f("Next window", next_window(n)),
        f("Reason", n.reason.clone()),
        f("Reason by", n.reason_user.clone()),
        f("Reason uid", n.reason_uid.map(|u| u.to_string()).unwrap_or_default()),
        f("Reason at", reason_time(n)),
        // No last heartbeat: heartbeats are not pushed (they would make the watch
        // chatty), so it would be only as fresh as the node's last change.
        f("Agent host", n.agent_host.clone()),
    ];
    let body = events.filter(|e| e.node == n.name).map(NodeEvents::lines).unwrap_or_default();
    Some(Detail { title: format!("Node {}", n.name), crumb: n.name.clone(), fields, body })
}

/// The next reservation window on the node not yet begun: its name and start.
fn next_window(n: &Node) -> String {
    match n.next_reservation.as_str() {
        "" => String::new(),
        name => format!("{name} from {}", spur_vocab::txn::format_time(n.next_reservation_ms)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(base: &str, drain: bool, not_responding: bool, jobs: u32) -> Node {
        Node {
            name: "n1".into(),
            base_state: base.into(),
            drain,
            not_responding,
            running_jobs: jobs,
            ..Default::default()
        }
    }

    #[test]
    fn states_carry_a_symbol() {
        assert_eq!(state_cell(&node("MIXED", true, false, 2)), "◐ DRAINING");
        assert_eq!(state_cell(&node("IDLE", true, false, 0)), "◐ DRAINED");
        assert_eq!(state_cell(&node("DOWN", false, true, 0)), "▼ DOWN*");
        assert_eq!(state_cell(&node("IDLE", false, true, 0)), "? IDLE*");
        assert_eq!(state_cell(&node("IDLE", false, false, 0)), "  IDLE");
    }

    #[test]
    fn a_dynamic_node_is_marked_in_the_def_column_and_its_state() {
        let n =
            Node { dynamic: "NORM".into(), definitions: vec!["gpu".into()], ..node("IDLE", false, false, 0) };
        let rows: Vec<Row> = table(std::slice::from_ref(&n), &PaneView::default(), &Loans::default())
            .rows
            .into_iter()
            .collect();
        assert_eq!(rows[0].cells[6], "DYNAMIC gpu");
        let state = detail(&[n], "n1", None, None).unwrap().fields.into_iter().find(|(l, _)| l == "State");
        assert_eq!(state.unwrap().1, "IDLE (scontrol: IDLE+DYNAMIC_NORM)");
        let cloud = Node { dynamic: "CLOUD".into(), ..node("UNKNOWN", false, false, 0) };
        assert_eq!(state_cell(&cloud), "  IDLE~");
    }

    #[test]
    fn a_node_under_a_borrowed_run_is_marked_after_its_state_and_names_the_run() {
        use spur_proto::v1 as pb;
        let job = |id, borrowed| pb::Job {
            id,
            user: "frank".into(),
            qos: "ifteam".into(),
            state: spur_proto::states::state_named("RUNNING"),
            nodes: vec![format!("n{id}")],
            borrowed,
            ..Default::default()
        };
        let set = JobSet::from_pb(vec![job(1, false), job(2, true)], 0);
        let nodes: Vec<Node> =
            (1..=2).map(|i| Node { name: format!("n{i}"), ..node("MIXED", i == 2, false, 1) }).collect();
        let rows: Vec<Row> = table(&nodes, &PaneView::default(), &set.loans).rows.into_iter().collect();
        assert_eq!((rows[0].cells[1].as_str(), rows[1].cells[1].as_str()), ("  MIXED", "◐ DRAINING ⇄"));
        let lent = |name: &str, jobs| {
            let fields = detail(&nodes, name, jobs, None).unwrap().fields;
            fields.into_iter().find(|(label, _)| label == "On loan to").map(|(_, v)| v).unwrap()
        };
        assert_eq!(lent("n2", Some(&set)), "⇄ 2 (frank, QOS ifteam)");
        assert_eq!(lent("n1", Some(&set)), "no");
        assert_eq!(lent("n2", None), "no", "no jobs read yet");
    }
}
