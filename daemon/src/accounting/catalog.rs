//! Loading the cached accounting records ([`Catalog`], the scheduler's) from
//! the store's documents. The controller's own writes update it at once; a
//! refresh loop reloads it for changes made by another controller.

use serde::de::DeserializeOwned;
use std::collections::BTreeMap;

pub use spur_sched::catalog::Catalog;

pub const KIND_QOS: &str = "qos";
pub const KIND_ACCOUNT: &str = "account";
pub const KIND_USER: &str = "user";

/// Stores a document written under `kind` (or removes it when `doc` is None).
pub fn apply(cat: &mut Catalog, kind: &str, name: &str, doc: Option<&serde_json::Value>) {
    match kind {
        KIND_QOS => put(&mut cat.qos, name, doc),
        KIND_ACCOUNT => put(&mut cat.accounts, name, doc),
        KIND_USER => put(&mut cat.users, name, doc),
        _ => {}
    }
}

fn put<T: DeserializeOwned>(map: &mut BTreeMap<String, T>, name: &str, doc: Option<&serde_json::Value>) {
    match doc.map(|d| serde_json::from_value::<T>(d.clone())) {
        Some(Ok(v)) => {
            map.insert(name.to_string(), v);
        }
        Some(Err(e)) => tracing::error!(name, error = %e, "written record does not decode"),
        None => {
            map.remove(name);
        }
    }
}

pub fn decode_all<T: DeserializeOwned>(docs: Vec<(String, serde_json::Value)>) -> BTreeMap<String, T> {
    docs.into_iter()
        .filter_map(|(name, doc)| match serde_json::from_value(doc) {
            Ok(v) => Some((name, v)),
            Err(e) => {
                tracing::error!(name, error = %e, "stored record does not decode; skipped");
                None
            }
        })
        .collect()
}
