//! The panes of the console, in tab order, each declared once ([`Pane`]):
//! its titles and `:` names, whether it edits and deletes its rows, the
//! keys it offers (its hint line, most important first, and the only
//! panes where a pane's own keys run), what a delete there says instead,
//! what opening it reads and what its empty table says. The hint line,
//! dispatch, the edit form, the keymap's pane names and the `:` commands
//! (and their completion) all read [`PaneId::decl`]; a
//! test (`tests/pane_keys.rs`) holds every declared key to doing something
//! there, and every pane-only key that does something to being declared.
//! What each pane keeps whatever its data (its view, where a re-read
//! stands) is [`crate::model::view`].
//!
//! Adding a pane: add a variant here and its arm of [`PaneId::decl`]; give
//! it a struct of its data in `State` and a row builder and a detail
//! builder in `model/NAME.rs` (picked by `State::table` and
//! `State::detail`); everything else (tabs, number keys, `:` commands,
//! hints, filter, sort, marks) works from this table.

use crate::model::action::Action;
use crate::model::jobs::JobOp;
use crate::model::session::{self, Role};
use crate::model::write::NodeOp;

/// One top-level pane. The order of [`PaneId::ALL`] is the tab order and
/// gives the number keys 1..8; a pane added later goes last, so the keys
/// operators know keep their panes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PaneId {
    Queue,
    Nodes,
    Qos,
    Accounts,
    Hres,
    Preempt,
    Audit,
    Provisioners,
}

/// When the hint line offers a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    Always,
    /// A write needing this role: hidden in read-only mode and below the role.
    Writes(Role),
    /// A job action: owners act on their own jobs whatever their role, so
    /// only read-only mode hides it.
    Writable,
    /// Enter on an array's row (its label becomes "expand" or "fold").
    OnArray,
    /// Enter on any other row.
    OffArray,
}

/// One key a pane offers: what it does, the hint's word, when it is offered.
#[derive(Debug, Clone, PartialEq)]
pub struct Hint {
    pub action: Action,
    pub label: &'static str,
    pub offered: Offered,
}

/// What opening a pane (and `r` on it) reads besides the shared re-reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// Nothing of its own: its data is pushed or read with everything.
    Shared,
    /// The txn tail: opening starts it, `r` retries it.
    Tail,
    /// The shown job's explanation: opening reads it again.
    Explanation,
}

/// A pane, declared once.
#[derive(Debug, Clone, PartialEq)]
pub struct Pane {
    pub id: PaneId,
    pub title: &'static str,
    /// Its number key's line in the help.
    pub goto: &'static str,
    /// The tab's name when every full title does not fit on one line (80 columns).
    pub short_title: &'static str,
    /// Its name: the `[keys]` name of its number key and its `:` command;
    /// then the other words `:` takes for it.
    pub names: &'static [&'static str],
    /// Whether `e` edits and `D` deletes its rows (the edit form opens only here).
    pub edits: bool,
    /// The keys its hint line offers, most important first (as many as fit
    /// are shown). Keys that only some panes have ([`Action::pane_only`])
    /// run only on the panes that offer them.
    pub hints: Vec<Hint>,
    /// Where `D` is refused for the whole pane before its rows are built:
    /// the sentence, and the key that does instead (the Queue's cancel).
    pub not_deleted: Option<(&'static str, Action)>,
    pub reads: Reads,
    /// What its table says with no rows (and no filter).
    pub empty: &'static str,
}

fn hint(action: Action, label: &'static str, offered: Offered) -> Hint {
    Hint { action, label, offered }
}

fn always(action: Action, label: &'static str) -> Hint {
    hint(action, label, Offered::Always)
}

/// The keys of a read-only table: filter, detail, refresh, sort and mark.
fn browse() -> Vec<Hint> {
    vec![
        always(Action::FilterMode, "filter"),
        always(Action::Open, "detail"),
        always(Action::Refresh, "refresh"),
        always(Action::SortNext, "sort"),
        always(Action::ToggleMark, "mark"),
    ]
}

impl PaneId {
    pub const ALL: [PaneId; 8] = [
        PaneId::Queue,
        PaneId::Nodes,
        PaneId::Qos,
        PaneId::Accounts,
        PaneId::Hres,
        PaneId::Preempt,
        PaneId::Audit,
        PaneId::Provisioners,
    ];

    /// The pane's declaration: the one place that says what it offers.
    pub fn decl(self) -> Pane {
        let pane = |title, goto, short_title, names, hints| Pane {
            id: self,
            title,
            goto,
            short_title,
            names,
            edits: false,
            hints,
            not_deleted: None,
            reads: Reads::Shared,
            empty: "none defined",
        };
        match self {
            PaneId::Queue => {
                let job = |op, label| hint(Action::JobAction(op), label, Offered::Writable);
                let hints = vec![
                    always(Action::ToggleMark, "mark"),
                    // On an array's row Enter is what shows its tasks, so it is said early enough to fit.
                    hint(Action::Open, "expand", Offered::OnArray),
                    job(JobOp::Cancel, "cancel"),
                    job(JobOp::Hold, "hold"),
                    job(JobOp::Release, "release"),
                    job(JobOp::Requeue, "requeue"),
                    always(Action::JobStates, "state"),
                    always(Action::FilterMode, "filter"),
                    hint(Action::Open, "detail", Offered::OffArray),
                    always(Action::SortNext, "sort"),
                    always(Action::Explain, "why"),
                ];
                Pane {
                    not_deleted: Some(("jobs are cancelled, not deleted", Action::JobAction(JobOp::Cancel))),
                    empty: "no jobs",
                    ..pane("Queue", "go to Queue", "Queue", &["queue", "jobs", "squeue"], hints)
                }
            }
            PaneId::Nodes => {
                let node =
                    |op, label| hint(Action::NodeAction(op), label, Offered::Writes(session::NODE_ROLE));
                // On call, marking and draining come before browsing.
                let hints = vec![
                    always(Action::ToggleMark, "mark"),
                    node(NodeOp::Drain, "drain"),
                    node(NodeOp::Resume, "resume"),
                    node(NodeOp::Down, "down"),
                    always(Action::FilterMode, "filter"),
                    always(Action::Open, "detail"),
                    always(Action::SortNext, "sort"),
                ];
                pane("Nodes", "go to Nodes", "Nodes", &["nodes", "node", "sinfo"], hints)
            }
            PaneId::Qos | PaneId::Accounts => {
                let mut hints = browse();
                let write = |action, label| hint(action, label, Offered::Writes(session::WRITE_ROLE));
                hints.splice(3..3, [write(Action::Edit, "edit"), write(Action::Delete, "delete")]);
                let (title, goto, names): (_, _, &'static [&'static str]) = match self {
                    PaneId::Qos => ("QOS", "go to QOS", &["qos"]),
                    _ => ("Accounts", "go to Accounts", &["accounts", "account", "acct", "assoc", "users"]),
                };
                Pane { edits: true, ..pane(title, goto, title, names, hints) }
            }
            PaneId::Hres => {
                // Last, so the bar at 80 columns keeps the keys every table shares.
                let mut hints = browse();
                hints.push(hint(Action::HresToggle, "disable/enable", Offered::Writes(session::NODE_ROLE)));
                pane("HRES", "go to HRES", "HRES", &["hres", "licenses"], hints)
            }
            PaneId::Preempt => Pane {
                reads: Reads::Explanation,
                ..pane("Preemption", "go to Preemption", "Preempt", &["preemption", "preempt"], browse())
            },
            PaneId::Audit => {
                let hints = vec![
                    always(Action::TogglePause, "pause"),
                    always(Action::TxnFilterMode, "filter"),
                    always(Action::Open, "info"),
                    always(Action::FilterMode, "grep"),
                    always(Action::Refresh, "retry"),
                ];
                Pane { reads: Reads::Tail, ..pane("Audit", "go to Audit", "Audit", &["audit", "txn"], hints) }
            }
            PaneId::Provisioners => Pane {
                empty: "no provisioner definitions are configured",
                ..pane(
                    "Provisioners",
                    "go to Provisioners",
                    "Prov",
                    &["provisioners", "provisioner", "prov"],
                    browse(),
                )
            },
        }
    }

    /// Whether the pane offers `action` (a pane-only key runs only where it does).
    pub fn offers(self, action: &Action) -> bool {
        self.decl().hints.iter().any(|h| &h.action == action)
    }

    /// The pane that offers a pane-only key, for "that key works in ...".
    pub fn home_of(action: &Action) -> Option<PaneId> {
        Self::ALL.into_iter().find(|p| p.offers(action))
    }

    pub fn index(self) -> usize {
        Self::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }

    /// Whether `e` edits and `D` deletes its rows (its declaration's `edits`).
    pub fn edits(self) -> bool {
        self.decl().edits
    }

    /// The number key (1-based) that selects this pane.
    pub fn number(self) -> usize {
        self.index() + 1
    }

    pub fn title(self) -> &'static str {
        self.decl().title
    }

    /// The help line of the pane's number key.
    pub fn goto_desc(self) -> &'static str {
        self.decl().goto
    }

    pub fn short_title(self) -> &'static str {
        self.decl().short_title
    }

    /// Its `[keys]` name and `:` command.
    pub fn name(self) -> &'static str {
        self.decl().names[0]
    }

    /// The pane the `:` word names.
    pub fn named(word: &str) -> Option<PaneId> {
        Self::ALL.into_iter().find(|p| p.decl().names.contains(&word))
    }

    pub fn next(self) -> PaneId {
        Self::ALL[(self.index() + 1) % Self::ALL.len()]
    }

    pub fn prev(self) -> PaneId {
        Self::ALL[(self.index() + Self::ALL.len() - 1) % Self::ALL.len()]
    }
}
