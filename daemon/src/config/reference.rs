//! The configuration reference (`docs/src/configuration.md`) checked against
//! the keys spur.conf accepts, so a key cannot exist undocumented or be
//! documented and not exist.
//!
//! The accepted keys come from the structs themselves: serde's derive hands
//! every field name (renames applied, skipped fields left out) to
//! `deserialize_struct`, and [`Tracer`] is a deserializer that records them
//! and stops. The documented keys are the first column of the page's tables
//! whose header is `| key |`, under a heading naming the section (`` `[auth]` ``,
//! `` `[[nodes]]` ``) or "Top-level keys".

use super::{
    AccountingConfig, AdmissionConfig, AuthConfig, Config, ControllerConfig, LoggingConfig, MailConfig,
    MetricsConfig, NodeConfig, PartitionConfig, SchedulerConfig, resources::HresConfig,
};
use serde::de::{DeserializeOwned, Visitor};
use std::collections::{BTreeMap, BTreeSet};

/// The keys one struct accepts ([`fields`] of it).
type FieldsOf = fn() -> &'static [&'static str];

/// A table of spur.conf and the struct that reads it. A new section is one
/// line here and one heading with its table on the page.
const SECTIONS: &[(&str, FieldsOf)] = &[
    ("controller", fields::<ControllerConfig>),
    ("accounting", fields::<AccountingConfig>),
    ("auth", fields::<AuthConfig>),
    ("admission", fields::<AdmissionConfig>),
    ("logging", fields::<LoggingConfig>),
    ("metrics", fields::<MetricsConfig>),
    ("mail", fields::<MailConfig>),
    ("scheduler", fields::<SchedulerConfig>),
    ("hres", fields::<HresConfig>),
    ("nodes", fields::<NodeConfig>),
    ("partitions", fields::<PartitionConfig>),
    ("upstream.slurm", fields::<super::upstream::SlurmUpstream>),
];

/// Tables whose keys are the site's own names (`[licenses] matlab = 20`):
/// the page documents them with a placeholder row.
const MAPS: &[&str] = &["licenses"];

/// Why the tracer stopped: the field names, or a type that is no struct.
#[derive(Debug)]
enum Stop {
    Fields(&'static [&'static str]),
    Other(String),
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Fields(f2) => write!(f, "a struct of fields {f2:?}"),
            Stop::Other(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for Stop {}

impl serde::de::Error for Stop {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Stop::Other(msg.to_string())
    }
}

struct Tracer;

impl<'de> serde::Deserializer<'de> for Tracer {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop::Other("not a struct".into()))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        Err(Stop::Fields(fields))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
        enum identifier ignored_any
    }
}

/// The keys a config struct accepts, as spur.conf spells them.
fn fields<T: DeserializeOwned>() -> &'static [&'static str] {
    match T::deserialize(Tracer) {
        Err(Stop::Fields(f)) => f,
        Err(other) => panic!("{} is not read as a struct: {other}", std::any::type_name::<T>()),
        Ok(_) => panic!("{} was read from nothing", std::any::type_name::<T>()),
    }
}

/// What the page documents: the top-level keys, and each section's keys.
#[derive(Debug, Default)]
struct Documented {
    top: BTreeSet<String>,
    sections: BTreeMap<String, BTreeSet<String>>,
}

fn documented(page: &str) -> Documented {
    let mut doc = Documented::default();
    // None: under a heading that names no section; Some(""): the top level.
    let mut section: Option<String> = None;
    let mut in_key_table = false;
    for line in page.lines() {
        if line.starts_with('#') {
            section = if line.contains("Top-level keys") {
                Some(String::new())
            } else {
                first_code(line)
                    .filter(|c| c.starts_with('['))
                    .map(|c| c.trim_matches(['[', ']']).to_string())
            };
            if let Some(s) = section.as_ref().filter(|s| !s.is_empty()) {
                doc.sections.entry(s.clone()).or_default();
            }
            in_key_table = false;
        } else if line.starts_with("| key |") {
            in_key_table = true;
        } else if !line.starts_with('|') {
            in_key_table = false;
        } else if let (true, Some(s)) = (in_key_table, &section) {
            let first_cell = line.split(" | ").next().unwrap_or_default();
            if let Some(key) = first_code(first_cell) {
                let set =
                    if s.is_empty() { &mut doc.top } else { doc.sections.entry(s.clone()).or_default() };
                set.insert(key.to_string());
            }
        }
    }
    doc
}

/// The text between a line's first pair of backticks.
fn first_code(line: &str) -> Option<&str> {
    let (_, rest) = line.split_once('`')?;
    rest.split_once('`').map(|(code, _)| code)
}

/// Every disagreement between the page and the structs, one sentence each.
fn problems(page: &str) -> Vec<String> {
    let doc = documented(page);
    let mut out = Vec::new();
    let compare =
        |out: &mut Vec<String>, what: &str, accepted: BTreeSet<String>, documented: &BTreeSet<String>| {
            for k in accepted.difference(documented) {
                out.push(format!("{what}: key '{k}' is accepted by spur.conf but not documented"));
            }
            for k in documented.difference(&accepted) {
                out.push(format!("{what}: key '{k}' is documented but spur.conf does not accept it"));
            }
        };
    // The top level's fields are its plain keys and its sections; a nested
    // section (`[upstream.slurm]`) documents its first part (`upstream`).
    let top: BTreeSet<String> = fields::<Config>().iter().map(|s| s.to_string()).collect();
    let mut doc_top = doc.top.clone();
    doc_top.extend(doc.sections.keys().map(|k| k.split('.').next().unwrap_or(k).to_string()));
    compare(&mut out, "top level (keys and [sections])", top, &doc_top);
    for (name, keys) in &doc.sections {
        if MAPS.contains(&name.as_str()) {
            continue;
        }
        let Some((_, struct_fields)) = SECTIONS.iter().find(|(s, _)| s == name) else {
            out.push(format!("[{name}]: documented, but no struct in reference.rs's SECTIONS reads it"));
            continue;
        };
        let accepted = struct_fields().iter().map(|s| s.to_string()).collect();
        compare(&mut out, &format!("[{name}]"), accepted, keys);
    }
    out
}

const PAGE: &str = include_str!("../../../docs/src/configuration.md");

#[test]
fn the_configuration_reference_documents_exactly_the_accepted_keys() {
    let found = problems(PAGE);
    assert!(
        found.is_empty(),
        "docs/src/configuration.md and the config structs disagree:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_page_is_read_section_by_section() {
    let doc = documented(PAGE);
    assert!(doc.top.contains("cluster_name"), "{doc:?}");
    assert!(doc.sections["scheduler"].contains("kill_wait_secs"), "{doc:?}");
    assert!(doc.sections["nodes"].contains("memory_mb"), "{doc:?}");
    // A key's own name, not a value in the same row.
    assert!(!doc.sections["controller"].contains("\"[::]:6817\""), "{doc:?}");
}

#[test]
fn an_undocumented_key_and_a_documented_unknown_key_are_both_reported() {
    // A row dropped: the key exists without docs.
    let dropped = PAGE.replace("| `kill_wait_secs` |", "| kill wait |");
    let found = problems(&dropped);
    assert_eq!(found, ["[scheduler]: key 'kill_wait_secs' is accepted by spur.conf but not documented"]);
    // A row added: a key documented that does not exist.
    let added = PAGE.replace("| `kill_wait_secs` |", "| `kill_wait_msecs` | 1 | x |\n| `kill_wait_secs` |");
    let found = problems(&added);
    assert_eq!(found, ["[scheduler]: key 'kill_wait_msecs' is documented but spur.conf does not accept it"]);
    // A section documented that no struct reads.
    let section = format!(
        "{PAGE}\n## `[nosuch]`\n\n| key | default | meaning |\n| --- | --- | --- |\n| `a` | 1 | x |\n"
    );
    let found = problems(&section);
    assert!(found.iter().any(|p| p.contains("key 'nosuch' is documented")), "{found:?}");
    assert!(found.iter().any(|p| p.starts_with("[nosuch]: documented, but no struct")), "{found:?}");
}
