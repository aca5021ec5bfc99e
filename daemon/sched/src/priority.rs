//! Effective priority, kept as its factors so `sprio` can show them:
//!
//! ```text
//! effective = base × min(fair_share, 10) × age × max(partition_tier, 1)
//! base      = --priority, else 1000 + qos.priority
//! age       = 1.0 + min(waiting_minutes / 10080, 1.0)      (1.0 -> 2.0 over 7 days)
//! ```
//!
//! Fair share is Slurm's classic factor, rescaled so that a user consuming
//! exactly their share scores 1.0 (the spec's examples use 2.0 for a light
//! user and 0.1 for a heavy one):
//!
//! ```text
//! fair_share = 2^(1 - U/S)
//! S = the account's normalised shares (its fairshare over its siblings',
//!     times its parent's S, up to root) / users associated with the account
//! U = the (user, account) decayed usage / all decayed usage
//! usage = Σ cpus × qos.usagefactor × ∫ 2^(-(now - t)/halflife) dt   (CPU-seconds)
//! ```
//!
//! So an idle user scores 2.0, one at their share 1.0, one at 2× it 0.5 and
//! one at 4.3× it 0.1. A job with no account scores a neutral 1.0.

use super::job::Job;
use crate::catalog::Catalog;
use crate::model::{Qos, ROOT_ACCOUNT};
use std::collections::{BTreeMap, HashMap};

/// The base of a job with neither `--priority` nor a QOS priority.
pub const DEFAULT_BASE: f64 = 1000.0;
pub const FAIR_SHARE_CAP: f64 = 10.0;
/// Seven days: the age factor's ramp.
pub const AGE_RAMP_MINUTES: f64 = 10080.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriorityFactors {
    pub base: f64,
    /// As computed; the product uses it capped at [`FAIR_SHARE_CAP`].
    pub fair_share: f64,
    pub age: f64,
    pub tier: u32,
    pub effective: f64,
    /// provisioners.yaml's `scheduler.priority` for the job: when set, the
    /// queue is ordered by it instead of `effective` (the preemption gap keeps `effective`).
    pub ordered: Option<f64>,
}

impl PriorityFactors {
    pub fn new(base: f64, fair_share: f64, age: f64, tier: u32) -> PriorityFactors {
        let effective = base * fair_share.min(FAIR_SHARE_CAP) * age * f64::from(tier.max(1));
        PriorityFactors { base, fair_share, age, tier, effective, ordered: None }
    }

    pub fn for_job(job: &Job, qos: Option<&Qos>, fair_share: f64, tier: u32, now_ms: i64) -> PriorityFactors {
        // `--nice` moves the base, where Slurm subtracts it from the sum.
        let base = (base_priority(job.priority, qos) - f64::from(job.nice)).max(0.0);
        Self::new(base, fair_share, age_factor(job.submit_ms, now_ms), tier)
    }

    /// What the queue is ordered by.
    pub fn order_key(&self) -> f64 {
        self.ordered.unwrap_or(self.effective)
    }

    /// The integer Slurm shows as the job's priority.
    pub fn value(&self) -> u64 {
        if self.effective.is_finite() && self.effective > 0.0 { self.effective.round() as u64 } else { 0 }
    }
}

/// `--priority` if given, else 1000 + the QOS priority (never below 0).
pub fn base_priority(explicit: Option<u64>, qos: Option<&Qos>) -> f64 {
    match explicit {
        Some(p) => p as f64,
        None => (DEFAULT_BASE + qos.map_or(0.0, |q| q.priority as f64)).max(0.0),
    }
}

/// 1.0 at submit, rising linearly to 2.0 after seven days in the queue.
pub fn age_factor(submit_ms: i64, now_ms: i64) -> f64 {
    let waited = now_ms.saturating_sub(submit_ms).max(0) as f64 / 60_000.0;
    1.0 + (waited / AGE_RAMP_MINUTES).min(1.0)
}

/// Decayed usage per (user, account), in weighted CPU-seconds.
pub type UsageTable = BTreeMap<(String, String), f64>;

/// One job's run, finished or still running, as job history holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageRecord {
    pub user: String,
    pub account: String,
    pub qos: Option<String>,
    pub cpus: u64,
    pub start_ms: i64,
    /// None while running: it counts up to now.
    pub end_ms: Option<i64>,
}

/// Sums history into decayed usage. Each run is integrated in closed form
/// against the half-life curve, so no step size or stored decay state is
/// needed; a half-life of 0 or less disables decay.
pub fn decayed_usage<'a>(
    records: impl IntoIterator<Item = &'a UsageRecord>,
    catalog: &Catalog,
    now_ms: i64,
    halflife_days: f64,
) -> UsageTable {
    let mut out = UsageTable::new();
    let h = halflife_days * 86_400.0;
    for r in records {
        let end = r.end_ms.unwrap_or(now_ms).min(now_ms);
        let start = r.start_ms.min(end);
        let age = |t: i64| now_ms.saturating_sub(t) as f64 / 1000.0;
        let (age_end, age_start) = (age(end), age(start));
        let secs = if h > 0.0 {
            let lambda = std::f64::consts::LN_2 / h;
            ((-lambda * age_end).exp() - (-lambda * age_start).exp()) / lambda
        } else {
            age_start - age_end
        };
        let factor = r.qos.as_ref().and_then(|q| catalog.qos.get(q)).map_or(1.0, |q| q.usage_factor.max(0.0));
        *out.entry((r.user.clone(), r.account.clone())).or_insert(0.0) += secs * r.cpus as f64 * factor;
    }
    out
}

/// One (user, account) row, as `sshare` shows it. A user's RawShares is 1
/// among the account's users (`siblings`), under the account's shares.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareRow {
    /// Normalised shares, 0..1 over the cluster: `1 / siblings × parent`.
    pub shares: f64,
    /// How many users the account's share is split between.
    pub siblings: f64,
    /// The account's normalised shares.
    pub parent: f64,
    pub raw_usage: f64,
    /// Share of all usage, 0..1.
    pub norm_usage: f64,
    pub factor: f64,
}

/// Slurm's LevelFS: shares over usage, infinite with no usage.
pub fn level_fs(shares: f64, norm_usage: f64) -> f64 {
    if norm_usage > 0.0 { shares / norm_usage } else { f64::INFINITY }
}

/// One account's line of the fairshare tree (`sshare`, the console's pane):
/// its shares among its siblings and the usage of its whole subtree.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountShare {
    pub name: String,
    pub parent: String,
    pub raw_shares: f64,
    /// RawShares summed over the accounts under the same parent.
    pub siblings: f64,
    /// The parent's normalised shares (1 for root).
    pub parent_shares: f64,
    pub shares: f64,
    pub raw_usage: f64,
    pub norm_usage: f64,
}

/// Every account's line, in name order, and the cluster's total usage.
pub fn account_shares_tree(catalog: &Catalog, usage: &UsageTable) -> (Vec<AccountShare>, f64) {
    let sibling_sum = sibling_sums(catalog);
    let total: f64 = usage.values().sum();
    // Each (user, account) usage counts in its account and every ancestor:
    // one walk up per usage entry, bounded by the account count against cycles.
    let mut subtree: HashMap<&str, f64> = HashMap::new();
    for ((_, account), v) in usage {
        let mut cur = account.as_str();
        for _ in 0..=catalog.accounts.len() {
            let Some(a) = catalog.accounts.get(cur) else { break };
            *subtree.entry(a.name.as_str()).or_insert(0.0) += v;
            cur = parent_of(&a.parent);
        }
    }
    let lines = catalog
        .accounts
        .values()
        .map(|a| {
            let parent = parent_of(&a.parent);
            let raw_usage = subtree.get(a.name.as_str()).copied().unwrap_or(0.0);
            AccountShare {
                name: a.name.clone(),
                parent: parent.to_string(),
                raw_shares: a.fairshare.max(0.0),
                siblings: sibling_sum.get(parent).copied().unwrap_or(0.0),
                parent_shares: account_shares(catalog, &sibling_sum, parent),
                shares: account_shares(catalog, &sibling_sum, &a.name),
                raw_usage,
                norm_usage: if total > 0.0 { raw_usage / total } else { 0.0 },
            }
        })
        .collect();
    (lines, total)
}

fn sibling_sums(catalog: &Catalog) -> HashMap<&str, f64> {
    let mut sibling_sum: HashMap<&str, f64> = HashMap::new();
    for a in catalog.accounts.values() {
        *sibling_sum.entry(parent_of(&a.parent)).or_insert(0.0) += a.fairshare.max(0.0);
    }
    sibling_sum
}

/// Fair-share factors per account, then user.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FairShare {
    pub rows: BTreeMap<String, BTreeMap<String, ShareRow>>,
}

impl FairShare {
    pub fn compute(catalog: &Catalog, usage: &UsageTable) -> FairShare {
        let sibling_sum = sibling_sums(catalog);
        let mut users_of: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for u in catalog.users.values() {
            for s in &u.assocs {
                let list = users_of.entry(s.account.as_str()).or_default();
                if !list.contains(&u.name.as_str()) {
                    list.push(&u.name);
                }
            }
        }
        let total: f64 = usage.values().sum();
        let mut rows: BTreeMap<String, BTreeMap<String, ShareRow>> = BTreeMap::new();
        for (account, users) in users_of {
            let parent = account_shares(catalog, &sibling_sum, account);
            let siblings = users.len().max(1) as f64;
            let per_user = parent / siblings;
            for user in users {
                let raw_usage = usage.get(&(user.to_string(), account.to_string())).copied().unwrap_or(0.0);
                let norm_usage = if total > 0.0 { raw_usage / total } else { 0.0 };
                let factor = if per_user > 0.0 {
                    2f64.powf(1.0 - norm_usage / per_user)
                } else if norm_usage > 0.0 {
                    0.0
                } else {
                    1.0
                };
                let row = ShareRow { shares: per_user, siblings, parent, raw_usage, norm_usage, factor };
                rows.entry(account.to_string()).or_default().insert(user.to_string(), row);
            }
        }
        FairShare { rows }
    }

    /// The factor for a job's (user, account); 1.0 when either is unknown.
    pub fn factor(&self, user: &str, account: Option<&str>) -> f64 {
        account.and_then(|a| self.rows.get(a)).and_then(|r| r.get(user)).map_or(1.0, |r| r.factor)
    }
}

fn parent_of(parent: &str) -> &str {
    if parent.is_empty() { ROOT_ACCOUNT } else { parent }
}

/// An account's fraction of the cluster: its fairshare over its siblings',
/// times its parent's fraction. Bounded by the account count against cycles.
fn account_shares(catalog: &Catalog, sibling_sum: &HashMap<&str, f64>, account: &str) -> f64 {
    let mut share = 1.0;
    let mut cur = account;
    for _ in 0..=catalog.accounts.len() {
        let Some(a) = catalog.accounts.get(cur) else { break };
        let parent = parent_of(&a.parent);
        let sum = sibling_sum.get(parent).copied().unwrap_or(0.0);
        share *= if sum > 0.0 { a.fairshare.max(0.0) / sum } else { 0.0 };
        cur = parent;
    }
    share
}
