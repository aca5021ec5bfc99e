//! Spur's client side: the Slurm vocabulary, a typed gRPC connection, and the `spur` CLI.
//!
//! - [`vocab`]: the `spur-vocab` crate (keys, limits, times, TRES, states, reasons),
//!   re-exported for the CLI's paths.
//! - [`conn`]: finding the controller and connecting with the caller's identity.
//! - [`token`]: `spur_proto::token`, user JWTs: mint, verify, find the local one.
//! - [`efficiency`]: a job's recorded use against its ask (`seff`), shared with the console's Eff column.
//! - [`events`]: node history (`sacctmgr show event`) derived from the txn log's node rows,
//!   shared by the CLI and the console's node detail.
//! - [`cli`]: the multi-call `spur` binary (`sacctmgr`, ...): argument parsing,
//!   per-entity columns, and table/delimited/JSON rendering.

pub mod cli;
pub mod conn;
pub mod efficiency;
pub mod events;
pub use spur_proto::token;
pub use spur_vocab as vocab;
