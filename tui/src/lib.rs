//! spur-console: the full-screen Spur admin console (k9s for Slurm).
//!
//! Data flows one way: terminal events and network reports become
//! [`Action`]s, [`dispatch()`] is the only code that changes the [`State`]
//! and the only place that enforces read-only mode and confirmations, it
//! returns [`Effect`]s that the network task executes, and [`render`]
//! draws the state without changing it.
//!
//! Three layers, each importing only the ones before it:
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`model`] | `State` and every type it holds; `Action`, `Effect`, `Rpc`, `Msg`, `WriteOp`; the keymap table; each pane's rows and detail pages; screen geometry |
//! | [`update`] | `dispatch` and the per-pane handlers: they change the model and return effects |
//! | [`views`] | `render(&State, &mut Frame)`: layout, theme, bars, table, overlays |
//!
//! Around them, free to use all three:
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`net`] | the network task: gRPC calls, reconnect with backoff, health watch, txn tail, cluster watch |
//! | [`app`] | the event loop tying terminal, dispatch and network together |
//! | [`terminal`] | raw mode / alternate screen, panic hook |
//! | [`cli`] | command-line flags, controller URL, identity, NO_COLOR |
//! | [`config`] | `console.toml`: `[keys]` rebinding, `[theme]` |
//!
//! Each pane has one name in every layer: `queue`, `nodes`, `qos`,
//! `accounts`, `hres`, `preempt` (the Preemption pane), `audit` and
//! `provisioners` are `model/NAME.rs` (its data and rows) and, where the
//! pane has keys or data reads of its own, `update/NAME.rs`.

pub mod app;
pub mod cli;
pub mod config;
pub mod model;
pub mod net;
pub mod terminal;
pub mod update;
pub mod views;

pub use app::{run, run_console};
pub use cli::Cli;
pub use model::action::{Action, Catalog, CatalogList, ClusterUpdate, Effect, Msg, Rpc, Snapshot};
pub use model::jobs::{JobOp, JobSet};
pub use model::pane::PaneId;
pub use model::state::{Settings, State};
pub use model::write::{NodeOp, WriteOp};
pub use update::dispatch;
pub use views::render;
