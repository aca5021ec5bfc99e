//! The cached accounting records the scheduler reads: QOS, accounts and
//! user associations. The controller's accounting service keeps it current.

use crate::model::{Account, Qos, ROOT_ACCOUNT, User};
use std::collections::BTreeMap;

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
}
