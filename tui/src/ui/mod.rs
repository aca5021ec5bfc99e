//! Rendering: a pure function of the state. Nothing here mutates the state
//! or does I/O, so `TestBackend` snapshots show exactly what an operator sees.

mod bars;
pub mod layout;
mod overlay;
mod table;
pub mod theme;

use crate::state::{Mode, State};
use ratatui::Frame;
use theme::Theme;

/// Draw the whole screen.
pub fn render(state: &State, frame: &mut Frame) {
    let theme = Theme::for_state(state);
    let a = layout::areas(state, frame.area());
    bars::tabs(state, theme, frame, a.tabs);
    bars::breadcrumb(state, theme, frame, a.crumb);
    if a.banner.height > 0 {
        bars::banner(state, theme, frame, a.banner);
    }
    let layers = layers(&state.mode);
    match layers.first() {
        Some(Mode::Detail { key, scroll }) => overlay::detail(state, theme, frame, a.body, key, *scroll),
        _ => table::pane(state, theme, frame, a.body),
    }
    bars::line(state, theme, frame, a.line);
    bars::status(state, theme, frame, a.status);
    for mode in layers {
        match mode {
            Mode::Help { scroll, .. } => overlay::help(state, theme, frame, *scroll),
            Mode::Form(form) => overlay::form(form, theme, frame, !matches!(state.mode, Mode::Confirm(_))),
            Mode::Confirm(c) => overlay::confirm(c, theme, frame),
            // Only while it is the top layer: the confirmation repeats the reason, and two
            // stacked boxes of similar size read as one broken dialog.
            Mode::Reason(r) if !matches!(state.mode, Mode::Confirm(_)) => overlay::reason(r, theme, frame),
            _ => {}
        }
    }
}

/// The modes stacked on screen, bottom first (a dialog over a form, help over a detail view).
pub(crate) fn layers(mode: &Mode) -> Vec<&Mode> {
    let mut stack = vec![mode];
    let mut cur = mode;
    loop {
        cur = match cur {
            Mode::Help { prev, .. } => prev,
            Mode::Confirm(c) => &c.prev,
            Mode::Reason(r) => &r.prev,
            _ => break,
        };
        stack.push(cur);
    }
    stack.reverse();
    stack
}
