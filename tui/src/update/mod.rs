//! Update: the only code that changes the [`crate::model::state::State`].
//! Terminal events become actions ([`keys`]), [`dispatch()`] enforces
//! read-only mode, the role rule and confirmations in one place and hands
//! each action to its pane's handler, and every handler returns the
//! effects the network task runs. Imports the model, never the views.
//!
//! | module | what it does |
//! | --- | --- |
//! | [`dispatch`](mod@dispatch) | `dispatch(state, action) -> Vec<Effect>`; the write path, confirmations |
//! | [`reports`] | what the network task reports ([`Msg`](crate::model::action::Msg)), folded into the state |
//! | [`keys`] | terminal events -> actions, per mode |
//! | [`merged`] | the merged Queue (`:queue all`): opening, its connections' reports, job actions sent to the row's cluster |
//! | [`nav`] | selection, scrolling, sort, marks, filters, pane switches, keeping selection across re-reads |
//! | [`command`] | the `:` command line and its completion, the `/` filter prompt |
//! | [`context`] | `:ctx`: listing and switching clusters; a production context's typed confirmation |
//! | [`delete`] | `D`: what deleting the marked rows means, or why they are not deleted |
//! | [`form`] | opening the edit form and its keys |
//! | [`live`] | `Cluster.Watch` updates: live nodes, coalesced catalog re-reads |
//! | [`queue`] | the Queue pane: job re-reads and pushed changes, `t`, cancel / hold / release / requeue |
//! | [`nodes`] | the Nodes pane: drain / resume / down, the reason field, recent reasons |
//! | [`hres`] | the HRES pane: the DisableLayer / DisableHRES toggle |
//! | [`plugin`] | a plugin's key: its command for the selected row, run or confirmed first |
//! | [`fairshare`] | the Fairshare pane's reads (on opening it and on `r`) |
//! | [`output`] | a job's output, live (`o`/`O` on the Queue): opening, scrolling, closing, its stream's pieces |
//! | [`preempt`] | the Preemption pane: opening (`w`, `:explain`), re-reads of the explanation |
//! | [`audit`] | the Audit pane: subscribing the tail, pause, the txn filter, resume after a reconnect |
//! | [`reservations`] | the Reservations pane: the prompt of `n` (new) and `e` (change), checked as typed
//! | [`overview`] | the Overview pane: its sums on data changes, `Cluster.Diag` re-reads, Enter to the Queue |
//! | [`provisioners`] | the Provisioners pane: reading the definitions on connect, node changes and `r` |

pub mod audit;
pub mod command;
pub mod context;
pub mod delete;
pub mod dispatch;
pub mod fairshare;
pub mod form;
pub mod hres;
pub mod keys;
pub mod live;
pub mod merged;
pub mod nav;
pub mod nodes;
pub mod output;
pub mod overview;
pub mod plugin;
pub mod preempt;
pub mod provisioners;
pub mod queue;
pub mod reports;
pub mod reservations;

pub use dispatch::dispatch;
