//! The Nodes pane: one row per node, live from `Cluster.Watch`, with the
//! state an on-call admin scans for (down, draining, drained, not
//! responding) carried by a symbol and BOLD as well as colour.

use crate::model::format;
use crate::model::pane::PaneView;
use crate::model::table::{
    Alert, Column, Detail, Row, SortKey, TableModel, Target, filter_and_sort, text_key,
};
use spur_proto::v1::Node;
use spur_vocab::nodestate::NodeState;
use spur_vocab::txn::format_time;

const fn col(name: &'static str, priority: u8, max: u16, numeric: bool) -> Column {
    Column { name, priority, max, numeric }
}

/// Who set the reason and why come before resources: that is what an
/// on-call reads first, so they survive narrow terminals longest.
pub const COLUMNS: &[Column] = &[
    col("Node", 0, 16, false),
    col("State", 0, 12, false),
    col("CPU", 1, 9, true),
    col("Mem", 3, 11, true),
    col("GRES", 5, 18, false),
    col("Partitions", 4, 16, false),
    col("Reason", 1, 30, false),
    col("By", 2, 10, false),
    col("At", 6, 19, false),
];

/// The node's state parts; busy as `sinfo` decides it (DRAINING vs DRAINED).
pub fn state_of(n: &Node) -> NodeState<'_> {
    NodeState {
        base: &n.base_state,
        drain: n.drain,
        not_responding: n.not_responding,
        busy: n.running_jobs > 0 || n.alloc_cpus > 0,
    }
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

fn reason_time(n: &Node) -> String {
    if n.reason_time_ms > 0 { format_time(n.reason_time_ms) } else { String::new() }
}

fn row(n: &Node) -> Row {
    let cells = vec![
        n.name.clone(),
        state_cell(n),
        format!("{}/{}", n.alloc_cpus, n.cpus),
        format!("{}/{}", format::mem(n.alloc_memory_mb), format::mem(n.memory_mb)),
        gres(n),
        n.partitions.join(","),
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
        text_key(&n.reason),
        text_key(&n.reason_user),
        if n.reason_time_ms > 0 { SortKey::Num(n.reason_time_ms as f64) } else { SortKey::Blank },
    ];
    Row { alert: alert(n), ..Row::new(n.name.clone(), Target::Node(n.name.clone()), cells, sort) }
}

pub fn table(nodes: &[Node], view: &PaneView) -> TableModel {
    let rows: Vec<Row> = nodes.iter().map(row).collect();
    let total = rows.len();
    TableModel { columns: COLUMNS, rows: filter_and_sort(rows, view).into(), total, cell_widths: None }
}

pub fn detail(nodes: &[Node], key: &str) -> Option<Detail> {
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
        f("Running jobs", n.running_jobs.to_string()),
        f("Reason", n.reason.clone()),
        f("Reason by", n.reason_user.clone()),
        f("Reason uid", n.reason_uid.map(|u| u.to_string()).unwrap_or_default()),
        f("Reason at", reason_time(n)),
        // No last heartbeat: heartbeats are not pushed (they would make the watch
        // chatty), so it would be only as fresh as the node's last change.
        f("Agent host", n.agent_host.clone()),
    ];
    Some(Detail { title: format!("Node {}", n.name), crumb: n.name.clone(), fields, body: Vec::new() })
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
}
