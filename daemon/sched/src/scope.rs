//! A job's accounting scope: its QOS and association records, the usage
//! groups it is charged to, a hold when its limits cannot be read, and its
//! fair-share factor. Resolved once per (user, account, QOS, partition), which
//! a large queue shares across many jobs.

use super::job::Job;
use super::limits::{Group, GroupKind};
use super::priority::{FairShare, UsageTable};
use super::reason::{Facts, Reason, ReasonCode as C, Scope};
use super::submit::find_assoc;
use crate::catalog::Catalog;
use crate::model::{Assoc, Qos};
use spur_vocab::tres::TresMap;
use std::collections::HashMap;

#[derive(Debug)]
pub(crate) struct JobScope<'a> {
    pub qos: Option<&'a Qos>,
    pub assoc: Option<&'a Assoc>,
    /// Only groups with some cap: an uncapped group can never block.
    pub groups: Vec<u32>,
    pub hold: Option<Reason>,
    pub fair_share: f64,
}

type Key<'a> = (&'a str, Option<&'a str>, Option<&'a str>, &'a str);

pub(crate) struct Scopes<'a> {
    catalog: &'a Catalog,
    /// Accounting on and loaded: limits apply.
    enforce: bool,
    /// Accounting on but not loaded: jobs naming a QOS or account wait.
    unavailable: bool,
    fair: FairShare,
    pub list: Vec<JobScope<'a>>,
    index: HashMap<Key<'a>, u32>,
    pub groups: Vec<Group>,
    group_index: HashMap<(GroupKind, &'a str, &'a str, &'a str), Option<u32>>,
}

impl<'a> Scopes<'a> {
    pub fn new(catalog: &'a Catalog, accounting_enabled: bool, usage: &UsageTable) -> Scopes<'a> {
        let enforce = accounting_enabled && catalog.loaded;
        let fair = if enforce { FairShare::compute(catalog, usage) } else { FairShare::default() };
        Scopes {
            catalog,
            enforce,
            unavailable: accounting_enabled && !catalog.loaded,
            fair,
            list: Vec::new(),
            index: HashMap::new(),
            groups: Vec::new(),
            group_index: HashMap::new(),
        }
    }

    pub fn of(&mut self, job: &'a Job) -> u32 {
        let key = (job.user.as_str(), job.account.as_deref(), job.qos.as_deref(), job.partition.as_str());
        if let Some(i) = self.index.get(&key) {
            return *i;
        }
        let scope = self.build(key);
        let i = self.list.len() as u32;
        self.list.push(scope);
        self.index.insert(key, i);
        i
    }

    fn build(&mut self, (user, account, qos_name, partition): Key<'a>) -> JobScope<'a> {
        let c = self.catalog;
        let hold = if self.unavailable && (qos_name.is_some() || account.is_some()) {
            let facts = Facts::Accounting { qos: qos_name.map(Into::into), account: account.map(Into::into) };
            Some(Reason::new(C::AccountingUnavailable, facts))
        } else if let Some(q) = qos_name.filter(|q| self.enforce && !c.qos.contains_key(*q)) {
            Some(Reason::new(C::InvalidQOS, Facts::Missing { what: "QOS", name: q.into() }))
        } else {
            let missing = account.filter(|a| self.enforce && !c.account_exists(a));
            missing
                .map(|a| Reason::new(C::InvalidAccount, Facts::Missing { what: "account", name: a.into() }))
        };
        if !self.enforce {
            return JobScope { qos: None, assoc: None, groups: vec![], hold, fair_share: 1.0 };
        }
        let qos = qos_name.and_then(|q| c.qos.get_key_value(q));
        let assoc = account.and_then(|a| find_assoc(c, user, a, partition));
        let mut groups = Vec::new();
        if let Some((name, q)) = qos {
            let name = name.as_str();
            let scope = || Scope::Qos(name.into());
            groups.extend(self.group((GroupKind::Qos, name, "", ""), scope, None, &q.grp_tres));
            let scope = || Scope::QosUser { qos: name.into(), user: user.into() };
            let key = (GroupKind::QosUser, name, user, "");
            groups.extend(self.group(key, scope, q.max_jobs_per_user, &q.max_tres_per_user));
        }
        if let (Some(s), Some(a)) = (assoc, account) {
            let scope = || Scope::Assoc { user: user.into(), account: a.into() };
            let key = (GroupKind::Assoc, user, a, s.partition.as_str());
            groups.extend(self.group(key, scope, s.max_jobs, &s.grp_tres));
        }
        // An account's limits cover its subtree, so every ancestor charges too.
        let mut cur = account;
        for _ in 0..=c.accounts.len() {
            let Some((name, acc)) = cur.and_then(|a| c.accounts.get_key_value(a)) else { break };
            let name = name.as_str();
            let scope = || Scope::Account(name.into());
            groups.extend(self.group((GroupKind::Account, name, "", ""), scope, acc.max_jobs, &acc.grp_tres));
            cur = Some(acc.parent.as_str());
        }
        let fair_share = self.fair.factor(user, account);
        JobScope { qos: qos.map(|(_, q)| q), assoc, groups, hold, fair_share }
    }

    fn group(
        &mut self,
        key: (GroupKind, &'a str, &'a str, &'a str),
        scope: impl FnOnce() -> Scope,
        max_running: Option<u64>,
        caps: &TresMap,
    ) -> Option<u32> {
        if let Some(g) = self.group_index.get(&key) {
            return *g;
        }
        let g = Group::new(key.0, scope(), max_running, caps);
        let id = (g.max_running.is_some() || g.caps.iter().any(Option::is_some)).then(|| {
            self.groups.push(g);
            self.groups.len() as u32 - 1
        });
        self.group_index.insert(key, id);
        id
    }
}
