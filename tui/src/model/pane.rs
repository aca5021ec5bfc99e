//! The panes of the console, in tab order, and what each keeps whatever
//! its data: its view (selection, sort, filter, marks) and where a re-read
//! of its data stands.
//!
//! Adding a pane: add a variant here, give it a row builder and a detail
//! builder in `model/NAME.rs` (picked by `State::table` and
//! `State::detail`); everything else (tabs, number keys, `:` commands,
//! filter, sort, marks) works from this table.

use crate::model::filter::Filter;
use crate::model::jobs::{Expanded, StateFilter};
use std::collections::BTreeSet;

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

    pub fn index(self) -> usize {
        Self::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }

    /// Whether `e` edits and `D` deletes its rows: QOS and Accounts only
    /// (jobs are cancelled, nodes drained, the rest is read-only or comes
    /// from files). The key hints and the form both ask this.
    pub fn edits(self) -> bool {
        matches!(self, PaneId::Qos | PaneId::Accounts)
    }

    /// The number key (1-based) that selects this pane.
    pub fn number(self) -> usize {
        self.index() + 1
    }

    pub fn title(self) -> &'static str {
        match self {
            PaneId::Queue => "Queue",
            PaneId::Nodes => "Nodes",
            PaneId::Qos => "QOS",
            PaneId::Accounts => "Accounts",
            PaneId::Hres => "HRES",
            PaneId::Preempt => "Preemption",
            PaneId::Audit => "Audit",
            PaneId::Provisioners => "Provisioners",
        }
    }

    /// The tab's name when every full title does not fit on one line (80 columns).
    pub fn short_title(self) -> &'static str {
        match self {
            PaneId::Preempt => "Preempt",
            PaneId::Provisioners => "Prov",
            other => other.title(),
        }
    }

    /// The help line of the pane's number key.
    pub fn goto_desc(self) -> &'static str {
        match self {
            PaneId::Queue => "go to Queue",
            PaneId::Nodes => "go to Nodes",
            PaneId::Qos => "go to QOS",
            PaneId::Accounts => "go to Accounts",
            PaneId::Hres => "go to HRES",
            PaneId::Preempt => "go to Preemption",
            PaneId::Audit => "go to Audit",
            PaneId::Provisioners => "go to Provisioners",
        }
    }

    /// Whether the controller API this console speaks has data for the pane.
    pub fn available(self) -> bool {
        matches!(
            self,
            PaneId::Queue
                | PaneId::Nodes
                | PaneId::Qos
                | PaneId::Accounts
                | PaneId::Hres
                | PaneId::Preempt
                | PaneId::Audit
                | PaneId::Provisioners
        )
    }

    pub fn next(self) -> PaneId {
        Self::ALL[(self.index() + 1) % Self::ALL.len()]
    }

    pub fn prev(self) -> PaneId {
        Self::ALL[(self.index() + Self::ALL.len() - 1) % Self::ALL.len()]
    }
}

/// Per-pane view state, kept when switching panes.
#[derive(Debug, Clone, Default)]
pub struct PaneView {
    /// Index into the visible (filtered, sorted) rows.
    pub selected: usize,
    /// First visible row.
    pub offset: usize,
    /// (column index, descending).
    pub sort: Option<(usize, bool)>,
    pub filter: Option<Filter>,
    /// Row keys, so marks survive re-fetch, sorting and filtering.
    pub marks: BTreeSet<String>,
    /// Queue pane only: the `t` quick filter by job state.
    pub job_states: StateFilter,
    /// Queue pane only: the arrays opened to show their records.
    pub expanded: Expanded,
}

/// Where a re-read (a catalog list, the jobs, an explanation) stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Refetch {
    #[default]
    Idle,
    InFlight,
    /// In flight, and the data changed again since it was asked for.
    Dirty,
}

impl Refetch {
    /// The data changed: true when a read is to be sent now; with one in
    /// flight, false, and it is read again once that one is answered.
    pub fn ask(&mut self) -> bool {
        let send = *self == Refetch::Idle;
        *self = if send { Refetch::InFlight } else { Refetch::Dirty };
        send
    }

    /// The read in flight was answered: true when the data changed meanwhile
    /// and another read is to be sent now.
    pub fn answered(&mut self) -> bool {
        let again = *self == Refetch::Dirty;
        *self = if again { Refetch::InFlight } else { Refetch::Idle };
        again
    }
}
