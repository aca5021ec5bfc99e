//! Slurm's vocabulary, shared by the controller, the CLI and the console.
//!
//! - [`hostlist`]: Slurm hostlist expressions, expand and compress.
//! - [`keys`]: every sacctmgr key with aliases and value kind; the one parser.
//! - [`licenses`]: `-L` requests with plugin arguments, and `LicensesAlloc`.
//! - [`names`]: preempt modes, admin levels, QOS flags.
//! - [`nodestate`]: node state names for scontrol and sinfo.
//! - [`time`]: minutes/seconds in Slurm's formats, both ways.
//! - [`tres`]: the built-in TRES table and TRES strings.
//! - [`txn`]: `show txn` filters, peer matching and Slurm times.

pub mod hostlist;
pub mod keys;
pub mod licenses;
pub mod names;
pub mod nodestate;
pub mod time;
pub mod tres;
pub mod txn;
