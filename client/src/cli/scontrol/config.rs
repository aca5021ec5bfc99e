//! `scontrol show config`: the Slurm keys the controller has an equivalent
//! for, in slurmctld's layout (`Key                     = value`, after a
//! `Configuration data as of` line), or JSON with `--json`.

use super::command::Flags;
use crate::cli::fmt::status;
use crate::conn::Clients;
use crate::vocab::txn::format_time;
use spur_proto::v1 as pb;

/// The text slurmctld prints, from the controller's answer.
pub fn render(r: &pb::ShowConfigResponse, f: &Flags) -> String {
    if f.json {
        let map: serde_json::Map<String, serde_json::Value> =
            r.entries.iter().map(|kv| (kv.key.clone(), kv.value.clone().into())).collect();
        return serde_json::to_string_pretty(&serde_json::json!({ "config": map })).unwrap_or_default()
            + "\n";
    }
    let mut out = format!("Configuration data as of {}\n", format_time(r.as_of_ms));
    for kv in &r.entries {
        out.push_str(&format!("{:<23} = {}\n", kv.key, kv.value));
    }
    out
}

pub async fn execute(f: &Flags, c: &mut Clients) -> Result<String, String> {
    let r = c.cluster.show_config(pb::ShowConfigRequest {}).await.map_err(status)?.into_inner();
    Ok(render(&r, f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_line_up_as_slurmctld_prints_them() {
        let r = pb::ShowConfigResponse {
            entries: vec![pb::KeyValue { key: "MinJobAge".into(), value: "300 sec".into() }],
            as_of_ms: 0,
        };
        let out = render(&r, &Flags::default());
        assert_eq!(out.lines().nth(1), Some("MinJobAge               = 300 sec"));
    }
}
