//! The Jobs service: sbatch, squeue, scancel, scontrol update/hold/release/requeue.

use super::gate::{Gate, Note, Targeted};
use super::path::jobs as path;
use super::{convert, filter, limits, packed};
use crate::audit::claim;
use crate::error::Error;
use crate::jobs::JobService;
use crate::jobs::record::JobRecord;
use crate::sched;
use crate::store::{Action, now_ms};
use prost::Message;
use serde_json::json;
use spur_proto::v1 as pb;
use spur_proto::v1::jobs_server::Jobs;
use std::collections::HashSet;
use std::sync::Arc;
use tonic::{Request, Response, Status};

type JobPages =
    std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<pb::ListJobsResponse, Status>> + Send>>;

pub struct JobsApi {
    gate: Arc<Gate>,
    jobs: Arc<JobService>,
}

impl JobsApi {
    pub fn new(gate: Arc<Gate>, jobs: Arc<JobService>) -> Self {
        JobsApi { gate, jobs }
    }
}

filter::keys! {
    /// The squeue/scancel/sacct filter keys.
    enum JobKey, "unknown filter (use id, user, account, partition, qos, state, name, view, history, history_after)" {
        Id = "id" | "jobs",
        View = "view",
        History = "history",
        HistoryAfter = "history_after",
        User = "user",
        Account = "account",
        Partition = "partition",
        Qos = "qos",
        State = "state",
        Name = "name",
    }
}

/// `CancelRequest.tasks`: `12_3`, `12_[1-5]`, each an array and its task indexes.
fn task_refs(raw: &[String]) -> Result<Vec<(u64, spur_vocab::array::TaskSet)>, Error> {
    use spur_vocab::array::JobRef;
    raw.iter()
        .map(|t| match JobRef::parse(t) {
            Ok(JobRef::Tasks(a, set)) => Ok((a, set)),
            Ok(_) => Err(Error::invalid("tasks", format!("'{t}' names no array task (ARRAY_TASK)"))),
            Err(e) => Err(Error::invalid("tasks", e)),
        })
        .collect()
}

/// The `key=a,b` filters of ListJobs and Cancel, parsed once per request so
/// that listing 100,000 jobs compares strings, not re-splits them per job.
#[derive(Default)]
struct Filter {
    ids: Option<Vec<u64>>,
    /// `(key, wanted values)` for the string-valued keys.
    text: Vec<(JobKey, Vec<String>)>,
    /// A `view=` was given (StreamJobs refuses the full view).
    view: bool,
    /// `view=brief`: the columns of squeue's default formats only.
    brief: bool,
    /// `view=prio`: the brief view and the priority factors (sprio).
    prio: bool,
    /// `history=yes`: also the ended jobs purged from memory, from the store (sacct).
    history: bool,
    /// `history_after=ID`: the next history page, after the job an answer's
    /// `next_history_after_id` named (0: from the store's start); memory's
    /// jobs are on the first page only.
    history_after: Option<u64>,
}

impl Filter {
    fn parse(kvs: &[pb::KeyValue]) -> Result<Filter, Error> {
        let mut f = Filter::default();
        for p in filter::parse::<JobKey>(kvs)? {
            match p.key {
                JobKey::Id => {
                    let ids = p
                        .items()
                        .iter()
                        .map(|w| w.parse::<u64>().map_err(|_| p.invalid(format!("'{w}' is not a job id"))))
                        .collect::<Result<Vec<u64>, Error>>()?;
                    f.ids.get_or_insert_with(Vec::new).extend(ids);
                }
                JobKey::View => {
                    f.view = true;
                    (f.brief, f.prio) = match p.value {
                        "brief" => (true, false),
                        "prio" => (true, true),
                        "full" | "" => (false, false),
                        v => return Err(p.invalid(format!("'{v}' is not brief, prio or full"))),
                    };
                }
                JobKey::History => {
                    f.history = match p.value.to_ascii_lowercase().as_str() {
                        "yes" | "true" | "1" => true,
                        "no" | "false" | "0" | "" => false,
                        v => return Err(p.invalid(format!("'{v}' is not yes or no"))),
                    };
                }
                JobKey::HistoryAfter => {
                    let id =
                        p.value.parse().map_err(|_| p.invalid(format!("'{}' is not a job id", p.value)))?;
                    f.history_after = Some(id);
                }
                key => f.text.push((key, p.items())),
            }
        }
        // `keep` searches them: sorted here, whoever calls it (a cancel by filter too).
        if let Some(ids) = f.ids.as_mut() {
            ids.sort_unstable();
            ids.dedup();
        }
        Ok(f)
    }

    /// The ids sorted, with the tasks of the arrays among them.
    fn with_tasks(mut self, jobs: &JobService) -> Filter {
        self.ids = self.ids.map(|ids| jobs.with_array_tasks(ids));
        self
    }

    fn keep(&self, j: &JobRecord) -> bool {
        // Sorted (see `with_tasks`); an array's id also keeps its tasks, purged ones too.
        let listed = |ids: &Vec<u64>| {
            ids.binary_search(&j.id).is_ok() || j.array_id().is_some_and(|a| ids.binary_search(&a).is_ok())
        };
        if self.ids.as_ref().is_some_and(|ids| !listed(ids)) {
            return false;
        }
        self.text.iter().all(|(key, wants)| {
            let have = match key {
                JobKey::User => j.user.as_str(),
                JobKey::Account => j.account.as_deref().unwrap_or(""),
                JobKey::Partition => j.partition.as_str(),
                JobKey::Qos => j.qos.as_deref().unwrap_or(""),
                JobKey::State => j.state.as_str(),
                _ => j.name.as_str(),
            };
            wants.iter().any(|w| w.eq_ignore_ascii_case(have))
        })
    }
}

#[tonic::async_trait]
impl Jobs for JobsApi {
    async fn submit(&self, req: Request<pb::SubmitRequest>) -> Result<Response<pb::SubmitResponse>, Status> {
        self.gate
            .run(path::SUBMIT, req, |ctx, r| async move {
                let spec = r.spec.ok_or_else(|| Error::invalid("spec", "missing"))?;
                let id = self.jobs.submit(ctx.role, &ctx.caller, spec).await?;
                let note = Note { action: Action::Create, name: id.to_string(), info: json!({}) };
                Ok((pb::SubmitResponse { job_id: id }, vec![note]))
            })
            .await
    }

    async fn test_submit(
        &self,
        req: Request<pb::SubmitRequest>,
    ) -> Result<Response<pb::TestSubmitResponse>, Status> {
        self.gate
            .run(path::TEST_SUBMIT, req, |ctx, r| async move {
                let spec = r.spec.ok_or_else(|| Error::invalid("spec", "missing"))?;
                Ok((self.jobs.test_submit(ctx.role, &ctx.caller, spec)?, vec![]))
            })
            .await
    }

    async fn list_jobs(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListJobsResponse>, Status> {
        self.gate
            .run(path::LIST_JOBS, req, |_, r| async move {
                let f = Filter::parse(&r.filter)?.with_tasks(&self.jobs);
                let convert = |j: &JobRecord| match (f.brief, f.prio) {
                    (true, true) => convert::job_prio(j),
                    (true, false) => convert::job_brief(j),
                    _ => convert::job(j),
                };
                let (mut jobs, seq) = match f.history_after {
                    Some(_) if f.history => self.jobs.select_at(Some(&[]), |_| None),
                    _ => self.jobs.select_at(f.ids.as_deref(), |j| f.keep(j).then(|| convert(j))),
                };
                let mut next_history_after_id = None;
                if f.history {
                    // Read after memory, so a job purged in between is listed from there.
                    let seen: HashSet<u64> = jobs.iter().map(|j| j.id).collect();
                    let mut bytes: usize = jobs.iter().map(|j| j.encoded_len() + 8).sum();
                    let mut taken = 0;
                    let take = |j: &JobRecord| {
                        let job = convert(j);
                        // The field's tag and length prefix as well as the job.
                        let size = job.encoded_len() + 8;
                        let full = taken == limits::HISTORY_PAGE_JOBS
                            || (taken > 0 && bytes + size > limits::HISTORY_PAGE_BYTES);
                        if !full {
                            (bytes, taken) = (bytes + size, taken + 1);
                            jobs.push(job);
                        }
                        !full
                    };
                    let after = f.history_after.unwrap_or(0);
                    next_history_after_id =
                        self.jobs.ended_page(after, |j| !seen.contains(&j.id) && f.keep(j), take).await?;
                }
                Ok((pb::ListJobsResponse { jobs, seq, next_history_after_id, ..Default::default() }, vec![]))
            })
            .await
    }

    type StreamJobsStream = JobPages;

    async fn stream_jobs(&self, req: Request<pb::ListRequest>) -> Result<Response<JobPages>, Status> {
        self.gate
            .run(path::STREAM_JOBS, req, |_, r| async move {
                let f = Filter::parse(&r.filter)?.with_tasks(&self.jobs);
                if f.view && !f.brief {
                    return Err(Error::invalid("view", "StreamJobs lists the brief and prio views only"));
                }
                let mut p =
                    packed::Packer::with_jobs(f.ids.as_ref().map_or_else(|| self.jobs.count(), Vec::len));
                let seq = self.jobs.visit(f.ids.as_deref(), |j| {
                    if f.keep(j) {
                        p.push(j, f.prio)
                    }
                });
                let pages = p
                    .pages()
                    .into_iter()
                    .map(move |packed| Ok(pb::ListJobsResponse { seq, packed, ..Default::default() }));
                Ok((Box::pin(tokio_stream::iter(pages)) as JobPages, vec![]))
            })
            .await
    }

    async fn cancel(&self, req: Request<pb::CancelRequest>) -> Result<Response<pb::CancelResponse>, Status> {
        self.gate
            .run(path::CANCEL, req, |ctx, r| async move {
                let name = r.target();
                let mut ids = r.ids.clone();
                let refs = if r.tasks.is_empty() {
                    vec![]
                } else {
                    // Bounded (parts and merge steps are capped), but up to tens of
                    // milliseconds: off the async workers, which serve everyone else.
                    let tasks = r.tasks.clone();
                    tokio::task::spawn_blocking(move || task_refs(&tasks))
                        .await
                        .map_err(|e| Error::Unavailable(format!("parsing the array tasks: {e}")))??
                };
                if ids.is_empty() && refs.is_empty() {
                    if r.filter.is_empty() {
                        return Err(Error::invalid("ids", "name at least one job, or a filter"));
                    }
                    let f = Filter::parse(&r.filter)?;
                    ids = self.jobs.select(None, |j| (j.is_active() && f.keep(j)).then_some(j.id));
                }
                // Tasks still pending in their array's record leave it cancelled (no signal reaches them).
                let (own, split) = self.jobs.cancel_tasks(ctx.role, &ctx.caller, &refs, now_ms()).await?;
                ids.extend(own);
                let ids = if r.ids.is_empty() { ids } else { self.jobs.with_array_tasks(ids) };
                let info = |ids: &[u64]| json!({ "cancelled": limits::ids_json(ids) });
                // The row commits with the last chunk of the cancel (audit/claim.rs).
                let take =
                    |all: &[u64]| claim::take(&name, Action::Update, info(&[all, &split[..]].concat()));
                let mut cancelled = if ids.is_empty() {
                    vec![]
                } else {
                    self.jobs.cancel(ctx.role, &ctx.caller, (&ids, r.signal), take).await?
                };
                cancelled.extend(&split);
                let note = Note { action: Action::Update, name, info: info(&cancelled) };
                Ok((pb::CancelResponse { cancelled }, vec![note]))
            })
            .await
    }

    async fn usage(&self, req: Request<pb::UsageRequest>) -> Result<Response<pb::UsageResponse>, Status> {
        self.gate
            .run(path::USAGE, req, |_, r| async move {
                let u = self.jobs.usage(r.start_ms, r.end_ms, crate::store::now_ms(), r.by_size).await?;
                let sizes = (u.sizes.into_iter().flatten())
                    .map(|((account, cpus), (cpu_secs, jobs))| pb::UsageSize {
                        account,
                        cpus,
                        cpu_secs,
                        jobs,
                    })
                    .collect();
                let rows = u
                    .rows
                    .into_iter()
                    .map(|((account, user), cpu_secs)| pb::UsageRow { account, user, cpu_secs })
                    .collect();
                let cluster_cpus = self.jobs.nodes.nodes().iter().map(|n| u64::from(n.cpus)).sum();
                Ok((pb::UsageResponse { rows, cluster_cpus, truncated: u.truncated, sizes }, vec![]))
            })
            .await
    }

    async fn explain(&self, req: Request<pb::ExplainRequest>) -> Result<Response<pb::Explanation>, Status> {
        self.gate
            .run(path::EXPLAIN, req, |_, r| async move {
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
            .run(path::LIST_SHARES, req, |_, r| async move {
                let want = |key: &str| {
                    r.filter.iter().find(|kv| kv.key.eq_ignore_ascii_case(key)).map(|kv| kv.value.clone())
                };
                let (account, user) = (want("account"), want("user"));
                let (shares, tree, total_usage) = self.jobs.shares();
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
                                raw_shares: 1.0,
                                sibling_shares: row.siblings,
                                parent_shares: row.parent,
                                level_fs: sched::level_fs(row.shares, row.norm_usage),
                                parent: String::new(),
                            },
                        )
                    })
                    .collect();
                let accounts = tree
                    .into_iter()
                    .filter(|a| account.as_ref().is_none_or(|w| *w == a.name))
                    .map(|a| pb::ShareRow {
                        level_fs: sched::level_fs(a.shares, a.norm_usage),
                        account: a.name,
                        user: String::new(),
                        norm_shares: a.shares,
                        raw_usage: a.raw_usage,
                        norm_usage: a.norm_usage,
                        fair_share: 0.0,
                        raw_shares: a.raw_shares,
                        sibling_shares: a.siblings,
                        parent_shares: a.parent_shares,
                        parent: a.parent,
                    })
                    .collect();
                Ok((pb::ListSharesResponse { rows, accounts, total_usage }, vec![]))
            })
            .await
    }

    async fn update_job(
        &self,
        req: Request<pb::UpdateJobRequest>,
    ) -> Result<Response<pb::UpdateJobResponse>, Status> {
        self.gate
            .run(path::UPDATE_JOB, req, |ctx, r| async move {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_parse_once_and_match_case_blind() {
        let j = JobRecord {
            id: 7,
            user: "alice".into(),
            state: spur_vocab::JobState::Pending,
            ..JobRecord::default()
        };
        let f = Filter::parse(&[
            pb::KeyValue::new("user", "bob, Alice"),
            pb::KeyValue::new("state", "pending"),
            pb::KeyValue::new("view", "brief"),
        ])
        .unwrap();
        assert!(f.brief && f.keep(&j));
        assert!(!Filter::parse(&[pb::KeyValue::new("id", "8,9")]).unwrap().keep(&j));
        assert!(Filter::parse(&[pb::KeyValue::new("jobs", "7")]).unwrap().keep(&j));
        assert!(!Filter::parse(&[pb::KeyValue::new("account", "phys")]).unwrap().keep(&j));
        assert!(Filter::parse(&[pb::KeyValue::new("id", "x")]).is_err());
        assert!(Filter::parse(&[pb::KeyValue::new("view", "wide")]).is_err());
        let refusal =
            |k, v| Filter::parse(&[pb::KeyValue::new(k, v)]).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(
            refusal("Colour", "red"),
            "Colour: unknown filter (use id, user, account, partition, qos, state, name, view, history, history_after)"
        );
        assert_eq!(refusal("JOBS", "7,x"), "JOBS: 'x' is not a job id");
        assert_eq!(refusal("VIEW", "wide"), "VIEW: 'wide' is not brief, prio or full");
        assert!(Filter::parse(&[pb::KeyValue::new("history", "yes")]).unwrap().history);
        assert!(!Filter::parse(&[pb::KeyValue::new("history", "no")]).unwrap().history);
        assert!(Filter::parse(&[pb::KeyValue::new("history", "maybe")]).is_err());
    }

    #[test]
    fn ids_in_any_order_each_keep_their_job() {
        let f = Filter::parse(&[pb::KeyValue::new("id", "9,3,9")]).unwrap();
        for id in [3, 9] {
            assert!(f.keep(&JobRecord { id, ..JobRecord::default() }), "job {id}");
        }
        assert!(!f.keep(&JobRecord { id: 5, ..JobRecord::default() }));
    }
}

#[cfg(test)]
#[path = "filter_props.rs"]
mod filter_props;

/// For `daemon/fuzz`: the jobs listing's filter, with what `filter_props` asserts of it.
#[cfg(feature = "fuzzing")]
pub(super) fn fuzz_filter(kvs: &[pb::KeyValue]) -> Result<(), Error> {
    let f = Filter::parse(kvs)?;
    if let Some(ids) = &f.ids {
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids sorted and unique");
    }
    assert!(f.text.len() <= kvs.len());
    assert!(f.prio <= f.brief && f.brief <= f.view);
    Ok(())
}
