//! The cached accounting records. The controller's own writes update it at
//! once; a refresh loop reloads it for changes made by another controller.

use crate::model::{Account, Qos, ROOT_ACCOUNT, User};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;

pub const KIND_QOS: &str = "qos";
pub const KIND_ACCOUNT: &str = "account";
pub const KIND_USER: &str = "user";

#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub qos: BTreeMap<String, Qos>,
    pub accounts: BTreeMap<String, Account>,
    pub users: BTreeMap<String, User>,
    /// False until the first load from the store has completed.
    pub loaded: bool,
}

impl Catalog {
    pub fn account_exists(&self, name: &str) -> bool {
        name == ROOT_ACCOUNT || self.accounts.contains_key(name)
    }

    /// Whether `name` is `ancestor` or sits below it in the account tree.
    pub fn is_under(&self, name: &str, ancestor: &str) -> bool {
        let mut cur = name.to_string();
        for _ in 0..=self.accounts.len() {
            if cur == ancestor {
                return true;
            }
            match self.accounts.get(&cur) {
                Some(a) => cur = a.parent.clone(),
                None => return false,
            }
        }
        false
    }

    /// Stores a document written under `kind` (or removes it when `doc` is None).
    pub fn apply(&mut self, kind: &str, name: &str, doc: Option<&serde_json::Value>) {
        match kind {
            KIND_QOS => put(&mut self.qos, name, doc),
            KIND_ACCOUNT => put(&mut self.accounts, name, doc),
            KIND_USER => put(&mut self.users, name, doc),
            _ => {}
        }
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
