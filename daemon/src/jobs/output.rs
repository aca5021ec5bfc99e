//! spur tail: a job's stdout (or stderr), read by the agent of its batch node
//! and relayed through the controller. The caller must own the job (or be an
//! Operator) before anything is asked of an agent. Each run of the job is one
//! `ReadOutput` command, answered by `ReportOutput` pieces of at most 64 KiB
//! that the agent sends one at a time: a piece waits for room in the tail's
//! small queue, so a slow reader slows the agent's reading, never grows the
//! controller. With `follow`, a requeued job's next run is read from its start.

use crate::accounting::Caller;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::jobs::JobService;
use crate::jobs::record::JobRecord;
use spur_proto::v1 as pb;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::mpsc;

/// Tails one user may hold at once.
pub const MAX_TAILS_PER_USER: usize = 4;
/// The last lines a tail starts with when the request names none (tail's default).
pub const DEFAULT_LINES: u32 = 10;
/// Pieces queued between an agent and the tail's reader.
pub const QUEUE: usize = 8;
/// How long a piece may wait for room before its tail is taken as gone.
const SLOW_READER: Duration = Duration::from_secs(30);
/// An agent following a file sends an empty piece at least this often
/// (its `output::KEEPALIVE` is 2 s); silence past it means the agent is gone.
const AGENT_SILENCE: Duration = Duration::from_secs(15);
/// How often a follow looks again at a job waiting for its (next) run.
const PENDING_POLL: Duration = Duration::from_millis(500);

/// What a tail answers with, in order.
pub type Chunks = mpsc::Receiver<std::result::Result<pb::OutputChunk, tonic::Status>>;

/// The open tails: users' counts, and each run's queue by request id.
#[derive(Default)]
pub struct Tails {
    next: AtomicU64,
    users: Mutex<HashMap<String, usize>>,
    runs: Mutex<HashMap<u64, (String, mpsc::Sender<pb::OutputReport>)>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A user's tail, held while it streams.
pub struct Slot {
    tails: Arc<Tails>,
    user: String,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut users = lock(&self.tails.users);
        if let Some(n) = users.get_mut(&self.user) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                users.remove(&self.user);
            }
        }
    }
}

/// One run's request to an agent; dropping it refuses the agent's next piece.
struct Run {
    tails: Arc<Tails>,
    id: u64,
    rx: mpsc::Receiver<pb::OutputReport>,
}

impl Drop for Run {
    fn drop(&mut self) {
        lock(&self.tails.runs).remove(&self.id);
    }
}

impl Tails {
    /// A slot for one more tail of `user`, or the refusal naming the cap.
    pub fn slot(self: &Arc<Self>, user: &str) -> Result<Slot> {
        let mut users = lock(&self.users);
        let n = users.entry(user.to_string()).or_default();
        if *n >= MAX_TAILS_PER_USER {
            return Err(Error::ResourceExhausted(format!(
                "'{user}' holds {n} output tails; at most {MAX_TAILS_PER_USER}"
            )));
        }
        *n += 1;
        Ok(Slot { tails: self.clone(), user: user.to_string() })
    }

    fn run(self: &Arc<Self>, node: &str) -> Run {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = mpsc::channel(QUEUE);
        lock(&self.runs).insert(id, (node.to_string(), tx));
        Run { tails: self.clone(), id, rx }
    }

    /// Queues an agent's piece for its tail, waiting for room; NotFound when
    /// nobody reads it any more (the agent stops reading the file).
    pub async fn answer(&self, nodes: &[String], r: pb::OutputReport) -> Result<()> {
        if !nodes.contains(&r.node) {
            return Err(Error::PermissionDenied(format!("this agent does not host node '{}'", r.node)));
        }
        let gone = || Error::NotFound(format!("no tail reads request {} any more", r.request_id));
        let tx = match lock(&self.runs).get(&r.request_id) {
            Some((node, tx)) if *node == r.node => tx.clone(),
            _ => return Err(gone()),
        };
        let id = r.request_id;
        match tokio::time::timeout(SLOW_READER, tx.send(r)).await {
            Ok(Ok(())) => Ok(()),
            _ => Err(Error::NotFound(format!("no tail reads request {id} any more"))),
        }
    }
}

/// Where a job's output is now: its run, batch node and file.
#[derive(Debug, Clone, PartialEq)]
struct Target {
    run_id: String,
    /// None while the job waits for its (next) run.
    node: Option<String>,
    path: String,
    uid: Option<u32>,
    /// Pending, running or suspended: more output may come.
    active: bool,
}

/// Reading a job's output is its owner's or an Operator's.
pub(crate) fn may_read(role: Role, caller: &Caller, j: &JobRecord) -> Result<()> {
    if role >= Role::Operator || j.user == caller.user {
        return Ok(());
    }
    Err(Error::PermissionDenied(format!(
        "job {} belongs to '{}'; only its owner or an Operator may read its output",
        j.id, j.user
    )))
}

fn target(j: &JobRecord, stderr: bool) -> Target {
    let state = j.state;
    // A pending job's nodes are those of a run that was (a requeue): none to read now.
    let node = if state.is_active() && !state.is_placed() { None } else { j.nodes.first().cloned() };
    let (stdout_path, stderr_path) = match super::launch::launch(j).cmd {
        Some(pb::agent_command::Cmd::Launch(l)) => (l.stdout_path, l.stderr_path),
        _ => (String::new(), String::new()),
    };
    Target {
        run_id: j.run_id.clone(),
        node,
        path: if stderr { stderr_path } else { stdout_path },
        uid: j.uid,
        active: state.is_active(),
    }
}

impl JobService {
    /// spur tail: the caller's right checked first, then the job's output as its agents read it.
    pub fn tail_output(
        self: &Arc<Self>,
        role: Role,
        caller: &Caller,
        r: pb::TailOutputRequest,
    ) -> Result<Chunks> {
        {
            let q = self.lock();
            may_read(role, caller, q.get(r.job_id)?)?;
        }
        let slot = self.tails.slot(&caller.user)?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let me = self.clone();
        tokio::spawn(async move {
            let end = me.relay_output(&r, &tx).await;
            if let Err(e) = end {
                let _ = tx.send(Err(e.into())).await;
            }
            drop(slot);
        });
        Ok(rx)
    }

    fn output_target(&self, job: u64, stderr: bool) -> Result<Target> {
        Ok(target(self.lock().get(job)?, stderr))
    }

    async fn relay_output(
        &self,
        r: &pb::TailOutputRequest,
        tx: &mpsc::Sender<std::result::Result<pb::OutputChunk, tonic::Status>>,
    ) -> Result<()> {
        let note = |n: String| Ok(pb::OutputChunk { data: vec![], note: n });
        let mut read: Option<String> = None;
        loop {
            let t = self.output_target(r.job_id, r.stderr)?;
            let node = t.node.clone().filter(|_| read.as_ref() != Some(&t.run_id));
            let Some(node) = node else {
                if !r.follow || !t.active {
                    if read.is_none() {
                        let _ = tx
                            .send(note(format!("job {} has not run: it has no output yet", r.job_id)))
                            .await;
                    }
                    return Ok(());
                }
                tokio::select! {
                    _ = tx.closed() => return Ok(()),
                    _ = tokio::time::sleep(PENDING_POLL) => continue,
                }
            };
            let from_start = read.is_some();
            if from_start
                && tx.send(note(format!("job {} ran again: its new output", r.job_id))).await.is_err()
            {
                return Ok(());
            }
            read = Some(t.run_id.clone());
            if !self.relay_run(r, &t, &node, from_start, tx).await? || !r.follow {
                return Ok(());
            }
        }
    }

    /// One run's file from `node`'s agent; false when the reader has gone.
    async fn relay_run(
        &self,
        r: &pb::TailOutputRequest,
        t: &Target,
        node: &str,
        from_start: bool,
        tx: &mpsc::Sender<std::result::Result<pb::OutputChunk, tonic::Status>>,
    ) -> Result<bool> {
        let mut run = self.tails.run(node);
        let cmd = pb::ReadOutput {
            request_id: run.id,
            job_id: r.job_id,
            node: node.to_string(),
            path: t.path.clone(),
            uid: t.uid,
            lines: if r.lines == 0 { DEFAULT_LINES } else { r.lines },
            from_start,
            follow: r.follow,
            run_id: t.run_id.clone(),
        };
        let cmd = pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::ReadOutput(cmd)) };
        self.link
            .send(node, cmd)
            .await
            .map_err(|e| Error::Unavailable(format!("job {}: node {node}'s agent: {e}", r.job_id)))?;
        loop {
            let piece = tokio::select! {
                _ = tx.closed() => return Ok(false),
                p = tokio::time::timeout(AGENT_SILENCE, run.rx.recv()) => p,
            };
            let Ok(Some(p)) = piece else {
                return Err(Error::Unavailable(format!(
                    "job {}: node {node}'s agent stopped sending its output",
                    r.job_id
                )));
            };
            if !p.error.is_empty() {
                return Err(Error::FailedPrecondition(format!("job {}: {}", r.job_id, p.error)));
            }
            for c in [(vec![], p.note), (p.data, String::new())] {
                if (!c.0.is_empty() || !c.1.is_empty())
                    && tx.send(Ok(pb::OutputChunk { data: c.0, note: c.1 })).await.is_err()
                {
                    return Ok(false);
                }
            }
            if p.eof {
                return Ok(true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spur_vocab::JobState;

    #[test]
    fn a_user_holds_at_most_the_cap_of_tails() {
        let t = Arc::new(Tails::default());
        let held: Vec<Slot> = (0..MAX_TAILS_PER_USER).map(|_| t.slot("ann").unwrap()).collect();
        let e = t.slot("ann").err().unwrap().to_string();
        assert!(e.contains("at most 4"), "{e}");
        assert!(t.slot("bob").is_ok(), "each user has their own");
        drop(held);
        assert!(t.slot("ann").is_ok());
    }

    #[tokio::test]
    async fn a_piece_goes_to_its_run_from_its_node_only_and_none_once_the_run_is_gone() {
        let t = Arc::new(Tails::default());
        let mut run = t.run("n1");
        let piece = |node: &str| pb::OutputReport {
            request_id: run.id,
            node: node.into(),
            data: b"hi\n".to_vec(),
            ..Default::default()
        };
        let (mine, other) = (vec!["n1".to_string()], vec!["n2".to_string()]);
        assert!(matches!(t.answer(&other, piece("n2")).await, Err(Error::NotFound(_))));
        assert!(matches!(t.answer(&other, piece("n1")).await, Err(Error::PermissionDenied(_))));
        t.answer(&mine, piece("n1")).await.unwrap();
        assert_eq!(run.rx.recv().await.unwrap().data, b"hi\n");
        let p = piece("n1");
        drop(run);
        assert!(matches!(t.answer(&mine, p).await, Err(Error::NotFound(_))), "the agent is told to stop");
    }

    #[test]
    fn the_owner_or_an_operator_reads_and_a_pending_job_has_no_node_to_read() {
        let mut j = JobRecord { id: 7, user: "ann".into(), ..Default::default() };
        let who = |u: &str| Caller { user: u.into(), ..Default::default() };
        assert!(may_read(Role::None, &who("ann"), &j).is_ok());
        assert!(may_read(Role::Operator, &who("bob"), &j).is_ok());
        let e = may_read(Role::None, &who("bob"), &j).unwrap_err().to_string();
        assert!(e.contains("job 7 belongs to 'ann'") && e.contains("read its output"), "{e}");
        j.nodes = vec!["n1".into()];
        j.workdir = "/home/ann".into();
        j.state = JobState::Pending;
        assert_eq!(target(&j, false).node, None, "a requeued job waits for its next run");
        j.state = JobState::Running;
        let t = target(&j, false);
        assert_eq!((t.node.as_deref(), t.path.as_str()), (Some("n1"), "/home/ann/slurm-7.out"));
        j.stderr_path = "err-%j.txt".into();
        assert_eq!(target(&j, true).path, "/home/ann/err-7.txt");
        j.state = JobState::Completed;
        assert!(!target(&j, false).active && target(&j, false).node.is_some());
    }
}
