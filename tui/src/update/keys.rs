//! Terminal events to [`Action`]s. Which keys mean what depends on the
//! mode: the keymap in normal/detail/help, fixed editing keys in prompts,
//! forms and dialogs (listed for the help overlay in
//! [`crate::model::keymap::FIXED_KEYS`]).

use crate::model::action::{Action, Effect};
use crate::model::keymap::{KeySpec, QUIT_KEY};
use crate::model::state::{Mode, State};
use crate::update::dispatch::dispatch;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, MouseButton, MouseEventKind};
use tui_input::backend::crossterm::to_input_request;

pub fn on_event(state: &mut State, event: Event) -> Vec<Effect> {
    let action = match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => action_for_key(state, key),
        Event::Mouse(m) if state.settings.mouse => match m.kind {
            MouseEventKind::ScrollDown => Some(Action::Scroll(3)),
            MouseEventKind::ScrollUp => Some(Action::Scroll(-3)),
            MouseEventKind::Down(MouseButton::Left) => Some(Action::ClickRow(m.row)),
            _ => None,
        },
        Event::Resize(w, h) => Some(Action::Resize(w, h)),
        _ => None,
    };
    action.map(|a| dispatch(state, a)).unwrap_or_default()
}

pub fn action_for_key(state: &State, key: KeyEvent) -> Option<Action> {
    let spec = KeySpec::from_event(&key);
    if spec == QUIT_KEY {
        return Some(Action::Quit);
    }
    match &state.mode {
        Mode::Command(_) | Mode::Filter(_) | Mode::TxnFilter(_) | Mode::Resv(_) => match key.code {
            KeyCode::Esc => Some(Action::Back),
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Tab => Some(Action::Complete),
            _ => to_input_request(&Event::Key(key)).map(Action::Input),
        },
        Mode::Form(_) => match key.code {
            KeyCode::Esc => Some(Action::Back),
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Tab | KeyCode::Down => Some(Action::FocusNext),
            KeyCode::BackTab | KeyCode::Up => Some(Action::FocusPrev),
            _ => to_input_request(&Event::Key(key)).map(Action::Input),
        },
        // Up/Down and Tab walk the recent reasons; everything else edits the text.
        Mode::Reason(_) => match key.code {
            KeyCode::Esc => Some(Action::Back),
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Tab | KeyCode::Down => Some(Action::FocusNext),
            KeyCode::BackTab | KeyCode::Up => Some(Action::FocusPrev),
            _ => to_input_request(&Event::Key(key)).map(Action::Input),
        },
        // A production context's confirmation: the keys type its name.
        Mode::Confirm(c) if c.typed.is_some() => match key.code {
            KeyCode::Esc => Some(Action::Back),
            KeyCode::Enter => Some(Action::Submit),
            _ => to_input_request(&Event::Key(key)).map(Action::Input),
        },
        Mode::Confirm(_) => match key.code {
            KeyCode::Esc | KeyCode::Char('n') => Some(Action::Back),
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Tab | KeyCode::Right | KeyCode::Char('l') => Some(Action::FocusNext),
            KeyCode::BackTab | KeyCode::Left | KeyCode::Char('h') => Some(Action::FocusPrev),
            _ => None,
        },
        // The output view: Esc or q closes it (q does not quit from here); the rest scroll.
        Mode::Output if matches!(key.code, KeyCode::Esc | KeyCode::Char('q')) => Some(Action::Back),
        // A plugin's key on its panes (checked at load not to take a built-in key there).
        Mode::Normal | Mode::Detail { .. } => {
            let plugins = &state.settings.plugins;
            match plugins.iter().position(|p| p.key == spec && p.panes.contains(&state.pane)) {
                Some(i) => Some(Action::Plugin(i)),
                None => state.settings.keymap.action_on(spec, state.pane).cloned(),
            }
        }
        Mode::Help { .. } | Mode::Output => state.settings.keymap.action_on(spec, state.pane).cloned(),
    }
}
