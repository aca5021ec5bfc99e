//! `scontrol update HRESName=R ...` as a pure edit of one resource: checked
//! whole before anything changes, so a refused update leaves the layer as it
//! was. Running jobs are not touched; they release what they were charged.

use crate::model::{HresMode, HresResource, INFINITE};
use spur_vocab::hostlist;

/// One update, as `scontrol update` names its keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HresUpdate {
    pub layer: String,
    pub nodes: Option<String>,
    pub count: Option<i64>,
    pub base: Option<String>,
    pub disable_layer: Option<String>,
    pub disable_hres: Option<String>,
}

fn flag(key: &str, v: &str) -> Result<bool, String> {
    match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("{key}: '{v}' is neither true nor false")),
    }
}

fn parse_base(v: &str) -> Result<Vec<(String, u64)>, String> {
    let mut out: Vec<(String, u64)> = vec![];
    for pair in v.split(',').filter(|p| !p.is_empty()) {
        let parsed = pair.split_once(':').and_then(|(n, c)| Some((n, c.parse::<u64>().ok()?)));
        let Some((n, c)) = parsed.filter(|(n, _)| !n.is_empty()) else {
            return Err(format!("base: '{pair}' is not name:value"));
        };
        if out.iter().any(|(o, _)| o == n) {
            return Err(format!("base: '{n}' is given twice"));
        }
        out.push((n.to_string(), c));
    }
    Ok(out)
}

/// Applies `u` to `r`, returning one line per change. `known` says whether a
/// node exists in the cluster, and `max` is how many it has and the length
/// of its longest name, which bound the hostlist a client gives. Nodes changes report `true` in the second value.
pub fn apply(
    r: &mut HresResource,
    u: &HresUpdate,
    known: &dyn Fn(&str) -> bool,
    max: (usize, usize),
) -> Result<(Vec<String>, bool), String> {
    let mut next = r.clone();
    let mut changes = vec![];
    if let Some(v) = &u.disable_hres {
        next.disabled = flag("disablehres", v)?;
        changes.push(format!("{} DisableHRES={}", r.name, next.disabled));
    }
    let layer_keys = u.nodes.is_some() || u.count.is_some() || u.base.is_some() || u.disable_layer.is_some();
    if u.layer.is_empty() {
        if layer_keys {
            return Err("layername: Nodes, Count, Base and DisableLayer need LayerName=".into());
        }
        if changes.is_empty() {
            return Err("nothing to change: give DisableHRES=, or LayerName= with what to change".into());
        }
        *r = next;
        return Ok((changes, false));
    }
    let i = next
        .layer(&u.layer)
        .ok_or_else(|| format!("layername: resource '{}' has no layer '{}'", r.name, u.layer))?;
    let at = format!("{} LayerName={}", r.name, u.layer);
    let mut nodes_changed = false;
    if let Some(v) = &u.nodes {
        if next.mode == HresMode::Three && !next.is_leaf(i) {
            return Err(format!(
                "nodes: layer '{}' has children; in MODE_3 only leaf layers take nodes",
                u.layer
            ));
        }
        let (op, list) = match v.as_bytes().first() {
            Some(b'+') => ('+', &v[1..]),
            Some(b'-') => ('-', &v[1..]),
            _ => ('=', v.as_str()),
        };
        let names = if list.is_empty() {
            vec![]
        } else {
            hostlist::expand_bounded(list, max.0, max.1).map_err(|e| format!("nodes: {e}"))?
        };
        if let Some(bad) = names.iter().find(|n| op != '-' && !known(n)) {
            return Err(format!("nodes: '{bad}' is not a node of the cluster"));
        }
        let l = &mut next.layers[i];
        match op {
            '+' => l.nodes.extend(names),
            '-' => l.nodes.retain(|n| !names.contains(n)),
            _ => l.nodes = names,
        }
        l.nodes.sort();
        l.nodes.dedup();
        if next.mode == HresMode::Three {
            let mine = &next.layers[i].nodes;
            for (j, other) in next.layers.iter().enumerate().filter(|(j, _)| *j != i && next.is_leaf(*j)) {
                if let Some(n) = other.nodes.iter().find(|n| mine.contains(n)) {
                    return Err(format!(
                        "nodes: '{n}' is under leaf '{}'; remove it there first",
                        next.layers[j].name
                    ));
                }
            }
        }
        nodes_changed = next.layers[i].nodes != r.layers[i].nodes;
        changes.push(format!("{at} Nodes={}", hostlist::compress(&next.layers[i].nodes)));
    }
    if let Some(c) = u.count {
        if c < INFINITE {
            return Err(format!("count: {c} is neither -1 (infinite) nor 0 or more"));
        }
        next.layers[i].count = c;
        changes.push(format!("{at} Count={c}"));
    }
    if let Some(b) = &u.base {
        next.layers[i].base = parse_base(b)?;
        changes.push(format!("{at} Base={}", if b.is_empty() { "(null)" } else { b }));
    }
    if let Some(v) = &u.disable_layer {
        next.layers[i].disabled = flag("disablelayer", v)?;
        changes.push(format!("{at} DisableLayer={}", next.layers[i].disabled));
    }
    if changes.is_empty() {
        return Err("nothing to change: give Nodes=, Count=, Base=, DisableLayer= or DisableHRES=".into());
    }
    next.derive();
    for l in &next.layers {
        if l.count != INFINITE && l.base_usage > l.count as u64 {
            return Err(format!(
                "count: layer '{}' would have Count={} below its BaseUsage={}",
                l.name, l.count, l.base_usage
            ));
        }
    }
    *r = next;
    Ok((changes, nodes_changed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::resources;
    use std::collections::BTreeMap;

    fn power() -> HresResource {
        let text = include_str!("../../../examples/hres/resources.yaml");
        resources::parse(text, &BTreeMap::new(), None).unwrap().remove(2)
    }

    fn up(layer: &str) -> HresUpdate {
        HresUpdate { layer: layer.into(), ..HresUpdate::default() }
    }

    /// No bound on the hostlist: these tests are about the layers.
    const ANY: (usize, usize) = (usize::MAX, usize::MAX);

    fn any(_: &str) -> bool {
        true
    }

    #[test]
    fn leaf_nodes_propagate_and_parents_refuse_nodes() {
        let mut r = power();
        let u = HresUpdate { nodes: Some("+node[33-36]".into()), count: Some(45000), ..up("rack2") };
        let (changes, moved) = apply(&mut r, &u, &any, ANY).unwrap();
        assert!(moved);
        assert_eq!(
            changes,
            ["power LayerName=rack2 Nodes=node[09-16,33-36]", "power LayerName=rack2 Count=45000"]
        );
        assert_eq!(r.layers[r.layer("datacenter").unwrap()].nodes.len(), 36);
        let e =
            apply(&mut r, &HresUpdate { nodes: Some("node01".into()), ..up("row1") }, &any, ANY).unwrap_err();
        assert!(e.contains("only leaf layers"), "{e}");
        let e = apply(&mut r, &HresUpdate { nodes: Some("+node01".into()), ..up("rack3") }, &any, ANY)
            .unwrap_err();
        assert!(e.contains("under leaf 'rack1'"), "{e}");
        let e = apply(
            &mut r,
            &HresUpdate { nodes: Some("+node99".into()), ..up("rack3") },
            &|n| n != "node99",
            ANY,
        )
        .unwrap_err();
        assert!(e.contains("'node99' is not a node"), "{e}");
    }

    #[test]
    fn count_stays_above_base_usage_and_base_propagates() {
        let mut r = power();
        let e = apply(&mut r, &HresUpdate { count: Some(4000), ..up("rack1") }, &any, ANY).unwrap_err();
        assert!(e.contains("below its BaseUsage=5000"), "{e}");
        apply(&mut r, &HresUpdate { base: Some(String::new()), ..up("rack1") }, &any, ANY).unwrap();
        assert_eq!(r.layers[0].base_usage, 0);
        assert_eq!(r.layers[r.layer("row1").unwrap()].base_usage, 3000);
        apply(&mut r, &HresUpdate { base: Some("a:100,b:200".into()), ..up("rack1") }, &any, ANY).unwrap();
        assert_eq!(r.layers[r.layer("datacenter").unwrap()].base_usage, 18000 + 3000 + 2000 + 300);
        let e =
            apply(&mut r, &HresUpdate { base: Some("a:x".into()), ..up("rack1") }, &any, ANY).unwrap_err();
        assert!(e.contains("'a:x' is not name:value"), "{e}");
    }

    #[test]
    fn flags_take_only_true_or_false() {
        let mut r = power();
        apply(&mut r, &HresUpdate { disable_hres: Some("true".into()), ..HresUpdate::default() }, &any, ANY)
            .unwrap();
        assert!(r.disabled);
        apply(&mut r, &HresUpdate { disable_layer: Some("true".into()), ..up("rack1") }, &any, ANY).unwrap();
        assert!(r.layers[0].disabled);
        let e = apply(&mut r, &HresUpdate { disable_layer: Some("yes".into()), ..up("rack1") }, &any, ANY)
            .unwrap_err();
        assert!(e.contains("neither true nor false"), "{e}");
        let e =
            apply(&mut r, &HresUpdate { count: Some(1), ..HresUpdate::default() }, &any, ANY).unwrap_err();
        assert!(e.contains("need LayerName"), "{e}");
        assert!(apply(&mut r, &up("nope"), &any, ANY).unwrap_err().contains("no layer 'nope'"));
    }
}
