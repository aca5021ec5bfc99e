//! `sacctmgr show event`'s columns and JSON over the events [`crate::events`] derives.

use super::columns::Column;
pub use crate::events::{Event, Filter, MAX_LIMIT, derive, parse_filter};
use crate::vocab::txn::format_time;

/// The columns of `show event`, with Slurm's names.
pub const COLUMNS: &[Column<Event>] = &[
    Column { name: "Cluster", aliases: &[], header: "Cluster", get: |e| e.cluster.clone() },
    Column { name: "NodeName", aliases: &["Nodes"], header: "NodeName", get: |e| e.node.clone() },
    Column { name: "TimeStart", aliases: &["Start"], header: "TimeStart", get: |e| format_time(e.start_ms) },
    Column {
        name: "TimeEnd",
        aliases: &["End"],
        header: "TimeEnd",
        get: |e| e.end_ms.map_or_else(|| "Unknown".into(), format_time),
    },
    Column { name: "State", aliases: &["States"], header: "State", get: |e| e.state.clone() },
    Column { name: "Reason", aliases: &[], header: "Reason", get: |e| e.reason.clone() },
    Column { name: "User", aliases: &[], header: "User", get: |e| e.user.clone() },
];

/// `--json`: the events in the data_parser reply others use (`events`,
/// `meta`, `errors`, `warnings`), times in epoch seconds (`end` 0 while open).
pub fn json(events: &[Event], cluster: &str) -> String {
    let records = (events.iter())
        .map(|e| {
            serde_json::json!({
                "cluster": e.cluster,
                "node": e.node,
                "time": { "start": e.start_ms / 1000, "end": e.end_ms.map_or(0, |t| t / 1000) },
                "state": e.state,
                "reason": e.reason,
                "user": e.user,
            })
        })
        .collect();
    super::output::document(&super::jobjson::reply_value("events", records, Some(cluster), vec![]), false)
}

pub const DEFAULT: &[&str] = &["Cluster", "NodeName", "TimeStart", "TimeEnd", "State", "Reason", "User"];

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Local;
    use spur_proto::v1 as pb;

    fn row(id: i64, t: i64, actor: &str, name: &str, info: &str) -> pb::TxnRow {
        pb::TxnRow {
            id,
            time_ms: t,
            actor: actor.into(),
            action: "update".into(),
            entity: "node".into(),
            name: name.into(),
            outcome: "success".into(),
            info: info.into(),
            ..Default::default()
        }
    }

    fn api(id: i64, t: i64, actor: &str, nodes: &str, state: &str, reason: &str) -> pb::TxnRow {
        let info = serde_json::json!({
            "params": {"nodename": nodes, "state": state, "reason": reason},
            "updated": nodes,
        });
        row(id, t, actor, nodes, &info.to_string())
    }

    fn rows() -> Vec<pb::TxnRow> {
        vec![
            api(1, 1_000, "alice", "node[01-02]", "drain", "disk"),
            api(2, 2_000, "bob", "node02", "resume", ""),
            row(3, 3_000, "spurctld", "node02", r#"{"state":"Not responding"}"#),
            api(4, 4_000, "alice", "node01", "down", "fan"),
        ]
    }

    #[test]
    fn each_change_is_an_event_ended_by_the_next_on_its_node() {
        let ev = derive(&rows(), "c", &Filter::default());
        let view: Vec<_> = ev
            .iter()
            .map(|e| {
                (e.node.as_str(), e.state.as_str(), e.reason.as_str(), e.user.as_str(), e.start_ms, e.end_ms)
            })
            .collect();
        assert_eq!(
            view,
            [
                ("node01", "DRAIN", "disk", "alice", 1_000, Some(4_000)),
                ("node02", "DRAIN", "disk", "alice", 1_000, Some(2_000)),
                ("node02", "IDLE", "", "bob", 2_000, Some(3_000)),
                ("node02", "DOWN", "Not responding", "spurctld", 3_000, None),
                ("node01", "DOWN", "fan", "alice", 4_000, None),
            ]
        );
    }

    #[test]
    fn filters_pick_nodes_states_users_and_a_window() {
        let now = Local::now();
        let pairs =
            |v: &[(&str, &str)]| v.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
        let f = parse_filter(&pairs(&[("Nodes", "node02"), ("states", "drain,down")]), now).unwrap();
        let ev = derive(&rows(), "c", &f);
        assert_eq!(ev.iter().map(|e| e.state.as_str()).collect::<Vec<_>>(), ["DRAIN", "DOWN"]);
        assert_eq!(
            f.txn_query(MAX_LIMIT).iter().find(|kv| kv.key == "Name").map(|kv| kv.value.as_str()),
            Some("node02")
        );
        let f = Filter { users: vec!["bob".into()], ..Filter::default() };
        assert_eq!(derive(&rows(), "c", &f).len(), 1);
        // An event overlapping the window is in it; one that ended before it is not.
        let f = Filter { start_ms: Some(2_500), end_ms: Some(3_500), ..Filter::default() };
        let ev = derive(&rows(), "c", &f);
        assert_eq!(ev.iter().map(|e| e.start_ms).collect::<Vec<_>>(), [1_000, 2_000, 3_000]);
    }

    #[test]
    fn json_is_the_data_parser_reply() {
        let ev = derive(&rows(), "c", &Filter::default());
        let v: serde_json::Value = serde_json::from_str(&json(&ev[3..4], "c")).unwrap();
        assert_eq!(v["events"][0]["state"], "DOWN", "{v}");
        assert_eq!(v["events"][0]["time"]["start"], 3, "{v}");
        assert_eq!(v["events"][0]["time"]["end"], 0, "open: {v}");
        assert_eq!(v["meta"]["slurm"]["cluster"], "c", "{v}");
    }

    #[test]
    fn bad_input_names_the_key() {
        let now = Local::now();
        let one = |k: &str, v: &str| parse_filter(&[(k.to_string(), v.to_string())], now).unwrap_err();
        assert!(one("Nodes", "[").starts_with("Nodes: '['"), "{}", one("Nodes", "["));
        assert!(one("Bogus", "1").starts_with("unknown key 'Bogus' for show event"));
        assert!(one("Start", "whenever").starts_with("Start: "));
    }

    #[test]
    fn refused_and_unreadable_rows_are_no_events() {
        let mut denied = api(1, 1_000, "eve", "node01", "drain", "x");
        denied.outcome = "denied".into();
        let garbled = row(2, 2_000, "alice", "node01", "not json");
        assert!(derive(&[denied, garbled], "c", &Filter::default()).is_empty());
    }
}
