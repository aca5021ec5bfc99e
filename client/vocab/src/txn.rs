//! `sacctmgr show txn` filters, shared by the controller (list and live tail)
//! and the console's Audit pane: Actor=, Action=, Entity=, Name=, Outcome=,
//! Peer=, Start=, End=, limit=.

use crate::keys_impl::KeyError;
use chrono::{DateTime, Local, TimeZone};

/// Rows shown when no limit is given.
pub const DEFAULT_LIMIT: i64 = 1000;
/// The most rows one request may ask for.
pub const MAX_LIMIT: i64 = 10000;

#[derive(Debug, Clone, PartialEq, Eq)]
/// A parsed `show txn` filter.
pub struct TxnFilter {
    /// Who acted.
    pub actor: Option<String>,
    /// What was done.
    pub action: Option<String>,
    /// What kind of thing.
    pub entity: Option<String>,
    /// Which one.
    pub name: Option<String>,
    /// How it ended.
    pub outcome: Option<String>,
    /// From where.
    pub peer: Option<String>,
    /// Not before (ms).
    pub start_ms: Option<i64>,
    /// Not after (ms).
    pub end_ms: Option<i64>,
    /// At most this many rows.
    pub limit: i64,
}

impl Default for TxnFilter {
    fn default() -> Self {
        TxnFilter {
            actor: None,
            action: None,
            entity: None,
            name: None,
            outcome: None,
            peer: None,
            start_ms: None,
            end_ms: None,
            limit: DEFAULT_LIMIT,
        }
    }
}

/// The fields a row is matched on.
pub struct RowView<'a> {
    /// Who acted.
    pub actor: &'a str,
    /// What was done.
    pub action: &'a str,
    /// What kind of thing.
    pub entity: &'a str,
    /// Which one.
    pub name: &'a str,
    /// How it ended.
    pub outcome: &'a str,
    /// From where.
    pub peer: &'a str,
    /// When (ms).
    pub time_ms: i64,
}

impl TxnFilter {
    /// Parses `show txn` filter pairs, with relative times measured from `now`.
    pub fn parse(pairs: &[(String, String)], now: DateTime<Local>) -> Result<TxnFilter, KeyError> {
        let mut f = TxnFilter::default();
        for (k, v) in pairs {
            let err = |m: String| KeyError::new(k.clone(), m);
            let lower = v.trim().to_ascii_lowercase();
            match k.to_ascii_lowercase().as_str() {
                "actor" | "user" => f.actor = Some(v.trim().to_string()),
                "action" => {
                    if !["create", "update", "delete"].contains(&lower.as_str()) {
                        return Err(err(format!("'{v}' is not an action (create, update, delete)")));
                    }
                    f.action = Some(lower)
                }
                "entity" => f.entity = Some(lower),
                "name" => f.name = Some(v.trim().to_string()),
                "outcome" => {
                    if !["success", "denied", "error"].contains(&lower.as_str()) {
                        return Err(err(format!("'{v}' is not an outcome (success, denied, error)")));
                    }
                    f.outcome = Some(lower)
                }
                "peer" => f.peer = Some(v.trim().to_string()),
                "start" => f.start_ms = Some(parse_time(v, now).map_err(err)?),
                "end" => f.end_ms = Some(parse_time(v, now).map_err(err)?),
                "limit" => {
                    let n: i64 = v.trim().parse().map_err(|_| err(format!("'{v}' is not a whole number")))?;
                    if n < 1 {
                        return Err(err(format!("'{v}' must be 1 or more")));
                    }
                    f.limit = n.min(MAX_LIMIT);
                }
                _ => {
                    // The key leads the message once (KeyError): quoting it again
                    // doubled a long key's refusal (found by daemon/fuzz's filters).
                    return Err(err(
                        "unknown txn filter (use Actor, Action, Entity, Name, Outcome, Peer, Start, End, limit)"
                            .to_string(),
                    ));
                }
            }
        }
        Ok(f)
    }

    /// Whether the row passes every given filter.
    pub fn matches(&self, r: &RowView<'_>) -> bool {
        let eq = |want: &Option<String>, got: &str| want.as_ref().is_none_or(|w| w == got);
        eq(&self.actor, r.actor)
            && eq(&self.action, r.action)
            && eq(&self.entity, r.entity)
            && self.name.as_ref().is_none_or(|w| name_matches(w, r.entity, r.name))
            && eq(&self.outcome, r.outcome)
            && self.peer.as_ref().is_none_or(|p| peer_matches(p, r.peer))
            && self.start_ms.is_none_or(|s| r.time_ms >= s)
            && self.end_ms.is_none_or(|e| r.time_ms <= e)
    }
}

/// The most names a node row's hostlist is expanded to when `Name=` asks
/// whether it holds a node (a request's hostlist is bounded by the cluster's
/// node count; a row naming more holds no match by expansion).
pub const NAME_EXPANSION_MAX: usize = 65_536;

/// Whether a row named `stored` is one `Name=want` asks for: the same name,
/// or, for a node row (one request on many nodes is one row named by its
/// hostlist, `node[01-03]`), a hostlist that holds `want`.
pub fn name_matches(want: &str, entity: &str, stored: &str) -> bool {
    if stored == want {
        return true;
    }
    entity == "node"
        && stored.contains(['[', ','])
        && crate::hostlist::expand_bounded(stored, NAME_EXPANSION_MAX, crate::hostlist::MAX_NAME_LEN)
            .is_ok_and(|names| names.iter().any(|n| n == want))
}

/// The SQL `LIKE` pattern that narrows the node rows a `Name=want` may
/// match through a hostlist: they hold its leading letters and a bracket
/// or comma; [`name_matches`] decides.
pub fn name_hostlist_like(want: &str) -> String {
    let lead: String = want.chars().take_while(|c| !c.is_ascii_digit()).filter(|c| *c != '%').collect();
    format!("%{lead}%")
}

/// The stored forms a `Peer=` value matches: the value itself, `value:port`
/// and `[value]:port`, so `10.0.0.4` never matches `10.0.0.42:…`.
pub fn peer_patterns(want: &str) -> (String, String, String) {
    (want.to_string(), format!("{want}:"), format!("[{want}]:"))
}

/// Whether a stored peer matches a wanted pattern.
pub fn peer_matches(want: &str, stored: &str) -> bool {
    let (exact, plain, bracketed) = peer_patterns(want);
    let port_after = |prefix: &str| {
        stored.strip_prefix(prefix).is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    stored == exact || port_after(&plain) || port_after(&bracketed)
}

/// A `Start=`/`End=` bound: Slurm's date-times read as a query's (a bare
/// time is today's), as epoch milliseconds.
pub fn parse_time(raw: &str, now: DateTime<Local>) -> Result<i64, String> {
    crate::when_impl::parse_when(raw, now, crate::when_impl::Lean::Past)
}

/// Slurm's `%FT%T`, in local time.
pub fn format_time(ms: i64) -> String {
    Local
        .timestamp_millis_opt(ms)
        .single()
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S").to_string())
        .unwrap_or_default()
}

/// [`format_time`] of a time that may be unset (0 or less): `none` then.
pub fn time_or(ms: i64, none: &str) -> String {
    if ms > 0 { format_time(ms) } else { none.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_row_s_hostlist_holds_the_names_it_names() {
        assert!(name_matches("node02", "node", "node[01-03]"));
        assert!(name_matches("node07", "node", "node05,node07"));
        assert!(name_matches("node02", "node", "node02"));
        assert!(!name_matches("node04", "node", "node[01-03]"));
        assert!(!name_matches("node02", "qos", "node[01-03]"), "only node rows name hostlists");
        assert!(!name_matches("node02", "node", "node[01-"), "a broken hostlist holds nothing");
        assert_eq!(name_hostlist_like("node02"), "%node%");
        assert_eq!(name_hostlist_like("50%"), "%%");
    }

    fn kv(k: &str, v: &str) -> Vec<(String, String)> {
        vec![(k.into(), v.into())]
    }

    /// Found by daemon/fuzz's filters target: the unknown key was quoted
    /// twice, so a long key's refusal outgrew the key and a sentence.
    #[test]
    fn an_unknown_key_is_named_once() {
        let now = Local.with_ymd_and_hms(2026, 3, 10, 14, 30, 0).unwrap();
        let key = "x".repeat(300);
        let e = TxnFilter::parse(&kv(&key, "1"), now).unwrap_err().to_string();
        assert_eq!(e.matches(key.as_str()).count(), 1, "{e}");
        assert!(e.len() <= key.len() + 256 && e.starts_with(&format!("{key}: unknown txn filter")), "{e}");
    }

    #[test]
    fn peer_matches_on_the_port_boundary() {
        assert!(peer_matches("10.0.0.4", "10.0.0.4:5000"));
        assert!(!peer_matches("10.0.0.4", "10.0.0.42:5000"));
        assert!(peer_matches("2001:db8::1", "[2001:db8::1]:6817"));
        assert!(peer_matches("[2001:db8::1]:6817", "[2001:db8::1]:6817"));
        assert!(!peer_matches("2001:db8::1", "[2001:db8::12]:6817"));
    }

    #[test]
    fn limit_defaults_and_clamps() {
        let now = Local::now();
        assert_eq!(TxnFilter::parse(&[], now).unwrap().limit, 1000);
        assert_eq!(TxnFilter::parse(&kv("limit", "50000"), now).unwrap().limit, 10000);
        assert!(TxnFilter::parse(&kv("limit", "0"), now).is_err());
        assert!(TxnFilter::parse(&kv("Colour", "red"), now).unwrap_err().to_string().starts_with("Colour:"));
        assert!(TxnFilter::parse(&kv("Outcome", "maybe"), now).is_err());
    }

    #[test]
    fn times_in_every_form() {
        let now = Local::now();
        let ms = now.timestamp_millis();
        assert_eq!(parse_time("now", now), Ok(ms));
        assert_eq!(parse_time("now-2days", now), Ok(ms - 2 * 86_400_000));
        assert!(parse_time("now-9223372036854775807days", now).unwrap_err().contains("is not a time"));
        assert_eq!(parse_time("now-1hours", now), Ok(ms - 3_600_000));
        let day = parse_time("2026-01-01", now).unwrap();
        assert_eq!(parse_time("2026-01-01T00:00:00", now), Ok(day));
        assert_eq!(format_time(day), "2026-01-01T00:00:00");
        assert!(parse_time("yesterday", now).unwrap_err().contains("'yesterday'"));
    }
}
