//! The semantics of sacctmgr's add/modify/delete/show for QOS, accounts and
//! users, and the in-memory catalog the scheduler and `show` read from.
//!
//! - [`pairs`]: `key=value` pairs parsed with the shared vocabulary.
//! - [`catalog`]: the cached records, loaded from and kept in step with the store.
//! - [`qos`], [`account`], [`user`]: applying a patch to a record and validating it.
//! - [`columns`]: records flattened to columns, for the txn `changed` diff.
//! - [`service`]: the one mutation path: validate, persist with its audit row, apply, publish.

pub mod account;
pub mod catalog;
pub mod columns;
pub mod pairs;
pub mod qos;
pub mod service;
pub mod user;

pub use catalog::Catalog;
pub use pairs::Pair;
pub use service::{AcctService, Caller, ChangeOut, SetMode};
