//! `scontrol explain job ID` (why a job pends, and its preemption candidates
//! with each verdict) and `explain preempt PENDING RUNNING` (one pair's full
//! verdict), as text or `--json`. The text is the controller's sentences;
//! nothing here re-derives a verdict. The dynamic definitions' checks come
//! as facts (`Explanation.dynamic`) and are worded here.

use super::command::{Command, Flags};
use crate::cli::fmt::status;
use crate::cli::kv;
use crate::conn::Clients;
use serde_json::{Value, json};
use spur_proto::v1 as pb;

fn job_id(what: &str, raw: Option<&String>) -> Result<u64, String> {
    let raw = raw.ok_or_else(|| format!("explain {what}: needs a job id"))?;
    raw.parse().map_err(|_| format!("explain {what}: '{raw}' is not a job id"))
}

/// `explain job ID` or `explain preempt PENDING RUNNING`.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let Some((what, rest)) = args.split_first() else {
        return Err("explain: say what to explain: job ID, or preempt PENDING_ID RUNNING_ID".into());
    };
    let (cmd, used) = match kv::keyword(what, &["job", "preempt"]).map_err(|e| format!("explain: {e}"))? {
        Some("job") => (Command::ExplainJob(job_id("job", rest.first())?), 1),
        Some(_) => {
            let p = job_id("preempt", rest.first())?;
            let r = rest.get(1).ok_or("explain preempt: needs PENDING_ID RUNNING_ID")?;
            let r = r.parse().map_err(|_| format!("explain preempt: '{r}' is not a job id"))?;
            (Command::ExplainPair(p, r), 2)
        }
        None => return Err(format!("explain: unknown '{what}' (use job or preempt)")),
    };
    match rest.get(used) {
        Some(x) => Err(format!("explain {what}: unexpected argument '{x}'")),
        None => Ok(cmd),
    }
}

/// `pending`'s explanation; with `candidate`, the verdict for that one pair.
pub async fn execute(
    pending: u64,
    candidate: Option<u64>,
    f: &Flags,
    c: &mut Clients,
) -> Result<String, String> {
    let req = pb::ExplainRequest { job_id: pending, candidate_id: candidate };
    let e = c.jobs.explain(req).await.map_err(status)?.into_inner();
    Ok(match (f.json, &e.pair) {
        (true, Some(p)) => format!("{:#}\n", pair_json(p)),
        (true, None) => format!("{:#}\n", explanation_json(&e)),
        (false, Some(p)) => p.lines.iter().map(|l| format!("{l}\n")).collect(),
        (false, None) => render(&e),
    })
}

fn tick(passes: bool) -> &'static str {
    if passes { "✓" } else { "✗" }
}

/// `scontrol explain job` as text: the reason, the job-level checks, each candidate, the outcome.
pub fn render(e: &pb::Explanation) -> String {
    let mut out =
        format!("JobId={} Reason={}\n", e.job_id, if e.reason.is_empty() { "None" } else { &e.reason });
    if !e.reason_detail.is_empty() {
        out.push_str(&format!("  {}\n", e.reason_detail));
    }
    if let Some(v) = e.priority_ordered {
        out.push_str(&format!("Priority (scheduler.priority): {v:.4}\n"));
        out.push_str(&format!("  inputs: {}\n", pb::KeyValue::join(&e.priority_inputs, " ")));
    }
    out.push_str("Preemption checks:\n");
    for m in &e.checks {
        out.push_str(&format!("  {} {}\n", tick(m.passes), m.sentence));
    }
    for d in &e.dynamic {
        out.push_str(&format!("  {} {}\n", tick(!d.blocks), dynamic(d)));
    }
    let shown = e.candidates.len();
    out.push_str(&format!(
        "Candidates: {} considered{}\n",
        e.considered,
        match shown < e.considered as usize {
            true => format!(", best {shown} shown"),
            false => String::new(),
        }
    ));
    for p in &e.candidates {
        let c = p.candidate.clone().unwrap_or_default();
        let verdict = if p.eligible {
            format!("eligible ({})", p.action)
        } else {
            format!("blocked by {}", p.decided_by)
        };
        out.push_str(&format!(
            "  job {} ({}, qos {}, {}): {verdict}\n",
            c.job_id,
            c.user,
            dash(&c.qos),
            c.partition
        ));
        for l in p.lines.iter().skip(1) {
            out.push_str(&format!("    {l}\n"));
        }
    }
    out.push_str(&format!("Outcome: {}\n", e.outcome));
    if let Some(f) = &e.idle_fill {
        out.push_str(&idle_fill(f));
    }
    if !e.definitions.is_empty() {
        out.push_str("Provisioner definitions:\n");
        for d in &e.definitions {
            match d.admitted {
                true => out.push_str(&format!("  {} {}: admits the job\n", tick(true), d.id)),
                false => out.push_str(&format!("  {} {}\n", tick(false), d.why)),
            }
        }
    }
    out
}

/// A dynamic definition's check: while it can still provision for the job,
/// preemption waits for its nodes (spec: `preemptionThreshold`).
fn dynamic(d: &pb::DynamicHeadroom) -> String {
    let state = match (d.unavailable, d.blocks) {
        (true, _) => "is unavailable".to_string(),
        (false, true) => {
            format!("can still provision ({} of maxNodes {} held): preemption waits", d.held, d.max_nodes)
        }
        (false, false) => format!("holds maxNodes {}", d.max_nodes),
    };
    format!("provisioner definition {} admits the job and {state}", d.definition)
}

/// Idle-fill's part: may the job borrow, or the runs reclaim weighed for it.
fn idle_fill(f: &pb::IdleFillExplanation) -> String {
    let mut out = format!("Idle-fill: {}\n", f.sentence);
    if f.kind == "reclaim" {
        out.push_str(&format!("  Opportunistic runs: {} considered\n", f.considered));
    }
    for c in &f.candidates {
        let verdict = if c.eligible { "reclaimable" } else { "kept" };
        out.push_str(&format!(
            "  job {} (qos {}, priority {}): {verdict}\n",
            c.job_id,
            dash(&c.qos),
            c.qos_priority
        ));
        for m in &c.checks {
            out.push_str(&format!("    {} {}: {}\n", tick(m.passes), m.name, m.sentence));
        }
    }
    out
}

fn dash(s: &str) -> &str {
    if s.is_empty() { "-" } else { s }
}

fn side_json(s: &Option<pb::ExplainSide>) -> Value {
    let s = s.clone().unwrap_or_default();
    let t = s.priority.unwrap_or_default();
    json!({
        "job_id": s.job_id, "user": s.user, "qos": s.qos, "partition": s.partition,
        "priority": { "base": t.base, "fair_share": t.fair_share, "age": t.age, "tier": t.tier, "effective": t.effective },
    })
}

fn mark_json(m: &pb::Mark) -> Value {
    json!({ "name": m.name, "passes": m.passes, "sentence": m.sentence })
}

pub fn pair_json(p: &pb::PairExplanation) -> Value {
    json!({
        "pending": side_json(&p.pending),
        "candidate": side_json(&p.candidate),
        "gap": p.gap.as_ref().map(mark_json),
        "guards": p.guards.iter().map(mark_json).collect::<Vec<_>>(),
        "eligible": p.eligible,
        "decided_by": p.decided_by,
        "action": p.action,
        "lines": p.lines,
    })
}

pub fn explanation_json(e: &pb::Explanation) -> Value {
    json!({
        "job_id": e.job_id,
        "reason": e.reason,
        "reason_detail": e.reason_detail,
        "checks": e.checks.iter().map(mark_json).collect::<Vec<_>>(),
        "dynamic": e.dynamic.iter().map(|d| json!({
            "definition": d.definition, "held": d.held, "max_nodes": d.max_nodes,
            "unavailable": d.unavailable, "blocks": d.blocks,
        })).collect::<Vec<_>>(),
        "candidates": e.candidates.iter().map(pair_json).collect::<Vec<_>>(),
        "considered": e.considered,
        "outcome": e.outcome,
        "victims": e.victims,
        "priority_ordered": e.priority_ordered,
        "priority_inputs": e.priority_inputs.iter().map(|kv| (kv.key.clone(), json!(kv.value))).collect::<serde_json::Map<_, _>>(),
        "definitions": e.definitions.iter().map(|d| json!({
            "id": d.id, "admitted": d.admitted, "kind": d.kind, "why": d.why, "policy": d.policy,
            "key": d.key, "wanted": d.wanted, "had": d.had, "matcher": d.matcher,
        })).collect::<Vec<_>>(),
        "idle_fill": e.idle_fill.as_ref().map(|f| json!({
            "kind": f.kind, "eligible": f.eligible, "sentence": f.sentence, "considered": f.considered,
            "chosen": f.chosen,
            "candidates": f.candidates.iter().map(|c| json!({
                "job_id": c.job_id, "qos": c.qos, "qos_priority": c.qos_priority, "eligible": c.eligible,
                "checks": c.checks.iter().map(mark_json).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn explain_parses_and_names_bad_arguments() {
        assert_eq!(parse(&words("job 12")), Ok(Command::ExplainJob(12)));
        assert_eq!(parse(&words("preempt 12 7")), Ok(Command::ExplainPair(12, 7)));
        assert!(parse(&words("job x")).unwrap_err().contains("'x' is not a job id"));
        assert!(parse(&words("preempt 12")).unwrap_err().contains("PENDING_ID RUNNING_ID"));
        assert!(parse(&words("job 1 2")).unwrap_err().contains("unexpected argument '2'"));
        assert!(parse(&words("node 1")).unwrap_err().contains("unknown 'node'"));
    }

    #[test]
    fn a_dynamic_definition_that_can_still_provision_is_a_blocking_check() {
        let d = |held, unavailable| pb::DynamicHeadroom {
            definition: "burst".into(),
            held,
            max_nodes: 3,
            unavailable,
            blocks: held < 3 && !unavailable,
        };
        let e = pb::Explanation {
            job_id: 10,
            dynamic: vec![d(2, false), d(3, false), d(0, true)],
            ..Default::default()
        };
        let text = render(&e);
        let lines: Vec<&str> = text.lines().filter(|l| l.contains("burst")).collect();
        assert_eq!(
            lines,
            [
                "  ✗ provisioner definition burst admits the job and can still provision (2 of maxNodes 3 held): preemption waits",
                "  ✓ provisioner definition burst admits the job and holds maxNodes 3",
                "  ✓ provisioner definition burst admits the job and is unavailable",
            ]
        );
        assert_eq!(explanation_json(&e)["dynamic"][0]["blocks"], json!(true));
    }
}
