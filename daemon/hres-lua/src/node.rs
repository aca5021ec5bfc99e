//! The node functions, in spurd: each call loads the script into a new Lua
//! state (the same path as on the controller). Every resource's function of
//! a kind runs even after one fails; the first failure is what the node
//! reports. The job prolog and epilog run in the batch node's supervisor
//! (and on other nodes before their first step and when the job ends), the
//! task prolog and epilog around each task, and the user task prolog inside
//! the task's process, through `spurd __hres_task`, just before it becomes
//! the task.

use super::tables::{self, JobInfo, Prep};
use super::{Failure, Script, func};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// A run's plugin data, fixed at its start: on the job's record from its
/// start to its end, and what its nodes get, written beside the job as JSON,
/// named by [`PREP_ENV`] in its environment, readable by the job's user.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HresRun {
    pub job: JobInfo,
    pub resources: Vec<Prep>,
    /// PrologTimeout (job, task and user task prologs), in ms; None is no limit.
    #[serde(default)]
    pub prolog_timeout_ms: Option<u64>,
    /// EpilogTimeout (job and task epilogs).
    #[serde(default)]
    pub epilog_timeout_ms: Option<u64>,
    /// The controller's: an asynchronous pre-run of this run has not stored
    /// its result (the job is CONFIGURING).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub async_running: bool,
}

/// The environment variable naming the job's [`HresRun`].
pub const PREP_ENV: &str = "SPUR_HRES_PREP";

/// The first argument that makes spurd run a user task prolog, then the task.
pub const TASK_ARG: &str = "__hres_task";

impl HresRun {
    fn timeout(&self, f: &str) -> Option<Duration> {
        let ms = if matches!(f, func::JOB_EPILOG | func::TASK_EPILOG) {
            self.epilog_timeout_ms
        } else {
            self.prolog_timeout_ms
        };
        ms.map(Duration::from_millis)
    }

    /// Reads a prep file; the error names it.
    pub fn read(path: &Path) -> Result<HresRun, String> {
        let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Writes it readable by everyone (it holds no secrets; the job's user reads it).
    pub fn write(&self, path: &Path) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        let text = serde_json::to_vec_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644));
        Ok(())
    }

    /// Runs `f` (a job prolog or epilog) for each resource: in order, epilogs in reverse.
    pub fn job_function(&self, f: &str) -> Option<Failure> {
        self.each(f, |s, p| {
            let job = self.job.clone();
            s.call(f, move |lua| Ok((tables::prep(lua, p, false)?, tables::job(lua, &job)?)), self.timeout(f))
        })
    }

    /// Runs a task function for each resource with the task's ids and environment.
    pub fn task_function(
        &self,
        f: &str,
        node_tid: u32,
        global_tid: u32,
        env: &[(String, String)],
    ) -> Option<Failure> {
        self.each(f, |s, p| {
            let job = self.job.clone();
            let build = move |lua: &mlua::Lua| {
                Ok((
                    tables::prep(lua, p, false)?,
                    tables::job(lua, &job)?,
                    node_tid,
                    global_tid,
                    tables::env(lua, env)?,
                ))
            };
            s.call(f, build, self.timeout(f))
        })
    }

    fn each(&self, f: &str, mut one: impl FnMut(&Script, &Prep) -> super::Outcome) -> Option<Failure> {
        let reverse = matches!(f, func::JOB_EPILOG | func::TASK_EPILOG);
        let mut first = None;
        for p in tables::in_order(&self.resources, reverse) {
            let out = match p.path() {
                None => super::Outcome::failed("the plugin config has no path".into()),
                Some(path) => match Script::load(&p.name, Path::new(path)) {
                    Ok(s) => one(&s, p),
                    Err(e) => super::Outcome::failed(e),
                },
            };
            if let Some(failed) = out.failure(&p.name, f) {
                tracing::error!(resource = %p.name, job = self.job.job_id, "{f} failed: {}", failed.message);
                first.get_or_insert(failed);
            }
        }
        first
    }
}

/// `spurd __hres_task FILE NODE_TID GLOBAL_TID -- ARGV...`: runs the user task
/// prolog in this process, the task's, with its output in place, then
/// becomes the task. Returns an exit code only when it could not.
pub fn dispatch(args: &[String]) -> Option<i32> {
    if args.first().map(String::as_str) != Some(TASK_ARG) {
        return None;
    }
    let (Some(file), Some(node), Some(global)) = (args.get(1), args.get(2), args.get(3)) else {
        return Some(2);
    };
    let argv = args.iter().skip_while(|a| *a != "--").skip(1).cloned().collect::<Vec<_>>();
    let (Ok(node), Ok(global), Some(prog)) = (node.parse(), global.parse(), argv.first()) else {
        return Some(2);
    };
    match HresRun::read(Path::new(file)) {
        Ok(prep) => {
            let env: Vec<(String, String)> = std::env::vars().collect();
            if let Some(f) = prep.task_function(func::USER_TASK_PROLOG, node, global, &env) {
                let _ = std::io::stdout().flush();
                eprintln!("spurd: error: {}: {}", func::USER_TASK_PROLOG, f.message);
                return Some(1);
            }
        }
        Err(e) => {
            eprintln!("spurd: error: {e}");
            return Some(1);
        }
    }
    let _ = std::io::stdout().flush();
    use std::os::unix::process::CommandExt;
    let err = std::process::Command::new(prog).args(&argv[1..]).exec();
    eprintln!("spurd: error: {prog}: {err}");
    Some(127)
}

/// The argv that runs `argv` through [`dispatch`] when the job has resources with plugins.
pub fn wrap(spurd: &Path, file: &Path, node_tid: u32, global_tid: u32, argv: Vec<String>) -> Vec<String> {
    let mut out = vec![
        spurd.display().to_string(),
        TASK_ARG.to_string(),
        file.display().to_string(),
        node_tid.to_string(),
        global_tid.to_string(),
        "--".to_string(),
    ];
    out.extend(argv);
    out
}
