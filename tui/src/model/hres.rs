//! The HRES pane: one tree per hierarchical resource (Mode 3 by
//! `ParentName`, modes 1 and 2 by node-set containment) and one row per
//! plain license, each with count, base usage, used, free and a usage bar.
//! A disabled layer carries `⊘` and the word OFF, not colour alone; one a
//! resource's plugin disabled says PLUGIN, or DOWN when it downed it. The
//! detail lists the jobs that hold the layer and how much each holds, and
//! the plugin's last maintenance and mark, with their time and message.

use crate::model::table::{
    Alert, Column, Detail, Row, SortKey, TableModel, Target, filter_and_sort, text_key,
};
use crate::model::tree::{Node, flatten};
use crate::model::view::{PaneView, Refetch};
use spur_proto::v1::License;
use spur_vocab::hostlist;
use spur_vocab::txn::time_or;
use std::collections::BTreeSet;

const fn col(name: &'static str, priority: u8, max: u16, numeric: bool) -> Column {
    Column { name, priority, max, numeric, sparse: false }
}

pub const COLUMNS: &[Column] = &[
    col("Layer", 0, 24, false),
    col("State", 0, 9, false),
    col("Count", 1, 9, true),
    col("Base", 3, 8, true),
    col("Used", 1, 9, true),
    col("Free", 1, 9, true),
    col("Usage", 2, 16, false),
    col("Mode", 4, 6, false),
    col("Nodes", 5, 20, false),
];

fn key(l: &License) -> String {
    if l.layer_name.is_empty() { l.name.clone() } else { format!("{}/{}", l.name, l.layer_name) }
}

fn off(l: &License) -> bool {
    l.disable_hres || l.disable_layer
}

/// `▓▓▓░░░░░░░  30%`: ten cells and the percentage, readable without colour.
pub fn bar(used: u64, total: u64, infinite: bool) -> String {
    if infinite {
        return "∞".into();
    }
    if total == 0 {
        return if used == 0 { "-".into() } else { "▓▓▓▓▓▓▓▓▓▓ over".into() };
    }
    let pct = (used.saturating_mul(100) / total).min(999);
    let full = (pct.min(100) / 10) as usize;
    format!("{}{} {pct:>3}%", "▓".repeat(full), "░".repeat(10 - full))
}

fn row(l: &License) -> Row {
    let num = |n: u64| if l.infinite { "∞".to_string() } else { n.to_string() };
    let state = match (l.disable_hres, l.disable_layer, l.plugin_mark.as_str()) {
        (true, ..) => "⊘ HRES OFF",
        (false, true, "down") => "⊘ DOWN",
        (false, true, "disabled") => "⊘ PLUGIN",
        (false, true, _) => "⊘ OFF",
        _ => "  on",
    };
    let (count, mode) = match l.layer_name.is_empty() {
        true => (l.total.to_string(), "plain".to_string()),
        false => {
            (if l.conf_total < 0 { "∞".into() } else { l.conf_total.to_string() }, format!("{}", l.mode))
        }
    };
    let cells = vec![
        if l.layer_name.is_empty() { l.name.clone() } else { l.layer_name.clone() },
        state.to_string(),
        count,
        l.base_usage.to_string(),
        l.used.to_string(),
        num(l.free),
        bar(l.used, l.total, l.infinite),
        mode,
        l.nodes.clone(),
    ];
    let sort = vec![
        text_key(&cells[0]),
        SortKey::Num(if off(l) { 0.0 } else { 1.0 }),
        SortKey::Num(l.conf_total as f64),
        SortKey::Num(l.base_usage as f64),
        SortKey::Num(l.used as f64),
        if l.infinite { SortKey::Blank } else { SortKey::Num(l.free as f64) },
        SortKey::Num(if l.total == 0 { 0.0 } else { l.used as f64 / l.total as f64 }),
        text_key(&cells[7]),
        text_key(&l.nodes),
    ];
    let target = Target::Layer { resource: l.name.clone(), layer: l.layer_name.clone() };
    let mut r = Row::new(key(l), target, cells, sort);
    if off(l) {
        r.alert = Some(Alert::Drain);
    }
    r
}

/// Each layer's parent index within `layers` (one resource).
fn parents(layers: &[&License]) -> Vec<Option<usize>> {
    if layers.first().is_some_and(|l| l.mode == 3) {
        return layers.iter().map(|l| layers.iter().position(|p| p.layer_name == l.parent_name)).collect();
    }
    let sets: Vec<BTreeSet<String>> =
        layers.iter().map(|l| hostlist::expand(&l.nodes).unwrap_or_default().into_iter().collect()).collect();
    // The smallest layer that holds all of this one's nodes (an equal set: the earlier one).
    (0..layers.len())
        .map(|i| {
            (0..layers.len())
                .filter(|&j| j != i && sets[i].is_subset(&sets[j]) && (sets[i] != sets[j] || j < i))
                .min_by_key(|&j| (sets[j].len(), j))
        })
        .collect()
}

/// The layers under `at` (None: the resource's top layers) as trees.
/// `depth` stops a parent cycle in the data from recursing for ever.
fn grow(layers: &[&License], parent: &[Option<usize>], at: Option<usize>, depth: usize) -> Vec<Node> {
    (0..layers.len())
        .filter(|&i| parent[i] == at)
        .map(|i| Node {
            row: row(layers[i]),
            children: if depth < layers.len() {
                grow(layers, parent, Some(i), depth + 1)
            } else {
                Vec::new()
            },
        })
        .collect()
}

/// The HRES pane's data: every license and HRES layer, and their re-read.
#[derive(Debug, Clone, Default)]
pub struct Hres {
    /// None until first read (and for a controller without `ShowLicenses`).
    pub licenses: Option<Vec<License>>,
    pub refetch: Refetch,
}

pub fn table(all: &[License], view: &PaneView) -> TableModel {
    let mut rows = vec![];
    let mut names: Vec<&str> = vec![];
    for l in all {
        if !names.contains(&l.name.as_str()) {
            names.push(&l.name);
        }
    }
    for name in names {
        let layers: Vec<&License> = all.iter().filter(|l| l.name == name).collect();
        if layers.iter().all(|l| l.layer_name.is_empty()) {
            rows.extend(layers.iter().map(|l| row(l)));
            continue;
        }
        // The resource's own row: its name, mode, and whether DisableHRES is set.
        let head = License {
            name: name.to_string(),
            mode: layers[0].mode,
            disable_hres: layers[0].disable_hres,
            plugin: layers[0].plugin.clone(),
            ..License::default()
        };
        let mut h = row(&head);
        h.cells = vec![
            name.to_string(),
            h.cells[1].clone(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            format!("{}", head.mode),
            if head.plugin.is_empty() { String::new() } else { format!("plugin {}", head.plugin) },
        ]
        .into();
        let parent = parents(&layers);
        flatten(Node { row: h, children: grow(&layers, &parent, None, 1) }, &mut rows);
    }
    let total = rows.len();
    TableModel { columns: COLUMNS, rows: filter_and_sort(rows, view).into(), total, cell_widths: None }
}

pub fn detail(all: &[License], key_: &str) -> Option<Detail> {
    let l = all.iter().find(|l| key(l) == key_)?;
    let f = |label: &str, value: String| (label.to_string(), value);
    let mut fields = vec![f("License", l.name.clone())];
    if !l.layer_name.is_empty() {
        fields.extend([
            f("Layer", l.layer_name.clone()),
            f("Parent", l.parent_name.clone()),
            f("Mode", l.mode.to_string()),
            f("Nodes", l.nodes.clone()),
            f("ConfTotal", if l.conf_total < 0 { "infinite (-1)".into() } else { l.conf_total.to_string() }),
            f("BaseUsage", l.base_usage.to_string()),
            f("Base", if l.base.is_empty() { "(null)".into() } else { l.base.clone() }),
            f("DisableHRES", l.disable_hres.to_string()),
            f("DisableLayer", l.disable_layer.to_string()),
        ]);
    }
    if !l.plugin.is_empty() {
        let last = match l.maintained_ms {
            0 => "none yet".to_string(),
            ms => format!("{} {} {}", time_or(ms, ""), l.maintenance_rc, l.maintenance_message),
        };
        fields.extend([f("Plugin", format!("{} {}", l.plugin, l.plugin_path)), f("Maintenance", last)]);
    }
    if !l.plugin_mark.is_empty() {
        let mark = format!(
            "{} by the plugin at {}: {}",
            l.plugin_mark,
            time_or(l.plugin_mark_ms, ""),
            l.plugin_mark_message
        );
        fields.push(f("PluginMark", mark));
    }
    let num = |n: u64| if l.infinite { "infinite".to_string() } else { n.to_string() };
    fields.extend([f("Total", num(l.total)), f("Used", l.used.to_string()), f("Free", num(l.free))]);
    // What reservations in their window hold (scontrol's Reserved=); Free already excludes it.
    if l.reserved > 0 {
        fields.push(f("Reserved", l.reserved.to_string()));
    }
    let mut body = vec![format!("Held by {} running job(s):", l.holders.len())];
    body.extend(l.holders.iter().map(|h| format!("  job {:<10} {}", h.job_id, h.amount)));
    Some(Detail { title: format!("License {}", key(l)), crumb: key(l), fields, body })
}

/// Title and body of the confirmation: what changes, and the scontrol line that does it.
pub fn describe(resource: &str, layer: &str, disable: bool) -> (String, Vec<String>) {
    let verb = if disable { "Disable" } else { "Enable" };
    let (what, key) = match layer {
        "" => (format!("resource {resource}"), "DisableHRES".to_string()),
        l => (format!("layer {resource}/{l}"), format!("LayerName={l} DisableLayer")),
    };
    let effect = if disable {
        "New jobs are not allocated from it; running jobs keep what they hold."
    } else {
        "New jobs may be allocated from it again."
    };
    let cmd = format!("= scontrol update HRESName={resource} {key}={disable}");
    (format!("{verb} {what}?"), vec![effect.to_string(), cmd])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_read_without_colour() {
        assert_eq!(bar(3, 10, false), "▓▓▓░░░░░░░  30%");
        assert_eq!(bar(0, 0, false), "-");
        assert_eq!(bar(5, 0, true), "∞");
        assert_eq!(bar(12, 10, false), "▓▓▓▓▓▓▓▓▓▓ 120%");
    }
}
