//! scontrol's license commands: `show license [NAME]` (plain licenses as
//! Slurm prints them, one entry per HRES layer in the spec's layout) and
//! `update HRESName=R [LayerName=L] Nodes= Count= Base= DisableLayer= DisableHRES=`.

use super::command::{Command, Flags};
use crate::cli::fmt::{null, record, status};
use crate::cli::kv::{self, Pair};
use crate::conn::Clients;
use crate::vocab::hostlist;
use spur_proto::v1 as pb;

/// Whether `update ARGS` is about a hierarchical resource.
pub fn names_hres(args: &[String]) -> bool {
    args.iter().any(|w| w.split_once('=').is_some_and(|(k, _)| k.eq_ignore_ascii_case("hresname")))
}

fn flag(key: &str, v: &str) -> Result<String, String> {
    match v {
        "true" | "false" => Ok(v.to_string()),
        _ => Err(format!("{key}: '{v}' is neither true nor false")),
    }
}

/// `update HRESName=R ...`, checked here so the controller reads what was validated.
pub fn parse_update(args: &[String]) -> Result<Command, String> {
    let mut r = pb::UpdateHresRequest::default();
    for Pair { key, value } in kv::pairs(args)? {
        let v = value.trim();
        match key.to_ascii_lowercase().as_str() {
            "hresname" => r.hres_name = v.to_string(),
            "layername" => r.layer_name = v.to_string(),
            "nodes" => {
                let list = v.trim_start_matches(['+', '-']);
                if !list.is_empty() {
                    hostlist::count(list).map_err(|e| format!("Nodes: {e}"))?;
                }
                r.nodes = Some(v.to_string());
            }
            "count" => {
                let c = v.parse::<i64>().ok().filter(|c| *c >= -1);
                r.count =
                    Some(c.ok_or_else(|| format!("Count: '{v}' is not -1 (infinite) or a whole number"))?);
            }
            "base" => r.base = Some(v.to_string()),
            "disablelayer" => r.disable_layer = Some(flag("DisableLayer", v)?),
            "disablehres" => r.disable_hres = Some(flag("DisableHRES", v)?),
            _ => {
                return Err(format!(
                    "update HRESName: '{key}' is not a key (use LayerName, Nodes, Count, Base, DisableLayer, DisableHRES)"
                ));
            }
        }
    }
    if r.hres_name.is_empty() {
        return Err("HRESName: needs a resource name".into());
    }
    Ok(Command::UpdateHres(Box::new(r)))
}

/// One `show license` entry.
pub fn license_record(l: &pb::License, oneliner: bool) -> String {
    let num = |n: u64| if l.infinite { "UNLIMITED".to_string() } else { n.to_string() };
    let mut lines = vec![
        format!("LicenseName={}", l.name),
        format!(
            "Total={} Used={} Free={} Reserved={} Remote={}",
            num(l.total),
            l.used,
            num(l.free),
            l.reserved,
            if l.remote { "yes" } else { "no" }
        ),
    ];
    if !l.layer_name.is_empty() {
        lines.push(format!(
            "LayerName={} ParentName={} Nodes={} Mode={} DisableHRES={} DisableLayer={} ConfTotal={} BaseUsage={}",
            l.layer_name,
            null(&l.parent_name),
            null(&l.nodes),
            l.mode,
            l.disable_hres,
            l.disable_layer,
            l.conf_total,
            l.base_usage
        ));
        lines.push(format!("Base={}", null(&l.base)));
    }
    if !l.plugin.is_empty() {
        let when = crate::vocab::txn::time_or(l.maintained_ms, "None");
        lines.push(format!(
            "Plugin={} PluginPath={} LastMaintenance={when} MaintenanceRC={} MaintenanceMessage={}",
            l.plugin,
            l.plugin_path,
            null(&l.maintenance_rc),
            null(&l.maintenance_message)
        ));
    }
    if !l.plugin_mark.is_empty() {
        let when = crate::vocab::txn::time_or(l.plugin_mark_ms, "None");
        lines.push(format!(
            "PluginMark={} PluginMarkTime={when} PluginMarkMessage={}",
            l.plugin_mark,
            null(&l.plugin_mark_message)
        ));
    }
    record(&lines, oneliner)
}

pub fn license_json(l: &pb::License) -> serde_json::Value {
    let holders: Vec<serde_json::Value> =
        l.holders.iter().map(|h| serde_json::json!({ "job_id": h.job_id, "amount": h.amount })).collect();
    let layer = (!l.layer_name.is_empty()).then(|| {
        serde_json::json!({
            "name": l.layer_name, "parent": l.parent_name, "nodes": l.nodes, "mode": l.mode,
            "disable_hres": l.disable_hres, "disable_layer": l.disable_layer,
            "conf_total": l.conf_total, "base_usage": l.base_usage, "base": l.base,
        })
    });
    let plugin = (!l.plugin.is_empty()).then(|| {
        serde_json::json!({
            "type": l.plugin, "path": l.plugin_path, "maintained_ms": l.maintained_ms,
            "maintenance_rc": l.maintenance_rc, "maintenance_message": l.maintenance_message,
            "mark": l.plugin_mark, "mark_ms": l.plugin_mark_ms, "mark_message": l.plugin_mark_message,
        })
    });
    serde_json::json!({
        "name": l.name, "total": (!l.infinite).then_some(l.total), "used": l.used,
        "free": (!l.infinite).then_some(l.free), "reserved": l.reserved, "remote": l.remote,
        "layer": layer, "holders": holders, "plugin": plugin,
    })
}

pub fn show_licenses(all: &[pb::License], name: Option<&str>, f: &Flags) -> Result<String, String> {
    if let (Some(n), true) = (name, all.is_empty()) {
        return Err(format!("license '{n}' not found"));
    }
    if f.json {
        let v: Vec<serde_json::Value> = all.iter().map(license_json).collect();
        return Ok(
            serde_json::to_string_pretty(&serde_json::json!({ "licenses": v })).unwrap_or_default() + "\n"
        );
    }
    if all.is_empty() {
        return Ok("No licenses configured\n".into());
    }
    Ok(all.iter().map(|l| license_record(l, f.oneliner)).collect())
}

/// `show license [NAME]` against the controller.
pub async fn show(name: Option<&str>, f: &Flags, c: &mut Clients) -> Result<String, String> {
    let req = pb::ShowLicensesRequest { name: name.unwrap_or_default().to_string() };
    let all = c.licenses.show_licenses(req).await.map_err(status)?.into_inner().licenses;
    show_licenses(&all, name, f)
}

/// `update HRESName=...` against the controller (Administrator).
pub async fn update(r: &pb::UpdateHresRequest, c: &mut Clients) -> Result<String, String> {
    c.licenses.update_hres(r.clone()).await.map_err(status)?;
    Ok(String::new())
}
