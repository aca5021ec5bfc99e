//! The executor: the one place a transition's effects are applied. A
//! transition (a synchronous method of [`Queue`] in this module's siblings)
//! reads the current records and returns [`Effects`]; [`JobService::transit`]
//! runs it under the jobs' transition locks and applies what it returned:
//!
//! 1. persist: every record in one write (group commit). A store that
//!    refuses ends the transition there: nothing is installed or acted on,
//!    and memory stays as it was, so it never shows what the store did not take;
//! 2. install: the records go into the queue, and what follows from old and
//!    new (limit counts, node allocations, licences, the launching set, the
//!    Watch marks, the ended steps' sruns and leftover tasks) is derived
//!    here, in one place; the locks are released;
//! 3. act: launches, signals, agent commands, audit rows and the Watch
//!    flush, in the order the transition gave them.
//!
//! The locks are held from reading a record to installing the next, so two
//! transitions of one job never interleave (an update racing a cancel reads
//! the cancelled record, never a stale copy).

use super::JobService;
use super::effect::{Effect, Effects};
use super::queue::Queue;
use super::record::JobRecord;
use crate::error::Result;
use crate::store::TxnRow;
use spur_proto::v1 as pb;
use spur_vocab::JobState;
use tokio::sync::{Mutex, MutexGuard};

/// Transition locks: a job's is `id % STRIPES`, so the locks cost the same
/// for ten jobs or a million, and jobs in different stripes change at once.
const STRIPES: usize = 64;

pub(crate) struct Stripes(Vec<Mutex<()>>);

impl Default for Stripes {
    fn default() -> Self {
        Stripes((0..STRIPES).map(|_| Mutex::new(())).collect())
    }
}

/// The transition locks of some jobs, held until dropped.
pub(crate) struct Held<'a>(#[allow(dead_code)] Vec<MutexGuard<'a, ()>>);

impl Held<'_> {
    /// No locks: for a job no other transition can know yet (a submit).
    pub(crate) fn none() -> Self {
        Held(vec![])
    }
}

impl Stripes {
    /// Locks the stripes of `ids` in stripe order, so two callers never deadlock.
    pub(crate) async fn lock(&self, ids: impl IntoIterator<Item = u64>) -> Held<'_> {
        let mut idx: Vec<usize> = ids.into_iter().map(|id| (id % STRIPES as u64) as usize).collect();
        idx.sort_unstable();
        idx.dedup();
        let mut held = Vec::with_capacity(idx.len());
        for i in idx {
            held.push(self.0[i].lock().await);
        }
        Held(held)
    }
}

/// What applying a transition's effects came to, for its caller.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    /// Every job an effect named, once each, in order.
    pub jobs: Vec<u64>,
    /// Started jobs whose agent could not be handed the launch.
    pub unlaunched: Vec<u64>,
    /// Steps (job, step, node) whose launch on a node could not be sent.
    pub unsent_steps: Vec<(u64, u32, String)>,
}

/// An effect left for after the install, with what the install resolved.
#[allow(clippy::large_enum_variant)]
enum Act {
    Launch {
        job: u64,
        node: String,
        cmd: pb::AgentCommand,
    },
    Mail(super::mail::Mail),
    /// A run with HRES plugins ended (or went back to the queue) at `end_ms`
    /// on `nodes` (the ones after the batch node get EndJob for their job epilog).
    Epilog {
        run: Box<crate::hres_lua::HresRun>,
        end_ms: i64,
        nodes: Vec<String>,
    },
    Then(Effect),
}

impl JobService {
    /// Runs transition `t` on the queue under the transition locks of
    /// `ids` (every job it may change), then applies its effects. An error
    /// from `t` is a refusal: nothing is written and nothing changes.
    pub(crate) async fn transit<F>(&self, ids: &[u64], t: F) -> Result<Applied>
    where
        F: FnOnce(&Queue) -> Result<Effects>,
    {
        let held = self.stripes.lock(ids.iter().copied()).await;
        let fx = t(&self.lock())?;
        self.apply(fx, held, |_| {}).await
    }

    /// Applies `fx` under `held` (released once installed); `admit` runs
    /// under the queue lock of the install, with the records going in.
    pub(crate) async fn apply(
        &self,
        fx: Effects,
        held: Held<'_>,
        admit: impl FnOnce(&mut Queue),
    ) -> Result<Applied> {
        if fx.is_empty() {
            return Ok(Applied::default());
        }
        let jobs = fx.jobs();
        let records: Vec<&JobRecord> = fx.records().collect();
        if !records.is_empty() {
            self.persist(&records).await?;
        }
        let acts = self.install(fx, admit);
        drop(held);
        let (unlaunched, unsent_steps) = self.act(acts).await;
        Ok(Applied { jobs, unlaunched, unsent_steps })
    }

    /// Puts persisted records in place, with what follows from each change.
    fn install(&self, fx: Effects, admit: impl FnOnce(&mut Queue)) -> Vec<Act> {
        let mut acts = Vec::new();
        let (mut installed, mut licences) = (false, false);
        {
            let mut q = self.lock();
            admit(&mut q);
            for e in fx.0 {
                match e {
                    Effect::Persist(new) => {
                        let id = new.id;
                        let old = q.install(new);
                        let new = &q.jobs()[&id];
                        self.diag.note_change(old.as_ref(), new);
                        licences |= old.as_ref().is_some_and(|o| o.licenses_alloc != new.licenses_alloc);
                        self.settle_nodes(old.as_ref(), new);
                        if let Some(run) = old
                            .as_ref()
                            .filter(|o| o.is_placed() && !new.is_placed())
                            .and_then(|o| o.hres.clone())
                        {
                            let end_ms = if new.end_ms > 0 { new.end_ms } else { crate::store::now_ms() };
                            let nodes = old.as_ref().map(|o| o.nodes.clone()).unwrap_or_default();
                            acts.push(Act::Epilog { run, end_ms, nodes });
                        }
                        // Steps that ended: their srun is told, what is left of their tasks stopped.
                        for (node, cmd) in
                            super::steps::live::follow(&self.live, old.as_ref(), new, q.kill_wait)
                        {
                            acts.push(Act::Then(Effect::Command { job: id, node, cmd }));
                        }
                        if self.mailer.enabled()
                            && let Some(m) = super::mail::notice(old.as_ref(), new)
                        {
                            acts.push(Act::Mail(m));
                        }
                        installed = true;
                    }
                    Effect::IgnoreReport(id) => {
                        q.stale_reports.insert(id);
                    }
                    Effect::ReportIgnored(id) => {
                        q.stale_reports.remove(&id);
                    }
                    // Built now, from the record as installed: a later change must not alter this run.
                    // An allocation srun made has no script: nothing is launched for it.
                    Effect::Launch { job, node } => match q.jobs().get(&job).map(JobRecord::is_allocation) {
                        Some(true) => {
                            q.launching.remove(&job);
                        }
                        Some(false) => {
                            acts.push(Act::Launch { job, node, cmd: super::launch::launch(&q.jobs()[&job]) })
                        }
                        None => {}
                    },
                    other => acts.push(Act::Then(other)),
                }
            }
        }
        if licences {
            self.licenses.notify("");
        }
        if installed {
            self.changed();
            self.kick.notify_one();
        }
        acts
    }

    /// Acts in order; returns the jobs whose launch the agent did not take,
    /// and the steps whose launch on a node could not be sent.
    async fn act(&self, acts: Vec<Act>) -> (Vec<u64>, Vec<(u64, u32, String)>) {
        let (mut rows, mut unlaunched, mut unsent) = (vec![], vec![], vec![]);
        for a in acts {
            match a {
                Act::Launch { job, node, cmd } => {
                    let sent = self.link.send(&node, cmd).await;
                    self.lock().launching.remove(&job);
                    if let Err(e) = sent {
                        tracing::warn!(job, node, error = %e, "launch failed; requeueing");
                        unlaunched.push(job);
                    }
                }
                Act::Mail(m) => self.mailer.send(m),
                Act::Epilog { run, end_ms, nodes } => {
                    let job = run.job.job_id;
                    self.controller_epilog(*run, end_ms);
                    for node in nodes.iter().skip(1) {
                        let end = pb::EndJob { job_id: job, node: node.clone() };
                        let cmd = pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::EndJob(end)) };
                        if let Err(e) = self.link.send(node, cmd).await {
                            tracing::warn!(job, node, error = %e, "could not tell the node the job ended");
                        }
                    }
                }
                Act::Then(Effect::Signal { job, node, signal, kill_wait }) => {
                    self.signal_on(&node, job, signal, kill_wait).await
                }
                Act::Then(Effect::Audit { job, action, info }) => {
                    rows.push(TxnRow::system("job", &job.to_string(), action, info))
                }
                Act::Then(Effect::Flush) => self.flush(),
                Act::Then(Effect::Command { job, node, cmd }) => {
                    let step = match &cmd.cmd {
                        Some(pb::agent_command::Cmd::LaunchStep(l)) => Some(l.step_id),
                        _ => None,
                    };
                    if let Err(e) = self.link.send(&node, cmd).await {
                        tracing::warn!(job, node, error = %e, "could not send a step's command to its agent");
                        unsent.extend(step.map(|s| (job, s, node)));
                    }
                }
                Act::Then(_) => {}
            }
        }
        // One write for the transition's rows, as for its records.
        if !rows.is_empty() {
            self.nodes.hub().record_all(rows).await;
        }
        (unlaunched, unsent)
    }

    /// Sends `signal` to job `id`'s process group through the agent of `node`.
    async fn signal_on(&self, node: &str, id: u64, signal: i32, kill_wait_secs: u32) {
        let cmd = pb::AgentCommand {
            cmd: Some(pb::agent_command::Cmd::Signal(pb::SignalJob {
                job_id: id,
                signal,
                kill_wait_secs,
                ..Default::default()
            })),
        };
        if let Err(e) = self.link.send(node, cmd).await {
            tracing::warn!(job = id, node, signal, error = %e, "could not signal the job");
        }
    }

    /// Moves the job's footprint on its nodes from what `old` held to what `new` holds.
    fn settle_nodes(&self, old: Option<&JobRecord>, new: &JobRecord) {
        let was_placed = old.is_some_and(JobRecord::is_placed);
        let stays = was_placed && new.is_placed() && old.is_some_and(|o| o.nodes == new.nodes);
        if !stays {
            if let Some(old) = old.filter(|o| o.is_placed()) {
                self.nodes.allocate(&old.nodes, old.held(), true);
            }
            if new.is_placed() {
                self.nodes.allocate(&new.nodes, new.held(), false);
            }
        } else if old.is_some_and(|o| o.held() != new.held()) {
            // Suspend or resume: CPUs and GPUs move, memory and the job's place stay.
            let (cpus, _, gpus) = new.alloc;
            self.nodes.adjust(&new.nodes, (cpus, 0, gpus), new.state == JobState::Suspended, false);
        }
    }
}
