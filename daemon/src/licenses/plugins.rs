//! The controller's side of HRES plugins: one hosted script per resource
//! with a plugin, in resources.yaml order. The controller functions share
//! one Lua state per resource, maintenance has its own, and each async
//! pre-run gets a new one. Each call first reloads a changed script (the
//! last good one stays when the new one cannot load); the calls made under
//! the scheduler's lock carry the `[hres] callback_timeout_ms` deadline.

use crate::config::resources::HresConfig;
use crate::hres_lua::tables::{self, JobInfo, LayerMark, LayerView, Prep};
use crate::hres_lua::{Failure, Outcome, Rc, Script, func};
use crate::model::{HresPlugin, HresResource};
use std::sync::Mutex;
use std::time::Duration;

/// The last maintenance of a resource, for `scontrol show license`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Maintained {
    /// Unix ms.
    pub at_ms: i64,
    pub rc: String,
    pub message: String,
}

/// A layer a plugin's maintenance disabled (`disabled`) or downed (`down`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Mark {
    pub state: &'static str,
    pub at_ms: i64,
    pub message: String,
}

struct Hosted {
    name: String,
    plugin: HresPlugin,
    main: Mutex<Script>,
    maint: Mutex<Script>,
    last: Mutex<Option<Maintained>>,
}

impl Hosted {
    fn call<A: mlua::IntoLuaMulti>(
        &self,
        f: &str,
        args: impl FnOnce(&mlua::Lua) -> mlua::Result<A>,
        deadline: Option<Duration>,
    ) -> Outcome {
        let mut s = self.main.lock().unwrap_or_else(|p| p.into_inner());
        refresh(&self.name, &mut s);
        s.call(f, args, deadline)
    }
}

fn refresh(name: &str, s: &mut Script) {
    match s.refresh() {
        Ok(true) => tracing::info!(resource = %name, path = %s.path().display(), "hres/lua: script reloaded"),
        Ok(false) => {}
        Err(e) => tracing::error!(resource = %name, "hres/lua: {e}; the last script loaded stays in use"),
    }
}

#[derive(Default)]
pub struct Plugins {
    hosted: Vec<Hosted>,
    deadline: Option<Duration>,
    /// (PrologTimeout, EpilogTimeout) in ms for the node functions.
    node_limits: (Option<u64>, Option<u64>),
}

impl std::fmt::Debug for Plugins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugins").field("resources", &self.names()).finish()
    }
}

/// `layers` as create context and maintenance see them; `used` per layer.
pub fn views(r: &HresResource, used: &[u64]) -> Vec<LayerView> {
    (r.layers.iter().enumerate())
        .map(|(i, l)| LayerView {
            name: l.name.clone(),
            nodes: spur_vocab::hostlist::compress(&l.nodes),
            total: l.total().map_or(crate::model::INFINITE, |t| i64::try_from(t).unwrap_or(i64::MAX)),
            used: used.get(i).copied().unwrap_or(0),
            disable_layer: l.disabled,
        })
        .collect()
}

impl Plugins {
    /// Loads every resource's script and calls create context, with nothing
    /// used. A script that cannot load, or another error than the
    /// maintenance codes, is fatal; those disable every layer of the resource.
    pub fn start(hres: &mut [HresResource], limits: &HresConfig) -> Result<Plugins, String> {
        let deadline = limits.callback();
        let mut hosted = vec![];
        for r in hres.iter_mut() {
            let Some(plugin) = r.plugin.clone() else { continue };
            let path = std::path::Path::new(plugin.path().unwrap_or_default());
            let at = |e: String| format!("resource '{}': hres/lua: {e}", r.name);
            let main = Script::load(&r.name, path).map_err(at)?;
            let maint = Script::load(&r.name, path).map_err(at)?;
            let before = views(r, &[]);
            let config = plugin.config.clone();
            let name = r.name.clone();
            let out = main.call(
                func::CREATE_CONTEXT,
                |lua| Ok((tables::ctx(lua, &name, &config)?, tables::layers(lua, &before)?)),
                deadline,
            );
            match out.rc {
                Rc::Success => {}
                Rc::MaintenanceDisable | Rc::MaintenanceDown => {
                    tracing::warn!(resource = %r.name, "hres/lua: create context returned {}; every layer disabled", out.rc.name());
                    r.layers.iter_mut().for_each(|l| l.disabled = true);
                }
                _ => return Err(at(out.describe(&r.name, func::CREATE_CONTEXT))),
            }
            hosted.push(Hosted {
                name: r.name.clone(),
                plugin,
                main: Mutex::new(main),
                maint: Mutex::new(maint),
                last: Mutex::new(None),
            });
        }
        Ok(Plugins { hosted, deadline, node_limits: limits.node_limits() })
    }

    /// Before the configuration is read again; errors are ignored.
    pub fn destroy(&self) {
        for h in &self.hosted {
            let out = h.call(
                func::DESTROY_CONTEXT,
                |lua| tables::ctx(lua, &h.name, &h.plugin.config),
                self.deadline,
            );
            if !out.rc.ok() {
                tracing::warn!(resource = %h.name, "{}", out.describe(&h.name, func::DESTROY_CONTEXT));
            }
        }
    }

    /// (PrologTimeout, EpilogTimeout) in ms, for a starting job's nodes.
    pub fn node_limits(&self) -> (Option<u64>, Option<u64>) {
        self.node_limits
    }

    pub fn names(&self) -> Vec<&str> {
        self.hosted.iter().map(|h| h.name.as_str()).collect()
    }

    /// No resource has a plugin: a pass and a restart skip every plugin step.
    pub fn is_empty(&self) -> bool {
        self.hosted.is_empty()
    }

    fn get(&self, name: &str) -> Option<&Hosted> {
        self.hosted.iter().find(|h| h.name == name)
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The plugin and its last maintenance, for `scontrol show license`.
    pub fn describe(&self, name: &str) -> Option<(HresPlugin, Option<Maintained>)> {
        let h = self.get(name)?;
        Some((h.plugin.clone(), h.last.lock().unwrap_or_else(|p| p.into_inner()).clone()))
    }

    /// Validate arguments for each requested resource with a plugin, in
    /// resources.yaml order; the first refusal names the resource.
    pub fn validate(&self, requested: &[(String, Vec<(String, String)>)]) -> Result<(), String> {
        for h in &self.hosted {
            let Some((_, args)) = requested.iter().find(|(n, _)| *n == h.name) else { continue };
            let defined = h.main.lock().unwrap_or_else(|p| p.into_inner()).has(func::VALIDATE_ARGS);
            if !defined {
                continue;
            }
            let build = |lua: &mlua::Lua| {
                Ok((tables::ctx(lua, &h.name, &h.plugin.config)?, tables::args(lua, args)?))
            };
            let out = h.call(func::VALIDATE_ARGS, build, self.deadline);
            if !out.rc.ok() {
                return Err(out.describe(&h.name, func::VALIDATE_ARGS));
            }
        }
        Ok(())
    }

    /// Pre-runs `preps` (in resources.yaml order) and fills their payloads;
    /// stops at the first failure and revokes the ones that succeeded.
    pub fn prerun(&self, job: &JobInfo, preps: &mut [Prep]) -> Result<(), Failure> {
        for i in 0..preps.len() {
            let Some(h) = self.get(&preps[i].name) else { continue };
            let p = &preps[i];
            let out = h.call(
                func::PRERUN,
                |lua| tables::job_args(lua, &h.plugin.config, job, p, false),
                self.deadline,
            );
            if let Some(failed) = out.failure(&h.name, func::PRERUN) {
                self.revoke(job, &preps[..i], false);
                return Err(failed);
            }
            preps[i].payload = out.payload;
        }
        Ok(())
    }

    /// Revoke: a job whose pre-runs succeeded does not start. Failures are
    /// logged. `async_running`: its asynchronous pre-run has not ended.
    pub fn revoke(&self, job: &JobInfo, preps: &[Prep], async_running: bool) {
        self.each(func::REVOKE, job, preps, (false, async_running));
    }

    /// The controller epilog, in reverse order; failures are logged.
    pub fn controller_epilog(&self, job: &JobInfo, preps: &[Prep], async_running: bool) {
        self.each(func::CONTROLLER_EPILOG, job, preps, (true, async_running));
    }

    fn each(&self, f: &str, job: &JobInfo, preps: &[Prep], (reverse, async_running): (bool, bool)) {
        for p in tables::in_order(preps, reverse) {
            let Some(h) = self.get(&p.name) else { continue };
            let out = h.call(
                f,
                |lua| tables::job_args(lua, &h.plugin.config, job, p, async_running),
                self.deadline,
            );
            if let Some(failed) = out.failure(&h.name, f) {
                tracing::warn!(resource = %h.name, job = job.job_id, "{}", failed.message);
            }
        }
    }

    /// The resources with a maintenance cycle, and the cycle.
    pub fn cycles(&self) -> Vec<(String, Duration)> {
        (self.hosted.iter())
            .filter(|h| h.plugin.maintenance_cycle > 0)
            .map(|h| (h.name.clone(), Duration::from_secs(h.plugin.maintenance_cycle)))
            .collect()
    }

    /// One maintenance of `name` in its own state; returns each layer's marks
    /// (None when the call failed: nothing changes). `now_ms` stamps the result.
    pub fn maintain(&self, name: &str, layers: &[LayerView], now_ms: i64) -> Option<Vec<LayerMark>> {
        let h = self.get(name)?;
        let mut s = h.maint.lock().unwrap_or_else(|p| p.into_inner());
        refresh(name, &mut s);
        let deadline =
            (h.plugin.maintenance_timeout > 0).then(|| Duration::from_secs(h.plugin.maintenance_timeout));
        let table = tables::layers(s.lua(), layers).ok()?;
        let passed = table.clone();
        let out = s.call(
            func::MAINTENANCE,
            |lua| Ok((tables::ctx(lua, name, &h.plugin.config)?, passed)),
            deadline,
        );
        let marks = out.rc.ok().then(|| tables::read_marks(&table, layers));
        if !out.rc.ok() {
            tracing::warn!(resource = %name, "{}", out.describe(name, func::MAINTENANCE));
        }
        let message = out.message.clone().unwrap_or_default();
        *h.last.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(Maintained { at_ms: now_ms, rc: out.rc.name(), message });
        marks
    }

    /// The async pre-run, when the resource's script defines it: in a new state.
    pub fn has_async(&self, name: &str) -> bool {
        self.get(name)
            .is_some_and(|h| h.main.lock().unwrap_or_else(|p| p.into_inner()).has(func::ASYNC_PRERUN))
    }

    /// Runs the async pre-run of `prep` in a new Lua state (the script as it
    /// is now: one that cannot load fails). Blocking: call from a thread.
    pub fn async_prerun(config: &HresPlugin, job: &JobInfo, prep: &Prep) -> Outcome {
        let path = std::path::Path::new(config.path().unwrap_or_default());
        match Script::load(&prep.name, path) {
            Ok(s) => s.call(
                func::ASYNC_PRERUN,
                |lua| tables::job_args(lua, &config.config, job, prep, false),
                None,
            ),
            Err(e) => Outcome::failed(e),
        }
    }

    pub fn plugin(&self, name: &str) -> Option<&HresPlugin> {
        self.get(name).map(|h| &h.plugin)
    }
}
