//! Dynamic nodes (Slurm's `slurmd -Z`, `scontrol create NodeName=`): the
//! rules their name and their `HRES=` list follow, shared by spurd, scontrol
//! and the controller so each refuses the same input with the same words.

use serde::{Deserialize, Serialize};

/// The longest `HRES=` list, in bytes: a node joins a few layers, not thousands.
pub const MAX_HRES_JSON: usize = 4096;

/// One layer a dynamic node joins: `{"hres_name":"power","layer_name":"rack2"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HresPair {
    /// The resource (resources.yaml's `name`).
    pub hres_name: String,
    /// One of its layers.
    pub layer_name: String,
}

/// Parses `HRES=`'s JSON list; empty text is no layers. The message says
/// what is wrong without naming the key, which the caller knows.
pub fn parse_hres(text: &str) -> Result<Vec<HresPair>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(vec![]);
    }
    if text.len() > MAX_HRES_JSON {
        return Err(format!("{} bytes; at most {MAX_HRES_JSON}", text.len()));
    }
    let pairs: Vec<HresPair> = serde_json::from_str(text)
        .map_err(|e| format!("not a JSON list of {{\"hres_name\":..., \"layer_name\":...}} ({e})"))?;
    if let Some(p) = pairs.iter().find(|p| p.hres_name.is_empty() || p.layer_name.is_empty()) {
        return Err(format!("an entry has an empty name ({p:?})"));
    }
    Ok(pairs)
}

/// A dynamic node's name: one host name (letters, digits, `-`, `_`, `.`),
/// not a hostlist, at most [`crate::hostlist::MAX_NAME_LEN`] bytes.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("empty; give one node name".into());
    }
    if name.len() > crate::hostlist::MAX_NAME_LEN {
        return Err(format!("{} bytes; at most {}", name.len(), crate::hostlist::MAX_NAME_LEN));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || "-_.".contains(*c))) {
        let what = if "[],".contains(c) { " (a dynamic node is one name, not a hostlist)" } else { "" };
        return Err(format!("'{name}' has '{}'{what}", c.escape_default()));
    }
    Ok(())
}

/// A node's GRES list, `gpu:8,nic` (a count of 1 when none is given): the
/// same in spur.conf's `gres`, `scontrol create Gres=` and `spurd --gres`.
pub fn parse_gres(raw: &str) -> Result<Vec<(String, u64)>, String> {
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            let (name, count) = item.rsplit_once(':').unwrap_or((item, "1"));
            let count =
                count.parse().map_err(|_| format!("'{item}' is not name:count (for example gpu:8)"))?;
            Ok((name.to_string(), count))
        })
        .collect()
}

/// Feature lists, each comma-separated (`--features a,b`, `Features=a,b`):
/// every name of letters, digits, `-`, `_` and `.`.
pub fn parse_features<'a>(lists: impl IntoIterator<Item = &'a String>) -> Result<Vec<String>, String> {
    let mut out = vec![];
    for f in lists.into_iter().flat_map(|f| f.split(',')).map(str::trim).filter(|f| !f.is_empty()) {
        if !f.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            return Err(format!("'{f}' is not a feature name"));
        }
        out.push(f.to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hres_lists_parse_and_bad_ones_say_why() {
        let p = parse_hres(r#"[{"hres_name":"power","layer_name":"rack2"}]"#).unwrap();
        assert_eq!(p, vec![HresPair { hres_name: "power".into(), layer_name: "rack2".into() }]);
        assert_eq!(parse_hres("  "), Ok(vec![]));
        assert!(parse_hres("{").unwrap_err().contains("JSON list"));
        assert!(parse_hres(r#"[{"hres_name":"power"}]"#).is_err());
        assert!(parse_hres(r#"[{"hres_name":"","layer_name":"x"}]"#).unwrap_err().contains("empty"));
        assert!(parse_hres(&"x".repeat(MAX_HRES_JSON + 1)).unwrap_err().contains("at most"));
    }

    #[test]
    fn a_name_is_one_host() {
        assert!(check_name("dyn-01.site").is_ok());
        assert!(check_name("n[1-2]").unwrap_err().contains("not a hostlist"));
        assert!(check_name("a,b").unwrap_err().contains("not a hostlist"));
        assert!(check_name("").is_err());
        assert!(check_name(&"a".repeat(300)).unwrap_err().contains("at most"));
    }
}
