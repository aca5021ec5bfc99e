//! resources.yaml: refused, or layers that name only the cluster's nodes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spur_sched::hres_spec;
use std::collections::{BTreeMap, BTreeSet};

fuzz_target!(|text: &str| {
    let licenses = BTreeMap::from([("matlab".to_string(), 4)]);
    let nodes: BTreeSet<String> = (1..=32).map(|i| format!("node{i:02}")).collect();
    if let Ok(rs) = hres_spec::parse(text, &licenses, Some(&nodes)) {
        for r in &rs {
            assert!(!r.layers.is_empty());
            assert!(r.layers.iter().all(|l| l.nodes.iter().all(|n| nodes.contains(n))));
        }
    }
    let _ = hres_spec::parse(text, &BTreeMap::new(), None);
});
