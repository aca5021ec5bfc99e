//! The step transitions, Queue methods like every other job transition:
//! they read the records and return effects (the job's next record, and the
//! agent commands that launch or signal the step's tasks), and change nothing.

use super::env::step_env;
use super::layout::{self, Shape};
use super::stdin::Feed;
use super::{MAX_STEPS, StepLog, StepRecord};
use crate::accounting::Caller;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::jobs::effect::{Effect, Effects};
use crate::jobs::ending::ended;
use crate::jobs::queue::{Queue, owns};
use crate::jobs::record::JobRecord;
use spur_proto::v1 as pb;
use spur_vocab::JobState;

/// A step srun may start in `j`: the caller's (or an Operator's) running job.
pub(crate) fn may_step(role: Role, caller: &Caller, j: &JobRecord) -> Result<()> {
    owns(role, caller, j)?;
    match j.state {
        JobState::Running => {}
        s if s.is_active() => {
            return Err(Error::FailedPrecondition(format!(
                "job {} is {}: a step runs in a running job",
                j.id,
                s.as_str()
            )));
        }
        s => {
            return Err(Error::FailedPrecondition(format!(
                "job {} has ended ({}): Job/step already completing or completed",
                j.id,
                s.as_str()
            )));
        }
    }
    let next = j.steps.as_ref().map_or(0, |s| s.next);
    if next >= MAX_STEPS {
        return Err(Error::FailedPrecondition(format!(
            "job {} has started {next} steps, the most one job may (Slurm's MaxStepCount)",
            j.id
        )));
    }
    Ok(())
}

/// The step's name: `-J`, else its program's (as Slurm names a step).
fn step_name(req: &pb::StepRequest) -> String {
    if !req.name.is_empty() {
        return req.name.clone();
    }
    let prog = req.argv.first().map_or("", String::as_str);
    std::path::Path::new(prog).file_name().map_or(prog.to_string(), |n| n.to_string_lossy().into_owned())
}

/// The launch of step `step`'s tasks on node `i` of `s`.
fn launch(
    j: &JobRecord,
    step: u32,
    s: &Shape,
    i: usize,
    req: &pb::StepRequest,
    env: &[pb::KeyValue],
    feed: Feed,
) -> Effect {
    let node = s.nodes[i].clone();
    let cmd = pb::agent_command::Cmd::LaunchStep(pb::LaunchStep {
        job_id: j.id,
        step_id: step,
        node: node.clone(),
        node_index: u32::try_from(i).unwrap_or(u32::MAX),
        tasks: s.task_ids(i).to_vec(),
        argv: req.argv.clone(),
        env: env.to_vec(),
        workdir: if req.workdir.is_empty() { j.workdir.clone() } else { req.workdir.clone() },
        stdout_path: req.stdout_path.clone(),
        stderr_path: req.stderr_path.clone(),
        user: j.user.clone(),
        job_name: j.name.clone(),
        hres_prep: j.hres_prep_json(),
        uid: j.uid,
        gid: j.gid,
        stdin_tasks: s.task_ids(i).iter().copied().filter(|&t| feed.takes(t)).collect(),
        pty: req.pty && s.task_ids(i).contains(&0),
        pty_rows: req.pty_rows,
        pty_cols: req.pty_cols,
    });
    Effect::Command { job: j.id, node, cmd: pb::AgentCommand { cmd: Some(cmd) } }
}

impl Queue {
    /// srun's step `req` at `now`: laid out in the job, recorded RUNNING
    /// under the job's next step id, and its tasks launched on its nodes.
    pub fn step_start(
        &self,
        role: Role,
        caller: &Caller,
        req: &pb::StepRequest,
        now: i64,
    ) -> Result<(Effects, u32, Shape)> {
        let j = self.get(req.job_id)?;
        may_step(role, caller, j)?;
        if req.argv.first().is_none_or(|p| p.is_empty()) {
            return Err(Error::invalid("argv", "no program to run"));
        }
        let shape = layout::shape(j, req)?;
        let feed = Feed::parse(&req.input, shape.ntasks())?;
        let mut n = j.clone();
        let log = n.steps.get_or_insert_with(|| Box::new(StepLog::default()));
        let id = log.next;
        log.next += 1;
        log.list.push(StepRecord {
            id,
            name: step_name(req),
            state: JobState::Running,
            nodes: shape.nodes.clone(),
            tasks: shape.tasks.clone(),
            ids: shape.unblocked_ids(),
            cpus_per_task: shape.cpus_per_task,
            mem_mb: shape.mem_mb,
            start_ms: now,
            ..StepRecord::default()
        });
        let base: Vec<(String, String)> =
            req.env.iter().map(|kv| (kv.key.clone(), kv.value.clone())).collect();
        let env: Vec<pb::KeyValue> = step_env(j, id, &shape, &base)
            .into_iter()
            .map(|(key, value)| pb::KeyValue { key, value })
            .collect();
        let mut fx = Effects::default();
        fx.persist(n);
        for i in 0..shape.nodes.len() {
            fx.push(launch(j, id, &shape, i, req, &env, feed));
        }
        Ok((fx, id, shape))
    }

    /// Step `step` of `job` ended in `state` with `exit` (code, signal) at
    /// `now`. A step that is no longer running (its job ended first) keeps its end.
    pub fn step_end(&self, job: u64, step: u32, state: JobState, exit: (i32, i32), now: i64) -> Effects {
        let Some(j) = self.jobs().get(&job) else { return Effects::default() };
        if !j.step(step).is_some_and(StepRecord::is_running) {
            return Effects::default();
        }
        let mut n = j.clone();
        if let Some(s) = n.steps.as_mut().and_then(|l| l.list.iter_mut().find(|s| s.id == step)) {
            s.state = state;
            (s.exit_code, s.signal) = exit;
            s.end_ms = now;
        }
        Effect::Persist(n).into()
    }

    /// The allocation srun made ends with its step: COMPLETED, or FAILED
    /// with srun's exit code.
    pub fn release(&self, job: u64, exit_code: i32, now: i64) -> Effects {
        match self.jobs().get(&job).filter(|j| j.is_allocation() && j.state == JobState::Running) {
            Some(j) if exit_code == 0 => Effect::Persist(ended(j, JobState::Completed, 0, None, now)).into(),
            Some(j) => Effect::Persist(ended(
                j,
                JobState::Failed,
                exit_code,
                Some(spur_vocab::reason::ReasonCode::NonZeroExitCode),
                now,
            ))
            .into(),
            None => Effects::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> Queue {
        let mut q = Queue::default();
        let j = JobRecord {
            id: 7,
            user: "alice".into(),
            state: JobState::Running,
            nodes: vec!["n1".into(), "n2".into()],
            alloc: (4, 0, 0),
            ..JobRecord::default()
        };
        q.jobs_mut().insert(7, j);
        q
    }

    fn alice() -> Caller {
        Caller { user: "alice".into(), ..Caller::default() }
    }

    fn req(ntasks: u32) -> pb::StepRequest {
        pb::StepRequest { job_id: 7, ntasks, argv: vec!["/bin/hostname".into()], ..Default::default() }
    }

    #[test]
    fn a_step_is_recorded_running_and_launched_on_each_of_its_nodes() {
        let q = queue();
        let (fx, id, shape) = q.step_start(Role::None, &alice(), &req(4), 100).unwrap();
        assert_eq!((id, shape.tasks.as_slice()), (0, &[2, 2][..]));
        let rec = fx.persisted()[0];
        let s = rec.step(0).unwrap();
        assert_eq!(
            (s.name.as_str(), s.state, s.start_ms, s.ntasks()),
            ("hostname", JobState::Running, 100, 4)
        );
        let launches: Vec<(String, Vec<u32>)> = (fx.0.iter())
            .filter_map(|e| match e {
                Effect::Command {
                    node,
                    cmd: pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::LaunchStep(l)) },
                    ..
                } => Some((node.clone(), l.tasks.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(launches, [("n1".into(), vec![0, 1]), ("n2".into(), vec![2, 3])]);
        let mut q = q;
        q.jobs_mut().insert(7, rec.clone());
        let (fx, id, _) = q.step_start(Role::None, &alice(), &req(1), 200).unwrap();
        assert_eq!(id, 1, "ids count up");
        q.jobs_mut().insert(7, fx.persisted()[0].clone());
        let done = q.step_end(7, 0, JobState::Failed, (3, 0), 300);
        let s = done.persisted()[0].step(0).cloned().unwrap();
        assert_eq!((s.state, s.exit_code, s.end_ms), (JobState::Failed, 3, 300));
        q.jobs_mut().insert(7, done.persisted()[0].clone());
        assert!(q.step_end(7, 0, JobState::Completed, (0, 0), 400).is_empty(), "an ended step keeps its end");
    }

    #[test]
    fn the_launches_name_the_tasks_srun_s_stdin_feeds_and_task_0_s_pty() {
        let q = queue();
        let stdin_tasks = |input: &str| {
            let r = pb::StepRequest { input: input.into(), ..req(4) };
            let (fx, _, _) = q.step_start(Role::None, &alice(), &r, 100).unwrap();
            (fx.0.iter())
                .filter_map(|e| match e {
                    Effect::Command {
                        cmd: pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::LaunchStep(l)) },
                        ..
                    } => Some(l.stdin_tasks.clone()),
                    _ => None,
                })
                .collect::<Vec<Vec<u32>>>()
        };
        let none: Vec<u32> = vec![];
        let r = pb::StepRequest { pty: true, pty_rows: 40, pty_cols: 100, ..req(4) };
        let (fx, _, _) = q.step_start(Role::None, &alice(), &r, 100).unwrap();
        let ptys: Vec<(bool, u32, u32)> = (fx.0.iter())
            .filter_map(|e| match e {
                Effect::Command {
                    cmd: pb::AgentCommand { cmd: Some(pb::agent_command::Cmd::LaunchStep(l)) },
                    ..
                } => Some((l.pty, l.pty_rows, l.pty_cols)),
                _ => None,
            })
            .collect();
        assert_eq!(ptys, [(true, 40, 100), (false, 40, 100)], "--pty: task 0's node only");
        assert_eq!(stdin_tasks(""), [vec![0], none.clone()], "task 0, as Slurm's srun");
        assert_eq!(stdin_tasks("3"), [none.clone(), vec![3]]);
        assert_eq!(stdin_tasks("all"), [vec![0, 1], vec![2, 3]]);
        assert_eq!(stdin_tasks("none"), [none.clone(), none]);
        let r = pb::StepRequest { input: "4".into(), ..req(4) };
        let e = q.step_start(Role::None, &alice(), &r, 100).unwrap_err().to_string();
        assert!(e.contains("input"), "{e}");
    }

    #[test]
    fn a_step_is_refused_to_others_in_jobs_not_running_and_past_the_cap() {
        let mut q = queue();
        let bob = Caller { user: "bob".into(), ..Caller::default() };
        let e = q.step_start(Role::None, &bob, &req(1), 0).unwrap_err();
        assert!(matches!(e, Error::PermissionDenied(_)), "{e}");
        assert!(q.step_start(Role::Operator, &bob, &req(1), 0).is_ok(), "an Operator may");
        let no_prog = pb::StepRequest { argv: vec![], ..req(1) };
        assert!(
            q.step_start(Role::None, &alice(), &no_prog, 0).unwrap_err().to_string().starts_with("argv:")
        );
        q.jobs_mut().get_mut(&7).unwrap().steps =
            Some(Box::new(StepLog { next: MAX_STEPS, ..StepLog::default() }));
        let e = q.step_start(Role::None, &alice(), &req(1), 0).unwrap_err().to_string();
        assert!(e.contains("40000 steps") && e.contains("MaxStepCount"), "{e}");
        q.jobs_mut().get_mut(&7).unwrap().state = JobState::Completed;
        let e = q.step_start(Role::None, &alice(), &req(1), 0).unwrap_err().to_string();
        assert!(e.contains("has ended (COMPLETED)"), "{e}");
        q.jobs_mut().get_mut(&7).unwrap().state = JobState::Pending;
        assert!(
            q.step_start(Role::None, &alice(), &req(1), 0).unwrap_err().to_string().contains("is PENDING")
        );
    }

    #[test]
    fn a_job_s_signal_reaches_its_steps_on_its_other_nodes() {
        let mut q = queue();
        let (fx, _, _) = q.step_start(Role::None, &alice(), &req(2), 0).unwrap();
        q.jobs_mut().insert(7, fx.persisted()[0].clone());
        let fx = q.cancel(&[7], 10, 1);
        let sent: Vec<&str> = (fx.0.iter())
            .filter_map(|e| match e {
                Effect::Command { node, .. } => Some(node.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!((fx.signals().len(), sent), (1, vec!["n2"]), "the first node's agent signals its own");
    }

    #[test]
    fn an_allocation_ends_with_its_step_s_code() {
        let mut q = queue();
        assert!(q.release(7, 0, 1).is_empty(), "a batch job is not released by a step");
        q.jobs_mut().get_mut(&7).unwrap().steps =
            Some(Box::new(StepLog { allocation: true, ..StepLog::default() }));
        let fx = q.release(7, 3, 9);
        let j = fx.persisted()[0];
        assert_eq!((j.state, j.exit_code, j.end_ms), (JobState::Failed, 3, 9));
        assert_eq!(q.release(7, 0, 9).persisted()[0].state, JobState::Completed);
    }
}
