//! The one gate every handler goes through: classify the RPC, check the
//! caller's role, run the core, and write the txn row for what happened.
//! Accounting writes commit their row inside their own transaction; every
//! other success, and every denied or failed attempt, is written here after
//! the fact: one row per request, however many records it names.

use super::limits::{self, MAX_ENV, MAX_IDS, cap, cap_pairs};
use super::rpc::{self, Class};
use crate::accounting::{AcctService, Caller};
use crate::audit::claim::row;
use crate::audit::{Hub, claim};
use crate::auth::{Authenticator, Role};
use crate::error::Error;
use crate::store::Action;
use serde_json::{Value, json};
use spur_proto::v1 as pb;
use std::future::Future;
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// What a request says about itself for its audit row.
pub trait Targeted {
    /// The Name of the request's row: the record acted on (`name=` for
    /// accounting), or for a request naming many, its own expression (the
    /// hostlist as given, the first ids). Cheap: it runs for refused callers too.
    fn target(&self) -> String {
        String::new()
    }
    /// Refuses a request over a limit ([`limits`]), before any per-item work.
    fn bounds(&self) -> Result<(), Error> {
        Ok(())
    }
    /// The requested parameters, without secrets, for Info.
    fn params(&self) -> Value {
        json!({})
    }
    /// The verb a failed attempt is recorded under.
    fn intent(&self) -> Action {
        Action::Update
    }
    /// Dry runs change nothing and are not recorded.
    fn dry_run(&self) -> bool {
        false
    }
}

fn pairs_json(kvs: &[pb::KeyValue]) -> serde_json::Map<String, Value> {
    kvs.iter().map(|kv| (kv.key.clone(), Value::String(kv.value.clone()))).collect()
}

fn name_in(kvs: &[pb::KeyValue]) -> Option<String> {
    kvs.iter()
        .find(|kv| matches!(kv.key.to_ascii_lowercase().as_str(), "name" | "qos" | "account" | "user"))
        .map(|kv| kv.value.trim().to_ascii_lowercase())
}

impl Targeted for pb::SetRequest {
    fn target(&self) -> String {
        let by_name = |kvs: &[pb::KeyValue]| {
            kvs.iter()
                .find(|kv| kv.key.eq_ignore_ascii_case("name"))
                .map(|kv| kv.value.trim().to_ascii_lowercase())
        };
        by_name(&self.r#where)
            .or_else(|| by_name(&self.set))
            .or_else(|| name_in(&self.set))
            .unwrap_or_default()
    }
    fn params(&self) -> Value {
        let mut m = pairs_json(&self.r#where);
        m.extend(pairs_json(&self.set));
        Value::Object(m)
    }
    fn intent(&self) -> Action {
        if self.mode == pb::SetMode::Add as i32 { Action::Create } else { Action::Update }
    }
    fn dry_run(&self) -> bool {
        self.dry_run
    }
    fn bounds(&self) -> Result<(), Error> {
        cap_pairs("where", &self.r#where)?;
        cap_pairs("set", &self.set)
    }
}

impl Targeted for pb::DeleteRequest {
    fn target(&self) -> String {
        name_in(&self.r#where).unwrap_or_default()
    }
    fn params(&self) -> Value {
        Value::Object(pairs_json(&self.r#where))
    }
    fn intent(&self) -> Action {
        Action::Delete
    }
    fn dry_run(&self) -> bool {
        self.dry_run
    }
    fn bounds(&self) -> Result<(), Error> {
        cap_pairs("where", &self.r#where)
    }
}

impl Targeted for pb::CreateTokenRequest {
    fn params(&self) -> Value {
        json!({ "ttl_secs": self.ttl_secs, "nodes": self.nodes, "once": self.once })
    }
    fn intent(&self) -> Action {
        Action::Create
    }
}

impl Targeted for pb::RevokeTokenRequest {
    fn target(&self) -> String {
        self.id.clone()
    }
    fn params(&self) -> Value {
        json!({ "id": self.id })
    }
}

impl Targeted for pb::UpdateNodesRequest {
    /// The hostlist as given, never expanded here.
    fn target(&self) -> String {
        self.nodes.clone()
    }
    fn params(&self) -> Value {
        json!({ "nodename": self.nodes, "state": self.state, "reason": self.reason })
    }
}

impl Targeted for pb::UpdatePartitionRequest {
    fn target(&self) -> String {
        self.name.clone()
    }
    fn params(&self) -> Value {
        json!({
            "preempt_exempt_time": self.preempt_exempt_time_secs,
            "clear_preempt_exempt_time": self.clear_preempt_exempt_time,
        })
    }
}

impl Targeted for pb::ReconfigureRequest {}
impl Targeted for pb::RegisterRequest {}
impl Targeted for pb::HeartbeatRequest {}
impl Targeted for pb::CommandsRequest {}
impl Targeted for pb::JobReport {}
impl Targeted for pb::SubmitRequest {
    /// The job's shape, never its script or environment.
    fn params(&self) -> Value {
        let s = self.spec.clone().unwrap_or_default();
        json!({
            "name": s.name, "account": s.account, "partition": s.partition, "qos": s.qos,
            "nodes": s.num_nodes, "ntasks": s.ntasks, "cpus_per_task": s.cpus_per_task,
            "mem_mb": s.mem_mb, "gpus": s.gpus_per_node, "time_limit": s.time_limit_minutes,
            "priority": s.priority, "hold": s.hold,
        })
    }
    fn intent(&self) -> Action {
        Action::Create
    }
    fn bounds(&self) -> Result<(), Error> {
        let Some(s) = &self.spec else { return Ok(()) };
        cap("env", s.env.len(), MAX_ENV)?;
        limits::cap_len("name", &s.name, limits::MAX_JOB_NAME)?;
        limits::cap_len("comment", &s.comment, limits::MAX_COMMENT)?;
        for (field, path) in
            [("stdout_path", &s.stdout_path), ("stderr_path", &s.stderr_path), ("workdir", &s.workdir)]
        {
            limits::cap_len(field, path, limits::MAX_PATH)?;
        }
        Ok(())
    }
}

impl Targeted for pb::CancelRequest {
    /// The first ids, or the filter when no ids are given.
    fn target(&self) -> String {
        match (self.ids.is_empty(), self.tasks.first()) {
            (true, Some(t)) if self.tasks.len() == 1 => t.chars().take(64).collect(),
            (true, Some(t)) => {
                format!("{},…(+{} more)", t.chars().take(64).collect::<String>(), self.tasks.len() - 1)
            }
            (true, None) => {
                self.filter.iter().map(|kv| format!("{}={}", kv.key, kv.value)).collect::<Vec<_>>().join(" ")
            }
            (false, _) => limits::ids_summary(&self.ids),
        }
    }
    fn params(&self) -> Value {
        let tasks: Vec<String> = self.tasks.iter().take(16).map(|t| t.chars().take(64).collect()).collect();
        json!({ "ids": limits::ids_json(&self.ids), "tasks": tasks, "signal": self.signal, "filter": pairs_json(&self.filter) })
    }
    fn bounds(&self) -> Result<(), Error> {
        cap("ids", self.ids.len(), MAX_IDS)?;
        cap("tasks", self.tasks.len(), limits::MAX_TASK_REFS)?;
        if let Some(t) = self.tasks.iter().find(|t| t.len() > 4096) {
            return Err(Error::invalid(
                "tasks",
                format!("'{}…' is longer than 4096 bytes", t.chars().take(32).collect::<String>()),
            ));
        }
        cap_pairs("filter", &self.filter)
    }
}

impl Targeted for pb::UpdateJobRequest {
    fn target(&self) -> String {
        self.id.to_string()
    }
    fn params(&self) -> Value {
        Value::Object(pairs_json(&self.set))
    }
    fn bounds(&self) -> Result<(), Error> {
        cap_pairs("set", &self.set)?;
        // Every value is a short key's (a name, a time, a hostlist); Comment= is the longest.
        match self.set.iter().find(|kv| kv.value.len() > limits::MAX_COMMENT) {
            Some(kv) => limits::cap_len(&kv.key, &kv.value, limits::MAX_COMMENT),
            None => Ok(()),
        }
    }
}

impl Targeted for pb::UpdateHresRequest {
    /// `resource/layer`, or the resource alone for DisableHRES.
    fn target(&self) -> String {
        match self.layer_name.as_str() {
            "" => self.hres_name.clone(),
            l => format!("{}/{l}", self.hres_name),
        }
    }
    fn params(&self) -> Value {
        json!({
            "hresname": self.hres_name, "layername": self.layer_name, "nodes": self.nodes,
            "count": self.count, "base": self.base, "disablelayer": self.disable_layer,
            "disablehres": self.disable_hres,
        })
    }
}
/// A reservation request's words: at most one per key Spur knows (and a few
/// repeated), each no longer than a value may be.
fn resv_bounds(words: &[String], name: &str) -> Result<(), Error> {
    super::limits::cap("words", words.len(), 32)?;
    super::limits::cap_len("name", name, 128)?;
    words.iter().try_for_each(|w| super::limits::cap_len("word", w, spur_vocab::resv::MAX_VALUE_LEN + 32))
}

impl Targeted for pb::CreateReservationRequest {
    fn target(&self) -> String {
        self.name.clone()
    }
    fn bounds(&self) -> Result<(), Error> {
        resv_bounds(&self.words, &self.name)
    }
    fn params(&self) -> Value {
        json!({ "words": self.words })
    }
    fn intent(&self) -> Action {
        Action::Create
    }
}
impl Targeted for pb::UpdateReservationRequest {
    fn target(&self) -> String {
        self.name.clone()
    }
    fn bounds(&self) -> Result<(), Error> {
        resv_bounds(&self.words, &self.name)
    }
    fn params(&self) -> Value {
        json!({ "words": self.words })
    }
}
impl Targeted for pb::DeleteReservationRequest {
    fn target(&self) -> String {
        self.name.clone()
    }
    fn intent(&self) -> Action {
        Action::Delete
    }
}
impl Targeted for pb::ListReservationsRequest {}
impl Targeted for pb::ShowLicensesRequest {}
impl Targeted for pb::ListProvisionersRequest {}
impl Targeted for pb::ListRequest {
    fn bounds(&self) -> Result<(), Error> {
        cap_pairs("filter", &self.filter)
    }
}
impl Targeted for pb::ListTxnRequest {
    fn bounds(&self) -> Result<(), Error> {
        cap_pairs("filter", &self.filter)
    }
}
impl Targeted for pb::ExplainRequest {}
impl Targeted for pb::StepStatsRequest {}
impl Targeted for pb::BcastReport {}
impl Targeted for pb::AttachRequest {}
impl Targeted for pb::TailOutputRequest {
    fn target(&self) -> String {
        self.job_id.to_string()
    }
}
impl Targeted for pb::OutputReport {
    fn bounds(&self) -> Result<(), Error> {
        match self.data.len() {
            n if n > 64 << 10 => {
                Err(Error::invalid("data", format!("{n} bytes in one piece; at most 65536")))
            }
            _ => Ok(()),
        }
    }
}
impl Targeted for pb::UseReport {
    fn bounds(&self) -> Result<(), Error> {
        cap("tasks", self.tasks.len(), MAX_IDS)
    }
}
impl Targeted for pb::UsageRequest {
    fn bounds(&self) -> Result<(), Error> {
        if self.start_ms < 0 || self.end_ms <= self.start_ms {
            return Err(Error::InvalidArgument(format!(
                "start/end: the window must start at or after 1970 and end after it starts \
                 (start_ms={}, end_ms={})",
                self.start_ms, self.end_ms
            )));
        }
        Ok(())
    }
}
impl Targeted for pb::WatchRequest {}
impl Targeted for pb::ShowConfigRequest {}
impl Targeted for pb::DiagRequest {}
impl Targeted for pb::ResetDiagRequest {}

impl Targeted for pb::TakeoverRequest {
    fn target(&self) -> String {
        self.to.clone()
    }
    fn bounds(&self) -> Result<(), Error> {
        crate::server::limits::cap_len("to", &self.to, 256)
    }
}
impl Targeted for pb::TailTxnRequest {
    fn bounds(&self) -> Result<(), Error> {
        cap_pairs("filter", &self.filter)
    }
}
impl Targeted for pb::WhoAmIRequest {}
impl Targeted for pb::ListTokensRequest {}

/// The caller and its role, handed to the core.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub caller: Caller,
    pub role: Role,
}

/// A success the core did not audit itself (after-the-fact entities). A
/// handler returns at most one, so a request writes one row: a change of many
/// records is named by the request's own expression, with the records in Info.
#[derive(Debug, Clone)]
pub struct Note {
    pub action: Action,
    pub name: String,
    pub info: Value,
}

pub struct Gate {
    pub auth: Arc<Authenticator>,
    pub acct: Arc<AcctService>,
    pub hub: Arc<Hub>,
    /// The long-lived streams each user holds (Watch, TailTxn).
    pub streams: super::streams::Streams,
    /// Calls and time per RPC, for sdiag.
    pub rpc_stats: super::rpc_stats::RpcStats,
}

impl Gate {
    pub fn ctx<T>(&self, req: &Request<T>) -> Ctx {
        let mut caller = req.extensions().get::<Caller>().cloned().unwrap_or_default();
        let role = self.auth.role(&caller, &self.acct.catalog());
        caller.role = role;
        Ctx { caller, role }
    }

    /// Runs `core` for the RPC at `path` if the caller's role allows it, and
    /// audits the outcome.
    pub async fn run<Req, Resp, F, Fut>(
        &self,
        path: &str,
        req: Request<Req>,
        core: F,
    ) -> Result<Response<Resp>, Status>
    where
        Req: Targeted,
        F: FnOnce(Ctx, Req) -> Fut,
        Fut: Future<Output = Result<(Resp, Vec<Note>), Error>>,
    {
        let began = std::time::Instant::now();
        let answer = self.run_inner(path, req, core).await;
        self.rpc_stats.note(path, u64::try_from(began.elapsed().as_micros()).unwrap_or(u64::MAX));
        answer
    }

    async fn run_inner<Req, Resp, F, Fut>(
        &self,
        path: &str,
        req: Request<Req>,
        core: F,
    ) -> Result<Response<Resp>, Status>
    where
        Req: Targeted,
        F: FnOnce(Ctx, Req) -> Fut,
        Fut: Future<Output = Result<(Resp, Vec<Note>), Error>>,
    {
        let class =
            rpc::classify(path).ok_or_else(|| Status::unimplemented(format!("unknown RPC {path}")))?;
        let ctx = self.ctx(&req);
        let msg = req.into_inner();
        let needed = class.least_role();
        let caller = ctx.caller.clone();
        // The role first: a refused request is never expanded or walked item by item.
        let refused = (ctx.role < needed).then(|| {
            // Roles are stored with the users: unread, a refusal could be false.
            if self.acct.unloaded() {
                AcctService::unloaded_error()
            } else {
                Error::PermissionDenied(format!(
                    "{} needs the {} role; '{}' has {}",
                    rpc::method_name(path),
                    needed.as_str(),
                    caller.user,
                    ctx.role.as_str()
                ))
            }
        });
        let (name, params, intent, dry_run) = (msg.target(), msg.params(), msg.intent(), msg.dry_run());
        let audited = match class {
            Class::Mutate { entity, in_txn, .. } if !dry_run => Some((entity, in_txn)),
            _ => None,
        };
        let (result, mut committed) = match refused {
            Some(e) => (Err(e), vec![]),
            None => match (msg.bounds(), audited) {
                (Err(e), _) => (Err(e), vec![]),
                // A core that knows its row has its write carry it (audit/claim.rs).
                (Ok(()), Some((entity, false))) => {
                    claim::scope(caller.clone(), entity, params.clone(), core(ctx, msg)).await
                }
                (Ok(()), _) => (core(ctx, msg).await, vec![]),
            },
        };
        match result {
            Ok((resp, notes)) => {
                if let Some((entity, false)) = audited {
                    let mut rows = Vec::new();
                    for n in notes {
                        let action = n.action.as_str();
                        match committed.iter().position(|r| r.name == n.name && r.action == action) {
                            Some(i) => self.hub.committed(committed.swap_remove(i)),
                            None => rows.push(row(
                                &caller,
                                entity,
                                &n.name,
                                n.action,
                                "success",
                                claim::info(&params, n.info),
                            )),
                        }
                    }
                    self.hub.record_all(rows).await;
                }
                Ok(Response::new(resp))
            }
            Err(e) => {
                if let Some((entity, _)) = audited {
                    let info = json!({"params": params, "error": e.to_string()});
                    let one = row(&caller, entity, &name, intent, e.outcome(), info);
                    if matches!(e, Error::Unavailable(_)) {
                        // The database is down: its row would wait out the same outage, and
                        // the caller has been told nothing changed. Best effort, as the spec says.
                        let hub = self.hub.clone();
                        tokio::spawn(async move { hub.record(one).await });
                    } else {
                        self.hub.record(one).await;
                    }
                }
                Err(e.into())
            }
        }
    }
}
