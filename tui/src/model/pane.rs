//! The panes of the console, in tab order ([`PaneId`]), and the words their
//! declarations are made of: the keys a pane offers ([`Hint`], [`Offered`])
//! and what opening it reads ([`Reads`]). Each pane's whole declaration —
//! titles, names, edits, keys, reads, and the builders of its rows and
//! detail — is its arm in `model/decl.rs`, reached as
//! [`PaneId::decl`]. What each pane keeps whatever its data (its view,
//! where a re-read stands) is [`crate::model::view`].
//!
//! Adding a pane: add a variant here and its arm in `model/decl.rs`; give it
//! a struct of its data in `State` and a row builder and a detail builder
//! in `model/NAME.rs` (named by that arm); everything else (tabs, number
//! keys, `:` commands, hints, filter, sort, marks, detail) works from the
//! declaration.

use crate::model::action::Action;
use crate::model::session::Role;

/// One top-level pane. The order of [`PaneId::ALL`] is the tab order and
/// gives the number keys 1..9, then 0; a pane added later goes last, so the keys
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
    Reservations,
    Overview,
    Fairshare,
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
    /// The scheduler's figures (`Cluster.Diag`): opening reads them again.
    Diag,
    /// The fairshare tree (`ListShares`): opening and `r` read it again.
    Shares,
}

impl PaneId {
    pub const ALL: [PaneId; 11] = [
        PaneId::Queue,
        PaneId::Nodes,
        PaneId::Qos,
        PaneId::Accounts,
        PaneId::Hres,
        PaneId::Preempt,
        PaneId::Audit,
        PaneId::Provisioners,
        PaneId::Reservations,
        PaneId::Overview,
        PaneId::Fairshare,
    ];

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

    /// The number key that selects this pane as typed: `1`..`9`, then `0`
    /// for the tenth; none past it (`:` commands and Tab reach those).
    pub fn key(self) -> Option<String> {
        (self.index() < 10).then(|| ((self.index() + 1) % 10).to_string())
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
