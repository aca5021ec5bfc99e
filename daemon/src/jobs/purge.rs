//! Slurm's MinJobAge: an ended job leaves the controller's memory
//! `min_job_age_secs` after its end and lives on in the store only, where
//! `sacct` still finds it (ListJobs `history=yes`); squeue and scontrol no
//! longer show it, as in Slurm. What fair share and GrpWall need of a purged
//! job (who ran, on how many CPUs, when) stays behind in a slim record, so
//! purging changes no priority.
//!
//! Purging keeps the queue's bookkeeping whole: only ended jobs go, so the
//! limit counts (live jobs only) do not move; a purged job's pending stale
//! report is forgotten (a report for a job the queue no longer has is
//! ignored anyway); and every purged id is marked, so the next change batch
//! tells watchers it is gone (`JobsChanged.removed`).

use super::queue::Queue;
use super::record::JobRecord;
use super::{JobService, KIND_JOB};
use crate::config::SchedulerConfig;
use crate::error::Result;
use crate::store::{Store, now_ms};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Past this many half-lives a run's decayed usage is below a billionth of
/// what it was: its slim record is dropped once it is also out of the GrpWall window.
const HALF_LIVES_KEPT: f64 = 30.0;

/// How long jobs are kept, how many may be held, and what outlives a purge.
pub(crate) struct Retention {
    pub min_age_ms: i64,
    pub max_jobs: usize,
    /// MaxArraySize: an array's task indexes stay below it.
    pub max_array_size: u32,
    /// Submits past the MaxJobCount check whose job is not in the queue yet.
    pub admitting: AtomicUsize,
    pub(super) store: Option<Arc<dyn Store>>,
    /// Slim records of purged jobs that ran, for usage and GrpWall.
    ran: Mutex<Vec<JobRecord>>,
}

impl Retention {
    /// `ran`: the slim records of jobs already purged (see [`at_load`]).
    pub fn new(cfg: &SchedulerConfig, store: Option<Arc<dyn Store>>, ran: Vec<JobRecord>) -> Retention {
        Retention {
            min_age_ms: cfg.min_job_age_ms(),
            max_jobs: cfg.max_job_count,
            max_array_size: cfg.max_array_size,
            admitting: AtomicUsize::new(0),
            store,
            ran: Mutex::new(ran),
        }
    }

    pub(super) fn ran(&self) -> std::sync::MutexGuard<'_, Vec<JobRecord>> {
        self.ran.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Whether an ended job's time in memory is up at `now`.
fn expired(j: &JobRecord, now: i64, min_age_ms: i64) -> bool {
    !j.is_active() && j.end_ms.saturating_add(min_age_ms) <= now
}

/// What usage and GrpWall read of a job, and nothing else (no script, no environment).
fn slim(j: &JobRecord) -> JobRecord {
    JobRecord {
        id: j.id,
        user: j.user.clone(),
        account: j.account.clone(),
        qos: j.qos.clone(),
        state: j.state,
        nodes: j.nodes.clone(),
        alloc: j.alloc,
        start_ms: j.start_ms,
        end_ms: j.end_ms,
        // Its cost on borrowed nodes stays in its account's.
        charge: j.charge.clone(),
        spent: j.spent.clone(),
        ..JobRecord::default()
    }
}

/// What outlives purged jobs: the slim records of those that ran (usage,
/// GrpWall) and what a pending job's dependency reads of each (state, exit, start).
#[derive(Default)]
pub(crate) struct Purged {
    pub ran: Vec<JobRecord>,
    gone: Vec<JobRecord>,
}

impl Purged {
    fn add(&mut self, j: &JobRecord) {
        if j.start_ms > 0 {
            self.ran.push(slim(j));
        }
        self.gone.push(JobRecord {
            id: j.id,
            state: j.state,
            exit_code: j.exit_code,
            start_ms: j.start_ms,
            ..JobRecord::default()
        });
    }
}

/// The fields that say whether a stored job is past MinJobAge, decoded
/// alone: the parser skips the rest of the record unread.
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct Age {
    state: spur_vocab::JobState,
    end_ms: i64,
    script: Held,
    env: Held,
}

/// Whether a stored string or list holds anything, read without keeping it.
#[derive(Default)]
struct Held(bool);

impl<'de> serde::Deserialize<'de> for Held {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Held, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Held;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or a list")
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Held, E> {
                Ok(Held(!v.is_empty()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Held, A::Error> {
                let mut any = false;
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    any = true;
                }
                Ok(Held(any))
            }
        }
        d.deserialize_any(V)
    }
}

/// Records rewritten in one commit when a start sheds old scripts.
const SHED_CHUNK: usize = 500;

/// The store's jobs at start: whole, those still active or within MinJobAge
/// of their end at `now`; of the rest (the history, which sacct reads from
/// the store) only what outlives a purge, decoded without script and
/// environment. Returns the jobs, what outlives the others, and the largest
/// id stored (ids are never reused).
pub(crate) async fn load(
    store: &dyn Store,
    now: i64,
    cfg: &SchedulerConfig,
) -> Result<(BTreeMap<u64, JobRecord>, Purged, u64)> {
    let min_age_ms = cfg.min_job_age_ms();
    let (mut jobs, mut purged, mut max_id) = (BTreeMap::new(), Purged::default(), 0);
    let mut shed: Vec<(String, Option<String>)> = vec![];
    store
        .load_each(KIND_JOB, &mut |name, doc| {
            let age: Age = serde_json::from_str(doc)
                .map_err(|e| crate::error::Error::Store(format!("stored job {name} does not decode: {e}")))?;
            let j = if !age.state.is_active() && age.end_ms.saturating_add(min_age_ms) <= now {
                let j = JobRecord::for_listing(name, doc)?;
                purged.add(&j);
                let id = j.id;
                if age.script.0 || age.env.0 {
                    shed.push((name.to_string(), Some(serde_json::to_string(&j)?)));
                }
                id
            } else {
                let j = JobRecord::from_stored(name, doc)?;
                let id = j.id;
                jobs.insert(id, j);
                id
            };
            max_id = max_id.max(j);
            Ok(())
        })
        .await?;
    // Records purged before the purge dropped scripts (or by an earlier
    // start) shed them now, so the history sacct reads holds none.
    for chunk in shed.chunks(SHED_CHUNK) {
        store.put_raw(KIND_JOB, chunk).await?;
    }
    Ok((jobs, purged, max_id))
}

/// Takes the jobs already past MinJobAge out of a queue just loaded from the
/// store (a restart must not bring back what was purged), adding them to
/// what [`load`] left out; returns the slim records of those that ran.
pub(crate) fn at_load(q: &mut Queue, now: i64, cfg: &SchedulerConfig, mut purged: Purged) -> Vec<JobRecord> {
    let min_age_ms = cfg.min_job_age_ms();
    q.retain_ended(|j| {
        let keep = !expired(j, now, min_age_ms);
        if !keep {
            purged.add(j);
        }
        keep
    });
    q.keep_fates(&purged.gone);
    purged.ran
}

impl JobService {
    /// Purges every ended job whose MinJobAge is up at `now`; returns their ids.
    pub(crate) async fn purge(&self, now: i64) -> Vec<u64> {
        let age = self.retention.min_age_ms;
        let due: Vec<u64> = {
            let q = self.lock();
            (q.jobs().values())
                .filter(|j| expired(j, now, age) && !q.launching.contains(&j.id))
                .map(|j| j.id)
                .collect()
        };
        if due.is_empty() {
            self.forget_old_usage(now);
            return due;
        }
        // No transition of these jobs is half done while they go.
        let _held = self.stripes.lock(due.iter().copied()).await;
        // Slurm keeps a job's script and environment only with
        // AccountingStoreFlags=job_script,job_env; Spur keeps neither once the
        // job leaves memory, so the history the store keeps is what sacct lists.
        // Written first: a failed write purges nothing, and the next pass retries.
        let bare: Vec<JobRecord> = {
            let q = self.lock();
            (due.iter().filter_map(|id| q.jobs().get(id)))
                .filter(|j| expired(j, now, age) && (!j.script.is_empty() || !j.env.is_empty()))
                .map(|j| JobRecord { script: String::new(), env: Default::default(), ..j.clone() })
                .collect()
        };
        if let Err(e) = self.persist(&bare.iter().collect::<Vec<_>>()).await {
            tracing::warn!(
                "purge: the ended jobs' records without script and env were not written ({e}); they stay in memory until the next pass"
            );
            return vec![];
        }
        let mut gone = Vec::with_capacity(due.len());
        {
            let mut q = self.lock();
            // Under the queue lock, so a usage read sees each job exactly once.
            let mut ran = self.retention.ran();
            let mut removed = Vec::with_capacity(due.len());
            for id in due {
                let Some(j) = q.jobs().get(&id).filter(|j| expired(j, now, age)) else { continue };
                if j.start_ms > 0 {
                    ran.push(slim(j));
                }
                removed.extend(q.forget(id));
                gone.push(id);
            }
            q.keep_fates(&removed);
        }
        let set: HashSet<u64> = gone.iter().copied().collect();
        self.evicted_for.lock().unwrap_or_else(|p| p.into_inner()).retain(|id, _| !set.contains(id));
        self.changed();
        self.forget_old_usage(now);
        gone
    }

    /// Drops slim records whose usage has decayed to nothing and that are out of the GrpWall window.
    fn forget_old_usage(&self, now: i64) {
        if self.halflife_days <= 0.0 {
            return;
        }
        let decayed = (self.halflife_days * HALF_LIVES_KEPT * 86_400_000.0) as i64;
        let window = i64::try_from(self.grp_wall_window_days.saturating_mul(86_400_000)).unwrap_or(i64::MAX);
        let before = now.saturating_sub(decayed.max(window));
        self.retention.ran().retain(|j| j.end_ms >= before);
    }

    /// Every job that ever started, held or purged, for usage and GrpWall:
    /// read under the queue lock, so a purge in between counts no job twice or not at all.
    pub(crate) fn usage_jobs(&self) -> Vec<JobRecord> {
        let q = self.lock();
        let ran = self.retention.ran();
        let held = q.jobs().values().filter(|j| j.start_ms > 0).cloned();
        held.chain(ran.iter().cloned()).collect()
    }

    /// Purges every `every`, as Slurm's controller does in the background.
    pub(crate) fn spawn_purger(self: &Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        let me = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                me.purge(now_ms()).await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::jobs::KIND_JOB;
    use spur_vocab::JobState;

    const NOW: i64 = 1_700_000_000_000;
    const DAY: i64 = 86_400_000;

    /// A controller's job service with no store and `[scheduler] min_job_age_secs = 300`.
    async fn service(cfg: Config) -> JobService {
        service_on(cfg, None).await
    }

    async fn service_on(cfg: Config, store: Option<Arc<dyn Store>>) -> JobService {
        let hub = Arc::new(crate::audit::Hub::new(None));
        let acct = Arc::new(crate::accounting::AcctService::new(hub.clone()).await);
        let admission = Arc::new(crate::admission::Admission::load(cfg.admission.mode, None).await.unwrap());
        let nodes = Arc::new(crate::nodes::NodeService::new(&cfg, None, hub, admission).await.unwrap());
        let licenses = Arc::new(crate::licenses::LicenseService::new(&cfg, None).await.unwrap());
        JobService::new(&cfg, store, acct, nodes, licenses).await.unwrap()
    }

    #[tokio::test]
    async fn the_purge_leaves_the_store_a_record_without_script_and_env() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::open(&format!("sqlite://{}/spur.db", dir.path().display())).await.unwrap();
        let s = service_on(Config::default(), Some(store.clone())).await;
        let min = s.retention.min_age_ms;
        let mut ended = job(3, JobState::Completed, NOW - DAY, NOW - min);
        ended.env = crate::jobs::env::Env::from_pairs([("HOME", "/home/alice")]).unwrap();
        let running = job(4, JobState::Running, NOW - DAY, 0);
        s.persist(&[&ended, &running]).await.unwrap();
        for j in [ended.clone(), running.clone()] {
            s.lock().jobs_mut().insert(j.id, j);
        }
        assert_eq!(s.purge(NOW).await, vec![3]);
        let docs = store.load(KIND_JOB).await.unwrap();
        let stored = |id: u64| {
            let (name, doc) = docs.iter().find(|(n, _)| *n == id.to_string()).unwrap();
            JobRecord::from_stored(name, &doc.to_string()).unwrap()
        };
        let after = stored(3);
        assert!(after.script.is_empty() && after.env.is_empty(), "{after:?}");
        assert_eq!(after, JobRecord { script: String::new(), env: Default::default(), ..ended });
        assert_eq!(stored(4), running, "a job still in memory keeps its script");
    }

    fn job(id: u64, state: JobState, start_ms: i64, end_ms: i64) -> JobRecord {
        JobRecord {
            id,
            user: "alice".into(),
            account: Some("phys".into()),
            state,
            start_ms,
            end_ms,
            alloc: (2, 0, 0),
            nodes: if start_ms > 0 { vec!["n1".into()] } else { vec![] },
            script: "#!/bin/sh\ntrue\n".into(),
            ..JobRecord::default()
        }
    }

    fn ids(s: &JobService) -> Vec<u64> {
        s.lock().jobs().keys().copied().collect()
    }

    #[tokio::test]
    async fn ended_jobs_go_after_min_job_age_and_nothing_else_moves() {
        let s = service(Config::default()).await;
        let min = s.retention.min_age_ms;
        assert_eq!(min, 300_000);
        {
            let mut q = s.lock();
            for j in [
                job(1, JobState::Pending, 0, 0),
                job(2, JobState::Running, NOW - DAY, 0),
                job(3, JobState::Completed, NOW - DAY, NOW - min),
                job(4, JobState::Cancelled, 0, NOW - min),
                job(5, JobState::Failed, NOW - DAY, NOW - min + 1),
            ] {
                q.install(j);
            }
            q.stale_reports.insert(3);
            q.changed.clear();
        }
        let before = format!("{:?}", s.lock().counts());
        assert_eq!(s.purge(NOW - 1).await, Vec::<u64>::new(), "nothing is due a millisecond early");
        assert_eq!(s.purge(NOW).await, vec![3, 4]);
        assert_eq!(ids(&s), [1, 2, 5]);
        {
            let q = s.lock();
            assert_eq!(format!("{:?}", q.counts()), before, "only ended jobs go, so the live counts stay");
            assert!(q.stale_reports.is_empty());
            let mut marked: Vec<u64> = q.changed.iter().copied().collect();
            marked.sort_unstable();
            assert_eq!(marked, [3, 4], "watchers are told which jobs left");
        }
        assert_eq!(s.purge(NOW + 1).await, vec![5]);
        assert_eq!(ids(&s), [1, 2]);
    }

    #[tokio::test]
    async fn usage_outlives_the_purge_without_scripts_and_fades_with_decay() {
        let s = service(Config::default()).await;
        {
            let mut q = s.lock();
            q.jobs_mut().insert(1, job(1, JobState::Completed, NOW - DAY, NOW - DAY / 2));
            q.jobs_mut().insert(2, job(2, JobState::Cancelled, 0, NOW - DAY));
            q.jobs_mut().insert(3, job(3, JobState::Running, NOW - DAY, 0));
        }
        let usage = |s: &JobService| {
            let mut v: Vec<(u64, i64, i64, usize)> =
                s.usage_jobs().iter().map(|j| (j.id, j.start_ms, j.end_ms, j.script.len())).collect();
            v.sort_unstable();
            v
        };
        let full = "#!/bin/sh\ntrue\n".len();
        assert_eq!(usage(&s), [(1, NOW - DAY, NOW - DAY / 2, full), (3, NOW - DAY, 0, full)]);
        assert_eq!(s.purge(NOW).await, vec![1, 2]);
        // The job that ran still counts, once, as a slim record; the one that never ran does not.
        assert_eq!(usage(&s), [(1, NOW - DAY, NOW - DAY / 2, 0), (3, NOW - DAY, 0, full)]);
        // Thirty half-lives (7 days each) later it is below a billionth and is forgotten.
        s.purge(NOW + 209 * DAY).await;
        assert_eq!(usage(&s).len(), 2);
        s.purge(NOW + 211 * DAY).await;
        assert_eq!(usage(&s), [(3, NOW - DAY, 0, full)]);
    }

    #[test]
    fn a_restart_does_not_bring_purged_jobs_back() {
        let mut q = Queue::default();
        for j in [
            job(1, JobState::Completed, NOW - DAY, NOW - DAY),
            job(2, JobState::Completed, NOW - DAY, NOW),
            job(3, JobState::Pending, 0, 0),
        ] {
            q.jobs_mut().insert(j.id, j);
        }
        let ran = at_load(&mut q, NOW, &SchedulerConfig::default(), Purged::default());
        assert_eq!(q.jobs().keys().copied().collect::<Vec<_>>(), [2, 3]);
        assert_eq!(ran.iter().map(|j| (j.id, j.script.is_empty())).collect::<Vec<_>>(), [(1, true)]);
    }

    /// A start-up loads whole only what memory keeps; of the history, what outlives a purge.
    #[tokio::test]
    async fn a_start_loads_whole_only_the_jobs_memory_keeps() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::open(&format!("sqlite://{}/spur.db", dir.path().display())).await.unwrap();
        let mut old = job(7, JobState::Completed, NOW - DAY, NOW - DAY);
        old.script = "x".repeat(1 << 20);
        let (recent, pending) = (job(2, JobState::Failed, NOW - DAY, NOW), job(3, JobState::Pending, 0, 0));
        let docs: Vec<_> = [&old, &recent, &pending]
            .iter()
            .map(|j| (j.id.to_string(), Some(serde_json::to_string(j).unwrap())))
            .collect();
        store.put_raw(KIND_JOB, &docs).await.unwrap();
        let (jobs, purged, max_id) = load(store.as_ref(), NOW, &SchedulerConfig::default()).await.unwrap();
        assert_eq!(jobs.keys().copied().collect::<Vec<_>>(), [2, 3]);
        assert_eq!(jobs[&2], recent, "kept whole, script included");
        assert_eq!(max_id, 7, "a purged job's id is never given again");
        assert_eq!(purged.ran.iter().map(|j| (j.id, j.script.is_empty())).collect::<Vec<_>>(), [(7, true)]);
        assert_eq!(
            purged.gone.iter().map(|j| (j.id, j.state)).collect::<Vec<_>>(),
            [(7, JobState::Completed)]
        );
        let docs = store.load(KIND_JOB).await.unwrap();
        let stored = |id: &str| docs.iter().find(|(n, _)| n == id).map(|(_, d)| d["script"].clone()).unwrap();
        assert_eq!(stored("7"), "", "the old job's record sheds its script");
        assert_eq!(stored("2"), recent.script.as_str(), "a job memory keeps is left as it is");
    }
}
