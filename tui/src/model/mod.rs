//! The model: the one [`state::State`] and every type it holds, the
//! vocabulary of actions and effects, the keymap table, and each pane's
//! records as rows and detail pages. Plain data and small pure methods;
//! nothing here imports `update` or `views`, and nothing here does I/O.
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`state`] | the one `State` (modes, per-pane views, connection, data), `Settings`, `ThemeName` |
//! | [`action`] | `Action`, `Effect`, `Rpc`, `Msg`, `Snapshot`, `Catalog`: the vocabulary |
//! | [`write`](mod@write) | `WriteOp`, `NodeOp`: every guarded write, its role, verb and confirmation text |
//! | [`keymap`] | the keymap table (key, action, description), parsing, conflicts, the fixed keys |
//! | [`pane`] | the panes in tab order (`PaneId`) and the words their declarations use (`Hint`, `Offered`, `Reads`) |
//! | [`decl`] | each pane declared once (`Pane`: titles, names, keys and hints, edits, reads, the builders of its rows and detail): where a new pane is registered |
//! | [`view`] | `PaneView` (selection, sort, filter, marks), `Refetch` (where a pane's re-read stands) |
//! | [`context`] | console.toml's contexts (clusters), the current one, their safety rules |
//! | [`merged`] | the merged Queue of every context (`:queue all`): its parts per cluster, rows keyed by cluster and job id |
//! | [`session`] | WhoAmI's user and role; the role rule for writes |
//! | [`table`] | rows, columns, targets and detail pages: what every pane's table is made of |
//! | [`layout`] | screen geometry, shared by the views and by paging and clicks |
//! | [`filter`] | `/` regex filters (smart-case, `!` inverts) |
//! | [`form`] | the edit form of a QOS, account or user association, and its diff |
//! | [`format`](mod@format) | Slurm spellings of wall times, limits, shares, memory; display width |
//! | [`jobs`] | `ListJobs` compacted for 100,000 jobs: records, state codes, memoised order, arrays folded into lines, `JobOp`, the nodes idle-fill lent (`Loans`) |
//! | [`tree`] | tree glyphs for the Accounts and HRES panes |
//! | [`plugin`] | console.toml's `[[plugins]]`: templates, their checks at load, the argv for a row |
//! | [`output`] | a job's stdout or stderr, live (`o`/`O` on the Queue): the last lines of the stream, scrolled or following |
//!
//! One module per pane, by the pane's name, holds its data and its rows:
//! [`queue`], [`nodes`] (and the drain/down reason field), [`qos`],
//! [`accounts`], [`hres`], [`preempt`] (the Preemption pane), [`audit`]
//! (the tail's bounded buffer), [`provisioners`] (provisioners.yaml's definitions) and
//! [`reservations`] (admin reservations, pushed whole by the watch) and
//! [`fairshare`] (the account tree of `ListShares`, each number's formula filled in).

pub mod accounts;
pub mod action;
pub mod audit;
pub mod context;
pub mod decl;
pub mod fairshare;
pub mod filter;
pub mod form;
pub mod format;
pub mod hres;
pub mod jobs;
pub mod keymap;
pub mod layout;
pub mod merged;
pub mod nodes;
pub mod output;
pub mod overview;
pub mod pane;
pub mod plugin;
pub mod preempt;
pub mod provisioners;
pub mod qos;
pub mod queue;
pub mod reservations;
pub mod session;
pub mod state;
pub mod table;
pub mod tree;
pub mod view;
pub mod write;
