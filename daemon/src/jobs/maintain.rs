//! HRES plugin maintenance: every `maintenance_cycle` seconds a resource's
//! `hres_maintenance` sees each layer's state in a Lua state of its own (on a
//! blocking thread, so a slow call stalls nothing else). What it sets is
//! applied as an `scontrol update DisableLayer=` would be, audited as
//! Source=system; a layer marked `down` is disabled and the running jobs on
//! it are requeued, or cancelled when they cannot be.

use super::JobService;
use super::effect::{Effect, Effects};
use super::queue::Queue;
use crate::licenses::{audit_name, plugins};
use crate::store::{TxnRow, now_ms};
use serde_json::json;
use spur_vocab::JobState;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the loop looks for a resource whose cycle is due.
const TICK: Duration = Duration::from_secs(1);

impl JobService {
    /// Runs each resource's maintenance on its cycle; the set of resources is
    /// read every tick, so a reconfigure takes effect at once.
    pub fn spawn_maintenance(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let me = self.clone();
        tokio::spawn(async move {
            let mut last: HashMap<String, Instant> = HashMap::new();
            let mut tick = tokio::time::interval(TICK);
            loop {
                tick.tick().await;
                let plugins = me.licenses.plugins();
                for (name, cycle) in plugins.cycles() {
                    if last.get(&name).is_some_and(|t| t.elapsed() < cycle) {
                        continue;
                    }
                    last.insert(name.clone(), Instant::now());
                    me.maintain(&plugins, &name).await;
                }
            }
        })
    }

    /// One maintenance of resource `name`, applied.
    pub async fn maintain(&self, plugins: &Arc<plugins::Plugins>, name: &str) {
        let Some(r) = self.licenses.hres().iter().find(|r| r.name == name).cloned() else { return };
        let holders = self.license_holders();
        let used = crate::sched::hres::usage(&r, holders.iter().flat_map(|(_, a)| a));
        let views = plugins::views(&r, &used);
        let (p, n, now) = (plugins.clone(), name.to_string(), now_ms());
        let marks = tokio::task::spawn_blocking(move || p.maintain(&n, &views, now)).await.ok().flatten();
        let Some(marks) = marks else { return };
        let message = plugins.describe(name).and_then(|(_, m)| m).map(|m| m.message).unwrap_or_default();
        let mut rows = vec![];
        for (l, m) in r.layers.iter().zip(marks) {
            // A flag the script left as it was passed in is not its change (an admin's stays unmarked).
            if !m.down && m.disable_layer == l.disabled {
                continue;
            }
            let state = if m.down { "down" } else { "disabled" };
            let mark = (m.disable_layer || m.down).then(|| plugins::Mark {
                state,
                at_ms: now,
                message: message.clone(),
            });
            match self.licenses.plugin_set_layer(name, &l.name, mark).await {
                Ok(true) => {
                    let info = json!({ "disable_layer": m.disable_layer || m.down, "down": m.down,
                        "by": "hres plugin maintenance", "message": message });
                    rows.push(TxnRow::system("hres", &audit_name(name, &l.name), "update", info));
                }
                Ok(false) => {}
                Err(e) => {
                    tracing::error!(resource = name, layer = %l.name, error = %e, "maintenance: cannot apply")
                }
            }
            if m.down {
                self.layer_down(name, &l.name, &message, now).await;
            }
        }
        if !rows.is_empty() {
            self.nodes.hub().record_all(rows).await;
        }
    }

    /// The running jobs charged on `layer` of `name`: requeued, or cancelled.
    async fn layer_down(&self, name: &str, layer: &str, message: &str, now: i64) {
        let on: Vec<u64> = (self.lock().jobs().values())
            .filter(|j| matches!(j.state, JobState::Running | JobState::Suspended))
            .filter(|j| {
                j.licenses_alloc.iter().any(|a| a.name == name && a.layers.iter().any(|(l, _)| l == layer))
            })
            .map(|j| j.id)
            .collect();
        for id in on {
            let why = format!("{name}/{layer} down: {message}");
            let _ = self.transit(&[id], |q| Ok(q.layer_down(id, &why, now))).await;
        }
    }
}

impl Queue {
    /// A plugin downed a layer job `id` runs on: requeued when it may be, else cancelled.
    pub fn layer_down(&self, id: u64, why: &str, now: i64) -> Effects {
        if !self.jobs().get(&id).is_some_and(|j| j.is_placed()) {
            return Effects::default();
        }
        self.requeue_or_cancel(id, true, json!({ "reason": why, "by": "hres plugin maintenance" }), now)
    }

    /// An HRES plugin ended job `id`'s run: requeued when it may be (`kill`:
    /// what runs of it is stopped), else cancelled; audited with `info`.
    pub(crate) fn requeue_or_cancel(
        &self,
        id: u64,
        kill: bool,
        info: serde_json::Value,
        now: i64,
    ) -> Effects {
        let Some(j) = self.jobs().get(&id) else { return Effects::default() };
        let requeue = j.requeue && !j.is_allocation();
        let mut fx = if requeue { self.requeue(id, kill, now) } else { self.cancel(&[id], 0, now) };
        fx.push(Effect::Audit { job: id, action: if requeue { "requeue" } else { "cancel" }, info });
        fx
    }
}
