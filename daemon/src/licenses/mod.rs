//! Licenses in the controller: the live table (plain counters and HRES with
//! their runtime updates), submit-time checks of `-L`, the layer membership
//! that survives restarts, and `scontrol show license`.
//!
//! Usage is never stored here: it is summed from what running jobs were
//! charged, so a restart or a layer that changed under a job stays exact.
//! Persistence follows the spec: node membership of a layer is saved (one
//! store doc per changed layer); count, base and disabled flags are not, and
//! resources.yaml wins again on restart or reconfigure.
//!
//! - [`update`]: one `scontrol update HRESName=` as a pure, all-or-nothing edit.
//! - [`dynamic`]: dynamic nodes joining their layers, and leaving them all when deleted.
//! - [`plugins`]: the resources' hres/lua scripts and the controller's callbacks.
//! - [`prep`]: what a starting job's plugins receive (`job`, `prep`), built from its record.

pub mod dynamic;
pub mod plugins;
pub mod prep;
pub mod update;

#[cfg(test)]
mod tests;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::model::{HresMode, HresResource, LicenseTable};
use crate::store::{Action, Store};
use serde_json::json;
use spur_proto::v1 as pb;
use spur_vocab::hostlist;
use spur_vocab::licenses::{LicenseAlloc, LicenseReq};
use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};
use tokio::sync::broadcast;
pub use update::HresUpdate;

/// Store docs: `resource/layer` -> `{"nodes": [...]}`.
pub const KIND_HRES_NODES: &str = "hres_nodes";

/// The name an HRES update's audit row carries: the resource, or `resource/layer`.
pub fn audit_name(hres: &str, layer: &str) -> String {
    match layer {
        "" => hres.to_string(),
        l => format!("{hres}/{l}"),
    }
}

/// Plain license counts, and the resources as a pass reads them (shared, swapped whole on change).
type Live = (std::collections::BTreeMap<String, u32>, Arc<Vec<HresResource>>);

pub struct LicenseService {
    table: RwLock<Live>,
    nodes: RwLock<BTreeSet<String>>,
    store: Option<Arc<dyn Store>>,
    changed: broadcast::Sender<String>,
    plugins: RwLock<Arc<plugins::Plugins>>,
    /// Layers a plugin's maintenance disabled or downed, by `resource/layer`.
    marks: RwLock<std::collections::BTreeMap<String, plugins::Mark>>,
    /// The dynamic nodes and the layers each was created with, applied again
    /// whenever the table is rebuilt from resources.yaml.
    dynamic: RwLock<std::collections::BTreeMap<String, Vec<spur_vocab::dynamic::HresPair>>>,
    /// Held by a table write (an update, a plugin's maintenance, a
    /// reconfigure) from the copy it changes to its install, so none writes
    /// back a copy older than another's change.
    writes: tokio::sync::Mutex<()>,
}

impl LicenseService {
    pub async fn new(cfg: &Config, store: Option<Arc<dyn Store>>) -> Result<LicenseService> {
        let svc = LicenseService {
            table: RwLock::new((cfg.licenses.clone(), Arc::new(vec![]))),
            nodes: RwLock::new(BTreeSet::new()),
            store,
            changed: broadcast::channel(64).0,
            writes: tokio::sync::Mutex::new(()),
            plugins: RwLock::new(Arc::default()),
            marks: RwLock::default(),
            dynamic: RwLock::default(),
        };
        svc.reconfigure(cfg).await?;
        Ok(svc)
    }

    /// Takes resources.yaml as loaded, then the saved node membership of layers.
    pub async fn reconfigure(&self, cfg: &Config) -> Result<()> {
        let _writing = self.writes.lock().await;
        let mut hres = cfg.hres.clone();
        if let Some(s) = &self.store {
            for (key, doc) in s.load(KIND_HRES_NODES).await? {
                let nodes: Vec<String> = serde_json::from_value(doc["nodes"].clone()).unwrap_or_default();
                if let Err(e) = restore(&mut hres, &key, nodes) {
                    tracing::error!(layer = %key, "saved HRES layer nodes discarded: {e}");
                }
            }
        }
        self.rejoin(&mut hres);
        // Create context sees the layers before running jobs' usage is counted.
        // A new set that cannot start leaves the running one in place, its context intact.
        let plugins = plugins::Plugins::start(&mut hres, &cfg.hres_limits)
            .map_err(|e| Error::invalid("resources_file", e))?;
        let old = std::mem::replace(
            &mut *self.plugins.write().unwrap_or_else(|p| p.into_inner()),
            Arc::new(plugins),
        );
        old.destroy();
        let mut known = cfg.node_names().unwrap_or_default();
        if !known.is_empty() {
            known.extend(self.dynamic.read().unwrap_or_else(|p| p.into_inner()).keys().cloned());
        }
        *self.nodes.write().unwrap_or_else(|p| p.into_inner()) = known;
        *self.table.write().unwrap_or_else(|p| p.into_inner()) = (cfg.licenses.clone(), Arc::new(hres));
        let _ = self.changed.send(String::new());
        Ok(())
    }

    /// The resources' plugins as loaded by the last (re)configuration.
    pub fn plugins(&self) -> Arc<plugins::Plugins> {
        self.plugins.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn plain(&self) -> std::collections::BTreeMap<String, u32> {
        self.table.read().unwrap_or_else(|p| p.into_inner()).0.clone()
    }

    pub fn hres(&self) -> Arc<Vec<HresResource>> {
        self.table.read().unwrap_or_else(|p| p.into_inner()).1.clone()
    }

    pub fn table(&self) -> LicenseTable {
        LicenseTable { plain: self.plain(), hres: (*self.hres()).clone() }
    }

    /// A license or resource changed; the name, or empty for several.
    pub fn subscribe(&self) -> broadcast::Receiver<String> {
        self.changed.subscribe()
    }

    pub fn notify(&self, name: &str) {
        let _ = self.changed.send(name.to_string());
    }

    /// Submit: every name exists, plugin arguments only on resources, at most one Mode 3 resource.
    pub fn check_request(&self, reqs: &[LicenseReq]) -> Result<()> {
        let (plain, hres) = (self.plain(), self.hres());
        let mut mode3 = vec![];
        for r in reqs {
            match hres.iter().find(|h| h.name == r.name) {
                Some(h) if h.mode == HresMode::Three => mode3.push(r.name.as_str()),
                Some(_) => {}
                None if plain.contains_key(&r.name) => {
                    if !r.args.is_empty() {
                        return Err(Error::invalid(
                            "licenses",
                            format!(
                                "'{r}': plugin arguments are only for hierarchical resources; {} is a plain license",
                                r.name
                            ),
                        ));
                    }
                }
                None => {
                    return Err(Error::invalid(
                        "licenses",
                        format!("no license or resource named '{}'", r.name),
                    ));
                }
            }
        }
        if mode3.len() > 1 {
            return Err(Error::invalid(
                "licenses",
                format!("a job may request one MODE_3 resource; this asks for {}", mode3.join(" and ")),
            ));
        }
        self.validate(reqs).map_err(|e| Error::invalid("licenses", e))
    }

    /// The plugins' validate arguments for a request; the first refusal's message.
    pub fn validate(&self, reqs: &[LicenseReq]) -> std::result::Result<(), String> {
        let plugins = self.plugins();
        let asked: Vec<(String, Vec<(String, String)>)> =
            reqs.iter().filter(|r| plugins.has(&r.name)).map(|r| (r.name.clone(), r.args.clone())).collect();
        if asked.is_empty() {
            return Ok(());
        }
        plugins.validate(&asked)
    }

    /// `scontrol update HRESName=`: applies, saves changed node membership, tells watchers.
    pub async fn update(&self, name: &str, u: &HresUpdate) -> Result<Vec<String>> {
        let nodes = self.nodes.read().unwrap_or_else(|p| p.into_inner()).clone();
        let max = match nodes.iter().map(String::len).max() {
            None => (hostlist::MAX_HOSTS, hostlist::MAX_NAME_LEN),
            Some(longest) => (nodes.len(), longest),
        };
        let known = move |n: &str| nodes.is_empty() || nodes.contains(n);
        let _writing = self.writes.lock().await;
        let mut all = (*self.hres()).clone();
        let r = all
            .iter_mut()
            .find(|r| r.name == name)
            .ok_or_else(|| Error::invalid("hresname", format!("no hierarchical resource named '{name}'")))?;
        let (changes, moved) = update::apply(r, u, &known, max).map_err(|m| {
            let (key, msg) = m.split_once(": ").unwrap_or(("hresname", &m));
            Error::invalid(key, msg)
        })?;
        if moved && let Some(s) = &self.store {
            let l = &r.layers[r.layer(&u.layer).unwrap_or(0)];
            let doc = [(format!("{name}/{}", l.name), Some(json!({ "nodes": l.nodes }).to_string()))];
            // The request's row (the Note licenses_api returns) commits with the membership.
            crate::audit::claim::take(
                &audit_name(name, &u.layer),
                Action::Update,
                json!({ "changes": changes }),
            );
            crate::audit::claim::commit(s.as_ref(), KIND_HRES_NODES, &doc).await?;
        }
        self.table.write().unwrap_or_else(|p| p.into_inner()).1 = Arc::new(all);
        self.notify(name);
        Ok(changes)
    }

    /// A plugin's maintenance sets `layer` of `name` disabled or enabled
    /// (`mark` says why; None clears the mark). Returns whether it changed.
    pub async fn plugin_set_layer(
        &self,
        name: &str,
        layer: &str,
        mark: Option<plugins::Mark>,
    ) -> Result<bool> {
        let disabled = mark.is_some();
        let key = audit_name(name, layer);
        {
            let mut marks = self.marks.write().unwrap_or_else(|p| p.into_inner());
            match mark {
                Some(m) => marks.insert(key, m),
                None => marks.remove(&key),
            };
        }
        let now = (self.hres().iter().find(|r| r.name == name))
            .and_then(|r| r.layer(layer).map(|i| r.layers[i].disabled));
        if now == Some(disabled) {
            self.notify(name);
            return Ok(false);
        }
        let u = HresUpdate {
            layer: layer.into(),
            disable_layer: Some(disabled.to_string()),
            ..HresUpdate::default()
        };
        self.update(name, &u).await?;
        Ok(true)
    }

    /// `scontrol show license [NAME]`: one entry per plain license and per layer.
    /// `running` are the running jobs' ids and charges.
    pub fn show(&self, name: &str, running: &[(u64, Vec<LicenseAlloc>)]) -> Vec<pb::License> {
        let mut out = vec![];
        for (lic, total) in self.plain().iter().filter(|(n, _)| name.is_empty() || *n == name) {
            let holders: Vec<pb::LicenseHolder> = (running.iter())
                .flat_map(|(id, a)| a.iter().filter(|a| &a.name == lic).map(|a| (*id, u64::from(a.count))))
                .map(|(job_id, amount)| pb::LicenseHolder { job_id, amount })
                .collect();
            let used: u64 = holders.iter().map(|h| h.amount).sum();
            let total = u64::from(*total);
            out.push(pb::License {
                name: lic.clone(),
                total,
                used,
                free: total.saturating_sub(used),
                conf_total: total as i64,
                holders,
                ..pb::License::default()
            });
        }
        let (plugins, marks) = (self.plugins(), self.marks.read().unwrap_or_else(|p| p.into_inner()).clone());
        for r in self.hres().iter().filter(|r| name.is_empty() || r.name == name) {
            let used = crate::sched::hres::usage(r, running.iter().flat_map(|(_, a)| a));
            for (l, used) in r.layers.iter().zip(used) {
                let holders = (running.iter())
                    .flat_map(|(id, a)| {
                        let on = a.iter().filter(|a| a.name == r.name).flat_map(|a| &a.layers);
                        on.filter(|(n, _)| *n == l.name).map(|(_, amt)| (*id, *amt)).collect::<Vec<_>>()
                    })
                    .map(|(job_id, amount)| pb::LicenseHolder { job_id, amount })
                    .collect();
                let total = l.total();
                out.push(pb::License {
                    name: r.name.clone(),
                    total: total.unwrap_or(0),
                    used,
                    free: total.map_or(0, |t| t.saturating_sub(used)),
                    infinite: total.is_none(),
                    layer_name: l.name.clone(),
                    parent_name: l.parent.clone().unwrap_or_default(),
                    nodes: hostlist::compress(&l.nodes),
                    mode: u32::from(r.mode.number()),
                    disable_hres: r.disabled,
                    disable_layer: l.disabled,
                    conf_total: l.count,
                    base_usage: l.base_usage,
                    base: l.base.iter().map(|(n, v)| format!("{n}:{v}")).collect::<Vec<_>>().join(","),
                    holders,
                    ..plugin_fields(&plugins, &marks, &r.name, l)
                });
            }
        }
        out
    }
}

/// What `show` says of a layer's plugin: its script, its last maintenance,
/// and the mark it left on the layer while the layer stays disabled.
fn plugin_fields(
    plugins: &plugins::Plugins,
    marks: &std::collections::BTreeMap<String, plugins::Mark>,
    name: &str,
    l: &crate::model::HresLayer,
) -> pb::License {
    let Some((p, last)) = plugins.describe(name) else { return pb::License::default() };
    let last = last.unwrap_or_default();
    let mark = marks.get(&audit_name(name, &l.name)).filter(|_| l.disabled).cloned().unwrap_or_default();
    pb::License {
        plugin: p.kind.clone(),
        plugin_path: p.path().unwrap_or_default().to_string(),
        maintained_ms: last.at_ms,
        maintenance_rc: last.rc,
        maintenance_message: last.message,
        plugin_mark: mark.state.to_string(),
        plugin_mark_ms: mark.at_ms,
        plugin_mark_message: mark.message,
        ..pb::License::default()
    }
}

/// Puts saved nodes back on a layer (`resource/layer`) if it still exists and takes nodes.
fn restore(hres: &mut [HresResource], key: &str, nodes: Vec<String>) -> std::result::Result<(), String> {
    let (res, layer) = key.split_once('/').ok_or("malformed key")?;
    let r = hres.iter_mut().find(|r| r.name == res).ok_or("the resource no longer exists")?;
    let i = r.layer(layer).ok_or("the layer no longer exists")?;
    if !r.is_leaf(i) {
        return Err("the layer is no longer a leaf".into());
    }
    let mut next = r.clone();
    next.layers[i].nodes = nodes;
    if next.mode == HresMode::Three {
        let mine = &next.layers[i].nodes;
        let clash = (0..next.layers.len())
            .filter(|&j| j != i && next.is_leaf(j))
            .any(|j| next.layers[j].nodes.iter().any(|n| mine.contains(n)));
        if clash {
            return Err("a saved node is now under another leaf".into());
        }
    }
    next.derive();
    *r = next;
    Ok(())
}
