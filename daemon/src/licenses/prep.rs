//! What a starting job's plugins receive, fixed at its start: `job` (who,
//! where, until when) and one `prep` per charged resource with a plugin, in
//! resources.yaml order. Kept on the job's record (`hres_lua::HresRun`) so revoke,
//! the controller epilog and the nodes see the same values.

use super::plugins::Plugins;
use crate::hres_lua::{JobInfo, Prep, PrepLayer};
use crate::model::HresResource;
use spur_vocab::hostlist;
use spur_vocab::licenses::{LicenseAlloc, parse_request};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// One year, the expected run of a job without a time limit.
const YEAR_S: i64 = 365 * 24 * 3600;

/// Who a job runs as, from its record.
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    pub id: u64,
    pub user: &'a str,
    pub account: Option<&'a str>,
    pub partition: &'a str,
    /// The time limit in minutes.
    pub time_limit: Option<u64>,
}

/// uid and gid of a user name, looked up once per name (nobody's when unknown).
fn ids(user: &str) -> (u32, u32) {
    static CACHE: OnceLock<Mutex<HashMap<String, (u32, u32)>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(user) {
        return *v;
    }
    let found = match nix::unistd::User::from_name(user) {
        Ok(Some(u)) => (u.uid.as_raw(), u.gid.as_raw()),
        _ => (65534, 65534),
    };
    cache.lock().unwrap_or_else(|p| p.into_inner()).insert(user.to_string(), found);
    found
}

/// `job` for a run starting at `start_ms` on `nodes`.
pub fn job_info(w: Who<'_>, nodes: &[String], start_ms: i64) -> JobInfo {
    let (user_id, group_id) = ids(w.user);
    let start_s = start_ms / 1000;
    let limit_s =
        w.time_limit.map_or(YEAR_S, |m| i64::try_from(m).unwrap_or(i64::MAX / 120).saturating_mul(60));
    JobInfo {
        job_id: w.id,
        sluid: crate::jobs::record::run_id(w.id, start_ms),
        user_id,
        user_name: Some(w.user.to_string()),
        group_id,
        account: w.account.map(str::to_string),
        partition: w.partition.to_string(),
        nodes: hostlist::compress(nodes),
        end_time: start_s.saturating_add(limit_s),
    }
}

/// The preps of a job charged `alloc` on `nodes`, for the resources whose
/// plugin is loaded, in resources.yaml order; empty when none has one.
pub fn preps(
    plugins: &Plugins,
    hres: &[HresResource],
    request: &str,
    alloc: &[LicenseAlloc],
    nodes: &[String],
) -> Vec<Prep> {
    let mut out = vec![];
    let asks = parse_request(request).unwrap_or_default();
    for r in hres.iter().filter(|r| plugins.has(&r.name)) {
        let Some(a) = alloc.iter().find(|a| a.name == r.name) else { continue };
        let Some(plugin) = plugins.plugin(&r.name) else { continue };
        let layers = (a.layers.iter())
            .map(|(name, count)| {
                let under: Vec<&String> = match r.layer(name) {
                    Some(i) => nodes.iter().filter(|n| r.layers[i].nodes.binary_search(n).is_ok()).collect(),
                    None => vec![],
                };
                PrepLayer { name: name.clone(), count: *count, nodes: hostlist::compress(&under) }
            })
            .collect();
        out.push(Prep {
            name: r.name.clone(),
            config: plugin.config.clone(),
            plugin_args: asks.iter().find(|q| q.name == r.name).map(|q| q.args.clone()).unwrap_or_default(),
            payload: None,
            layers,
        });
    }
    out
}
