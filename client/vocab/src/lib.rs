//! Slurm's vocabulary, defined once and shared by the controller (which
//! validates with it), the CLI and the console.
//!
//! The files are private; this page is the whole public surface, one
//! namespace per topic:
//!
//! - [`array`](mod@array): `--array` expressions, pending task sets, `12_3`/`12.0` job references,
//!   and a job's id as squeue prints it (`display_id`).
//! - [`constraint`]: `-C` node feature expressions.
//! - [`depend`]: `--dependency` expressions.
//! - [`dynamic`]: dynamic nodes' names, GRES, features and `HRES=` lists.
//! - [`efficiency`]: a job's CPU and memory efficiency as `seff` reckons it.
//! - [`distribution`]: `-m/--distribution`, and the task layout it makes.
//! - [`hostlist`]: Slurm hostlist expressions, expand and compress.
//! - [`jobs`]: job states (names and `%t` codes), hold kinds, partition states,
//!   sbatch's `-o/-e` filename patterns.
//! - [`keys`]: every sacctmgr key with aliases and value kind; the one parser.
//! - [`keyword`]: the one rule for typed keywords (any case, any unambiguous prefix).
//! - [`licenses`]: `-L` requests with plugin arguments, and `LicensesAlloc`.
//! - [`mail`]: `--mail-type` names and which of a job's changes they mail.
//! - [`names`]: preempt modes, admin levels, QOS flags.
//! - [`nodestate`]: node state names for scontrol and sinfo.
//! - [`reason`]: the pending and reject reason codes.
//! - [`resv`]: reservation flags and `scontrol create|update reservation`'s words.
//! - [`signal`]: signal names, and sbatch's `--signal` warning before the time limit.
//! - [`time`]: minutes/seconds in Slurm's formats (and config durations, `Seconds`), the one [`TimeLimit`],
//!   and Slurm's date-times (`parse_when`: sacct's window, sbatch's `--begin`).
//! - [`tres`]: the built-in TRES table and TRES strings.
//! - [`txn`]: `show txn` filters, peer matching and Slurm times.
//!
//! The types most callers name are also at the root.

#![deny(missing_docs)]

#[path = "array.rs"]
mod array_impl;
#[path = "constraint.rs"]
mod constraint_impl;
#[path = "cpubind.rs"]
mod cpubind_impl;
#[path = "depend.rs"]
mod depend_impl;
#[path = "distribution.rs"]
mod distribution_impl;
#[path = "dynamic.rs"]
mod dynamic_impl;
#[path = "efficiency.rs"]
mod efficiency_impl;
#[path = "fname.rs"]
mod fname_impl;
#[path = "hostlist.rs"]
mod hostlist_impl;
#[path = "jobid.rs"]
mod jobid_impl;
#[path = "jobstate.rs"]
mod jobs_impl;
#[path = "keys.rs"]
mod keys_impl;
#[path = "keyword.rs"]
mod keyword_impl;
#[path = "licenses.rs"]
mod licenses_impl;
#[path = "mail.rs"]
mod mail_impl;
#[path = "names.rs"]
mod names_impl;
#[path = "nodestate.rs"]
mod nodestate_impl;
#[path = "reason.rs"]
mod reason_impl;
#[path = "resv.rs"]
mod resv_impl;
#[path = "signal.rs"]
mod signal_impl;
#[path = "taskruns.rs"]
mod taskruns_impl;
#[path = "time.rs"]
mod time_impl;
#[path = "tres.rs"]
mod tres_impl;
#[path = "txn.rs"]
mod txn_impl;
#[path = "when.rs"]
mod when_impl;

/// Job arrays and job references with task and step parts.
pub mod array {
    pub use crate::array_impl::{
        ArraySpec, JobRef, MAX_ARRAY_PARTS, MAX_MERGE_STEPS, MAX_PENDING_RUNS, MAX_TASK_ID, StepRef, TaskSet,
        parse_refs,
    };
    pub use crate::jobid_impl::{JobIdParts, display_id};
}

/// `-C/--constraint` node feature expressions.
pub mod constraint {
    pub use crate::constraint_impl::Constraint;
}

/// `srun --cpu-bind=map_cpu:|mask_cpu:`: the CPUs of each task.
pub mod cpubind {
    pub use crate::cpubind_impl::{BIND_ENV, cpus};
}

/// `-m/--distribution`: its levels, tasks laid out over nodes, `SLURM_DISTRIBUTION`.
pub mod distribution {
    pub use crate::distribution_impl::{CpuDist, Distribution, NodeDist};
}

/// A job's CPU and memory efficiency: used against asked, as `seff` reckons it.
pub mod efficiency {
    pub use crate::efficiency_impl::{MemAsked, Usage, WASTEFUL_PERCENT, kbytes_str, time_str};
}

/// `--dependency` expressions: parsed, printed, their kinds.
pub mod depend {
    pub use crate::depend_impl::{DepItem, DepKind, Dependency, MAX_ITEMS};
}

/// Slurm hostlist expressions: `node[01-04,07]`, both ways.
pub mod hostlist {
    pub use crate::hostlist_impl::{
        MAX_HOSTS, MAX_NAME_LEN, compress, count, expand, expand_bounded, expand_in_order,
    };
}

/// Job states, hold kinds and partition states.
pub mod jobs {
    pub use crate::fname_impl::{PathVars, StepVars, expand_path, expand_path_within, expand_step_path};
    pub use crate::jobs_impl::{Class, Hold, JobState, PartitionState};
}

/// The sacctmgr key table and its one parser.
pub mod keys {
    pub use crate::keys_impl::{
        ACCOUNT_KEYS, Entity, KeyDef, KeyError, Kind, NO_EFFECT, QOS_KEYS, Resolved, USER_KEYS, Value,
        lookup, parse, parse_bool, parse_name, parse_name_list, parse_value, resolve,
    };
}

/// How scontrol and sacctmgr read a typed keyword: any case, any unambiguous prefix.
pub mod keyword {
    pub use crate::keyword_impl::{Ambiguous, resolve, resolve_alias};
}

/// `-L` license requests and what a running job took.
pub mod licenses {
    pub use crate::licenses_impl::{LicenseAlloc, LicenseReq, format_allocs, parse_request};
}

/// `--mail-type` names, parsed; `--mail-user` addresses, checked.
pub mod mail {
    pub use crate::mail_impl::{MAIL_TYPES, MailTypes, check_user};
}

/// Preempt modes, admin levels and QOS flags.
pub mod names {
    pub use crate::names_impl::{AdminLevel, PreemptMode, QosFlags};
}

/// Node state names for scontrol and sinfo.
pub mod nodestate {
    pub use crate::nodestate_impl::{Dynamic, NodeState, Requested};
}

/// Dynamic nodes: their names and `HRES=` lists.
pub mod dynamic {
    pub use crate::dynamic_impl::{
        HresPair, MAX_HRES_JSON, check_name, parse_features, parse_gres, parse_hres,
    };
}

/// Slurm's pending and reject reason codes.
pub mod reason {
    pub use crate::reason_impl::ReasonCode;
}

/// Reservations: flags, and `scontrol create|update reservation`'s words parsed.
pub mod resv {
    pub use crate::resv_impl::{
        Access, MAX_VALUE_LEN, NodeEdit, Op, ResvFlags, ResvRequest, render_licenses, split_layer,
    };
}

/// Signal names and `--signal=[{R|B}:]SIG[@secs]`.
pub mod signal {
    pub use crate::signal_impl::{DEFAULT_WARN_SECS, MAX_WARN_SECS, SIGNALS, WarnSignal, parse_signal};
}

/// Slurm's time formats, the one time-limit type, and Slurm's date-times.
pub mod time {
    pub use crate::time_impl::{
        MAX_TIME_LIMIT_MINUTES, Seconds, TimeLimit, UNLIMITED, check_limit, format_limit, format_minutes,
        format_seconds, parse_limit, parse_minutes, parse_seconds, squeue_secs, squeue_secs_into,
    };
    pub use crate::when_impl::{Lean, MAX_WHEN_LEN, parse_when};
}

/// The built-in TRES table and TRES strings.
pub mod tres {
    pub use crate::tres_impl::{
        TRES, TRES_MEM, TresDef, TresMap, TresPatch, as_string, by_id, by_name, format_map, parse_map,
        parse_patch, type_and_name,
    };
}

/// `show txn` filters, peer and node-name matching and Slurm's date-times.
pub mod txn {
    pub use crate::txn_impl::{
        DEFAULT_LIMIT, MAX_LIMIT, NAME_EXPANSION_MAX, RowView, TxnFilter, format_time, name_hostlist_like,
        name_matches, parse_time, peer_matches, peer_patterns, time_or,
    };
}

pub use jobs::{Hold, JobState, PartitionState};
pub use keys::{Entity, KeyDef, KeyError, Value};
pub use licenses::{LicenseAlloc, LicenseReq};
pub use names::{AdminLevel, PreemptMode, QosFlags};
pub use reason::ReasonCode;
pub use time::TimeLimit;
pub use tres::TresMap;
pub use txn::TxnFilter;
