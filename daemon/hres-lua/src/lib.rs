//! hres/lua: the HRES plugin that runs a Lua script (`mlua`, vendored Lua
//! 5.4), for the controller's callbacks and the nodes'.
//!
//! - [`script`]: one loaded script in one Lua state: loading (every required
//!   function checked), reloading when the file changes, and a call bounded by
//!   a deadline, with the `slurm` table (return codes, `log_*`, `user_msg`).
//! - [`tables`]: what the callbacks receive (`ctx`, `layers`, `job`, `prep`,
//!   `args`, `env`) as plain data, and how each becomes a Lua table. `Prep` is
//!   what travels with a job's launch to its nodes.
//! - [`node`]: the node functions in spurd: job prolog/epilog and the task
//!   functions, each in a new state, in resources.yaml order (epilogs reversed).

pub mod node;
pub mod script;
pub mod tables;

pub use node::HresRun;
pub use script::{Failure, Outcome, Script};
pub use tables::{JobInfo, LayerView, Prep, PrepLayer};

/// The only plugin type.
pub const TYPE: &str = "hres/lua";

/// `slurm.SUCCESS`.
pub const SUCCESS: i64 = 0;
/// `slurm.ERROR`.
pub const ERROR: i64 = -1;
/// `slurm.ESLURM_HRES_REMOTE_FAIL`: the external service is unavailable, not broken.
pub const REMOTE_FAIL: i64 = 3300;
/// `slurm.ESLURM_HRES_MAINTENANCE_DISABLE` (from create context: disable every layer).
pub const MAINTENANCE_DISABLE: i64 = 3301;
/// `slurm.ESLURM_HRES_MAINTENANCE_DOWN`.
pub const MAINTENANCE_DOWN: i64 = 3302;

/// The script's functions, as the page lists them.
pub mod func {
    pub const CREATE_CONTEXT: &str = "hres_create_context";
    pub const DESTROY_CONTEXT: &str = "hres_destroy_context";
    pub const MAINTENANCE: &str = "hres_maintenance";
    pub const VALIDATE_ARGS: &str = "hres_validate_args";
    pub const PRERUN: &str = "hres_controller_job_prerun";
    pub const ASYNC_PRERUN: &str = "hres_controller_job_async_prerun";
    pub const REVOKE: &str = "hres_controller_job_revoke";
    pub const CONTROLLER_EPILOG: &str = "hres_controller_job_epilog";
    pub const JOB_PROLOG: &str = "hres_node_job_prolog";
    pub const JOB_EPILOG: &str = "hres_node_job_epilog";
    pub const TASK_PROLOG: &str = "hres_node_task_prolog";
    pub const TASK_EPILOG: &str = "hres_node_task_epilog";
    pub const USER_TASK_PROLOG: &str = "hres_node_user_task_prolog";

    /// Every function a script must define (all but validate and async pre-run).
    pub const REQUIRED: [&str; 11] = [
        CREATE_CONTEXT,
        DESTROY_CONTEXT,
        MAINTENANCE,
        PRERUN,
        REVOKE,
        CONTROLLER_EPILOG,
        JOB_PROLOG,
        JOB_EPILOG,
        TASK_PROLOG,
        TASK_EPILOG,
        USER_TASK_PROLOG,
    ];
}

/// How a callback ended, read from its return code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rc {
    Success,
    RemoteFail,
    MaintenanceDisable,
    MaintenanceDown,
    /// Any other code; a timeout or a Lua error is `Error(ERROR)`.
    Error(i64),
}

impl Rc {
    /// A missing or non-numeric return is success.
    pub fn from_code(code: Option<i64>) -> Rc {
        match code {
            None | Some(SUCCESS) => Rc::Success,
            Some(REMOTE_FAIL) => Rc::RemoteFail,
            Some(MAINTENANCE_DISABLE) => Rc::MaintenanceDisable,
            Some(MAINTENANCE_DOWN) => Rc::MaintenanceDown,
            Some(c) => Rc::Error(c),
        }
    }

    pub fn ok(self) -> bool {
        self == Rc::Success
    }

    /// Slurm's name of the code, for logs and reasons.
    pub fn name(self) -> String {
        match self {
            Rc::Success => "SUCCESS".into(),
            Rc::RemoteFail => "ESLURM_HRES_REMOTE_FAIL".into(),
            Rc::MaintenanceDisable => "ESLURM_HRES_MAINTENANCE_DISABLE".into(),
            Rc::MaintenanceDown => "ESLURM_HRES_MAINTENANCE_DOWN".into(),
            Rc::Error(ERROR) => "ERROR".into(),
            Rc::Error(c) => format!("error {c}"),
        }
    }
}
