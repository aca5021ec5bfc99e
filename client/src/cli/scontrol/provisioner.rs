//! `scontrol show provisioner [ID]`: provisioners.yaml's definitions with
//! their pools, as Slurm-style `ProvisionerId=...` records or `--json`.
//! A definition's condition and policy may span lines in the YAML; a
//! record keeps each key on one line, so their whitespace runs collapse.

use super::command::Flags;
use crate::cli::fmt::{json_pairs, null, record, status};
use crate::conn::Clients;
use serde_json::{Value, json};
use spur_proto::v1 as pb;

/// The text on one line: every run of whitespace (newlines too) becomes one space.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One `show provisioner` record.
pub fn provisioner_record(p: &pb::Provisioner, oneliner: bool) -> String {
    let mut lines = vec![
        format!("ProvisionerId={} Backend={} State={}", p.id, p.backend, p.state),
        format!("Nodes={} NodeCnt={} UsableNodes={}", null(&p.nodes), p.node_count, p.usable_nodes),
        format!(
            "CostPerHour={:.2} Exclusive={} TTL={} TTLBuffer={}",
            p.cost_per_hour,
            null(&p.exclusive),
            p.ttl,
            p.ttl_buffer
        ),
        format!("Annotations={}", null(&pb::KeyValue::join(&p.annotations, ","))),
        format!("Condition={}", null(&one_line(&p.condition))),
        format!("Policy={}", null(&one_line(&p.policy))),
        format!("Spec={}", null(&pb::KeyValue::join(&p.spec, ","))),
    ];
    if p.backend == "slurm" {
        lines.push(format!("NodeHours={:.2} Cost={:.2}", p.node_hours, p.cost));
        let accounts: Vec<String> =
            p.account_costs.iter().map(|a| format!("{}:{:.2}", null(&a.account), a.cost)).collect();
        lines.push(format!("AccountCost={}", null(&accounts.join(","))));
    }
    if !p.unavailable_error.is_empty() {
        let retry = spur_vocab::txn::format_time(p.retry_at_ms);
        lines.push(format!("RetryAt={retry} Error={}", one_line(&p.unavailable_error)));
    }
    // Only when a node's facts broke the condition; errors may hold commas, so `;` separates them.
    if !p.condition_errors.is_empty() {
        let errors: Vec<String> =
            p.condition_errors.iter().map(|kv| format!("{}: {}", kv.key, one_line(&kv.value))).collect();
        lines.push(format!("ConditionErrors={}", errors.join("; ")));
    }
    record(&lines, oneliner)
}

/// One definition as JSON; the condition and policy keep their line breaks.
pub fn provisioner_json(p: &pb::Provisioner) -> Value {
    json!({
        "id": p.id, "backend": p.backend, "state": p.state, "nodes": p.nodes,
        "node_count": p.node_count, "usable_nodes": p.usable_nodes,
        "annotations": json_pairs(&p.annotations), "policy": p.policy, "condition": p.condition,
        "exclusive": p.exclusive, "cost_per_hour": p.cost_per_hour, "ttl": p.ttl,
        "ttl_buffer": p.ttl_buffer, "spec": json_pairs(&p.spec),
        "condition_errors": json_pairs(&p.condition_errors),
        "node_hours": p.node_hours, "cost": p.cost,
        "account_costs": p.account_costs.iter().map(|a| json!({ "account": a.account, "cost": a.cost }))
            .collect::<Vec<_>>(),
        "unavailable_error": p.unavailable_error, "retry_at_ms": p.retry_at_ms,
        "borrowed": p.borrowed.iter().map(|b| json!({
            "name": b.name, "state": b.state, "upstream_job": b.upstream_job,
            "expires_ms": b.expires_ms, "cost": b.cost,
        })).collect::<Vec<_>>(),
    })
}

/// The output for the controller's answer; `id` must name a definition in it
/// (checked here too, so a controller that ignores the id answers the same).
pub fn show_provisioners(
    resp: &pb::ListProvisionersResponse,
    id: Option<&str>,
    f: &Flags,
) -> Result<String, String> {
    let shown: Vec<&pb::Provisioner> =
        resp.provisioners.iter().filter(|p| id.is_none_or(|id| p.id == id)).collect();
    if let (Some(id), true) = (id, shown.is_empty()) {
        return Err(format!("provisioner '{id}' not found"));
    }
    if f.json {
        let v: Vec<Value> = shown.iter().map(|p| provisioner_json(p)).collect();
        return Ok(serde_json::to_string_pretty(&json!({ "provisioners": v })).unwrap_or_default() + "\n");
    }
    if shown.is_empty() {
        return Ok("No provisioner definitions are configured\n".into());
    }
    Ok(shown.iter().map(|p| provisioner_record(p, f.oneliner)).collect())
}

/// `show provisioner [ID]` against the controller.
pub async fn execute(id: Option<&str>, f: &Flags, c: &mut Clients) -> Result<String, String> {
    let req = pb::ListProvisionersRequest { id: id.unwrap_or_default().to_string() };
    let resp = c.nodes.list_provisioners(req).await.map_err(status)?.into_inner();
    show_provisioners(&resp, id, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_collapses_every_whitespace_run() {
        assert_eq!(one_line("  a &&\n\t b  \n"), "a && b");
        assert_eq!(one_line(""), "");
    }

    #[test]
    fn empty_fields_print_null_and_errors_join_with_semicolons() {
        let p = pb::Provisioner {
            id: "aws".into(),
            backend: "aws".into(),
            state: "no driver".into(),
            condition_errors: vec![pb::KeyValue { key: "n1".into(), value: "no fact 'a,b'".into() }],
            ..Default::default()
        };
        let out = provisioner_record(&p, true);
        assert!(out.starts_with("ProvisionerId=aws Backend=aws State=no driver Nodes=(null) NodeCnt=0"));
        assert!(out.contains(" CostPerHour=0.00 Exclusive=(null) TTL=0 TTLBuffer=0 Annotations=(null) "));
        assert!(out.ends_with(" Spec=(null) ConditionErrors=n1: no fact 'a,b'\n"), "{out}");
    }

    #[test]
    fn a_slurm_definition_shows_its_node_hours_and_cost() {
        let p =
            pb::Provisioner { backend: "slurm".into(), node_hours: 2.5, cost: 0.75, ..Default::default() };
        assert!(
            provisioner_record(&p, true)
                .contains(" Spec=(null) NodeHours=2.50 Cost=0.75 AccountCost=(null)\n")
        );
        assert_eq!(provisioner_json(&p)["cost"], 0.75);
        let aws = pb::Provisioner { backend: "aws".into(), ..p };
        assert!(!provisioner_record(&aws, true).contains("NodeHours"));
        let down = pb::Provisioner { unavailable_error: "sbatch: exit 1".into(), retry_at_ms: 1, ..aws };
        assert!(provisioner_record(&down, true).contains(" Error=sbatch: exit 1\n"), "the error, last");
    }
}
