//! HRES plugins on a node: the job's plugin data (from its launch) written
//! where the job can read it, and the node functions the supervisor and the
//! step tasks run around the job and each task.

use super::link::Link;
use serde::{Deserialize, Serialize};
use spur_hres_lua::node::PREP_ENV;
use spur_hres_lua::{Failure, HresRun, func};
use spur_proto::v1 as pb;
use std::path::{Path, PathBuf};

/// A failed node job function: `phase` is `prolog` or `epilog`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HresFailed {
    pub phase: String,
    /// ESLURM_HRES_REMOTE_FAIL: the node is not drained.
    pub remote: bool,
    pub message: String,
}

/// The job's plugin data, in force for this run on this node.
#[derive(Debug)]
pub struct Hres {
    pub prep: HresRun,
    pub file: PathBuf,
}

impl Hres {
    /// Reads the launch's JSON and writes it to `file` (the state directory's
    /// `hres_path`), where the job can read it; None without plugins. `env`
    /// gains `SPUR_HRES_PREP` naming the file.
    pub fn install(file: &Path, json: &str, env: &mut Vec<(String, String)>) -> Result<Option<Hres>, String> {
        if json.is_empty() {
            return Ok(None);
        }
        let prep: HresRun = serde_json::from_str(json).map_err(|e| format!("bad HRES plugin data: {e}"))?;
        let file = file.to_path_buf();
        prep.write(&file)?;
        env.push((PREP_ENV.to_string(), file.display().to_string()));
        Ok(Some(Hres { prep, file }))
    }

    /// A step's tasks on this node: the job's data, and its job prolog when
    /// this is the job's first step here (the batch node ran it before the
    /// script). Err: the prolog failed, and the step's tasks fail with it.
    pub fn for_step(file: &Path, l: &pb::LaunchStep) -> Result<Option<Hres>, HresFailed> {
        let first = !file.exists();
        let mut env = vec![];
        let installed = Hres::install(file, &l.hres_prep, &mut env);
        let failed = |message| HresFailed { phase: "prolog".into(), remote: false, message };
        let Some(h) = installed.map_err(failed)? else { return Ok(None) };
        if first && let Some(f) = h.job_prolog() {
            tracing::error!(job = l.job_id, node = %l.node, "HRES job prolog failed: {}", f.message);
            return Err(f);
        }
        Ok(Some(h))
    }

    /// The node job prolog; the failure as the job's end reports it.
    pub fn job_prolog(&self) -> Option<HresFailed> {
        self.prep.job_function(func::JOB_PROLOG).map(|f| failed("prolog", f))
    }

    /// The node job epilog.
    pub fn job_epilog(&self) -> Option<HresFailed> {
        self.prep.job_function(func::JOB_EPILOG).map(|f| failed("epilog", f))
    }

    /// The task prolog, as root, before a task starts: Err fails the task.
    pub fn task_prolog(
        &self,
        node_tid: u32,
        global_tid: u32,
        env: &[(String, String)],
    ) -> Result<(), String> {
        match self.prep.task_function(func::TASK_PROLOG, node_tid, global_tid, env) {
            Some(f) => Err(format!("{}: {}", func::TASK_PROLOG, f.message)),
            None => Ok(()),
        }
    }

    /// The task epilog, after a task exits; failures are logged.
    pub fn task_epilog(&self, node_tid: u32, global_tid: u32, env: &[(String, String)]) {
        let _ = self.prep.task_function(func::TASK_EPILOG, node_tid, global_tid, env);
    }

    /// `argv` run through the user task prolog in the task's own process.
    pub fn wrap(&self, node_tid: u32, global_tid: u32, argv: Vec<String>) -> Vec<String> {
        let me = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("spurd"));
        spur_hres_lua::node::wrap(&me, &self.file, node_tid, global_tid, argv)
    }

    /// The job is over here: its data goes.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

/// Tells the controller a node job function failed on `node`, not the job's
/// batch node (it requeues or cancels the job for a prolog, and drains the
/// node unless REMOTE_FAIL).
pub async fn report_failed(link: &Link, job: u64, node: &str, f: &HresFailed) {
    let r = pb::JobReport {
        job_id: job,
        state: "exited".into(),
        hres_phase: f.phase.clone(),
        hres_remote: f.remote,
        hres_message: f.message.clone(),
        hres_node: node.to_string(),
        ..Default::default()
    };
    if let Err(s) = link.report(r).await {
        tracing::error!(job, error = %s.message(), "could not report a failed HRES job {}", f.phase);
    }
}

/// The job ended: its job epilog runs here if its job prolog did (the file
/// is there), and the file goes.
pub async fn end_job(file: PathBuf, (job, node): (u64, String), link: Link) {
    if !file.exists() {
        return;
    }
    let ran = tokio::task::spawn_blocking(move || {
        let out = HresRun::read(&file).map(|p| p.job_function(func::JOB_EPILOG).map(|f| failed("epilog", f)));
        let _ = std::fs::remove_file(&file);
        out
    })
    .await;
    match ran {
        Ok(Ok(Some(f))) => report_failed(&link, job, &node, &f).await,
        Ok(Err(e)) => tracing::error!(job, "HRES job epilog: {e}"),
        _ => {}
    }
}

fn failed(phase: &str, f: Failure) -> HresFailed {
    HresFailed { phase: phase.into(), remote: f.remote, message: f.message }
}
