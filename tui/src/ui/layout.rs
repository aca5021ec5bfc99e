//! Screen geometry, shared by the renderer and by dispatch (page size,
//! mouse clicks), so both agree on where rows are.

use crate::pane::PaneId;
use crate::state::{Conn, State};
use crate::views::{self, preempt};
use ratatui::layout::{Constraint, Layout, Rect};

#[derive(Debug, Clone, Copy)]
pub struct Areas {
    pub tabs: Rect,
    pub crumb: Rect,
    /// Zero height unless the controller is unreachable.
    pub banner: Rect,
    pub body: Rect,
    /// Prompt, message or key hints.
    pub line: Rect,
    pub status: Rect,
}

pub fn shows_banner(state: &State) -> bool {
    matches!(state.conn, Conn::Reconnecting { .. } | Conn::Disconnected)
}

pub fn areas(state: &State, area: Rect) -> Areas {
    // Two lines: what is happening, then the error itself, so neither is cut at 80 columns.
    let banner = if shows_banner(state) { 2 } else { 0 };
    let [tabs, crumb, banner, body, line, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(banner),
        Constraint::Min(0),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    Areas { tabs, crumb, banner, body, line, status }
}

/// Where table rows are drawn (the body minus its summary and header line).
pub fn table_body(state: &State) -> Rect {
    let body = split_summary(state, areas(state, Rect::new(0, 0, state.size.0, state.size.1)).body).1;
    Rect { y: body.y.saturating_add(1), height: body.height.saturating_sub(1), ..body }
}

/// The Preemption pane's lines above its table, wrapped to the body's
/// width and kept to half of it; other panes have none.
pub fn split_summary(state: &State, body: Rect) -> (Rect, Rect) {
    if state.pane != PaneId::Preemption {
        return (Rect { height: 0, ..body }, body);
    }
    let w = usize::from(body.width.max(1));
    let lines: usize = preempt::summary(&state.explain)
        .iter()
        .map(|(l, _)| usize::from(views::width(l)).div_ceil(w).max(1))
        .sum();
    let h = u16::try_from(lines).unwrap_or(u16::MAX).min(body.height / 2);
    let [top, rest] = Layout::vertical([Constraint::Length(h), Constraint::Min(0)]).areas(body);
    (top, rest)
}

/// Rows per page, at least one.
pub fn page(state: &State) -> usize {
    usize::from(table_body(state).height.max(1))
}

/// A rectangle of at most `w`x`h` centred in `area`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h }
}
