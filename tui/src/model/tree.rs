//! Tree glyphs for the panes that show a hierarchy (Accounts, HRES): one
//! function draws them, so every tree draws `│` under a non-last child the
//! same way.

use crate::model::table::Row;

/// A row and the rows under it, in display order.
pub struct Node {
    pub row: Row,
    pub children: Vec<Node>,
}

impl Node {
    pub fn leaf(row: Row) -> Node {
        Node { row, children: Vec::new() }
    }
}

/// Push `node` and its subtree onto `out` in pre-order, setting each
/// descendant's prefix: `├─`/`└─` for itself, and for every ancestor
/// below `node` either `│ ` (that ancestor has siblings after it, so its
/// line goes on) or two spaces (it was the last). `node` itself keeps no
/// glyph: it is the top of its tree.
pub fn flatten(node: Node, out: &mut Vec<Row>) {
    out.push(node.row);
    children(node.children, "", out);
}

fn children(kids: Vec<Node>, indent: &str, out: &mut Vec<Row>) {
    let n = kids.len();
    for (i, mut child) in kids.into_iter().enumerate() {
        let last = i + 1 == n;
        child.row.prefix = format!("{indent}{}", if last { "└─" } else { "├─" });
        out.push(child.row);
        let deeper = format!("{indent}{}", if last { "  " } else { "│ " });
        children(child.children, &deeper, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::table::Target;

    fn node(name: &str, children: Vec<Node>) -> Node {
        Node { row: Row::new(name.into(), Target::Root, vec![name.into()], Vec::new()), children }
    }

    fn drawn(top: Node) -> Vec<String> {
        let mut rows = Vec::new();
        flatten(top, &mut rows);
        rows.iter().map(|r| format!("{}{}", r.prefix, r.cells[0])).collect()
    }

    #[test]
    fn a_non_last_childs_line_runs_past_its_children() {
        // power → datacenter → {row1 → {rack1, rack2}, row2 → {rack3}}: row1
        // is not last, so its line must go on beside rack1 and rack2.
        let row1 = node("row1", vec![node("rack1", vec![]), node("rack2", vec![])]);
        let row2 = node("row2", vec![node("rack3", vec![])]);
        let top = node("power", vec![node("datacenter", vec![row1, row2]), node("other", vec![])]);
        assert_eq!(
            drawn(top),
            [
                "power",
                "├─datacenter",
                "│ ├─row1",
                "│ │ ├─rack1",
                "│ │ └─rack2",
                "│ └─row2",
                "│   └─rack3",
                "└─other",
            ]
        );
    }

    #[test]
    fn a_lone_top_draws_no_glyph() {
        assert_eq!(drawn(node("root", vec![])), ["root"]);
    }
}
