//! The Provisioners pane: one row per definition of provisioners.yaml
//! (`Nodes.ListProvisioners`), with its backend, state, how many of its
//! nodes are usable, cost, exclusivity and annotations. A static pool that
//! matched no node, or a node whose facts broke the condition, is trouble:
//! `!` before the state and BOLD, not colour alone. The detail page has the
//! whole condition and policy as written, the spec and the failed nodes;
//! for a slurm definition, its borrowed nodes (state, upstream job id,
//! expiry, cost so far) and, while it backs off, `unavailable` with the
//! upstream's error, all as the controller answered them.

use crate::model::table::{
    Alert, Column, Detail, Row, SortKey, TableModel, Target, filter_and_sort, text_key,
};
use crate::model::view::{PaneView, Refetch};
use spur_proto::v1::{BorrowedNode, KeyValue, Provisioner};
use spur_vocab::txn::format_time;

const fn col(name: &'static str, priority: u8, max: u16, numeric: bool) -> Column {
    Column { name, priority, max, numeric, sparse: false }
}

/// Sized so every column fits 80 columns with ids of a dozen characters;
/// annotations come last, so a wide terminal shows them whole.
pub const COLUMNS: &[Column] = &[
    col("ID", 0, 20, false),
    col("Backend", 2, 9, false),
    // `! unavailable`: the symbol, a space and the longest state.
    col("State", 0, 13, false),
    col("Usable", 1, 9, true),
    col("Cost/h", 3, 8, true),
    col("Excl", 4, 8, false),
    col("Annotations", 2, 24, false),
];

/// A static pool that matched nothing, nodes whose facts broke the
/// condition, or a dynamic definition whose upstream failed.
fn trouble(p: &Provisioner) -> bool {
    p.state == "no nodes" || !p.condition_errors.is_empty() || !p.unavailable_error.is_empty()
}

fn row(p: &Provisioner) -> Row {
    let cells = vec![
        p.id.clone(),
        p.backend.clone(),
        format!("{} {}", if trouble(p) { "!" } else { " " }, p.state),
        format!("{}/{}", p.usable_nodes, p.node_count),
        format!("{:.2}", p.cost_per_hour),
        p.exclusive.clone(),
        KeyValue::join(&p.annotations, ","),
    ];
    // Sorting by state puts trouble first, then the pools in use.
    let rank = match (trouble(p), p.state.as_str()) {
        (true, _) => 0.0,
        (false, "active") => 1.0,
        _ => 2.0,
    };
    let sort = vec![
        text_key(&p.id),
        text_key(&p.backend),
        SortKey::Num(rank),
        SortKey::Num(f64::from(p.usable_nodes)),
        SortKey::Num(p.cost_per_hour),
        text_key(&p.exclusive),
        text_key(&cells[6]),
    ];
    let mut r = Row::new(p.id.clone(), Target::Provisioner(p.id.clone()), cells, sort);
    r.alert = trouble(p).then_some(Alert::Error);
    r
}

/// The Provisioners pane's data: provisioners.yaml's definitions, and their re-read.
#[derive(Debug, Clone, Default)]
pub struct Provisioners {
    /// None until first read (and for a controller without `ListProvisioners`).
    pub list: Option<Vec<Provisioner>>,
    pub refetch: Refetch,
}

pub fn table(all: &[Provisioner], view: &PaneView) -> TableModel {
    let rows: Vec<Row> = all.iter().map(row).collect();
    let total = rows.len();
    TableModel { columns: COLUMNS, rows: filter_and_sort(rows, view).into(), total, cell_widths: None }
}

/// A YAML block as the detail's body: its lines indented, blank ones dropped.
fn block(title: &str, text: &str) -> Vec<String> {
    let lines: Vec<String> =
        text.lines().filter(|l| !l.trim().is_empty()).map(|l| format!("  {}", l.trim_end())).collect();
    if lines.is_empty() {
        return vec![format!("{title}: (none)")];
    }
    std::iter::once(format!("{title}:")).chain(lines).collect()
}

/// A slurm definition's borrowed nodes as a small table; nothing for a
/// definition that borrows none.
fn borrowed(nodes: &[BorrowedNode]) -> Vec<String> {
    if nodes.is_empty() {
        return vec![];
    }
    let rows: Vec<[String; 5]> =
        std::iter::once(["Node", "State", "Upstream job", "Expires", "Cost"].map(String::from))
            .chain(nodes.iter().map(|b| {
                let job = if b.upstream_job.is_empty() { "-".to_string() } else { b.upstream_job.clone() };
                [b.name.clone(), b.state.clone(), job, format_time(b.expires_ms), format!("{:.2}", b.cost)]
            }))
            .collect();
    let w: Vec<usize> =
        (0..5).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = vec![format!("Borrowed nodes ({}):", nodes.len())];
    out.extend(rows.iter().map(|r| {
        let line = format!(
            "  {:<a$}  {:<b$}  {:<c$}  {:<d$}  {:>e$}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            a = w[0],
            b = w[1],
            c = w[2],
            d = w[3],
            e = w[4]
        );
        line.trim_end().to_string()
    }));
    out
}

pub fn detail(all: &[Provisioner], key: &str) -> Option<Detail> {
    let p = all.iter().find(|p| p.id == key)?;
    let f = |label: &str, value: String| (label.to_string(), value);
    let or_none = |s: String| if s.is_empty() { "(none)".to_string() } else { s };
    let nodes = match p.nodes.as_str() {
        "" => format!("(none; {} usable)", p.usable_nodes),
        list => format!("{list} ({} of {} usable)", p.usable_nodes, p.node_count),
    };
    let mut fields = vec![
        f("Provisioner", p.id.clone()),
        f("Backend", p.backend.clone()),
        f("State", p.state.clone()),
        f("Nodes", nodes),
        f("Cost/hour", format!("{:.2}", p.cost_per_hour)),
        f("Exclusive", p.exclusive.clone()),
        f("TTL", format!("{} (buffer {})", p.ttl, p.ttl_buffer)),
        f("Annotations", or_none(KeyValue::join(&p.annotations, ", "))),
        f("Spec", or_none(KeyValue::join(&p.spec, ", "))),
    ];
    if p.backend == "slurm" {
        fields.push(f("Cost so far", format!("{:.2} ({:.2} node-hours)", p.cost, p.node_hours)));
        let by_account: Vec<String> = (p.account_costs.iter())
            .map(|a| format!("{} {:.2}", if a.account.is_empty() { "(none)" } else { &a.account }, a.cost))
            .collect();
        fields.push(f("By account", or_none(by_account.join(", "))));
    }
    if !p.unavailable_error.is_empty() {
        let retry = format!("retried at {}", format_time(p.retry_at_ms));
        fields.push(f("Unavailable", format!("{} ({retry})", p.unavailable_error)));
    }
    let mut body = borrowed(&p.borrowed);
    body.extend(block("Condition", &p.condition));
    body.extend(block("Policy", &p.policy));
    if p.condition_errors.is_empty() {
        body.push("Condition errors: none".into());
    } else {
        body.push(format!("Condition errors ({}):", p.condition_errors.len()));
        let w = p.condition_errors.iter().map(|e| e.key.chars().count()).max().unwrap_or(0);
        body.extend(p.condition_errors.iter().map(|e| format!("  {:<w$}  {}", e.key, e.value)));
    }
    Some(Detail { title: format!("Provisioner {}", p.id), crumb: p.id.clone(), fields, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trouble_is_marked_in_the_state_cell_and_sorts_first() {
        let ok = Provisioner { id: "a".into(), state: "active".into(), ..Default::default() };
        let empty = Provisioner { id: "b".into(), state: "no nodes".into(), ..Default::default() };
        let broken =
            Provisioner { condition_errors: vec![KeyValue::new("n1", "bad")], id: "c".into(), ..ok.clone() };
        let view = PaneView { sort: Some((2, false)), ..PaneView::default() };
        let rows: Vec<Row> = table(&[ok, empty, broken], &view).rows.into_iter().collect();
        let states: Vec<&str> = rows.iter().map(|r| r.cells[2].as_str()).collect();
        assert_eq!(states, ["! no nodes", "! active", "  active"]);
        assert_eq!(rows[0].alert, Some(Alert::Error));
        assert_eq!(rows[2].alert, None);
    }

    #[test]
    fn the_detail_keeps_the_yaml_lines_and_says_none() {
        let p = Provisioner { id: "x".into(), condition: "a &&\n\n  b\n".into(), ..Default::default() };
        let d = detail(&[p], "x").unwrap();
        assert_eq!(d.body, ["Condition:", "  a &&", "    b", "Policy: (none)", "Condition errors: none"]);
        assert!(d.fields.contains(&("Annotations".into(), "(none)".into())));
        assert!(detail(&[], "x").is_none());
    }
}
