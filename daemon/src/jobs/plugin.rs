//! HRES plugins in a job's life on the controller: the pre-runs of a pass's
//! starts (before the start is persisted), the hold a refusing plugin puts on
//! a job, the arguments checked again for pending jobs (restart,
//! reconfigure, requeue), and the controller epilog once a run ends.

use super::JobService;
use super::effect::{Effect, Effects};
use super::queue::Queue;
use super::record::JobRecord;
use crate::hres_lua::HresRun;
use crate::licenses::prep::{self, Who};
use crate::sched;
use crate::store::now_ms;
use serde_json::json;
use spur_vocab::{Hold, JobState};

/// What the pre-runs of a pass's starts came to.
#[derive(Debug, Default)]
pub(crate) struct PreRuns {
    /// The starts to make, in the pass's order, each with its plugins' run
    /// (None without plugins); a start whose pre-run failed is not among them.
    pub starts: Vec<(sched::Start, Option<HresRun>)>,
    /// (job, message): an error, the job is held.
    pub held: Vec<(u64, String)>,
    /// (job, message): the service was unavailable; the job stays pending.
    pub remote: Vec<(u64, String)>,
}

impl JobRecord {
    /// The run's plugin data as its nodes get it; empty without plugins.
    pub(crate) fn hres_prep_json(&self) -> String {
        self.hres.as_ref().and_then(|r| serde_json::to_string(r).ok()).unwrap_or_default()
    }

    /// Who the plugins are told runs the job.
    pub(crate) fn who(&self) -> Who<'_> {
        Who {
            id: self.id,
            user: &self.user,
            account: self.account.as_deref(),
            partition: &self.partition,
            time_limit: self.time_limit,
        }
    }
}

impl JobService {
    /// Pre-runs every start charged a resource with a plugin, in start order.
    pub(crate) fn prerun_starts(&self, starts: &[sched::Start], now: i64) -> PreRuns {
        let mut out = PreRuns::default();
        let plugins = self.licenses.plugins();
        if plugins.is_empty() {
            out.starts = starts.iter().map(|s| (s.clone(), None)).collect();
            return out;
        }
        let hres = self.licenses.hres();
        let (prolog, epilog) = plugins.node_limits();
        let configuring = self.configuring.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for s in starts {
            if !s.licenses.iter().any(|a| plugins.has(&a.name)) {
                out.starts.push((s.clone(), None));
                continue;
            }
            // Not scheduled again until its last asynchronous pre-run ended.
            if configuring.contains(&s.job) {
                continue;
            }
            let Some((job, preps)) = self.lock().jobs().get(&s.job).map(|j| {
                let job = prep::job_info(j.who(), &s.nodes, now);
                (job, prep::preps(&plugins, &hres, &j.licenses, &s.licenses, &s.nodes))
            }) else {
                continue;
            };
            let mut run = HresRun {
                job,
                resources: preps,
                prolog_timeout_ms: prolog,
                epilog_timeout_ms: epilog,
                async_running: false,
            };
            match plugins.prerun(&run.job, &mut run.resources) {
                Ok(()) => {
                    // With an asynchronous pre-run the job waits in CONFIGURING for it.
                    run.async_running = run.resources.iter().any(|p| plugins.has_async(&p.name));
                    out.starts.push((s.clone(), Some(run)));
                }
                Err(r) => {
                    if r.remote {
                        out.remote.push((s.job, r.message))
                    } else {
                        out.held.push((s.job, r.message))
                    }
                }
            }
        }
        out
    }

    /// Applies what the pre-runs refused: holds (audited), and the reason of
    /// the jobs left pending.
    pub(crate) async fn settle_preruns(&self, held: &[(u64, String)], remote: &[(u64, String)], now: i64) {
        for (id, message) in held {
            tracing::warn!(job = id, "held by an HRES plugin: {message}");
            let _ = self.transit(&[*id], |q| Ok(q.plugin_hold(*id, message, "prerun", now))).await;
        }
        if !remote.is_empty() {
            let mut q = self.lock();
            for (id, message) in remote {
                q.note_remote_fail(*id, message);
            }
        }
    }

    /// Starts that were pre-run but are not made (the store refused them): revoked.
    pub(crate) fn revoke_unstarted(&self, runs: &[Option<HresRun>]) {
        let plugins = self.licenses.plugins();
        for run in runs.iter().flatten() {
            plugins.revoke(&run.job, &run.resources, false);
        }
    }

    /// The controller epilog of a run that ended at `end_ms`.
    pub(crate) fn controller_epilog(&self, mut run: HresRun, end_ms: i64) {
        run.job.end_time = end_ms / 1000;
        self.licenses.plugins().controller_epilog(&run.job, &run.resources, run.async_running);
    }

    /// Checks the plugin arguments of pending jobs again (all, or `ids`):
    /// at start, after reconfigure and on requeue. A refusal holds the job.
    pub async fn revalidate(&self, ids: Option<&[u64]>, why: &'static str) {
        let plugins = self.licenses.plugins();
        if plugins.is_empty() {
            return;
        }
        let asks: Vec<(u64, String)> = {
            let q = self.lock();
            let pending = |j: &&JobRecord| j.state == JobState::Pending && j.hold == Hold::None;
            let wanted = |j: &&JobRecord| ids.is_none_or(|ids| ids.contains(&j.id));
            (q.jobs().values().filter(pending).filter(wanted))
                .filter(|j| !j.licenses.is_empty())
                .map(|j| (j.id, j.licenses.clone()))
                .collect()
        };
        for (id, licenses) in asks {
            let reqs = spur_vocab::licenses::parse_request(&licenses).unwrap_or_default();
            if let Err(message) = self.licenses.validate(&reqs) {
                tracing::warn!(job = id, "held by an HRES plugin ({why}): {message}");
                let _ = self.transit(&[id], |q| Ok(q.plugin_hold(id, &message, why, now_ms()))).await;
            }
        }
    }
}

impl Queue {
    /// A plugin refused pending job `id` (`why`: prerun, restart, reconfigure,
    /// requeue): held as by an admin, its message the reason until released.
    pub fn plugin_hold(&self, id: u64, message: &str, why: &str, _now: i64) -> Effects {
        let mut fx = Effects::default();
        if let Some(j) = self.jobs().get(&id).filter(|j| j.state == JobState::Pending) {
            let mut n = j.clone();
            n.hold = Hold::Admin;
            n.plugin_hold = Some(message.to_string());
            fx.persist(n);
            let info = json!({ "reason": message, "by": "hres plugin", "when": why });
            fx.push(Effect::Audit { job: id, action: "hold", info });
        }
        fx
    }
}
