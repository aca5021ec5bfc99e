//! Scheduler annotation matching: every annotation key of a job (but the
//! ignored ones) must be matched by a definition's `annotations`, with the
//! built-in matcher of the key (the spec's table; exact by default).

use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Matcher {
    /// String equality.
    Exact,
    /// The job's value occurs in the definition's, ignoring case.
    Substring,
    /// Numbers: the definition's value is at least the job's.
    Minimum,
}

impl Matcher {
    pub fn of(key: &str) -> Matcher {
        match key {
            "nvidia.com/gpu.model" | "nvidia.com/gpu.product" => Matcher::Substring,
            "nvidia.com/gpu.memory" | "nvidia.com/gpu.compute.major" | "nvidia.com/gpu.count" => {
                Matcher::Minimum
            }
            _ => Matcher::Exact,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Matcher::Exact => "ExactMatch",
            Matcher::Substring => "SubstringMatch",
            Matcher::Minimum => "MinimumMatch",
        }
    }

    pub fn matches(self, wanted: &str, had: &str) -> bool {
        match self {
            Matcher::Exact => wanted == had,
            Matcher::Substring => had.to_lowercase().contains(&wanted.to_lowercase()),
            Matcher::Minimum => match (number(wanted), number(had)) {
                (Some(w), Some(h)) => h >= w,
                _ => false,
            },
        }
    }
}

/// `80`, `80.5`, and sizes with a unit (`80GiB`, `40G`) as plain numbers of that unit's base.
fn number(s: &str) -> Option<f64> {
    let t = s.trim();
    if let Ok(n) = t.parse::<f64>() {
        return Some(n);
    }
    super::spec::parse_memory(t).ok().map(|b| b as f64)
}

/// Keys the platform sets itself, always skipped (an allowlist, not a prefix):
/// `workflow` groups jobs for `exclusive: workflow`.
pub const PLATFORM_KEYS: [&str; 1] = ["workflow"];

/// The first job annotation a definition does not match: (key, wanted, had, matcher).
pub fn first_mismatch<'a>(
    job: &'a [(String, String)],
    def: &'a [(String, String)],
    ignored: &BTreeSet<String>,
) -> Option<(&'a str, &'a str, Option<&'a str>, Matcher)> {
    for (k, wanted) in job {
        if ignored.contains(k) || PLATFORM_KEYS.contains(&k.as_str()) {
            continue;
        }
        let m = Matcher::of(k);
        let had = def.iter().find(|(dk, _)| dk == k).map(|(_, v)| v.as_str());
        if !had.is_some_and(|h| m.matches(wanted, h)) {
            return Some((k, wanted, had, m));
        }
    }
    None
}

/// Whether a job has annotation keys a definition must match.
pub fn needs_match(job: &[(String, String)], ignored: &BTreeSet<String>) -> bool {
    job.iter().any(|(k, _)| !ignored.contains(k) && !PLATFORM_KEYS.contains(&k.as_str()))
}
