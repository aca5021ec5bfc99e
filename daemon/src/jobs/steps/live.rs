//! What only memory holds of the running steps: each one's srun stream (the
//! relay its tasks' output goes to, bounded so a slow srun slows its agents
//! rather than the controller's memory), the tasks still out on each node,
//! how the ended ones exited, and whether the step was cancelled or lost a
//! node; and, per allocation srun made, how many sruns are attached to it.
//!
//! A step's record ends first (a transition); the executor's install then
//! calls [`follow`], which tells the step's srun how it ended and returns the
//! signals for whatever of its tasks is still out (a step ended by its job's
//! end, a lost node, a cancel). Lock order: the queue's lock, then these.

use super::StepRecord;
use super::layout::{Shape, srun_exit, step_exit};
use crate::jobs::effect::SIGTERM;
use crate::jobs::record::JobRecord;
use spur_proto::v1 as pb;
use spur_vocab::JobState;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

/// How long an allocation srun made may go without an srun attached (one
/// killed before it attached, a controller restart) before it is cancelled.
pub const DETACHED_GRACE: Duration = Duration::from_secs(10);
/// Events queued for one srun before relaying its step's output waits.
pub const RELAY_QUEUE: usize = 64;

/// Where a step's events go: srun's answer stream.
pub type Relay = mpsc::Sender<Result<pb::StepEvent, tonic::Status>>;
/// sattach streams one step may have at once.
pub const MAX_WATCHERS: usize = 8;

struct LiveStep {
    relay: Relay,
    /// sattach's streams: each gets the output srun gets, or is dropped when it falls behind.
    watchers: Vec<Relay>,
    done: Option<oneshot::Sender<pb::StepEnded>>,
    /// Tasks not yet ended, per node.
    left: HashMap<String, u32>,
    /// (exit code, signal) of each ended task.
    ends: Vec<(i32, i32)>,
    kill_on_bad_exit: bool,
    /// --kill-on-bad-exit already ended the rest.
    killed: bool,
    cancelled: bool,
    failed_node: Option<String>,
}

impl LiveStep {
    fn nodes_left(&self) -> Vec<String> {
        let mut n: Vec<String> = self.left.iter().filter(|(_, c)| **c > 0).map(|(n, _)| n.clone()).collect();
        n.sort();
        n
    }

    fn all_ended(&self) -> bool {
        self.left.values().all(|c| *c == 0)
    }

    /// The state the step ends in, from what became of its tasks.
    fn state(&self) -> JobState {
        match (&self.failed_node, self.cancelled, step_exit(&self.ends)) {
            (Some(_), ..) => JobState::NodeFail,
            (None, true, _) => JobState::Cancelled,
            (None, false, (0, 0)) => JobState::Completed,
            _ => JobState::Failed,
        }
    }
}

/// What follows a task's end.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    Wait,
    /// --kill-on-bad-exit: the step's other tasks are to be killed, on these nodes.
    Kill(Vec<String>),
    /// Every task has ended (or a node was lost): the step ends so.
    End {
        state: JobState,
        exit: (i32, i32),
    },
}

#[derive(Default)]
pub struct Live {
    steps: Mutex<HashMap<(u64, u32), LiveStep>>,
    holders: Arc<Mutex<HashMap<u64, Holders>>>,
    /// The windows of srun's stdin, credited from the agents' StepIo.
    pub credits: super::stdin::Credits,
}

/// The sruns attached to an allocation one of them made.
struct Holders {
    count: u32,
    /// Since when none has been (or since it was first seen).
    since: Instant,
}

/// An srun attached to its allocation, until dropped.
pub struct Hold {
    holders: Arc<Mutex<HashMap<u64, Holders>>>,
    job: u64,
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut h = self.holders.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = h.get_mut(&self.job) {
            e.count = e.count.saturating_sub(1);
            e.since = Instant::now();
        }
    }
}

impl Live {
    fn lock(&self) -> MutexGuard<'_, HashMap<(u64, u32), LiveStep>> {
        self.steps.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A step just recorded: its srun's relay, and its tasks out per node.
    pub fn open(
        &self,
        (job, step): (u64, u32),
        relay: Relay,
        done: Option<oneshot::Sender<pb::StepEnded>>,
        shape: &Shape,
        kill_on_bad_exit: bool,
    ) {
        let left = shape.nodes.iter().cloned().zip(shape.tasks.iter().copied()).collect();
        let s = LiveStep {
            relay,
            watchers: vec![],
            done,
            left,
            ends: vec![],
            kill_on_bad_exit,
            killed: false,
            cancelled: false,
            failed_node: None,
        };
        self.lock().insert((job, step), s);
    }

    /// Forgets a step whose start was not recorded.
    pub fn remove(&self, job: u64, step: u32) {
        self.lock().remove(&(job, step));
    }

    /// A new sattach stream of the step: None when it is not live here, or has
    /// [`MAX_WATCHERS`] already. `first` is its first event.
    pub fn watch(
        &self,
        job: u64,
        step: u32,
        first: pb::StepEvent,
    ) -> Result<mpsc::Receiver<Result<pb::StepEvent, tonic::Status>>, String> {
        let mut steps = self.lock();
        let s = steps.get_mut(&(job, step)).ok_or_else(|| format!("step {job}.{step} is not running"))?;
        s.watchers.retain(|w| !w.is_closed());
        if s.watchers.len() >= MAX_WATCHERS {
            return Err(format!("step {job}.{step} has {MAX_WATCHERS} sattach streams already"));
        }
        let (tx, rx) = mpsc::channel(RELAY_QUEUE);
        let _ = tx.try_send(Ok(first));
        s.watchers.push(tx);
        Ok(rx)
    }

    /// Hands an event to the step's sattach streams without waiting: one whose
    /// queue is full is dropped (it ends), so a slow sattach never slows srun.
    pub fn tell_watchers(&self, job: u64, step: u32, e: &pb::step_event::Event) {
        if let Some(s) = self.lock().get_mut(&(job, step)) {
            s.watchers.retain(|w| w.try_send(Ok(pb::StepEvent { event: Some(e.clone()) })).is_ok());
        }
    }

    pub fn relay(&self, job: u64, step: u32) -> Option<Relay> {
        self.lock().get(&(job, step)).map(|s| s.relay.clone())
    }

    /// Whether `node` still has tasks of the step out.
    pub fn hosts(&self, job: u64, step: u32, node: &str) -> bool {
        self.lock().get(&(job, step)).is_some_and(|s| s.left.get(node).is_some_and(|c| *c > 0))
    }

    /// The nodes with tasks of the step still out.
    pub fn nodes_left(&self, job: u64, step: u32) -> Option<Vec<String>> {
        self.lock().get(&(job, step)).map(LiveStep::nodes_left)
    }

    /// A task of the step on `node` ended with `code` or by `signal`.
    pub fn task_ended(&self, (job, step): (u64, u32), node: &str, code: i32, signal: i32) -> Next {
        let mut all = self.lock();
        let Some(s) = all.get_mut(&(job, step)) else { return Next::Wait };
        match s.left.get_mut(node) {
            Some(c) if *c > 0 => *c -= 1,
            _ => return Next::Wait,
        }
        s.ends.push((code, signal));
        if s.all_ended() {
            return Next::End { state: s.state(), exit: step_exit(&s.ends) };
        }
        if s.kill_on_bad_exit && !s.killed && (code != 0 || signal != 0) {
            s.killed = true;
            return Next::Kill(s.nodes_left());
        }
        Next::Wait
    }

    /// `node` is lost with the step's tasks still out there: the step ends NODE_FAIL.
    pub fn node_lost(&self, job: u64, step: u32, node: &str) -> Option<Next> {
        let mut all = self.lock();
        let s = all.get_mut(&(job, step))?;
        s.left.insert(node.to_string(), 0);
        s.failed_node.get_or_insert_with(|| node.to_string());
        Some(Next::End { state: JobState::NodeFail, exit: step_exit(&s.ends) })
    }

    /// The step is cancelled: it ends CANCELLED whatever its tasks say.
    /// The nodes to signal; None when the controller relays no such step.
    pub fn cancel(&self, job: u64, step: u32) -> Option<Vec<String>> {
        let mut all = self.lock();
        let s = all.get_mut(&(job, step))?;
        s.cancelled = true;
        Some(s.nodes_left())
    }

    /// The step's record ended in `state`: srun is told, and the nodes where
    /// its tasks are still out are returned (None: no srun relayed it).
    pub fn finish(&self, job: u64, step: u32, state: JobState) -> Option<Vec<String>> {
        let mut s = self.lock().remove(&(job, step))?;
        let mut exit_code = srun_exit(s.ends.iter().copied());
        if state != JobState::Completed && exit_code == 0 {
            exit_code = 1;
        }
        let message = match (&s.failed_node, state) {
            (Some(n), _) => format!("node {n} failed; its tasks are lost"),
            (None, JobState::Cancelled) if !s.cancelled => format!("job {job} ended; its step was cancelled"),
            (None, JobState::Cancelled) => format!("step {job}.{step} was cancelled"),
            (None, JobState::NodeFail) => format!("a node of job {job} failed"),
            _ => String::new(),
        };
        let ended = pb::StepEnded { state: spur_proto::states::state_wire(state), exit_code, message };
        for w in &s.watchers {
            let _ =
                w.try_send(Ok(pb::StepEvent { event: Some(pb::step_event::Event::Ended(ended.clone())) }));
        }
        if let Some(done) = s.done.take() {
            let _ = done.send(ended);
        }
        Some(s.nodes_left())
    }

    /// Attaches an srun to the allocation `job` it made.
    pub fn hold(&self, job: u64) -> Hold {
        let mut h = self.holders.lock().unwrap_or_else(|p| p.into_inner());
        h.entry(job).or_insert(Holders { count: 0, since: Instant::now() }).count += 1;
        Hold { holders: self.holders.clone(), job }
    }

    /// Of the active allocations `active`, those without an srun for
    /// [`DETACHED_GRACE`] as of `now`; forgets the allocations no longer active.
    pub fn unheld(&self, now: Instant, active: &[u64]) -> Vec<u64> {
        let mut h = self.holders.lock().unwrap_or_else(|p| p.into_inner());
        h.retain(|job, e| e.count > 0 || active.contains(job));
        let mut out = vec![];
        for &job in active {
            let e = h.entry(job).or_insert(Holders { count: 0, since: now });
            if e.count == 0 && now.duration_since(e.since) >= DETACHED_GRACE {
                out.push(job);
            }
        }
        out
    }
}

/// A step's tasks on `node` get `signal`; with `kill_wait`, SIGKILL that much later.
pub fn signal_step(job: u64, step: Option<u32>, signal: i32, kill_wait: u32) -> pb::AgentCommand {
    let s = pb::SignalStep { job_id: job, step_id: step, signal, kill_wait_secs: kill_wait };
    pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::SignalStep(s)) }
}

/// What the install of `new` over `old` means for the steps that were
/// running: each one that ended tells its srun, and what of its tasks is
/// still out is terminated (SIGTERM, SIGKILL after `kill_wait`).
pub fn follow(
    live: &Live,
    old: Option<&JobRecord>,
    new: &JobRecord,
    kill_wait: u32,
) -> Vec<(String, pb::AgentCommand)> {
    let Some(old) = old.and_then(|o| o.steps.as_ref()) else { return vec![] };
    let mut out = vec![];
    for was in old.running() {
        let now: Option<&StepRecord> = new.step(was.id);
        if now.is_some_and(StepRecord::is_running) {
            continue;
        }
        let state = now.map_or(JobState::Cancelled, |s| s.state);
        // Unrelayed (a stored step, a relay gone): every node it had, to be sure.
        let nodes = live.finish(new.id, was.id, state).unwrap_or_else(|| was.nodes.clone());
        out.extend(nodes.into_iter().map(|n| (n, signal_step(new.id, Some(was.id), SIGTERM, kill_wait))));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::steps::StepLog;

    fn shape() -> Shape {
        Shape::block(vec!["n1".into(), "n2".into()], &[2, 1], 1, 0)
    }

    fn opened(
        live: &Live,
        kill: bool,
    ) -> (mpsc::Receiver<Result<pb::StepEvent, tonic::Status>>, oneshot::Receiver<pb::StepEnded>) {
        let (tx, rx) = mpsc::channel(4);
        let (done, ended) = oneshot::channel();
        live.open((7, 0), tx, Some(done), &shape(), kill);
        (rx, ended)
    }

    #[test]
    fn a_step_ends_once_every_task_has() {
        let live = Live::default();
        let (_rx, mut ended) = opened(&live, false);
        assert_eq!(live.task_ended((7, 0), "n1", 0, 0), Next::Wait);
        assert_eq!(live.task_ended((7, 0), "n9", 0, 0), Next::Wait, "not a node of the step");
        assert_eq!(live.task_ended((7, 0), "n1", 3, 0), Next::Wait);
        assert!(live.hosts(7, 0, "n2") && !live.hosts(7, 0, "n1"));
        assert_eq!(live.task_ended((7, 0), "n2", 0, 0), Next::End { state: JobState::Failed, exit: (3, 0) });
        assert_eq!(live.finish(7, 0, JobState::Failed), Some(vec![]));
        let e = ended.try_recv().unwrap();
        assert_eq!((e.job_state(), e.exit_code), (JobState::Failed, 3));
        assert!(live.relay(7, 0).is_none(), "gone once finished");
    }

    #[test]
    fn kill_on_bad_exit_cancel_and_a_lost_node_end_the_step_their_way() {
        let live = Live::default();
        let (_rx, _e) = opened(&live, true);
        assert_eq!(live.task_ended((7, 0), "n1", 1, 0), Next::Kill(vec!["n1".into(), "n2".into()]));
        assert_eq!(live.task_ended((7, 0), "n1", 0, 9), Next::Wait, "once");
        let live = Live::default();
        let (_rx, mut ended) = opened(&live, false);
        assert_eq!(live.cancel(7, 0), Some(vec!["n1".into(), "n2".into()]));
        live.task_ended((7, 0), "n1", 0, 15);
        live.task_ended((7, 0), "n1", 0, 15);
        assert_eq!(
            live.task_ended((7, 0), "n2", 0, 15),
            Next::End { state: JobState::Cancelled, exit: (0, 15) }
        );
        live.finish(7, 0, JobState::Cancelled);
        assert_eq!(ended.try_recv().unwrap().exit_code, 143);
        let live = Live::default();
        let (_rx, mut ended) = opened(&live, false);
        assert_eq!(live.node_lost(7, 0, "n2"), Some(Next::End { state: JobState::NodeFail, exit: (0, 0) }));
        assert_eq!(live.finish(7, 0, JobState::NodeFail), Some(vec!["n1".into()]));
        let e = ended.try_recv().unwrap();
        assert_eq!((e.job_state(), e.exit_code), (JobState::NodeFail, 1));
        assert!(e.message.contains("node n2 failed"), "{}", e.message);
    }

    #[test]
    fn a_job_s_end_tells_srun_and_terminates_what_is_left() {
        let live = Live::default();
        let (_rx, mut ended) = opened(&live, false);
        let step = StepRecord {
            id: 0,
            state: JobState::Running,
            nodes: vec!["n1".into(), "n2".into()],
            ..StepRecord::default()
        };
        let log = StepLog { next: 1, list: vec![step], ..StepLog::default() };
        let old = JobRecord { id: 7, steps: Some(Box::new(log)), ..JobRecord::default() };
        let mut new = old.clone();
        assert!(follow(&live, Some(&old), &new, 30).is_empty(), "still running");
        new.close_steps(JobState::Cancelled, 5);
        let sent = follow(&live, Some(&old), &new, 30);
        assert_eq!(sent.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["n1", "n2"]);
        assert_eq!(sent[0].1, signal_step(7, Some(0), SIGTERM, 30));
        assert!(ended.try_recv().unwrap().message.contains("job 7 ended"));
        // A requeue forgets the step: its nodes are still told.
        new.forget_steps();
        assert_eq!(follow(&live, Some(&old), &new, 30).len(), 2);
    }

    #[test]
    fn a_watcher_gets_the_output_and_the_end_and_a_full_one_is_dropped() {
        let live = Live::default();
        let (relay, _srun) = mpsc::channel(RELAY_QUEUE);
        live.open((1, 0), relay, None, &shape(), false);
        let started = pb::StepEvent::default();
        let mut w = live.watch(1, 0, started.clone()).unwrap();
        let out =
            pb::step_event::Event::Output(pb::TaskOutput { task: 0, stdout: b"hi".to_vec(), stderr: vec![] });
        live.tell_watchers(1, 0, &out);
        assert_eq!(w.try_recv().unwrap().unwrap(), started);
        assert_eq!(w.try_recv().unwrap().unwrap().event, Some(out.clone()));
        // A watcher that does not read is dropped once its queue is full; srun's relay is untouched.
        let slow = live.watch(1, 0, started.clone()).unwrap();
        for _ in 0..=RELAY_QUEUE {
            live.tell_watchers(1, 0, &out);
            let _ = w.try_recv();
        }
        drop(slow);
        live.finish(1, 0, JobState::Completed);
        let last = std::iter::from_fn(|| w.try_recv().ok()).last().unwrap().unwrap();
        assert!(matches!(last.event, Some(pb::step_event::Event::Ended(_))), "{last:?}");
        assert!(live.watch(1, 0, started).unwrap_err().contains("not running"));
    }

    #[test]
    fn an_allocation_without_an_srun_for_the_grace_is_named() {
        let live = Live::default();
        let t0 = Instant::now();
        assert!(live.unheld(t0, &[5, 6]).is_empty(), "first seen now");
        let hold = live.hold(5);
        let later = t0 + DETACHED_GRACE + Duration::from_secs(1);
        assert_eq!(live.unheld(later, &[5, 6]), [6]);
        drop(hold);
        let detached = Instant::now();
        assert!(live.unheld(detached, &[5]).is_empty(), "just detached");
        assert_eq!(live.unheld(detached + DETACHED_GRACE, &[5]), [5]);
    }
}
