//! Views: rendering as a pure function of the model. Nothing here mutates
//! the state or does I/O, so `TestBackend` snapshots show exactly what an
//! operator sees. [`render`] does the layout and hands each part of the
//! screen what it draws. Imports the model, never `update`.

mod bars;
mod output;
mod overlay;
mod overview;
mod table;
pub mod theme;

use crate::model::layout;
use crate::model::state::{Mode, State};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType, Borders};
use theme::Theme;

/// A production context's frame around the screen, titled with its name;
/// the area inside it (the whole screen on any other context).
fn framed(state: &State, theme: Theme, frame: &mut Frame) -> Rect {
    let area = frame.area();
    let Some(name) = state.settings.contexts.production() else { return area };
    let inner = layout::screen(area, true);
    if inner != area {
        let title = Span::styled(format!(" PRODUCTION: {name} "), theme.production());
        let block = Block::new()
            .borders(Borders::TOP | Borders::BOTTOM)
            .border_type(BorderType::Thick)
            .border_style(theme.production())
            .title(title)
            .title_bottom(Span::styled(format!(" writes on {name} ask for its name "), theme.production()));
        frame.render_widget(block, area);
    }
    inner
}

/// Draw the whole screen.
pub fn render(state: &State, frame: &mut Frame) {
    let theme = Theme::new(state.settings.theme);
    let a = layout::areas(framed(state, theme, frame), state.shows_banner());
    bars::tabs(state.pane, theme, frame, a.tabs);
    bars::breadcrumb(state, theme, frame, a.crumb);
    if a.banner.height > 0 {
        bars::banner(&state.conn, state.last_error.as_deref(), theme, frame, a.banner);
    }
    let layers = state.mode.layers();
    match layers.first() {
        Some(Mode::Detail { key, scroll }) => {
            overlay::detail(state.detail(state.pane, key), theme, frame, a.body, key, *scroll)
        }
        Some(Mode::Output) => output::draw(state.output.as_ref(), theme, frame, a.body),
        _ if state.pane == crate::model::pane::PaneId::Overview => {
            overview::draw(state, theme, frame, a.body)
        }
        _ => table::pane(state, theme, frame, a.body),
    }
    bars::line(state, theme, frame, a.line);
    bars::status(state, theme, frame, a.status);
    for mode in layers {
        match mode {
            Mode::Help { scroll, .. } => {
                overlay::help(&state.settings.keymap, &state.settings.plugins, theme, frame, *scroll)
            }
            Mode::Form(form) => overlay::form(form, theme, frame, !matches!(state.mode, Mode::Confirm(_))),
            Mode::Confirm(c) => overlay::confirm(c, theme, frame),
            // Only while it is the top layer: the confirmation repeats the reason, and two
            // stacked boxes of similar size read as one broken dialog.
            Mode::Reason(r) if !matches!(state.mode, Mode::Confirm(_)) => overlay::reason(r, theme, frame),
            _ => {}
        }
    }
}
