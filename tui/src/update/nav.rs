//! Moving around: selection, scrolling, sorting, marks, filters, pane
//! switches and keeping the selection on the same record across re-fetches.
//! Called only from [`crate::update`]. The page is
//! [`State::page`], kept by [`State::relayout`], so no key asks the layout.

use crate::model::action::{Action, Snapshot};
use crate::model::filter::Filter;
use crate::model::pane::PaneId;
use crate::model::state::{Mode, State};
use crate::model::table::{Rows, Target};
use std::collections::HashSet;

/// The key of the row the operator is acting on: the detail view's record,
/// else the selected row.
pub fn current_key(state: &State) -> Option<String> {
    if let Mode::Detail { key, .. } = &state.mode {
        return Some(key.clone());
    }
    state.table(state.pane)?.rows.key(state.view().selected)
}

/// What the selected row (or the open detail) stands for.
pub fn current_target(state: &State) -> Option<Target> {
    let key = current_key(state)?;
    state.all_rows(state.pane).into_iter().find(|r| r.key == key).map(|r| r.target)
}

fn row_count(state: &State) -> usize {
    state.table(state.pane).map(|t| t.rows.len()).unwrap_or(0)
}

pub fn switch(state: &mut State, pane: PaneId) {
    state.pane = pane;
    state.mode = Mode::Normal;
    // Panes differ in what sits above their table (the Preemption summary).
    state.relayout();
    clamp_all(state);
}

/// Keep every pane's selection and scroll offset inside its rows and the screen.
pub fn clamp_all(state: &mut State) {
    let page = state.page();
    for pane in PaneId::ALL {
        let n = state.table(pane).map(|t| t.rows.len()).unwrap_or(0);
        let v = &mut state.views[pane.index()];
        v.selected = v.selected.min(n.saturating_sub(1));
        if v.selected < v.offset {
            v.offset = v.selected;
        }
        if v.selected >= v.offset + page {
            v.offset = v.selected + 1 - page;
        }
        v.offset = v.offset.min(n.saturating_sub(page));
    }
}

fn select(state: &mut State, index: usize) {
    state.view_mut().selected = index;
    clamp_all(state);
}

fn move_by(state: &mut State, delta: isize) {
    let n = row_count(state);
    if n == 0 {
        return;
    }
    let cur = state.view().selected as isize;
    let next = cur.saturating_add(delta).clamp(0, n as isize - 1);
    select(state, next as usize);
}

/// Put the selection back on `key` after the rows changed order or content.
pub fn reselect(state: &mut State, pane: PaneId, key: Option<String>) {
    let Some(key) = key else { return };
    if let Some(i) = state.table(pane).and_then(|t| t.rows.position(&key)) {
        state.views[pane.index()].selected = i;
    }
}

pub fn selected_key(state: &State, pane: PaneId) -> Option<String> {
    state.table(pane)?.rows.key(state.views[pane.index()].selected)
}

pub fn set_filter(state: &mut State, filter: Option<Filter>) {
    let key = selected_key(state, state.pane);
    state.view_mut().filter = filter;
    reselect(state, state.pane, key);
    clamp_all(state);
}

/// New data from the controller: keep selections on the same records and
/// drop marks of records that are gone.
pub fn replace_data(state: &mut State, snapshot: Snapshot) {
    update_data(state, |s| {
        s.accounting.data = Some(snapshot);
        s.loading = false;
    });
}

/// Apply `change` to the data, then keep selections on the same records,
/// drop marks of records that are gone and leave a detail view whose record is.
pub fn update_data(state: &mut State, change: impl FnOnce(&mut State)) {
    update(state, change, false);
}

/// [`update_data`] for a change of the jobs or the nodes, the data the
/// Overview adds up (nothing else it shows walks 100,000 jobs again).
pub fn update_jobs_or_nodes(state: &mut State, change: impl FnOnce(&mut State)) {
    update(state, change, true);
}

fn update(state: &mut State, change: impl FnOnce(&mut State), sums: bool) {
    let keys: Vec<Option<String>> = PaneId::ALL.iter().map(|&p| selected_key(state, p)).collect();
    change(state);
    if sums {
        crate::update::overview::data_changed(state);
    }
    for (pane, key) in PaneId::ALL.into_iter().zip(keys) {
        reselect(state, pane, key);
        prune_marks(state, pane);
    }
    if let Mode::Detail { key, .. } = &state.mode
        && state.detail(state.pane, key).is_none()
    {
        state.mode = Mode::Normal;
        state.info("the record shown was removed");
    }
    clamp_all(state);
}

/// Drop the marks of records that are gone.
fn prune_marks(state: &mut State, pane: PaneId) {
    if state.views[pane.index()].marks.is_empty() {
        return;
    }
    let rows = state.all_rows(pane);
    // Built rows are checked through a set; a lazy source (100,000 jobs) finds each mark by key.
    let built: Option<HashSet<&str>> = match &rows {
        Rows::Built(r) => Some(r.iter().map(|r| r.key.as_str()).collect()),
        Rows::Lazy { .. } => None,
    };
    state.views[pane.index()].marks.retain(|k| match &built {
        Some(keys) => keys.contains(k.as_str()),
        None => rows.position(k).is_some(),
    });
}

/// Scrolling in the help overlay.
pub fn help(state: &mut State, action: Action) {
    let Mode::Help { scroll, prev } = &mut state.mode else { return };
    match action {
        Action::Up => *scroll = scroll.saturating_sub(1),
        Action::Down => *scroll = scroll.saturating_add(1),
        Action::PageUp | Action::HalfPageUp => *scroll = scroll.saturating_sub(10),
        Action::PageDown | Action::HalfPageDown => *scroll = scroll.saturating_add(10),
        Action::Scroll(n) => *scroll = scroll.saturating_add_signed(n.clamp(-100, 100) as i16),
        Action::Top => *scroll = 0,
        Action::Back | Action::Help => state.mode = *std::mem::take(prev),
        _ => {}
    }
}

/// Navigation in the table (normal mode) and in the detail view.
pub fn normal(state: &mut State, action: Action) {
    if let Mode::Detail { scroll, .. } = &mut state.mode {
        match action {
            Action::Up => *scroll = scroll.saturating_sub(1),
            Action::Down => *scroll = scroll.saturating_add(1),
            // A node's events sit below its fields: at 24 rows a page takes you there.
            Action::PageUp | Action::HalfPageUp => *scroll = scroll.saturating_sub(10),
            Action::PageDown | Action::HalfPageDown => *scroll = scroll.saturating_add(10),
            Action::Scroll(n) => *scroll = scroll.saturating_add_signed(n.clamp(-100, 100) as i16),
            Action::Top => *scroll = 0,
            Action::Back => state.mode = Mode::Normal,
            Action::ToggleMark => toggle_mark(state),
            _ => {}
        }
        return;
    }
    let page = state.page() as isize;
    match action {
        Action::Up => move_by(state, -1),
        Action::Down => move_by(state, 1),
        Action::PageUp => move_by(state, -page),
        Action::PageDown => move_by(state, page),
        Action::HalfPageUp => move_by(state, -(page / 2).max(1)),
        Action::HalfPageDown => move_by(state, (page / 2).max(1)),
        Action::Top => select(state, 0),
        Action::Bottom => select(state, row_count(state).saturating_sub(1)),
        Action::Scroll(n) => move_by(state, n as isize),
        Action::ClickRow(y) => click(state, y),
        Action::SortNext | Action::SortReverse => sort(state, action == Action::SortReverse),
        Action::ToggleMark => {
            toggle_mark(state);
            move_by(state, 1);
        }
        Action::Open => {
            if let Some(key) = selected_key(state, state.pane) {
                state.mode = Mode::Detail { key, scroll: 0 };
            }
        }
        Action::Back => back(state),
        _ => {}
    }
}

fn toggle_mark(state: &mut State) {
    let Some(key) = current_key(state) else { return };
    let marks = &mut state.view_mut().marks;
    if !marks.remove(&key) {
        marks.insert(key);
    }
}

fn back(state: &mut State) {
    if state.view().filter.is_some() {
        set_filter(state, None);
    } else if !state.view().marks.is_empty() {
        state.view_mut().marks.clear();
        state.info("marks cleared");
    }
}

fn sort(state: &mut State, reverse: bool) {
    let Some(cols) = state.table(state.pane).map(|t| t.columns.len()) else { return };
    let key = selected_key(state, state.pane);
    let v = state.view_mut();
    v.sort = match (v.sort, reverse) {
        (None, false) => Some((0, false)),
        (None, true) => Some((0, true)),
        (Some((c, d)), true) => Some((c, !d)),
        (Some((c, d)), false) if c + 1 < cols => Some((c + 1, d)),
        (Some(_), false) => None,
    };
    reselect(state, state.pane, key);
    clamp_all(state);
}

fn click(state: &mut State, y: u16) {
    let body = state.rows_area;
    if y < body.y || y >= body.y.saturating_add(body.height) {
        return;
    }
    let index = state.view().offset + usize::from(y - body.y);
    if index < row_count(state) {
        select(state, index);
    }
}
