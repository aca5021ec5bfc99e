//! Jobs and admin reservations: what a reservation request is checked
//! against (each node's partitions, whether it is up, when its jobs end),
//! and the submit's check that a job's `--reservation` exists and lets its
//! user and account in (Slurm: "Requested reservation is invalid").

use super::JobService;
use super::record::JobRecord;
use crate::error::{Error, Result};
use crate::resv::Cluster;
use crate::sched::catalog::Catalog;
use crate::sched::resv::ResvNode;
use std::collections::HashMap;

impl JobService {
    /// The cluster as a reservation sees it now: nodes, their partitions
    /// (listed either way), whether they are up, and when their jobs end.
    pub fn resv_cluster(&self, now: i64) -> Cluster {
        let mut busy: HashMap<String, i64> = HashMap::new();
        for j in self.lock().jobs().values().filter(|j| j.is_placed()) {
            // The record's own deadline (suspended time excluded), not a scheduler copy of the job.
            let end = j.deadline_ms().unwrap_or(i64::MAX).max(now);
            for n in &j.nodes {
                let e = busy.entry(n.clone()).or_insert(end);
                *e = (*e).max(end);
            }
        }
        let parts = self.nodes.partitions();
        let nodes = (self.nodes.nodes().into_iter())
            .map(|n| {
                let mut partitions = n.partitions.clone();
                partitions.extend(parts.iter().filter(|p| p.nodes.contains(&n.name)).map(|p| p.name.clone()));
                partitions.sort();
                partitions.dedup();
                ResvNode {
                    busy_until: busy.get(&n.name).copied(),
                    up: n.in_service(),
                    partitions,
                    name: n.name,
                }
            })
            .collect();
        Cluster { nodes, licenses: self.licenses.plain(), hres: self.licenses.hres() }
    }

    /// A job asking for a reservation: it must exist and admit the job's
    /// user and account (the user's default account when none is given).
    pub(super) fn check_reservation(&self, rec: &JobRecord, catalog: &Catalog) -> Result<()> {
        let Some(name) = rec.extra.as_ref().map(|x| x.reservation.as_str()).filter(|r| !r.is_empty()) else {
            return Ok(());
        };
        let invalid =
            |why: String| Error::invalid("reservation", format!("Requested reservation is invalid: {why}"));
        let r = self.resvs.get(name).ok_or_else(|| invalid(format!("no reservation named '{name}'")))?;
        let default =
            catalog.users.get(&rec.user).map(|u| u.default_account.clone()).filter(|a| !a.is_empty());
        let account = rec.account.clone().or(default);
        if !r.admits(&rec.user, account.as_deref()) {
            let acct = account.map_or(String::new(), |a| format!(" (account {a})"));
            return Err(invalid(format!(
                "user {}{acct} is not among reservation {name}'s Users and Accounts",
                rec.user
            )));
        }
        Ok(())
    }
}
