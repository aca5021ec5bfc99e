//! `scancel` (also `spur cancel`): cancel or signal jobs by id and/or by
//! filter. Silent on success, as Slurm's scancel is. Ids together with filters
//! cancel only the named jobs that also match the filters (Slurm intersects
//! them); the controller's Cancel takes ids *or* filters, so that case lists
//! first and cancels the matching ids.

use super::kv::list;

use super::cluster;
use super::fmt::status;
use super::getopt::{Mode, Opt, Spec, check, switch, value};
use super::jobfmt;
use crate::conn::{self, Clients, Identity};
use crate::vocab::JobState;
use crate::vocab::array::JobRef;
use spur_proto::v1 as pb;

pub const USAGE: &str = "\
usage: scancel [OPTIONS] [JOB_ID[,JOB_ID...] ...]
  -u, --user=USER,...        only these users' jobs      --me   only mine
  -A, --account=A,...  -p, --partition=P,...  -q, --qos=Q,...  -n, --name=NAME,...
  -t, --state=STATE          PENDING|PD, RUNNING|R or SUSPENDED|S (comma list)
  -s, --signal=SIGNAL        send SIGNAL (TERM, KILL, USR1, ... or a number) instead of cancelling
  -Q, --quiet                no error for jobs that already ended
  -M, --clusters=NAME        this controller's cluster (or all); any other name cancels nothing
Without job ids, every job of yours matching the filters is cancelled.";

static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
const OPTS: &[Opt<Args>] = &[
    value("A/account", |a, v| a.accounts.extend(list(&v))),
    value("n/name", |a, v| a.names.extend(list(&v))),
    value("p/partition", |a, v| a.partitions.extend(list(&v))),
    value("q/qos", |a, v| a.qos.extend(list(&v))),
    check("s/signal", |a, v| {
        jobfmt::parse_signal(&v).map(|s| a.signal = s).map_err(|e| format!("--signal: {e}"))
    }),
    check("t/state", states),
    value("u/user", |a, v| a.users.extend(list(&v))),
    switch("Q/quiet", |a| a.quiet = true),
    switch("h/help", |a| a.help = true),
    switch("-/me", |a| a.me = true),
    value("-/jobname", |a, v| a.names.extend(list(&v))),
    value("-/controller", |a, v| a.controller = Some(v)),
    switch("-/usage", |a| a.help = true),
    check("M/clusters", |a, v| cluster::parse_list(&v).map(|n| a.clusters.extend(n))),
];

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    pub ids: Vec<u64>,
    /// Array tasks: `12_3`, `12_[1-5]`, in the controller's form.
    pub tasks: Vec<String>,
    /// Steps: `12.0`, `12.batch`.
    pub steps: Vec<(u64, crate::vocab::array::StepRef)>,
    pub users: Vec<String>,
    pub accounts: Vec<String>,
    pub partitions: Vec<String>,
    pub qos: Vec<String>,
    pub names: Vec<String>,
    pub states: Vec<JobState>,
    /// 0: cancel.
    pub signal: i32,
    pub me: bool,
    pub quiet: bool,
    pub help: bool,
    pub controller: Option<String>,
    /// `-M`: checked against the controller's cluster before anything is cancelled.
    pub clusters: Vec<String>,
}

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    let words = FLAGS.parse(argv, &mut a)?;
    for r in crate::vocab::array::parse_refs(&words)? {
        match r {
            JobRef::Job(id) if !a.ids.contains(&id) => a.ids.push(id),
            JobRef::Job(_) => {}
            JobRef::Tasks(id, set) => a.tasks.push(format!("{id}_[{set}]")),
            JobRef::Step(id, step) => a.steps.push((id, step)),
        }
    }
    if !a.help
        && a.ids.is_empty()
        && a.tasks.is_empty()
        && a.steps.is_empty()
        && a.filters("").is_empty()
        && !a.me
    {
        return Err("No job identification provided (give job ids or a filter such as -u USER)".into());
    }
    Ok(a)
}

/// `-t`: scancel selects only jobs that can still be cancelled.
fn states(a: &mut Args, v: String) -> Result<(), String> {
    for tok in list(&v) {
        let st = JobState::parse(&tok).map_err(|e| format!("--state: {e}"))?;
        if !matches!(st, JobState::Pending | JobState::Running | JobState::Suspended) {
            return Err(format!("--state: '{tok}': scancel selects PENDING, RUNNING or SUSPENDED jobs only"));
        }
        a.states.push(st);
    }
    Ok(())
}

impl Args {
    /// The filter pairs; `me` is the local user name, used for `--me`.
    pub fn filters(&self, me: &str) -> Vec<pb::KeyValue> {
        let mut users = self.users.clone();
        if self.me && !me.is_empty() {
            users.push(me.to_string());
        }
        let pairs = [
            ("user", users),
            ("account", self.accounts.clone()),
            ("partition", self.partitions.clone()),
            ("qos", self.qos.clone()),
            ("name", self.names.clone()),
            ("state", self.states.iter().map(|s| s.to_string()).collect()),
        ];
        pairs
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| pb::KeyValue { key: k.into(), value: v.join(",") })
            .collect()
    }
}

/// How the request goes to the controller.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Ids alone, or filters alone: one Cancel.
    Cancel(pb::CancelRequest),
    /// Ids and filters: list the named jobs that match, then cancel those.
    ListThenCancel { list: pb::ListRequest, signal: i32 },
}

pub fn plan(a: &Args, me: &str) -> Plan {
    let filter = a.filters(me);
    match (a.ids.is_empty(), filter.is_empty()) {
        (false, false) => {
            let ids: Vec<String> = a.ids.iter().map(u64::to_string).collect();
            let mut f = vec![pb::KeyValue { key: "id".into(), value: ids.join(",") }];
            f.extend(filter);
            Plan::ListThenCancel { list: pb::ListRequest { filter: f }, signal: a.signal }
        }
        _ => Plan::Cancel(pb::CancelRequest {
            ids: a.ids.clone(),
            filter,
            signal: a.signal,
            tasks: a.tasks.clone(),
        }),
    }
}

/// Named jobs the controller did not cancel had already ended; Slurm reports
/// each on its own line (unless `-Q`).
pub fn leftovers(asked: &[u64], cancelled: &[u64], quiet: bool) -> Vec<String> {
    if quiet {
        return vec![];
    }
    asked
        .iter()
        .filter(|id| !cancelled.contains(id))
        .map(|id| format!("Kill job error on job id {id}: Job/step already completing or completed"))
        .collect()
}

async fn execute(a: &Args, c: &mut Clients, me: &str) -> Result<(), Vec<String>> {
    let one = |e: tonic::Status| vec![status(e)];
    let (req, asked) = match plan(a, me) {
        Plan::Cancel(req) => {
            let asked = req.ids.clone();
            (req, asked)
        }
        Plan::ListThenCancel { list, signal } => {
            let jobs = c.jobs.list_jobs(list).await.map_err(one)?.into_inner().jobs;
            let ids: Vec<u64> = jobs.iter().filter(|j| a.ids.contains(&j.id)).map(|j| j.id).collect();
            if ids.is_empty() {
                return Ok(());
            }
            (pb::CancelRequest { ids: ids.clone(), signal, ..Default::default() }, ids)
        }
    };
    let cancelled = c.jobs.cancel(req).await.map_err(one)?.into_inner().cancelled;
    let errs = leftovers(&asked, &cancelled, a.quiet);
    if errs.is_empty() { Ok(()) } else { Err(errs) }
}

/// `scancel 12.0`: steps end (or get the signal) and their jobs go on.
async fn cancel_steps(a: &Args, c: &mut Clients) -> Vec<String> {
    if a.steps.is_empty() {
        return vec![];
    }
    let steps: Vec<String> = (a.steps.iter())
        .map(|(id, s)| match s {
            crate::vocab::array::StepRef::Id(n) => format!("{id}.{n}"),
            crate::vocab::array::StepRef::Batch => format!("{id}.batch"),
            crate::vocab::array::StepRef::Extern => format!("{id}.extern"),
        })
        .collect();
    let req = pb::SignalStepsRequest { steps: steps.clone(), signal: a.signal };
    match c.steps.signal_steps(req).await {
        Ok(_) if a.quiet => {}
        Ok(r) => {
            let done = r.into_inner().steps;
            return (steps.iter().filter(|s| !done.contains(s)))
                .map(|s| {
                    format!("Kill job error on job step id {s}: Job/step already completing or completed")
                })
                .collect();
        }
        Err(e) => return vec![status(e)],
    }
    vec![]
}

async fn run(argv: &[String]) -> Result<String, Vec<String>> {
    let a = parse(argv).map_err(|e| vec![e])?;
    if a.help {
        return Ok(format!("{USAGE}\n"));
    }
    let me = Identity::local();
    let mut c = conn::connect_flag(a.controller.as_deref(), me.clone()).await.map_err(|e| vec![e])?;
    cluster::resolve(&mut c, &a.clusters).await.map_err(|e| vec![e])?;
    let mut errs = cancel_steps(&a, &mut c).await;
    let jobs = !(a.ids.is_empty() && a.tasks.is_empty() && a.filters(&me.user).is_empty() && !a.me);
    if jobs && let Err(e) = execute(&a, &mut c, &me.user).await {
        errs.extend(e);
    }
    if errs.is_empty() { Ok(String::new()) } else { Err(errs) }
}

/// Runs scancel with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    match run(argv).await {
        Ok(out) => super::output::emit("scancel", &out),
        Err(errs) => {
            for e in errs {
                super::output::complain(&format!("scancel: error: {}", e.replace('\n', " ")));
            }
            1
        }
    }
}
