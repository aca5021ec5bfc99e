//! spurctld (the controller) and its library.
//!
//! - [`config`]: spur.conf (TOML); errors name the key and the file.
//! - [`jobs`]: submit, the queue, every job transition (a function returning effects, applied
//!   by one executor: persist, install, act), and the loop that applies the scheduler's plan.
//! - [`licenses`]: plain licenses and hierarchical resources: submit checks, updates, show,
//!   and the controller's side of their plugins.
//! - [`hres_lua`]: the `spur-hres-lua` crate (`daemon/hres-lua/`): the hres/lua plugin, scripts
//!   in Lua states, the callbacks' tables, the node functions (shared with the agent).
//! - [`model`]: plain data (QOS, accounts, users, associations, nodes, HRES): `spur_sched::model`.
//! - [`accounting`]: sacctmgr semantics and the one mutation path for accounting records.
//! - [`agent`]: the `spur-agent` crate (`daemon/agent/`, the `spurd` binary): registration,
//!   heartbeats, job supervisors that outlive it, its state directory. The controller links
//!   it only for the demo's in-process agents; it links nothing of the controller.
//! - [`admission`]: admission tokens for node agents.
//! - [`audit`]: the txn log's live tail, after-the-fact writer, counters and /metrics.
//! - [`auth`]: identity (none | jwt) and roles.
//! - [`nodes`]: nodes, partitions and agents; drain/resume/down with attribution.
//! - [`resv`]: admin reservations (`scontrol create|update|delete reservation`), stored, rolled forward, purged.
//! - [`sched`]: the `spur-sched` crate (`daemon/sched/`): the scheduler core, a pure
//!   fn(&Snapshot, now) -> Plan; submit-time resolution and gate. Its own crate, so the
//!   compiler keeps tokio, sqlx and tonic out of it.
//! - [`store`]: persistence behind one trait: SQLite (embedded) and PostgreSQL, every call bounded.
//! - [`server`]: tonic services: decode -> identify -> call the core -> map errors.
//! - [`controller`]: wiring a configured controller onto a listener, and shutdown;
//!   [`controller::waiting`]: answering Unavailable while the database cannot be opened.
//! - [`ha`]: several controllers on one PostgreSQL: the leader lease, followers that forward.
//! - [`demo`]: an in-process controller with a seeded demo cluster, for `spur-console --demo`.
//! - [`error`]: the daemon's error type and its mapping to gRPC status codes.

pub mod accounting;
pub mod admission;
pub mod audit;
pub mod auth;
pub mod config;
pub mod controller;
pub mod demo;
pub mod error;
pub mod ha;
pub mod jobs;
pub mod licenses;
pub mod nodes;
pub mod pilots;
pub mod resv;
pub mod server;
pub mod store;

pub use spur_agent as agent;
pub use spur_hres_lua as hres_lua;
pub use spur_sched as sched;
pub use spur_sched::model;
