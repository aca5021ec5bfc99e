//! The executor: persist, then install, then act; and a store that refuses.

use super::*;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::jobs::JobService;
use crate::jobs::effect::Effect;
use crate::jobs::transition::Held;
use crate::store::{Mutator, Store, TxnHead, TxnQuery, TxnRow, Written};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A store that keeps job writes, and refuses them once told to. Its log
/// holds what the executor did, in order: `persist ID STATE` per record
/// written, and the recording link's `send NODE WHAT (memory: STATE)`.
#[derive(Default)]
struct Recording {
    refuse: AtomicBool,
    writes: AtomicUsize,
    docs: Mutex<Vec<(String, Option<Value>)>>,
    log: Mutex<Vec<String>>,
}

/// The agents, as hyperqueue's TestComm: each command the executor sends is
/// logged with the job's state in memory at that moment, so a test sees
/// that a command follows its record's persist and install.
struct Agents {
    store: Arc<Recording>,
    service: std::sync::OnceLock<std::sync::Weak<JobService>>,
}

#[async_trait::async_trait]
impl crate::jobs::link::AgentLink for Agents {
    async fn send(&self, node: &str, cmd: spur_proto::v1::AgentCommand) -> Result<()> {
        use spur_proto::v1::agent_command::Cmd;
        let (what, job) = match cmd.cmd {
            Some(Cmd::Signal(s)) => (format!("signal {}", s.signal), s.job_id),
            Some(Cmd::Launch(l)) => ("launch".to_string(), l.job_id),
            Some(Cmd::SignalStep(s)) => (format!("signal step {}", s.signal), s.job_id),
            Some(Cmd::EndJob(e)) => ("end".to_string(), e.job_id),
            other => (format!("{other:?}"), 0),
        };
        let memory = self.service.get().and_then(|w| w.upgrade()).and_then(|s| s.job(job)).map(|j| j.state);
        let memory = memory.map_or("none", |s| s.as_str());
        self.store.log.lock().unwrap().push(format!("send {node} {what} {job} (memory: {memory})"));
        Ok(())
    }
}

/// A service on a recording store whose commands go to a recording link.
async fn recorded() -> (Arc<Recording>, Arc<JobService>) {
    let store = Arc::new(Recording::default());
    let agents = Arc::new(Agents { store: store.clone(), service: Default::default() });
    let s = Arc::new(service(store.clone()).await.with_link(agents.clone()));
    let _ = agents.service.set(Arc::downgrade(&s));
    (store, s)
}

#[async_trait::async_trait]
impl Store for Recording {
    fn backend(&self) -> &'static str {
        "recording"
    }
    async fn load(&self, _: &str) -> Result<Vec<(String, Value)>> {
        Ok(vec![])
    }
    async fn mutate(&self, _: &str, _: &str, _: Mutator, _: TxnHead) -> Result<(Written, TxnRow)> {
        Err(Error::Unavailable("not in this test".into()))
    }
    async fn commit_raw(
        &self,
        _: &str,
        docs: &[(String, Option<String>)],
        rows: &[TxnRow],
    ) -> Result<Vec<i64>> {
        if self.refuse.load(Ordering::Relaxed) {
            return Err(Error::Unavailable("the database is unreachable".into()));
        }
        self.writes.fetch_add(1, Ordering::Relaxed);
        let parse = |d: &String| serde_json::from_str::<Value>(d).unwrap();
        for (name, d) in docs {
            let state = d.as_ref().map(parse).and_then(|v| v["state"].as_str().map(String::from));
            self.log.lock().unwrap().push(format!("persist {name} {}", state.unwrap_or_default()));
        }
        self.docs.lock().unwrap().extend(docs.iter().map(|(n, d)| (n.clone(), d.as_ref().map(parse))));
        Ok((0..rows.len() as i64).collect())
    }
    async fn insert_txns(&self, rows: &[TxnRow]) -> Result<Vec<i64>> {
        Ok((0..rows.len() as i64).collect())
    }
    async fn list_txn(&self, _: &TxnQuery) -> Result<Vec<TxnRow>> {
        Ok(vec![])
    }
    async fn delete_txn_before(&self, _: i64) -> Result<u64> {
        Ok(0)
    }
    async fn close(&self) {}
}

async fn service(store: Arc<Recording>) -> JobService {
    let cfg = Config::default();
    let hub = Arc::new(crate::audit::Hub::new(None));
    let acct = Arc::new(crate::accounting::AcctService::new(hub.clone()).await);
    let admission = Arc::new(crate::admission::Admission::load(cfg.admission.mode, None).await.unwrap());
    let nodes = Arc::new(crate::nodes::NodeService::new(&cfg, None, hub, admission).await.unwrap());
    let licenses = Arc::new(crate::licenses::LicenseService::new(&cfg, None).await.unwrap());
    JobService::new(&cfg, Some(store), acct, nodes, licenses).await.unwrap()
}

/// What a watcher and the limits see of the queue.
fn seen(s: &JobService) -> (Vec<(u64, JobState)>, String, usize) {
    let q = s.lock();
    let jobs = q.jobs().values().map(|j| (j.id, j.state)).collect();
    (jobs, format!("{:?}", q.counts()), q.changed.len())
}

#[tokio::test]
async fn records_are_durable_in_one_write_before_they_are_installed() {
    let store = Arc::new(Recording::default());
    let s = service(store.clone()).await;
    let fx = crate::jobs::effect::Effects(vec![Effect::Persist(pending(1)), Effect::Persist(pending(2))]);
    let done = s.apply(fx, Held::none(), |_| {}).await.unwrap();
    assert_eq!(done.jobs, [1, 2]);
    assert_eq!(store.writes.load(Ordering::Relaxed), 1, "group commit: one write");
    let cancelled = s.transit(&[1], |q| Ok(q.cancel(&[1], 0, NOW))).await.unwrap();
    assert_eq!(cancelled.jobs, [1]);
    let (jobs, _, marked) = seen(&s);
    assert_eq!(jobs, [(1, JobState::Cancelled), (2, JobState::Pending)]);
    assert_eq!(marked, 2, "both are in the next Watch batch");
    let docs = store.docs.lock().unwrap();
    assert_eq!(docs.last().and_then(|d| d.1.as_ref()).map(|v| v["state"].clone()), Some("CANCELLED".into()));
}

#[tokio::test]
async fn a_store_refusal_installs_nothing_and_acts_on_nothing() {
    let store = Arc::new(Recording::default());
    let s = service(store.clone()).await;
    s.apply(Effect::Persist(pending(1)).into(), Held::none(), |_| {}).await.unwrap();
    s.lock().changed.clear();
    let before = seen(&s);
    store.refuse.store(true, Ordering::Relaxed);
    let e = s.transit(&[1], |q| Ok(q.cancel(&[1], 0, NOW))).await.unwrap_err();
    assert!(matches!(e, Error::Unavailable(_)), "{e}");
    assert_eq!(seen(&s), before, "memory is as it was: same record, counts and Watch batch");
    // A submit the store refuses is not queued, and its MaxJobCount place is given back.
    let mut admitted = false;
    let e = s.apply(Effect::Persist(pending(2)).into(), Held::none(), |_| admitted = true).await;
    assert!(e.is_err() && !admitted);
    assert_eq!(seen(&s), before);
}

#[tokio::test]
async fn a_refused_transition_writes_nothing() {
    let store = Arc::new(Recording::default());
    let s = service(store.clone()).await;
    s.apply(
        Effect::Persist(JobRecord { state: JobState::Completed, ..pending(1) }).into(),
        Held::none(),
        |_| {},
    )
    .await
    .unwrap();
    let set = [("TimeLimit".to_string(), "5".to_string())];
    let at = At::default();
    let e =
        s.transit(&[1], |q| q.update(crate::auth::Role::None, &who("alice"), 1, &set, &at.bounds())).await;
    assert!(matches!(e, Err(Error::FailedPrecondition(_))));
    assert_eq!(store.writes.load(Ordering::Relaxed), 1, "only the set-up's write");
}

/// A registration's running list names job 1, which runs on n1, with the
/// agent of n3: on n1 and n2 (not its nodes) it has no say; on n3 the copy
/// is killed, and job 1's own end, from n1's agent, is still taken.
#[tokio::test]
async fn runs_an_agent_claims_on_other_agents_nodes_change_nothing() {
    let store = Arc::new(Recording::default());
    let s = service(store.clone()).await;
    s.apply(Effect::Persist(running(1, "n1")).into(), Held::none(), |_| {}).await.unwrap();
    let run = |node: &str| spur_proto::v1::RunningJob { job_id: 1, node: node.into(), run_id: String::new() };
    let done = s.reconcile(&["n3".into()], &[run("n1"), run("n2")], vec![]).await.unwrap();
    assert_eq!(done, Default::default(), "neither kept, killed nor lost");
    let done = s.reconcile(&["n3".into()], &[run("n3")], vec![]).await.unwrap();
    assert_eq!(done.stray, [1], "its copy on n3 is killed");
    assert!(s.lock().stale_reports.is_empty(), "no end of job 1 is to be ignored");
    assert_eq!(s.job(1).map(|j| j.state), Some(JobState::Running));
}

/// A transition of a queue, as a test names it.
type Transition = fn(&crate::jobs::queue::Queue) -> crate::jobs::effect::Effects;

/// Every transition that acts on a node: its record is persisted, then
/// installed, then the command sent (the link sees the new state in memory).
#[tokio::test]
async fn commands_follow_their_records_persist_and_install() {
    let cases: [(&str, Transition, &str); 3] = [
        ("cancel", |q| q.cancel(&[1], 0, NOW), "CANCELLED"),
        ("time out", |q| q.time_out(1, NOW + 365 * 24 * 60 * MIN), "TIMEOUT"),
        ("requeue", |q| q.requeue(1, true, NOW), "PENDING"),
    ];
    for (what, transition, state) in cases {
        let (store, s) = recorded().await;
        let run = JobRecord { time_limit: Some(60), ..running(1, "n1") };
        s.apply(Effect::Persist(run).into(), Held::none(), |_| {}).await.unwrap();
        store.log.lock().unwrap().clear();
        s.transit(&[1], |q| Ok(transition(q))).await.unwrap();
        let log = store.log.lock().unwrap().clone();
        assert_eq!(log.first().map(String::as_str), Some(&*format!("persist 1 {state}")), "{what}: {log:?}");
        assert!(log.len() > 1, "{what}: the node is told: {log:?}");
        for sent in &log[1..] {
            assert!(
                sent.starts_with("send n1 ") && sent.ends_with(&format!(" 1 (memory: {state})")),
                "{what}: sent after the install: {log:?}"
            );
        }
    }
}

/// A transition the store refuses sends nothing to any node.
#[tokio::test]
async fn a_refused_write_tells_no_node() {
    let (store, s) = recorded().await;
    s.apply(Effect::Persist(running(1, "n1")).into(), Held::none(), |_| {}).await.unwrap();
    store.log.lock().unwrap().clear();
    store.refuse.store(true, Ordering::Relaxed);
    assert!(s.transit(&[1], |q| Ok(q.cancel(&[1], 0, NOW))).await.is_err());
    assert_eq!(store.log.lock().unwrap().clone(), Vec::<String>::new());
    assert_eq!(s.job(1).map(|j| j.state), Some(JobState::Running));
}
