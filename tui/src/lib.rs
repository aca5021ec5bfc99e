//! spur-console: the full-screen Spur admin console (k9s for Slurm).
//!
//! Data flows one way: terminal events and network reports become
//! [`Action`]s, [`dispatch`] is the only code that changes the [`State`]
//! and the only place that enforces read-only mode and confirmations, it
//! returns [`Effect`]s that the network task executes, and [`render`]
//! draws the state without changing it.
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`action`] | `Action`, `Effect`, `Rpc`, `Msg`, `Snapshot`: the vocabulary |
//! | [`write`] | `WriteOp`, `NodeOp`: every guarded write, its role, verb and confirmation text |
//! | [`state`] | the one `State` (modes, per-pane views, connection, data) |
//! | [`dispatch`] | `dispatch(state, action) -> Vec<Effect>`; the write path and confirmations |
//! | [`nav`] | selection, scrolling, sort, marks, filters, keeping selection across re-fetch |
//! | [`update`] | terminal events -> actions, per mode |
//! | [`keymap`] | the keymap table (key, action, description), parsing, conflicts |
//! | [`config`] | `console.toml`: `[keys]` rebinding, `[theme]` |
//! | [`command`] | the `:` command line and its completion |
//! | [`filter`] | `/` regex filters (smart-case, `!` inverts) |
//! | [`form`] | the edit form of a QOS, account or user association, and its diff |
//! | [`pane`] | the panes in tab order; where new panes are registered |
//! | [`views`] | records -> rows and detail pages, one module per pane |
//! | [`format`] | Slurm spellings of wall times, limits, shares |
//! | [`ui`] | `render(&State, &mut Frame)`: layout, theme, bars, table, overlays |
//! | [`session`] | WhoAmI's user and role; the role rule for writes |
//! | [`audit`] | the Audit pane's live tail: bounded buffer, pause, filter, resume |
//! | [`live`] | `Cluster.Watch` updates: live nodes, coalesced catalog re-reads |
//! | [`nodes`] | drain / resume / down: targets, the reason field, recent reasons |
//! | [`jobs`] | `ListJobs` compacted for 100,000 jobs: records, state codes, memoised order, job actions |
//! | [`queue`] | the Queue pane's re-reads, `t` state filter, cancel / hold / release / requeue |
//! | [`explain`] | the Preemption pane's explanation of one job: opening (`w`, `:explain`), re-reads |
//! | [`hres`] | the HRES pane's DisableLayer / DisableHRES toggle and its confirmation |
//! | [`net`] | the network task: gRPC calls, reconnect with backoff, health watch, txn tail, cluster watch |
//! | [`terminal`] | raw mode / alternate screen, panic hook |
//! | [`cli`] | command-line flags, controller URL, identity, NO_COLOR |
//! | [`app`] | the event loop tying terminal, dispatch and network together |

pub mod action;
pub mod app;
pub mod audit;
pub mod cli;
pub mod command;
pub mod config;
pub mod dispatch;
pub mod explain;
pub mod filter;
pub mod form;
pub mod format;
pub mod hres;
pub mod jobs;
pub mod keymap;
pub mod live;
pub mod nav;
pub mod net;
pub mod nodes;
pub mod pane;
pub mod queue;
pub mod session;
pub mod state;
pub mod terminal;
pub mod ui;
pub mod update;
pub mod views;
pub mod write;

pub use action::{Action, Catalog, CatalogList, ClusterUpdate, Effect, Msg, NodeOp, Rpc, Snapshot, WriteOp};
pub use app::{run, run_console};
pub use cli::Cli;
pub use dispatch::dispatch;
pub use jobs::{JobOp, JobSet};
pub use pane::PaneId;
pub use state::{Settings, State};
pub use ui::render;
