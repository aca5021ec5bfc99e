//! Applying `sacctmgr add/modify account` pairs, and the tree's rules.

use super::Catalog;
use super::pairs::{Pair, internal, name_of};
use crate::error::{Error, Result};
use crate::model::{Account, ROOT_ACCOUNT};
use spur_vocab::keys::Value;

pub fn apply(a: &mut Account, pairs: &[Pair]) -> Result<()> {
    for p in pairs {
        match (p.def.key, &p.value) {
            ("name", _) => {}
            ("description", Value::Text(t)) => a.description = t.clone(),
            ("organization", Value::Text(t)) => a.organization = t.clone(),
            ("parent", _) => a.parent = name_of(p).unwrap_or(ROOT_ACCOUNT).to_string(),
            ("fairshare", Value::Float(v)) => a.fairshare = *v,
            ("maxrunningjobs", Value::Limit(v)) => a.max_jobs = *v,
            ("grptres", Value::Tres(t)) => a.grp_tres = t.apply(&a.grp_tres),
            ("grpsubmit", Value::Limit(v)) => a.grp_submit = *v,
            (k, _) => return Err(internal(k)),
        }
    }
    Ok(())
}

/// The parent exists, and the tree stays a tree.
pub fn validate(a: &Account, catalog: &Catalog) -> Result<()> {
    if a.name == ROOT_ACCOUNT {
        return Err(Error::invalid("name", "'root' is the top of the account tree and cannot be changed"));
    }
    if !catalog.account_exists(&a.parent) {
        return Err(Error::invalid("parent", format!("account '{}' does not exist", a.parent)));
    }
    if catalog.is_under(&a.parent, &a.name) {
        return Err(Error::invalid(
            "parent",
            format!("'{}' is '{}' or below it; an account cannot be its own ancestor", a.parent, a.name),
        ));
    }
    Ok(())
}

/// An account with children or users cannot be deleted, as in Slurm.
pub fn check_delete(name: &str, catalog: &Catalog) -> Result<()> {
    if name == ROOT_ACCOUNT {
        return Err(Error::invalid("name", "'root' is the top of the account tree and cannot be deleted"));
    }
    let children: Vec<&str> =
        catalog.accounts.values().filter(|a| a.parent == name).map(|a| a.name.as_str()).collect();
    if !children.is_empty() {
        return Err(Error::FailedPrecondition(format!(
            "account '{name}' has child accounts ({}); delete or move them first",
            children.join(",")
        )));
    }
    let users: Vec<&str> = catalog
        .users
        .values()
        .filter(|u| u.assocs.iter().any(|a| a.account == name))
        .map(|u| u.name.as_str())
        .collect();
    if !users.is_empty() {
        return Err(Error::FailedPrecondition(format!(
            "account '{name}' has users ({}); delete their associations first",
            users.join(",")
        )));
    }
    Ok(())
}
