//! What each pane keeps whatever its data: its view (selection, sort,
//! filter, marks), and where a re-read of its data stands ([`Refetch`],
//! the one convention every pane's re-reads follow). Apart from the
//! panes' declaration ([`crate::model::pane`]) so that the modules of the
//! panes' rows never import it.

use crate::model::filter::Filter;
use crate::model::jobs::{Expanded, StateFilter};
use std::collections::BTreeSet;

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

/// Where a re-read of a pane's data stands: every pane that reads its data
/// keeps one, in its struct in `State`, and follows one convention. A cue
/// that the data changed (the cluster watch, a write's answer, `r`, a
/// (re)connect; never a timer) calls the pane's `update::NAME::stale`,
/// which sends a read only when [`Refetch::ask`] says so; the answer (or a
/// failure) calls [`Refetch::done`] and, when it says the data changed
/// meanwhile, `stale` again; a lost connection sets it back to `Idle`. So at
/// most one read is in flight per pane, plus one follow-up.
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

    /// The read in flight was answered (or failed): idle again; true when
    /// the data changed meanwhile, and the pane's `stale()` is to ask again.
    pub fn done(&mut self) -> bool {
        let again = *self == Refetch::Dirty;
        *self = Refetch::Idle;
        again
    }
}
