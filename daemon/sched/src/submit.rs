//! Submit-time resolution and the gate, as the spec states them: the account,
//! then the QOS (its order and exact messages), the default time limit, then
//! the limits that reject at submit. Pure: the caller passes the catalog, the
//! policy and the counts of live jobs.

use super::job::Job;
use super::limits::{self, ASSOC_PER_JOB, QOS_PER_JOB};
use super::reason::{Facts, Reason, ReasonCode as C, Scope, Unit};
use crate::catalog::Catalog;
use crate::model::{Assoc, Partition, Qos};
use std::collections::HashMap;

/// The `[accounting]` settings the gate reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubmitPolicy {
    /// A non-empty `database_url`.
    pub accounting_enabled: bool,
    pub default_qos: String,
    pub require_qos: bool,
    pub require_association: bool,
    /// The cluster-wide default time limit, after a partition's DefaultTime (minutes).
    pub default_time_limit: Option<u64>,
}

/// What resolution filled in; the caller stores these on the job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resolved {
    pub account: Option<String>,
    pub qos: Option<String>,
    pub time_limit: Option<u64>,
    /// Stale defaults that were skipped, for the controller log.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SubmitError {
    /// Transient: the association cache has not loaded. gRPC Unavailable, REST 503.
    #[error("{0}")]
    Unavailable(String),
    /// The account or QOS does not resolve; the message is the spec's, verbatim.
    #[error("{message}")]
    Invalid { code: C, message: String },
    /// The configuration names a QOS that does not exist.
    #[error("{0}")]
    Misconfigured(String),
    /// A limit rejects the job: the Slurm code and its sentence.
    #[error("{0}")]
    Denied(Reason),
}

fn invalid(code: C, message: String) -> SubmitError {
    SubmitError::Invalid { code, message }
}

/// Live (pending + running) jobs counted the ways the submit-count limits need.
#[derive(Debug, Clone, Default)]
pub struct SubmitCounts {
    /// user -> account -> partition -> jobs. Kept by partition because which
    /// association a job is charged to depends on the associations of the
    /// moment (a partition's own association takes that partition's jobs),
    /// so it is decided when a limit is read, as `find_assoc` decides it.
    user_account: HashMap<String, HashMap<String, HashMap<String, u64>>>,
    /// Jobs charged to the account itself; its subtree is summed when read.
    account: HashMap<String, u64>,
    qos: HashMap<String, u64>,
    qos_user: HashMap<String, HashMap<String, u64>>,
    qos_account: HashMap<String, HashMap<String, u64>>,
}

impl SubmitCounts {
    pub fn from_jobs<'a>(jobs: impl IntoIterator<Item = &'a Job>) -> SubmitCounts {
        let mut c = SubmitCounts::default();
        jobs.into_iter().for_each(|j| c.add(j));
        c
    }

    pub fn add(&mut self, job: &Job) {
        self.bump(job, true);
    }

    /// A job that ended or was cancelled no longer counts.
    pub fn remove(&mut self, job: &Job) {
        self.bump(job, false);
    }

    fn bump(&mut self, job: &Job, up: bool) {
        // A borrowed run is outside the submit counts too (spur-idle-fill.md, Quota accounting).
        if job.borrowed {
            return;
        }
        let w = job.weight();
        let step = |v: &mut u64| *v = if up { v.saturating_add(w) } else { v.saturating_sub(w) };
        if let Some(a) = &job.account {
            let by_partition =
                self.user_account.entry(job.user.clone()).or_default().entry(a.clone()).or_default();
            step(by_partition.entry(job.partition.clone()).or_default());
            step(self.account.entry(a.clone()).or_default());
        }
        if let Some(q) = &job.qos {
            step(self.qos.entry(q.clone()).or_default());
            step(self.qos_user.entry(q.clone()).or_default().entry(job.user.clone()).or_default());
            if let Some(a) = &job.account {
                step(self.qos_account.entry(q.clone()).or_default().entry(a.clone()).or_default());
            }
        }
    }

    fn nested(map: &HashMap<String, HashMap<String, u64>>, a: &str, b: &str) -> u64 {
        map.get(a).and_then(|m| m.get(b)).copied().unwrap_or(0)
    }

    /// The live jobs charged to `user`'s association `assoc`: those in its
    /// partition, or, for an association over every partition, those in the
    /// partitions where the user has no partition's own association in that
    /// account (which `find_assoc` would pick for them instead).
    pub fn assoc_jobs(&self, catalog: &Catalog, user: &str, assoc: &Assoc) -> u64 {
        let Some(by_partition) = self.user_account.get(user).and_then(|m| m.get(&assoc.account)) else {
            return 0;
        };
        if !assoc.partition.is_empty() {
            return by_partition.get(&assoc.partition).copied().unwrap_or(0);
        }
        let record = catalog.users.get(user);
        let own = |p: &str| !p.is_empty() && record.is_some_and(|u| u.assoc(&assoc.account, p).is_some());
        by_partition.iter().filter(|(p, _)| !own(p)).map(|(_, n)| *n).fold(0, u64::saturating_add)
    }

    /// The live jobs of `account` and every account below it.
    pub fn account_jobs(&self, catalog: &Catalog, account: &str) -> u64 {
        self.account
            .iter()
            .filter(|(a, _)| catalog.is_under(a, account))
            .map(|(_, n)| *n)
            .fold(0, u64::saturating_add)
    }
}

/// The association a job's limits come from: the partition's own, else the
/// one for every partition.
pub fn find_assoc<'a>(catalog: &'a Catalog, user: &str, account: &str, partition: &str) -> Option<&'a Assoc> {
    let u = catalog.users.get(user)?;
    u.assoc(account, partition).or_else(|| u.assoc(account, ""))
}

/// A QOS is permitted when the allow-list or the default names it. An
/// association with neither has not been scoped and permits every QOS.
pub fn permits(assoc: &Assoc, qos: &str) -> bool {
    (assoc.qos.is_empty() && assoc.default_qos.is_empty())
        || assoc.qos.iter().any(|q| q == qos)
        || assoc.default_qos == qos
}

/// Resolves, defaults and gates a job. `job` carries what the user asked for.
pub fn submit(
    job: &Job,
    partition: Option<&Partition>,
    catalog: &Catalog,
    policy: &SubmitPolicy,
    counts: &SubmitCounts,
) -> Result<Resolved, SubmitError> {
    let mut out = Resolved::default();
    if !policy.accounting_enabled {
        // No associations or QOS to check: take what was asked, apply the requirements.
        out.account = job.account.clone();
        out.qos = job.qos.clone();
        if out.account.is_none() && policy.require_association {
            return Err(invalid(C::InvalidAccount, format!("no account resolved for user '{}'", job.user)));
        }
        if out.qos.is_none() && policy.require_qos {
            return Err(no_qos());
        }
        out.time_limit = default_time_limit(job.time_limit, partition, policy.default_time_limit, None, None);
        return Ok(out);
    }
    if !catalog.loaded {
        // The user's associations and default account are unknown until it loads.
        return Err(SubmitError::Unavailable(
            "the accounting cache has not loaded yet, so the job's account cannot be checked; retry shortly"
                .into(),
        ));
    }
    out.account = resolve_account(&job.user, job.account.as_deref(), catalog, policy)?;
    let part = partition.map_or(job.partition.as_str(), |p| p.name.as_str());
    let assoc = out.account.as_deref().and_then(|a| find_assoc(catalog, &job.user, a, part));
    out.qos = resolve_qos(
        &job.user,
        out.account.as_deref(),
        assoc,
        job.qos.as_deref(),
        catalog,
        policy,
        &mut out.warnings,
    )?;
    let qos = out.qos.as_deref().and_then(|q| catalog.qos.get(q));
    out.time_limit = default_time_limit(job.time_limit, partition, policy.default_time_limit, qos, assoc);
    let resolved =
        Job { account: out.account.clone(), qos: out.qos.clone(), time_limit: out.time_limit, ..job.clone() };
    gate(&resolved, qos, assoc, catalog, counts).map_err(SubmitError::Denied)?;
    Ok(out)
}

/// Explicit `--account` (which must be associated), else the default account.
pub fn resolve_account(
    user: &str,
    requested: Option<&str>,
    catalog: &Catalog,
    policy: &SubmitPolicy,
) -> Result<Option<String>, SubmitError> {
    let record = catalog.users.get(user);
    if let Some(account) = requested {
        let assocs = record.map_or(&[][..], |u| u.assocs.as_slice());
        if assocs.is_empty() {
            return Err(invalid(C::InvalidAccount, format!("user '{user}' has no account associations")));
        }
        if !assocs.iter().any(|a| a.account == account) {
            return Err(invalid(
                C::InvalidAccount,
                format!("user '{user}' is not associated with account '{account}'"),
            ));
        }
        return Ok(Some(account.to_string()));
    }
    match record.map(|u| u.default_account.as_str()).filter(|a| !a.is_empty()) {
        Some(a) => Ok(Some(a.to_string())),
        None if policy.require_association => {
            Err(invalid(C::InvalidAccount, format!("no account resolved for user '{user}'")))
        }
        None => Ok(None),
    }
}

fn no_qos() -> SubmitError {
    invalid(C::InvalidQOS, "no QOS specified and no default QOS is configured for this user/account".into())
}

/// Explicit `--qos`, else the association's default, else `accounting.default_qos`.
pub fn resolve_qos(
    user: &str,
    account: Option<&str>,
    assoc: Option<&Assoc>,
    requested: Option<&str>,
    catalog: &Catalog,
    policy: &SubmitPolicy,
    warnings: &mut Vec<String>,
) -> Result<Option<String>, SubmitError> {
    let acct = account.unwrap_or("");
    if let Some(q) = requested {
        if !catalog.qos.contains_key(q) {
            return Err(invalid(C::InvalidQOS, format!("QOS '{q}' does not exist")));
        }
        if assoc.is_some_and(|s| !permits(s, q)) {
            return Err(invalid(
                C::InvalidQOS,
                format!("QOS '{q}' is not permitted for user '{user}' under account '{acct}'"),
            ));
        }
        return Ok(Some(q.to_string()));
    }
    if let Some(d) = assoc.map(|s| s.default_qos.as_str()).filter(|d| !d.is_empty()) {
        if catalog.qos.contains_key(d) {
            return Ok(Some(d.to_string()));
        }
        warnings.push(format!(
            "default QOS '{d}' of user '{user}' under account '{acct}' no longer exists; ignored"
        ));
    }
    let fallback = policy.default_qos.as_str();
    if !fallback.is_empty() {
        if !catalog.qos.contains_key(fallback) {
            return Err(SubmitError::Misconfigured(format!(
                "accounting.default_qos '{fallback}' names no existing QOS; create it with \
                 'sacctmgr add qos name={fallback}' or change default_qos in spur.conf"
            )));
        }
        if assoc.is_none_or(|s| permits(s, fallback)) {
            return Ok(Some(fallback.to_string()));
        }
        warnings.push(format!(
            "accounting.default_qos '{fallback}' is not permitted for user '{user}' under account '{acct}'; ignored"
        ));
    }
    if policy.require_qos { Err(no_qos()) } else { Ok(None) }
}

/// The time limit of a job that asks for none: the partition's DefaultTime
/// (else the cluster default), else the smaller non-zero maxwall of QOS and
/// association, held under the partition's MaxTime. A job that asked keeps
/// its own; a 0 maxwall blocks jobs but is never a default.
pub fn default_time_limit(
    requested: Option<u64>,
    partition: Option<&Partition>,
    cluster_default: Option<u64>,
    qos: Option<&Qos>,
    assoc: Option<&Assoc>,
) -> Option<u64> {
    if requested.is_some() {
        return requested;
    }
    let walls = [qos.and_then(|q| q.max_wall), assoc.and_then(|a| a.max_wall)];
    let maxwall = walls.into_iter().flatten().filter(|w| *w > 0).min();
    let filled = partition.and_then(|p| p.default_time).or(cluster_default).or(maxwall);
    // Unbounded under a MaxTime takes the MaxTime, else it would pend on
    // PartitionTimeLimit for a limit it never asked for.
    match (filled, partition.and_then(|p| p.max_time)) {
        (Some(t), Some(max)) => Some(t.min(max)),
        (None, Some(max)) => Some(max),
        (t, None) => t,
    }
}

/// The caps a time limit set by a job's owner (below Operator) must keep
/// under, whatever DenyOnLimit says: the partition's MaxTime, then the
/// association's and the QOS's MaxWall (a 0 MaxWall admits none). `job`
/// carries the new limit and its account, QOS and partition.
pub fn time_caps(job: &Job, partition: Option<&Partition>, catalog: &Catalog) -> Result<(), Reason> {
    if let Some(p) = partition
        && let Some(max) = p.max_time.filter(|max| job.time_limit.is_none_or(|t| t > *max))
    {
        let facts =
            Facts::PartitionTime { partition: p.name.clone(), max_time: max, time_limit: job.time_limit };
        return Err(Reason::new(C::PartitionTimeLimit, facts));
    }
    let user = job.user.as_str();
    if let Some(a) = job.account.as_deref()
        && let Some(s) = find_assoc(catalog, user, a, &job.partition)
    {
        let scope = || Scope::Assoc { user: user.into(), account: a.into() };
        let code = C::AssocMaxWallDurationPerJobLimit;
        limits::wall(job.time_limit, s.max_wall, code, scope).map_or(Ok(()), Err)?;
    }
    if let Some(q) = job.qos.as_deref().and_then(|q| catalog.qos.get(q)) {
        let scope = || Scope::Qos(q.name.clone());
        limits::wall(job.time_limit, q.max_wall, C::QOSMaxWallDurationPerJobLimit, scope)
            .map_or(Ok(()), Err)?;
    }
    Ok(())
}

/// The limits that reject at submit: the association's submit counts and
/// maxwall first, then the grpsubmit of its account and each account above
/// (an account's cap covers its subtree), then the QOS's; per-job TRES
/// (both) and QOS maxwall only under DenyOnLimit, which a job with no QOS is
/// treated as having. Running-count limits and grpwall never reject here.
pub fn gate(
    job: &Job,
    qos: Option<&Qos>,
    assoc: Option<&Assoc>,
    catalog: &Catalog,
    counts: &SubmitCounts,
) -> Result<(), Reason> {
    let user = job.user.as_str();
    // An array asks for all its tasks at submit, as Slurm counts them.
    let w = job.weight();
    let deny = qos.is_none_or(|q| q.flags.deny_on_limit);
    let ask = job.tres();
    let sub = Unit::SubmittedJobs;
    let mut checks: Vec<Option<Reason>> = Vec::new();
    if let (Some(s), Some(a)) = (assoc, job.account.as_deref()) {
        let scope = || Scope::Assoc { user: user.into(), account: a.into() };
        // A user association's caps count its own jobs, as Slurm counts an
        // association and its children (a user association has none).
        let used = counts.assoc_jobs(catalog, user, s);
        let code = C::AssocMaxSubmitJobLimit;
        checks.push(limits::count_of(s.max_submit_jobs, used, w, code, "maxsubmitjobs", sub, scope));
        checks.push(limits::count_of(
            s.grp_submit,
            used,
            w,
            C::AssocGrpSubmitJobsLimit,
            "grpsubmit",
            sub,
            scope,
        ));
        checks.push(limits::wall(job.time_limit, s.max_wall, C::AssocMaxWallDurationPerJobLimit, scope));
        if deny {
            checks.push(limits::per_job(&ask, &s.max_tres_per_job, &ASSOC_PER_JOB, scope));
        }
    }
    // Bounded by the number of accounts, so a parent cycle in the data cannot loop.
    let mut cur = job.account.as_deref();
    for _ in 0..=catalog.accounts.len() {
        let Some((name, acc)) = cur.and_then(|a| catalog.accounts.get_key_value(a)) else { break };
        if acc.grp_submit.is_some() {
            let used = counts.account_jobs(catalog, name);
            let scope = || Scope::Account(name.clone());
            checks.push(limits::count_of(
                acc.grp_submit,
                used,
                w,
                C::AssocGrpSubmitJobsLimit,
                "grpsubmit",
                sub,
                scope,
            ));
        }
        cur = Some(acc.parent.as_str());
    }
    if let Some(q) = qos {
        let name = q.name.as_str();
        let used = SubmitCounts::nested(&counts.qos_user, name, user);
        let scope = || Scope::QosUser { qos: name.into(), user: user.into() };
        let code = C::QOSMaxSubmitJobPerUserLimit;
        checks.push(limits::count_of(
            q.max_submit_jobs_per_user,
            used,
            w,
            code,
            "maxsubmitjobsperuser",
            sub,
            scope,
        ));
        if let Some(a) = job.account.as_deref() {
            let used = SubmitCounts::nested(&counts.qos_account, name, a);
            let scope = || Scope::QosAccount { qos: name.into(), account: a.into() };
            let key = "maxsubmitjobsperaccount";
            checks.push(limits::count_of(
                q.max_submit_jobs_per_account,
                used,
                w,
                C::MaxSubmitJobsPerAccount,
                key,
                sub,
                scope,
            ));
        }
        let used = counts.qos.get(name).copied().unwrap_or(0);
        let scope = || Scope::Qos(name.into());
        checks.push(limits::count_of(
            q.grp_submit,
            used,
            w,
            C::QOSGrpSubmitJobsLimit,
            "grpsubmit",
            sub,
            scope,
        ));
        if deny {
            checks.push(limits::wall(job.time_limit, q.max_wall, C::QOSMaxWallDurationPerJobLimit, scope));
            checks.push(limits::per_job(&ask, &q.max_tres_per_job, &QOS_PER_JOB, scope));
        }
    }
    match checks.into_iter().flatten().next() {
        Some(r) => Err(r),
        None => Ok(()),
    }
}
