//! Spur's client side: the Slurm vocabulary, a typed gRPC connection, and the `spur` CLI.
//!
//! - [`vocab`]: keys, limits, times, TRES and enumerated names, defined once and
//!   shared with the controller (which validates with it) and the console.
//! - [`conn`]: finding the controller and connecting with the caller's identity.
//! - [`token`]: user JWTs: mint, verify, find the local one.
//! - [`cli`]: the multi-call `spur` binary (`sacctmgr`, ...): argument parsing,
//!   per-entity columns, and table/delimited/JSON rendering.

pub mod cli;
pub mod conn;
pub mod token;
pub mod vocab;
