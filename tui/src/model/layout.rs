//! Screen geometry as pure functions of plain inputs, shared by the
//! renderer (which draws into these areas) and by `update` (which keeps
//! [`crate::model::state::State::rows_area`] for paging and mouse clicks),
//! so both agree on where rows are.

use crate::model::format::width;
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

pub fn areas(area: Rect, banner: bool) -> Areas {
    // Two lines: what is happening, then the error itself, so neither is cut at 80 columns.
    let banner = if banner { 2 } else { 0 };
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

/// The lines above a pane's table (the Preemption pane's summary), wrapped
/// to the body's width and kept to half of it; no lines, no room.
pub fn split_summary(body: Rect, summary: &[(String, bool)]) -> (Rect, Rect) {
    if summary.is_empty() {
        return (Rect { height: 0, ..body }, body);
    }
    let w = usize::from(body.width.max(1));
    let lines: usize = summary.iter().map(|(l, _)| usize::from(width(l)).div_ceil(w).max(1)).sum();
    let h = u16::try_from(lines).unwrap_or(u16::MAX).min(body.height / 2);
    let [top, rest] = Layout::vertical([Constraint::Length(h), Constraint::Min(0)]).areas(body);
    (top, rest)
}

/// Where table rows are drawn on a screen of `size`: the body, minus the
/// summary and the header line.
pub fn rows_area(size: (u16, u16), framed: bool, banner: bool, summary: &[(String, bool)]) -> Rect {
    let body = areas(screen(Rect::new(0, 0, size.0, size.1), framed), banner).body;
    let table = split_summary(body, summary).1;
    Rect { y: table.y.saturating_add(1), height: table.height.saturating_sub(1), ..table }
}

/// What is left of the terminal for the bars and the body: all of it, or
/// between the bands a production context draws above and below the
/// screen (bands, not side borders: 80 columns have none to spare).
pub fn screen(area: Rect, framed: bool) -> Rect {
    if !framed || area.height < 3 {
        return area;
    }
    Rect { y: area.y + 1, height: area.height - 2, ..area }
}

/// A rectangle of at most `w`x`h` centred in `area`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h }
}
