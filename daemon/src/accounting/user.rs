//! Users and their associations: `sacctmgr add/modify/delete user`.

use super::Caller;
use super::Catalog;
use super::pairs::{Pair, internal, name_of, take};
use crate::error::{Error, Result};
use crate::model::{Assoc, User};
use crate::store::Action;
use spur_vocab::keys::Value;
use spur_vocab::names::AdminLevel;

/// Keys that pick the user and association rather than set a value.
const SCOPE_KEYS: &[&str] = &["name", "account", "defaultaccount", "partition"];

/// Which associations of a user a modify or delete acts on.
#[derive(Debug, Clone)]
pub struct Selector {
    pub name: String,
    pub account: Option<String>,
    pub partition: Option<String>,
}

impl Selector {
    fn matches(&self, a: &Assoc) -> bool {
        self.account.as_ref().is_none_or(|acc| &a.account == acc)
            && self.partition.as_ref().is_none_or(|p| &a.partition == p)
    }

    fn describe(&self) -> String {
        let mut s = format!("user '{}' has no association", self.name);
        if let Some(a) = &self.account {
            s.push_str(&format!(" with account '{a}'"));
        }
        if let Some(p) = &self.partition {
            s.push_str(&format!(" on partition '{p}'"));
        }
        s
    }

    pub fn from_pairs(pairs: &[Pair]) -> Result<Selector> {
        let name = super::pairs::required_name(pairs, "user")?;
        let get = |k: &str| take(pairs, k).and_then(name_of).map(str::to_string);
        Ok(Selector { name, account: get("account"), partition: get("partition") })
    }
}

/// `add user`: an upsert of the user and of one association.
pub fn add(old: Option<User>, name: &str, set: &[Pair], catalog: &Catalog) -> Result<(User, Action)> {
    let get = |k: &str| take(set, k).and_then(name_of).map(str::to_string);
    let default_acct = get("defaultaccount");
    let account = get("account").or_else(|| default_acct.clone()).ok_or_else(|| {
        Error::invalid("account", "missing account= (a user cannot exist without an account)")
    })?;
    if !catalog.account_exists(&account) {
        return Err(Error::invalid("account", format!("account '{account}' does not exist")));
    }
    let partition = get("partition").unwrap_or_default();
    let mut user = old.unwrap_or_else(|| User { name: name.to_string(), ..User::default() });
    let (idx, created) =
        match user.assocs.iter().position(|a| a.account == account && a.partition == partition) {
            Some(i) => (i, false),
            None => {
                user.assocs.push(Assoc { account: account.clone(), partition, ..Assoc::default() });
                (user.assocs.len() - 1, true)
            }
        };
    apply_assoc(&mut user.assocs[idx], set)?;
    apply_user_level(&mut user, set)?;
    if let Some(d) = default_acct {
        user.default_account = d;
    } else if user.default_account.is_empty() {
        user.default_account = account;
    }
    validate(&user, catalog)?;
    Ok((user, if created { Action::Create } else { Action::Update }))
}

/// `modify user ... set ...`: a partial patch of the selected associations.
pub fn modify(old: Option<User>, sel: &Selector, set: &[Pair], catalog: &Catalog) -> Result<User> {
    let mut user = old.ok_or_else(|| Error::NotFound(format!("user '{}' does not exist", sel.name)))?;
    if let Some(p) = set.iter().find(|p| matches!(p.def.key, "name" | "account" | "partition")) {
        return Err(Error::invalid(
            &p.typed_key,
            "cannot be changed with modify; add the user to the new account and delete the old association",
        ));
    }
    let mut hit = false;
    for a in user.assocs.iter_mut().filter(|a| sel.matches(a)) {
        apply_assoc(a, set)?;
        hit = true;
    }
    if !hit {
        return Err(Error::NotFound(sel.describe()));
    }
    apply_user_level(&mut user, set)?;
    if let Some(d) = take(set, "defaultaccount").and_then(name_of) {
        if !user.assocs.iter().any(|a| a.account == d) {
            return Err(Error::invalid(
                "defaultaccount",
                format!("user '{}' is not associated with account '{d}'", user.name),
            ));
        }
        user.default_account = d.to_string();
    }
    validate(&user, catalog)?;
    Ok(user)
}

/// `delete user`: without account=, the user leaves every account.
pub fn delete(old: Option<User>, sel: &Selector) -> Result<Option<User>> {
    let mut user = old.ok_or_else(|| Error::NotFound(format!("user '{}' does not exist", sel.name)))?;
    let before = user.assocs.len();
    user.assocs.retain(|a| !sel.matches(a));
    if user.assocs.len() == before {
        return Err(Error::NotFound(sel.describe()));
    }
    if user.assocs.is_empty() {
        return Ok(None);
    }
    if !user.assocs.iter().any(|a| a.account == user.default_account) {
        user.default_account = user.assocs[0].account.clone();
    }
    Ok(Some(user))
}

/// Only an Administrator sets `adminlevel` (to any level, on add or
/// modify), and never above its own: an Operator, who manages accounting
/// records, must not be able to grant itself or anyone the control plane.
pub fn check_level(set: &[Pair], caller: &Caller) -> Result<()> {
    let Some(p) = take(set, "adminlevel") else { return Ok(()) };
    let Value::Admin(want) = &p.value else { return Err(internal("adminlevel")) };
    let role = caller.role;
    if role < AdminLevel::Administrator {
        return Err(Error::PermissionDenied(format!(
            "adminlevel: only an Administrator may set an admin level; '{}' has {}",
            caller.user,
            role.as_str()
        )));
    }
    if *want > role {
        return Err(Error::PermissionDenied(format!(
            "adminlevel: {} is above the level of '{}' ({})",
            want.as_str(),
            caller.user,
            role.as_str()
        )));
    }
    Ok(())
}

/// Nobody changes or deletes a user whose `adminlevel` is above their own
/// (an Operator cannot demote, strip or remove an Administrator): checked on
/// the stored record, inside the write, by `add` (an upsert), `modify` and `delete`.
pub fn check_target(old: Option<&User>, caller: &Caller) -> Result<()> {
    match old {
        Some(u) if u.admin_level > caller.role => Err(Error::PermissionDenied(format!(
            "user '{}' has adminlevel {}, above the level of '{}' ({}); only an {} may modify or delete them",
            u.name,
            u.admin_level.as_str(),
            caller.user,
            caller.role.as_str(),
            u.admin_level.as_str()
        ))),
        _ => Ok(()),
    }
}

fn apply_user_level(u: &mut User, pairs: &[Pair]) -> Result<()> {
    if let Some(p) = take(pairs, "adminlevel") {
        match &p.value {
            Value::Admin(l) => u.admin_level = *l,
            _ => return Err(internal("adminlevel")),
        }
    }
    Ok(())
}

fn apply_assoc(a: &mut Assoc, pairs: &[Pair]) -> Result<()> {
    for p in pairs.iter().filter(|p| !SCOPE_KEYS.contains(&p.def.key) && p.def.key != "adminlevel") {
        match (p.def.key, &p.value) {
            ("defaultqos", Value::Name(n)) => a.default_qos = n.clone(),
            ("qos", Value::List(l)) => a.qos = l.clone(),
            ("maxrunningjobs", Value::Limit(v)) => a.max_jobs = *v,
            ("maxsubmitjobs", Value::Limit(v)) => a.max_submit_jobs = *v,
            ("grpsubmit", Value::Limit(v)) => a.grp_submit = *v,
            ("maxtresperjob", Value::Tres(t)) => a.max_tres_per_job = t.apply(&a.max_tres_per_job),
            ("grptres", Value::Tres(t)) => a.grp_tres = t.apply(&a.grp_tres),
            ("maxwall", Value::Limit(v)) => a.max_wall = *v,
            (k, _) => return Err(internal(k)),
        }
    }
    Ok(())
}

/// QOS named by an association exist, and the default is in the allow-list.
fn validate(u: &User, catalog: &Catalog) -> Result<()> {
    for a in &u.assocs {
        if let Some(q) = a.qos.iter().find(|q| !catalog.qos.contains_key(*q)) {
            return Err(Error::invalid("qos", format!("QOS '{q}' does not exist")));
        }
        if !a.default_qos.is_empty() {
            if !catalog.qos.contains_key(&a.default_qos) {
                return Err(Error::invalid("defaultqos", format!("QOS '{}' does not exist", a.default_qos)));
            }
            if !a.qos.is_empty() && !a.qos.contains(&a.default_qos) {
                return Err(Error::invalid(
                    "defaultqos",
                    format!("'{}' is not in the qos= allow-list ({})", a.default_qos, a.qos.join(",")),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(user: &str, role: AdminLevel) -> Caller {
        Caller { user: user.into(), role, ..Caller::default() }
    }

    #[test]
    fn nobody_changes_a_user_above_their_own_level() {
        let admin = User { name: "ada".into(), admin_level: AdminLevel::Administrator, ..User::default() };
        let op = User { name: "olga".into(), admin_level: AdminLevel::Operator, ..User::default() };
        let e = check_target(Some(&admin), &caller("olga", AdminLevel::Operator)).unwrap_err();
        assert!(matches!(e, Error::PermissionDenied(_)), "{e}");
        assert_eq!(
            e.to_string(),
            "user 'ada' has adminlevel Administrator, above the level of 'olga' (Operator); only an \
             Administrator may modify or delete them"
        );
        assert!(check_target(Some(&op), &caller("bob", AdminLevel::None)).is_err());
        // Its own level and below, and a user not yet there, are the caller's to manage.
        assert!(check_target(Some(&op), &caller("olga", AdminLevel::Operator)).is_ok());
        assert!(check_target(Some(&admin), &caller("root", AdminLevel::Administrator)).is_ok());
        assert!(check_target(None, &caller("olga", AdminLevel::Operator)).is_ok());
    }
}
