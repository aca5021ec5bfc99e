//! The Jobs service: sbatch, squeue, scancel, scontrol update/hold/release/requeue.

use super::convert;
use super::gate::{Gate, Note};
use crate::error::Error;
use crate::jobs::JobService;
use crate::store::Action;
use serde_json::json;
use spur_proto::v1 as pb;
use spur_proto::v1::jobs_server::Jobs;
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub struct JobsApi {
    gate: Arc<Gate>,
    jobs: Arc<JobService>,
}

impl JobsApi {
    pub fn new(gate: Arc<Gate>, jobs: Arc<JobService>) -> Self {
        JobsApi { gate, jobs }
    }
}

/// `key=a,b` list filters for ListJobs and Cancel.
fn matches(filter: &[pb::KeyValue], j: &crate::jobs::record::JobRecord) -> Result<bool, Error> {
    for kv in filter {
        let wants: Vec<String> =
            kv.value.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
        let hit = |v: &str| wants.iter().any(|w| w.eq_ignore_ascii_case(v));
        let ok = match kv.key.to_ascii_lowercase().as_str() {
            "id" | "jobs" => hit(&j.id.to_string()),
            "user" => hit(&j.user),
            "account" => hit(j.account.as_deref().unwrap_or("")),
            "partition" => hit(&j.partition),
            "qos" => hit(j.qos.as_deref().unwrap_or("")),
            "state" => hit(&j.state),
            "name" => hit(&j.name),
            _ => {
                return Err(Error::invalid(
                    &kv.key,
                    "unknown filter (use id, user, account, partition, qos, state, name)",
                ));
            }
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

#[tonic::async_trait]
impl Jobs for JobsApi {
    async fn submit(&self, req: Request<pb::SubmitRequest>) -> Result<Response<pb::SubmitResponse>, Status> {
        self.gate
            .run("/spur.v1.Jobs/Submit", req, |ctx, r| async move {
                let spec = r.spec.ok_or_else(|| Error::invalid("spec", "missing"))?;
                let id = self.jobs.submit(ctx.role, &ctx.caller, spec).await?;
                let note = Note { action: Action::Create, name: id.to_string(), info: json!({}) };
                Ok((pb::SubmitResponse { job_id: id }, vec![note]))
            })
            .await
    }

    async fn list_jobs(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListJobsResponse>, Status> {
        self.gate
            .run("/spur.v1.Jobs/ListJobs", req, |_, r| async move {
                let mut jobs = vec![];
                for j in self.jobs.jobs() {
                    if matches(&r.filter, &j)? {
                        jobs.push(convert::job(&j));
                    }
                }
                Ok((pb::ListJobsResponse { jobs }, vec![]))
            })
            .await
    }

    async fn cancel(&self, req: Request<pb::CancelRequest>) -> Result<Response<pb::CancelResponse>, Status> {
        self.gate
            .run("/spur.v1.Jobs/Cancel", req, |ctx, r| async move {
                let mut ids = r.ids.clone();
                if ids.is_empty() {
                    if r.filter.is_empty() {
                        return Err(Error::invalid("ids", "name at least one job, or a filter"));
                    }
                    for j in self.jobs.jobs().iter().filter(|j| j.is_active()) {
                        if matches(&r.filter, j)? {
                            ids.push(j.id);
                        }
                    }
                }
                let cancelled = self.jobs.cancel(ctx.role, &ctx.caller, &ids, r.signal).await?;
                let notes = cancelled
                    .iter()
                    .map(|id| Note {
                        action: Action::Update,
                        name: id.to_string(),
                        info: json!({"cancelled": true}),
                    })
                    .collect();
                Ok((pb::CancelResponse { cancelled }, notes))
            })
            .await
    }

    async fn explain(&self, req: Request<pb::ExplainRequest>) -> Result<Response<pb::Explanation>, Status> {
        self.gate
            .run("/spur.v1.Jobs/Explain", req, |_, r| async move {
                let out = match r.candidate_id {
                    Some(c) => {
                        let v = self.jobs.explain_pair(r.job_id, c)?;
                        pb::Explanation {
                            job_id: r.job_id,
                            pair: Some(convert::pair_explanation(&v)),
                            pass_time_ms: self.jobs.last_pass_ms(),
                            ..Default::default()
                        }
                    }
                    None => convert::explanation(&self.jobs.explain_job(r.job_id)?, self.jobs.last_pass_ms()),
                };
                Ok((out, vec![]))
            })
            .await
    }

    async fn list_shares(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListSharesResponse>, Status> {
        self.gate
            .run("/spur.v1.Jobs/ListShares", req, |_, r| async move {
                let want = |key: &str| {
                    r.filter.iter().find(|kv| kv.key.eq_ignore_ascii_case(key)).map(|kv| kv.value.clone())
                };
                let (account, user) = (want("account"), want("user"));
                let shares = self.jobs.shares();
                let rows = shares
                    .rows
                    .iter()
                    .filter(|(a, _)| account.as_ref().is_none_or(|w| w == *a))
                    .flat_map(|(a, users)| {
                        users.iter().filter(|(u, _)| user.as_ref().is_none_or(|w| w == *u)).map(
                            move |(u, row)| pb::ShareRow {
                                account: a.clone(),
                                user: u.clone(),
                                norm_shares: row.shares,
                                raw_usage: row.raw_usage,
                                norm_usage: row.norm_usage,
                                fair_share: row.factor,
                            },
                        )
                    })
                    .collect();
                Ok((pb::ListSharesResponse { rows }, vec![]))
            })
            .await
    }

    async fn update_job(
        &self,
        req: Request<pb::UpdateJobRequest>,
    ) -> Result<Response<pb::UpdateJobResponse>, Status> {
        self.gate
            .run("/spur.v1.Jobs/UpdateJob", req, |ctx, r| async move {
                let set: Vec<(String, String)> =
                    r.set.iter().map(|kv| (kv.key.clone(), kv.value.clone())).collect();
                self.jobs.update(ctx.role, &ctx.caller, r.id, &set).await?;
                Ok((
                    pb::UpdateJobResponse {},
                    vec![Note { action: Action::Update, name: r.id.to_string(), info: json!({}) }],
                ))
            })
            .await
    }
}
