//! HRES asynchronous pre-runs: a job whose resource's script defines
//! `hres_controller_job_async_prerun` starts in CONFIGURING, holding its
//! nodes and resources but not launched. Each async pre-run runs in a new Lua
//! state on a blocking thread; when all end, [`Queue::configured`] launches
//! the job with their payloads, or requeues it (cancels it when it cannot be)
//! on a failure. A job that is no longer that CONFIGURING run by then (it was
//! cancelled or requeued) drops the result, and revoke is called. A
//! controller that restarts finds such jobs CONFIGURING with their result
//! lost: they are requeued, or cancelled.

use super::JobService;
use super::effect::{Effect, Effects};
use super::queue::Queue;
use crate::hres_lua::HresRun;
use crate::licenses::plugins::Plugins;
use crate::store::now_ms;
use serde_json::json;
use spur_vocab::JobState;
use std::sync::Arc;

/// Each resource's payload from its async pre-run (None: keep the pre-run's), or the failure.
type AsyncResult = Result<Vec<(String, Option<String>)>, String>;

impl JobService {
    pub(crate) fn lock_asyncs(&self) -> std::sync::MutexGuard<'_, Vec<u64>> {
        self.async_due.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Begins the async pre-runs of the jobs the last pass started CONFIGURING.
    pub(crate) fn start_asyncs(self: &Arc<Self>) {
        let due = std::mem::take(&mut *self.lock_asyncs());
        for id in due {
            let run = self
                .lock()
                .jobs()
                .get(&id)
                .filter(|j| j.state == JobState::Configuring)
                .and_then(|j| j.hres.clone());
            let Some(run) = run else { continue };
            self.configuring.lock().unwrap_or_else(|p| p.into_inner()).insert(id);
            let (me, plugins) = (self.clone(), self.licenses.plugins());
            tokio::spawn(async move {
                let r = run.clone();
                let out = tokio::task::spawn_blocking(move || async_preruns(&plugins, &r)).await;
                let out = out.unwrap_or_else(|e| Err(format!("the asynchronous pre-run panicked: {e}")));
                me.configured(id, *run, out).await;
                me.configuring.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                me.kick.notify_one();
            });
        }
    }

    async fn configured(&self, id: u64, run: HresRun, out: AsyncResult) {
        let mut dropped = false;
        let sluid = run.job.sluid.clone();
        // On a borrowed node still booting, the launch waits for its agent (`boots`).
        let nodes = self.lock().jobs().get(&id).map(|j| j.nodes.clone()).unwrap_or_default();
        let booted = super::boot::boot_of(&nodes, |n| self.nodes.node(n)) == super::boot::Boot::Ready;
        let done = self
            .transit(&[id], |q| {
                let fx = q.configured(id, &sluid, &out, booted, now_ms());
                dropped = fx.is_empty();
                Ok(fx)
            })
            .await;
        if let Ok(done) = done {
            for id in done.unlaunched {
                let _ = self.requeue_lost(id).await;
            }
        }
        if dropped {
            tracing::info!(
                job = id,
                "the asynchronous pre-run ended after the job left CONFIGURING; revoked"
            );
            self.licenses.plugins().revoke(&run.job, &run.resources, false);
        }
    }

    /// At start: CONFIGURING jobs lost their asynchronous pre-run.
    pub async fn requeue_configuring(&self) {
        let ids: Vec<u64> =
            // A job waiting for its nodes' boot waits on (`jobs/boot.rs`).
            (self.lock().jobs().values())
                .filter(|j| j.state == JobState::Configuring && !super::boot::waits_for_boot(j))
                .map(|j| j.id)
                .collect();
        for id in ids {
            let why = "the controller restarted during its asynchronous HRES pre-run".to_string();
            let _ =
                self.transit(&[id], |q| Ok(q.configured(id, "", &Err(why.clone()), true, now_ms()))).await;
        }
    }
}

/// Every async pre-run of `run`, in resources.yaml order; stops at the first failure.
fn async_preruns(plugins: &Plugins, run: &HresRun) -> AsyncResult {
    let mut out = vec![];
    for p in run.resources.iter().filter(|p| plugins.has_async(&p.name)) {
        let Some(cfg) = plugins.plugin(&p.name) else { continue };
        let o = Plugins::async_prerun(cfg, &run.job, p);
        if !o.rc.ok() {
            return Err(o.describe(&p.name, crate::hres_lua::func::ASYNC_PRERUN));
        }
        out.push((p.name.clone(), o.payload));
    }
    Ok(out)
}

impl Queue {
    /// The async pre-runs of CONFIGURING job `id` (run `sluid`; empty: any
    /// run) ended with `out`: launched with their payloads (once its nodes
    /// have `booted`; else kept CONFIGURING for `boots` to launch), or
    /// requeued (cancelled when it cannot be). Nothing when the job is not that run.
    pub fn configured(&self, id: u64, sluid: &str, out: &AsyncResult, booted: bool, now: i64) -> Effects {
        let Some(j) = self.jobs().get(&id).filter(|j| j.state == JobState::Configuring) else {
            return Effects::default();
        };
        let Some(run) = j.hres.as_deref().filter(|r| sluid.is_empty() || r.job.sluid == sluid) else {
            return Effects::default();
        };
        match out {
            Ok(payloads) => {
                let mut n = j.clone();
                let mut r = run.clone();
                r.async_running = false;
                for (name, payload) in payloads {
                    if let Some(p) =
                        r.resources.iter_mut().find(|p| p.name == *name).filter(|_| payload.is_some())
                    {
                        p.payload.clone_from(payload);
                    }
                }
                n.hres = Some(Box::new(r));
                if !booted {
                    return Effect::Persist(n).into();
                }
                n.state = JobState::Running;
                let node = n.nodes.first().cloned().unwrap_or_default();
                let mut fx: Effects = Effect::Persist(n).into();
                fx.push(Effect::Launch { job: id, node });
                fx
            }
            Err(why) => {
                tracing::warn!(job = id, "asynchronous HRES pre-run failed: {why}");
                self.requeue_or_cancel(id, false, json!({ "reason": why, "by": "hres plugin" }), now)
            }
        }
    }
}
