//! sattach: a second reader of a running step's output. The step's srun
//! keeps its relay; each sattach gets its own bounded queue beside it
//! ([`super::live::Live::watch`]), fed without waiting, so an sattach that
//! stops reading is dropped rather than slowing the step's tasks. Output only:
//! stdin stays srun's.

use crate::accounting::Caller;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::jobs::JobService;
use spur_proto::v1 as pb;
use tokio::sync::mpsc;

impl JobService {
    /// The step's output from now on, after a StepStarted naming its nodes and task count.
    pub fn attach(
        &self,
        role: Role,
        caller: &Caller,
        job: u64,
        step: u32,
    ) -> Result<mpsc::Receiver<std::result::Result<pb::StepEvent, tonic::Status>>> {
        let started = {
            let q = self.lock();
            let j = q.get(job)?;
            crate::jobs::queue::owns(role, caller, j)?;
            let s = j.step(step).filter(|s| s.is_running());
            let s = s.ok_or_else(|| Error::NotFound(format!("step {job}.{step} is not running")))?;
            let (nodes, tasks_per_node) = (s.nodes.clone(), s.tasks.clone());
            pb::StepStarted {
                job_id: job,
                step_id: step,
                nodes,
                ntasks: s.tasks.iter().sum(),
                tasks_per_node,
                node_tasks: crate::jobs::steps::layout::Shape::node_tasks(&s.ids),
            }
        };
        let first = pb::StepEvent { event: Some(pb::step_event::Event::Started(started)) };
        self.live.watch(job, step, first).map_err(Error::FailedPrecondition)
    }
}
