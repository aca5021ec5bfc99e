//! resources.yaml and provisioners.yaml, as spur-sched parses them, fed the
//! shipped examples with random edits and arbitrary text up to a few KB:
//! each is accepted or refused without panicking, and what is accepted
//! stays within its caps.

use proptest::prelude::*;
use spur_sched::hres_spec;
use spur_sched::provision::{self, MAX_DEFINITIONS};
use std::collections::{BTreeMap, BTreeSet};

const EXAMPLES: &[&str] = &[
    include_str!("../../../examples/hres/resources.yaml"),
    include_str!("../../../examples/demo/resources.yaml"),
    include_str!("../../../examples/hres-plugin/resources.yaml"),
    include_str!("../../../examples/provisioners/spec-examples.yaml"),
    include_str!("../../../examples/demo/provisioners.yaml"),
];

/// What an edit inserts: YAML's punctuation, the files' keys and values.
const TOKENS: &[&str] = &[
    "\n",
    "  ",
    "- ",
    ": ",
    "#",
    "\"",
    "'",
    "|-",
    "&a ",
    "*a",
    "<<: *a",
    "[",
    "]",
    "{",
    "}",
    ",",
    "-1",
    "0",
    "18446744073709551615",
    "MODE_1",
    "MODE_3",
    "layer_name",
    "parent_name",
    "count",
    "nodes",
    "base",
    "resource",
    "node[01-32]",
    "node[1-999]",
    "definitions",
    "provisioner",
    "static",
    "aws",
    "condition",
    "costPerHour",
    "priority",
    "hostname() matches \"x\"",
    "&&",
    "||",
    "(",
    ")",
    "!",
    "32GiB",
    "~",
    "null",
];

/// An example with up to 5 edits (a deletion, an insertion of a token or
/// of any text, at any character), or arbitrary text.
fn yaml() -> impl Strategy<Value = String> {
    let edit = (any::<prop::sample::Index>(), 0u8..3, prop::sample::select(TOKENS), "\\PC{0,6}", 1usize..12);
    let edited =
        (prop::sample::select(EXAMPLES), prop::collection::vec(edit, 0..6)).prop_map(|(text, edits)| {
            let mut chars: Vec<char> = text.chars().collect();
            for (at, op, token, any, n) in edits {
                let i = at.index(chars.len() + 1);
                match op {
                    0 => drop(chars.drain(i..(i + n).min(chars.len()))),
                    1 => drop(chars.splice(i..i, token.chars())),
                    _ => drop(chars.splice(i..i, any.chars())),
                }
            }
            chars.into_iter().collect::<String>()
        });
    prop_oneof![
        8 => edited,
        1 => prop::collection::vec(prop::sample::select(TOKENS), 0..400).prop_map(|v| v.concat()),
        1 => "\\PC{0,4096}",
    ]
}

fn cluster() -> BTreeSet<String> {
    (1..=32).map(|i| format!("node{i:02}")).collect()
}

/// 256 cases a run, or `PROPTEST_CASES` for a longer search.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn resources_yaml_is_bounded(text in yaml()) {
        let licenses = BTreeMap::from([("matlab".to_string(), 4)]);
        let nodes = cluster();
        if let Ok(rs) = hres_spec::parse(&text, &licenses, Some(&nodes)) {
            for r in &rs {
                prop_assert!(!r.layers.is_empty());
                prop_assert!(r.layers.iter().all(|l| l.nodes.iter().all(|n| nodes.contains(n))));
            }
        }
        let _ = hres_spec::parse(&text, &BTreeMap::new(), None);
    }

    #[test]
    fn provisioners_yaml_is_bounded(text in yaml()) {
        if let Ok(p) = provision::parse(&text, 1) {
            prop_assert!(p.defs.len() <= MAX_DEFINITIONS);
        }
    }

    #[test]
    fn memory_sizes_are_bounded(s in "[0-9]{0,24}[ KMGTiB]{0,4}|\\PC{0,40}") {
        if let Ok(n) = provision::parse_memory(&s) {
            prop_assert!(n > 0);
        }
    }
}
