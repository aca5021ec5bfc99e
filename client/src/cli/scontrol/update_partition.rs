//! `scontrol update PartitionName=P PreemptExemptTime=S | ClearPreemptExemptTime=yes`:
//! the one partition setting changeable at runtime; the override is lost on
//! reconfigure or restart, so spur.conf stays the record.

use super::command::Command;
use crate::cli::fmt::status;
use crate::cli::kv::Pair;
use crate::conn::Clients;
use crate::vocab::time::parse_seconds;
use spur_proto::v1 as pb;

/// The pairs of an `update` that names `PartitionName=` (and no `NodeName=`).
pub fn parse(pairs: &[Pair]) -> Result<Command, String> {
    let (mut name, mut secs, mut clear) = (String::new(), None, false);
    for Pair { key, value } in pairs {
        match key.to_ascii_lowercase().as_str() {
            "partitionname" => name = value.clone(),
            "preemptexempttime" => {
                secs = Some(parse_seconds(value).map_err(|e| format!("PreemptExemptTime: {e}"))?)
            }
            "clearpreemptexempttime" => {
                clear = match value.to_ascii_lowercase().as_str() {
                    "yes" | "true" | "1" => true,
                    "no" | "false" | "0" => false,
                    _ => return Err(format!("ClearPreemptExemptTime: '{value}' is not yes or no")),
                }
            }
            _ => {
                return Err(format!(
                    "update partition: '{key}' cannot be changed at runtime \
                     (use PreemptExemptTime= or ClearPreemptExemptTime=yes; edit spur.conf for the rest)"
                ));
            }
        }
    }
    if name.is_empty() {
        return Err("update partition: PartitionName= is empty".into());
    }
    if secs.is_some() && clear {
        return Err("update partition: give PreemptExemptTime or ClearPreemptExemptTime, not both".into());
    }
    if secs.is_none() && !clear {
        return Err(
            "update partition: nothing to change (PreemptExemptTime= or ClearPreemptExemptTime=yes)".into()
        );
    }
    Ok(Command::UpdatePartition { name, exempt_secs: secs, clear })
}

pub async fn execute(
    name: &str,
    exempt_secs: Option<u64>,
    clear: bool,
    c: &mut Clients,
) -> Result<String, String> {
    let req = pb::UpdatePartitionRequest {
        name: name.to_string(),
        preempt_exempt_time_secs: exempt_secs.map(|s| s as i64),
        clear_preempt_exempt_time: clear,
    };
    c.nodes.update_partition(req).await.map_err(status)?;
    Ok(String::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::kv;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn partition_update_takes_one_exemption_change() {
        let p = |s: &str| parse(&kv::pairs(&words(s)).unwrap());
        assert_eq!(
            p("PartitionName=gpu PreemptExemptTime=600"),
            Ok(Command::UpdatePartition { name: "gpu".into(), exempt_secs: Some(600), clear: false })
        );
        assert_eq!(
            p("PartitionName=gpu ClearPreemptExemptTime=yes"),
            Ok(Command::UpdatePartition { name: "gpu".into(), exempt_secs: None, clear: true })
        );
        assert!(p("PartitionName=gpu PreemptExemptTime=soon").unwrap_err().starts_with("PreemptExemptTime:"));
        assert!(p("PartitionName=gpu MaxTime=10").unwrap_err().contains("'MaxTime'"));
        assert!(p("PartitionName=gpu").unwrap_err().contains("nothing to change"));
        assert!(
            p("PartitionName=gpu PreemptExemptTime=1 ClearPreemptExemptTime=yes")
                .unwrap_err()
                .contains("not both")
        );
    }
}
