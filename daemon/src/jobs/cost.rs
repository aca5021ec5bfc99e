//! What runs on borrowed nodes cost, per slurm definition and account: each
//! run is stamped at its start with its charge per hour
//! (`JobRecord::charge`, from the pass's `Start::charge`: its share of each
//! borrowed node times the definition's `costPerHour`), kept after its end
//! and in the slim record a purge leaves, so the stored rows carry it across
//! a restart. The cost is that charge times the run's hours from its launch.

use super::JobService;
use std::collections::{BTreeMap, HashMap};

impl JobService {
    /// Each slurm definition's cost by `now` per account, over the jobs
    /// usage reads (held, and purged ones within the usage decay), read in
    /// place (a job with no account counts under the empty name).
    pub fn account_costs(&self, now: i64) -> HashMap<String, BTreeMap<String, f64>> {
        let mut out: HashMap<String, BTreeMap<String, f64>> = HashMap::new();
        let q = self.lock();
        let ran = self.retention.ran();
        let charged =
            q.jobs().values().chain(ran.iter()).filter(|j| !j.charge.is_empty() || !j.spent.is_empty());
        for j in charged {
            let account = j.account.as_deref().unwrap_or_default();
            for (d, cost) in j.cost(now) {
                *out.entry(d.to_string()).or_default().entry(account.to_string()).or_default() += cost;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::jobs::record::JobRecord;
    use spur_vocab::JobState;

    const NOW: i64 = 1_700_000_000_000;
    const HOUR: i64 = 3_600_000;

    async fn service() -> JobService {
        let cfg = Config::default();
        let hub = std::sync::Arc::new(crate::audit::Hub::new(None));
        let acct = std::sync::Arc::new(crate::accounting::AcctService::new(hub.clone()).await);
        let admission =
            std::sync::Arc::new(crate::admission::Admission::load(cfg.admission.mode, None).await.unwrap());
        let nodes =
            std::sync::Arc::new(crate::nodes::NodeService::new(&cfg, None, hub, admission).await.unwrap());
        let licenses = std::sync::Arc::new(crate::licenses::LicenseService::new(&cfg, None).await.unwrap());
        JobService::new(&cfg, None, acct, nodes, licenses).await.unwrap()
    }

    fn job(id: u64, account: &str, state: JobState, (start_ms, end_ms): (i64, i64), rate: f64) -> JobRecord {
        JobRecord {
            id,
            user: "alice".into(),
            account: Some(account.into()),
            state,
            start_ms,
            end_ms,
            alloc: (2, 0, 0),
            nodes: vec!["burst-1".into()],
            charge: vec![("burst".into(), rate)],
            ..JobRecord::default()
        }
    }

    #[tokio::test]
    async fn runs_are_charged_per_account_and_a_purged_run_still_counts() {
        let s = service().await;
        let min = s.retention.min_age_ms;
        {
            let mut q = s.lock();
            // Two hours at 0.3, ended long enough ago to be purged.
            q.install(job(1, "phys", JobState::Completed, (NOW - 3 * HOUR, NOW - HOUR), 0.3));
            // An hour so far at 0.6, whole node.
            q.install(job(2, "bio", JobState::Running, (NOW - HOUR, 0), 0.6));
            // Waiting for its node to boot: nothing yet.
            q.install(job(3, "phys", JobState::Configuring, (NOW - HOUR, 0), 0.3));
            // Requeued after an hour at 0.3 (folded in), running again for an hour: 0.6.
            let first = job(5, "chem", JobState::Running, (NOW - 3 * HOUR, 0), 0.3);
            let mut again = super::super::ending::requeued(&first, NOW - 2 * HOUR);
            (again.state, again.start_ms, again.charge) =
                (JobState::Running, NOW - HOUR, first.charge.clone());
            q.install(again);
            // On this cluster's nodes: not charged.
            q.install(JobRecord {
                charge: vec![],
                ..job(4, "phys", JobState::Running, (NOW - HOUR, 0), 0.0)
            });
        }
        let want: BTreeMap<String, f64> =
            [("bio".to_string(), 0.6), ("chem".to_string(), 0.6), ("phys".to_string(), 0.6)].into();
        let rounded = |m: &BTreeMap<String, f64>| -> Vec<(String, i64)> {
            m.iter().map(|(a, c)| (a.clone(), (c * 1000.0).round() as i64)).collect()
        };
        assert_eq!(rounded(&s.account_costs(NOW)["burst"]), rounded(&want));
        assert!(NOW - HOUR + min < NOW, "job 1 is old enough to purge");
        assert_eq!(s.purge(NOW).await, vec![1]);
        assert_eq!(
            rounded(&s.account_costs(NOW)["burst"]),
            rounded(&want),
            "the slim record keeps its charge"
        );
    }
}
