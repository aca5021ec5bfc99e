//! Records flattened to named columns, so a write can say exactly which
//! columns moved: `changed: {column: {from, to}}`.

use crate::model::User;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// Top-level fields of a record as columns.
pub fn of<T: Serialize>(v: &T) -> Map<String, Value> {
    match serde_json::to_value(v) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// A user's columns, with each association's fields under `account[/partition].field`.
pub fn of_user(u: &User) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("admin_level".into(), json!(u.admin_level));
    out.insert("default_account".into(), json!(u.default_account));
    for a in &u.assocs {
        let prefix =
            if a.partition.is_empty() { a.account.clone() } else { format!("{}/{}", a.account, a.partition) };
        for (k, v) in of(a) {
            if k != "account" && k != "partition" {
                out.insert(format!("{prefix}.{k}"), v);
            }
        }
    }
    out
}

/// `{column: {from, to}}` for every column that differs.
pub fn changed(before: &Map<String, Value>, after: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    let keys: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    for k in keys {
        let (b, a) = (before.get(k).unwrap_or(&Value::Null), after.get(k).unwrap_or(&Value::Null));
        if b != a {
            out.insert(k.clone(), json!({"from": b, "to": a}));
        }
    }
    Value::Object(out)
}
