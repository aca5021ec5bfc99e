//! Steps end to end: srun's RunStep (wait for the allocation srun made,
//! start the step, relay its output, forward srun's signals, end it, and
//! release the allocation), the agents' StepIo (output and task ends from
//! each node), scancel of a step, and the watch over allocations no srun
//! is attached to any more.

use super::layout::Shape;
use super::live::{Next, RELAY_QUEUE, Relay, signal_step};
use super::stdin::{Feed, MAX_STDIN_CHUNK};
use crate::accounting::Caller;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::jobs::JobService;
use crate::jobs::effect::{Effect, Effects, SIGKILL, SIGTERM};
use crate::jobs::transition::Held;
use crate::store::now_ms;
use spur_proto::v1 as pb;
use spur_vocab::JobState;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::{Stream, StreamExt};
use tonic::Status;

/// How often allocations are checked for an srun.
const WATCH_EVERY: Duration = Duration::from_secs(2);

type Inbound = std::pin::Pin<Box<dyn Stream<Item = std::result::Result<pb::StepInput, Status>> + Send>>;

fn event(e: pb::step_event::Event) -> std::result::Result<pb::StepEvent, Status> {
    Ok(pb::StepEvent { event: Some(e) })
}

/// srun went away, or the job will not run.
enum Wait {
    Gone,
    Failed(Error),
}

impl JobService {
    /// srun's RunStep: checks the caller may run a step in the job, then
    /// drives the step on a task of its own; its events come on the receiver.
    pub async fn run_step(
        self: &Arc<Self>,
        role: Role,
        caller: Caller,
        req: pb::StepRequest,
        inbound: Inbound,
    ) -> Result<mpsc::Receiver<std::result::Result<pb::StepEvent, Status>>> {
        {
            let q = self.lock();
            let j = q.get(req.job_id)?;
            crate::jobs::queue::owns(role, &caller, j)?;
            if req.hold && !req.release {
                return Err(Error::invalid(
                    "hold",
                    "only the stream that made the allocation holds it (release)",
                ));
            }
            if req.release && !j.is_allocation() {
                return Err(Error::invalid(
                    "release",
                    format!("job {} is not an allocation srun made", j.id),
                ));
            }
        }
        let (tx, rx) = mpsc::channel(RELAY_QUEUE);
        let me = self.clone();
        tokio::spawn(async move { me.drive(role, caller, req, inbound, tx).await });
        Ok(rx)
    }

    async fn drive(
        self: Arc<Self>,
        role: Role,
        caller: Caller,
        req: pb::StepRequest,
        mut inbound: Inbound,
        tx: Relay,
    ) {
        let job = req.job_id;
        let _hold = req.release.then(|| self.live.hold(job));
        if req.release {
            match self.await_running(job, &tx).await {
                Ok(()) => {}
                Err(Wait::Gone) => return self.cancel_allocation(job).await,
                Err(Wait::Failed(e)) => {
                    let _ = tx.send(Err(e.into())).await;
                    return self.cancel_allocation(job).await;
                }
            }
        }
        if req.hold {
            return self.hold(job, inbound, tx).await;
        }
        let (done, mut ended) = oneshot::channel();
        let (step, shape) = match self.start_step(role, &caller, &req, tx.clone(), done).await {
            Ok(s) => s,
            Err(e) => {
                let _ = tx.send(Err(e.into())).await;
                if req.release {
                    self.release(job, 1).await;
                }
                return;
            }
        };
        let started = pb::StepStarted {
            job_id: job,
            step_id: step,
            nodes: shape.nodes.clone(),
            ntasks: shape.ntasks(),
            tasks_per_node: shape.tasks.clone(),
            node_tasks: Shape::node_tasks(&shape.unblocked_ids()),
        };
        let _ = tx.send(event(pb::step_event::Event::Started(started))).await;
        // Known valid: the step started with it.
        let feed = Feed::parse(&req.input, shape.ntasks()).unwrap_or(Feed::None);
        let stdin = self.live.credits.open((job, step), &feed.nodes(&shape));
        let window = &stdin.window;
        let mut open = true;
        loop {
            // No room on a node: srun's stream is not read (HTTP/2 holds srun) until a credit comes.
            let room = window.room();
            tokio::select! {
                _ = window.more.notified(), if open && !room => {}
                end = &mut ended => {
                    let end = end.unwrap_or_else(|_| pb::StepEnded {
                        state: spur_proto::states::state_wire(JobState::Cancelled),
                        exit_code: 1,
                        message: "the controller lost the step".into(),
                    });
                    let code = end.exit_code;
                    let _ = tx.send(event(pb::step_event::Event::Ended(end))).await;
                    if req.release {
                        self.release(job, code).await;
                    }
                    return;
                }
                msg = inbound.next(), if open && room => match msg {
                    Some(Ok(pb::StepInput { input: Some(pb::step_input::Input::Signal(sig)) })) => {
                        self.signal_live(job, step, sig, 0).await;
                    }
                    Some(Ok(pb::StepInput { input: Some(pb::step_input::Input::Cancel(true)) })) => {
                        self.cancel_step(job, step).await;
                    }
                    Some(Ok(pb::StepInput { input: Some(pb::step_input::Input::Stdin(data)) })) => {
                        if data.len() > MAX_STDIN_CHUNK {
                            let why = format!("stdin: a piece of {} bytes; at most {MAX_STDIN_CHUNK}", data.len());
                            let _ = tx.send(Err(Status::invalid_argument(why))).await;
                            return self.srun_gone(job, step, req.release).await;
                        }
                        self.stdin((job, step), window, data, false).await;
                    }
                    Some(Ok(pb::StepInput { input: Some(pb::step_input::Input::StdinEof(true)) })) => {
                        self.stdin((job, step), window, vec![], true).await;
                    }
                    Some(Ok(_)) => {}
                    // srun has nothing more to say; it still listens.
                    None => open = false,
                    Some(Err(_)) => return self.srun_gone(job, step, req.release).await,
                },
                _ = tx.closed() => return self.srun_gone(job, step, req.release).await,
            }
        }
    }

    /// salloc's hold: the allocation has started; it lives until salloc
    /// relinquishes it with its command's code, or goes away (then it is cancelled).
    async fn hold(&self, job: u64, mut inbound: Inbound, tx: Relay) {
        let mut nodes = vec![];
        self.visit(Some(&[job]), |j| nodes = j.nodes.clone());
        let started = pb::StepStarted { job_id: job, step_id: 0, nodes, ..Default::default() };
        if tx.send(event(pb::step_event::Event::Started(started))).await.is_err() {
            return self.cancel_allocation(job).await;
        }
        let mut batches = self.subscribe();
        let mut open = true;
        loop {
            let mut state = None;
            self.visit(Some(&[job]), |j| state = Some(j.state));
            // scancel or the time limit ended it: salloc hears how.
            if let Some(s) =
                state.filter(|s| !s.is_active()).or(state.is_none().then_some(JobState::Cancelled))
            {
                let end = pb::StepEnded {
                    state: spur_proto::states::state_wire(s),
                    exit_code: 1,
                    message: format!("job {job} ended ({})", s.as_str()),
                };
                let _ = tx.send(event(pb::step_event::Event::Ended(end))).await;
                return;
            }
            tokio::select! {
                _ = batches.recv() => {}
                // A missed batch costs a second at most.
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                msg = inbound.next(), if open => match msg {
                    Some(Ok(pb::StepInput { input: Some(pb::step_input::Input::Relinquish(code)) })) => {
                        self.release(job, code).await;
                        let state = if code == 0 { JobState::Completed } else { JobState::Failed };
                        let end = pb::StepEnded {
                            state: spur_proto::states::state_wire(state),
                            exit_code: code,
                            message: String::new(),
                        };
                        let _ = tx.send(event(pb::step_event::Event::Ended(end))).await;
                        return;
                    }
                    Some(Ok(_)) => {}
                    None => open = false,
                    Some(Err(_)) => return self.cancel_allocation(job).await,
                },
                _ = tx.closed() => return self.cancel_allocation(job).await,
            }
        }
    }

    /// Waits for the allocation `job` to start, telling srun once that it waits.
    async fn await_running(&self, job: u64, tx: &Relay) -> std::result::Result<(), Wait> {
        let mut batches = self.subscribe();
        let mut told = false;
        loop {
            let mut state = None;
            self.visit(Some(&[job]), |j| state = Some(j.state));
            match state {
                None => return Err(Wait::Failed(Error::NotFound(format!("job {job} does not exist")))),
                Some(JobState::Running) => return Ok(()),
                Some(s) if s.is_active() => {
                    if !told {
                        told = true;
                        if tx.send(event(pb::step_event::Event::Pending(job))).await.is_err() {
                            return Err(Wait::Gone);
                        }
                    }
                }
                Some(s) => {
                    return Err(Wait::Failed(Error::FailedPrecondition(format!(
                        "job {job} ended before it started ({})",
                        s.as_str()
                    ))));
                }
            }
            tokio::select! {
                _ = batches.recv() => {}
                _ = tx.closed() => return Err(Wait::Gone),
                // A missed batch costs a second at most.
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
    }

    /// Records the step and launches its tasks; its srun is listening on `relay`.
    async fn start_step(
        &self,
        role: Role,
        caller: &Caller,
        req: &pb::StepRequest,
        relay: Relay,
        done: oneshot::Sender<pb::StepEnded>,
    ) -> Result<(u32, Shape)> {
        let job = req.job_id;
        let mut done = Some(done);
        let mut opened: Option<(u32, Shape)> = None;
        let applied = self
            .transit(&[job], |q| {
                let (fx, step, shape) = q.step_start(role, caller, req, now_ms())?;
                // Before the launch: the first output may come at once.
                self.live.open((job, step), relay.clone(), done.take(), &shape, req.kill_on_bad_exit);
                opened = Some((step, shape));
                Ok(fx)
            })
            .await;
        let (step, shape) = match (applied, opened) {
            (Ok(a), Some(o)) => {
                for (j, s, node) in a.unsent_steps {
                    self.node_lost(j, s, &node).await;
                }
                o
            }
            (Err(e), opened) => {
                if let Some((step, _)) = opened {
                    self.live.remove(job, step);
                }
                return Err(e);
            }
            (Ok(_), None) => {
                return Err(Error::FailedPrecondition(format!("job {job}: the step was not started")));
            }
        };
        Ok((step, shape))
    }

    /// srun's stream went away: its step is cancelled, and the allocation it made ends.
    async fn srun_gone(&self, job: u64, step: u32, release: bool) {
        if release {
            self.cancel_allocation(job).await;
        } else {
            self.cancel_step(job, step).await;
        }
    }

    async fn cancel_allocation(&self, job: u64) {
        let _ = self.transit(&[job], |q| Ok(q.cancel(&[job], 0, now_ms()))).await;
    }

    async fn release(&self, job: u64, code: i32) {
        if let Err(e) = self.transit(&[job], |q| Ok(q.release(job, code, now_ms()))).await {
            tracing::warn!(job, error = %e, "could not end the allocation with its step; cancelling it");
            self.cancel_allocation(job).await;
        }
    }

    /// Sends `signal` to the step's tasks still out, through their agents.
    async fn command(&self, job: u64, step: u32, nodes: Vec<String>, signal: i32, kill_wait: u32) {
        let fx = Effects(
            (nodes.into_iter())
                .map(|node| Effect::Command {
                    job,
                    node,
                    cmd: signal_step(job, Some(step), signal, kill_wait),
                })
                .collect(),
        );
        let _ = self.apply(fx, Held::none(), |_| {}).await;
    }

    /// srun's Ctrl-C, scancel --signal: the signal to the step's tasks.
    async fn signal_live(&self, job: u64, step: u32, signal: i32, kill_wait: u32) -> bool {
        match self.live.nodes_left(job, step) {
            Some(nodes) => {
                self.command(job, step, nodes, signal, kill_wait).await;
                true
            }
            None => false,
        }
    }

    /// Ends a step: SIGTERM to its tasks, SIGKILL after KillWait; it ends
    /// CANCELLED once they have. A recorded step no srun relays ends at once.
    pub(crate) async fn cancel_step(&self, job: u64, step: u32) -> bool {
        let kill_wait = self.lock().kill_wait;
        if let Some(nodes) = self.live.cancel(job, step) {
            self.command(job, step, nodes, SIGTERM, kill_wait).await;
            return true;
        }
        let running = self.lock().jobs().get(&job).and_then(|j| j.step(step)).is_some_and(|s| s.is_running());
        if running {
            let end = |q: &crate::jobs::queue::Queue| {
                Ok(q.step_end(job, step, JobState::Cancelled, (0, 0), now_ms()))
            };
            return self.transit(&[job], end).await.is_ok();
        }
        false
    }

    /// The step's record ends; the install tells srun (see `live::follow`).
    async fn end_step(&self, job: u64, step: u32, state: JobState, exit: (i32, i32)) {
        let r = self.transit(&[job], |q| Ok(q.step_end(job, step, state, exit, now_ms()))).await;
        if let Err(e) = r {
            tracing::warn!(job, step, error = %e, "could not record the step's end");
        }
        // A step whose record had ended already (or could not be written) is told here.
        if let Some(nodes) = self.live.finish(job, step, state) {
            let kill_wait = self.lock().kill_wait;
            self.command(job, step, nodes, SIGTERM, kill_wait).await;
        }
    }

    async fn next(&self, job: u64, step: u32, next: Next) {
        match next {
            Next::Wait => {}
            Next::Kill(nodes) => self.command(job, step, nodes, SIGKILL, 0).await,
            Next::End { state, exit } => self.end_step(job, step, state, exit).await,
        }
    }

    /// `node` is lost with tasks of the step out: the step ends NODE_FAIL.
    async fn node_lost(&self, job: u64, step: u32, node: &str) {
        if let Some(next) = self.live.node_lost(job, step, node) {
            tracing::warn!(job, step, node, "a node of the step was lost");
            self.next(job, step, next).await;
        }
    }

    /// An agent's StepIo stream for one step on one of its nodes.
    pub async fn step_io(
        &self,
        agent_nodes: &[String],
        first: pb::StepReport,
        mut rest: impl Stream<Item = std::result::Result<pb::StepReport, Status>> + Unpin,
    ) -> Result<()> {
        let (job, step, node) = (first.job_id, first.step_id, first.node.clone());
        if !agent_nodes.contains(&node) {
            return Err(Error::PermissionDenied(format!("node {node} is not this agent's")));
        }
        if !self.live.hosts(job, step, &node) {
            return Err(Error::FailedPrecondition(format!("step {job}.{step} has no tasks out on {node}")));
        }
        self.on_report(job, step, &node, first).await;
        while let Some(Ok(m)) = rest.next().await {
            self.on_report(job, step, &node, m).await;
        }
        // The stream ended with tasks unreported: they are lost with it.
        if self.live.hosts(job, step, &node) {
            self.node_lost(job, step, &node).await;
        }
        Ok(())
    }

    async fn on_report(&self, job: u64, step: u32, node: &str, m: pb::StepReport) {
        let relay = self.live.relay(job, step);
        let relay = &relay;
        let say = |e: pb::step_event::Event| async move {
            self.live.tell_watchers(job, step, &e);
            if let Some(r) = relay {
                // srun may be gone: its step is being cancelled, the output has nowhere to go.
                let _ = r.send(event(e)).await;
            }
        };
        if m.stdin_written > 0 {
            self.live.credits.written((job, step), node, m.stdin_written);
        }
        if !m.stdout.is_empty() || !m.stderr.is_empty() {
            let out = pb::TaskOutput { task: m.task, stdout: m.stdout, stderr: m.stderr };
            say(pb::step_event::Event::Output(out)).await;
        }
        if !m.failed.is_empty() {
            let text = format!("spurd: error: {node}: {}\n", m.failed);
            say(pb::step_event::Event::Output(pb::TaskOutput {
                task: m.task,
                stderr: text.into(),
                ..Default::default()
            }))
            .await;
            while self.live.hosts(job, step, node) {
                let next = self.live.task_ended((job, step), node, 1, 0);
                self.next(job, step, next).await;
            }
        }
        if let Some(e) = m.exit {
            let ended =
                pb::TaskEnded { task: m.task, node: node.into(), exit_code: e.exit_code, signal: e.signal };
            say(pb::step_event::Event::TaskEnded(ended)).await;
            let next = self.live.task_ended((job, step), node, e.exit_code, e.signal);
            self.next(job, step, next).await;
        }
    }

    /// scancel ID.STEP: each step named (`(job, step)`) is cancelled, or with
    /// a signal, signalled. Every job must be the caller's before any is
    /// touched. Returns the steps acted on.
    pub async fn signal_steps(
        &self,
        role: Role,
        caller: &Caller,
        steps: &[(u64, u32)],
        signal: i32,
    ) -> Result<Vec<(u64, u32)>> {
        {
            let q = self.lock();
            for (job, _) in steps {
                crate::jobs::queue::owns(role, caller, q.get(*job)?)?;
            }
        }
        let mut done = vec![];
        for &(job, step) in steps {
            let acted = if signal == 0 {
                self.cancel_step(job, step).await
            } else {
                self.signal_live(job, step, signal, 0).await
            };
            if acted {
                done.push((job, step));
            }
        }
        Ok(done)
    }

    /// Cancels the allocations srun made that no srun has been attached to
    /// for the grace period (one killed before it attached, a controller restart).
    pub fn spawn_step_watch(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let me = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(WATCH_EVERY);
            loop {
                tick.tick().await;
                let active: Vec<u64> = me.select(None, |j| {
                    (j.is_active() && j.is_allocation() && !j.is_detached()).then_some(j.id)
                });
                for job in me.live.unheld(std::time::Instant::now(), &active) {
                    tracing::warn!(job, "no srun is attached to the allocation it made; cancelling it");
                    me.cancel_allocation(job).await;
                }
            }
        })
    }
}
