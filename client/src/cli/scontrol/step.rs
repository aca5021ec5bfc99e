//! `scontrol show step [ID[.STEP]]`: the running steps of the jobs the
//! controller has (all, one job's, or one), in Slurm's layout
//! ([`crate::cli::stepfmt::show`]); `--json` gives the steps as the listing has them.

use super::command::{Command, Flags};
use crate::cli::fmt::status;
use crate::conn::Clients;
use crate::vocab::array::{JobRef, StepRef};
use spur_proto::v1 as pb;

/// `show step`, `show step 12`, `show step 12.0`.
pub fn parse(arg: Option<&str>) -> Result<Command, String> {
    let Some(raw) = arg else { return Ok(Command::ShowSteps(None)) };
    let raw = raw.split_once('=').filter(|(k, _)| k.eq_ignore_ascii_case("stepid")).map_or(raw, |(_, v)| v);
    match JobRef::parse(raw).map_err(|e| format!("show step: {e}"))? {
        JobRef::Job(id) => Ok(Command::ShowSteps(Some((id, None)))),
        JobRef::Step(id, StepRef::Id(n)) => Ok(Command::ShowSteps(Some((id, Some(n))))),
        _ => Err(format!("show step: '{raw}' names no srun step (JOB or JOB.STEP)")),
    }
}

pub async fn execute(want: Option<(u64, Option<u32>)>, f: &Flags, c: &mut Clients) -> Result<String, String> {
    let mut filter = vec![pb::KeyValue { key: "state".into(), value: "RUNNING,SUSPENDED".into() }];
    if let Some((id, _)) = want {
        filter.push(pb::KeyValue { key: "id".into(), value: id.to_string() });
    }
    let jobs = c.jobs.list_jobs(pb::ListRequest { filter }).await.map_err(status)?.into_inner().jobs;
    if f.json {
        let steps: Vec<serde_json::Value> = (jobs.iter())
            .flat_map(|j| {
                j.steps
                    .iter()
                    .filter(|s| s.job_state() == crate::vocab::JobState::Running)
                    .map(move |s| (j, s))
            })
            .filter(|(j, s)| want.is_none_or(|(id, n)| id == j.id && n.is_none_or(|n| n == s.id)))
            .map(|(j, s)| {
                serde_json::json!({
                    "step_id": crate::cli::stepfmt::step_id(j, s), "name": s.name, "state": s.job_state().as_str(),
                    "user": j.user, "partition": j.partition, "nodes": s.nodes, "tasks": s.ntasks,
                    "cpus": s.cpus, "start_time": s.start_ms / 1000,
                })
            })
            .collect();
        return Ok(
            serde_json::to_string_pretty(&serde_json::json!({ "steps": steps })).unwrap_or_default() + "\n"
        );
    }
    crate::cli::stepfmt::show(&jobs, want, chrono::Utc::now().timestamp_millis(), f.oneliner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_named_by_job_or_job_dot_step() {
        assert_eq!(parse(None).unwrap(), Command::ShowSteps(None));
        assert_eq!(parse(Some("12")).unwrap(), Command::ShowSteps(Some((12, None))));
        assert_eq!(parse(Some("12.3")).unwrap(), Command::ShowSteps(Some((12, Some(3)))));
        assert_eq!(parse(Some("StepId=12.3")).unwrap(), Command::ShowSteps(Some((12, Some(3)))));
        assert!(parse(Some("12.batch")).unwrap_err().contains("names no srun step"));
        assert!(parse(Some("x")).unwrap_err().starts_with("show step: "));
    }
}
