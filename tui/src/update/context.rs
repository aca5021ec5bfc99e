//! `:ctx`: list the contexts, or switch to one; and a production
//! context's typed confirmation. A switch starts the state over, so
//! nothing read from the old cluster is ever shown as the new one's, and
//! asks the app for a new connection ([`Effect::Connect`]), which drops
//! every stream of the old one.

use crate::model::action::{Action, Effect};
use crate::model::context::Context;
use crate::model::pane::PaneId;
use crate::model::state::{State, TypedName};
use crate::update::audit;
use tui_input::Input;

/// `:ctx` (None) lists, `:ctx NAME` switches.
pub fn command(state: &mut State, name: Option<String>) -> Vec<Effect> {
    let contexts = &state.settings.contexts;
    let Some(name) = name else {
        let listing = contexts.listing();
        state.info(listing);
        return Vec::new();
    };
    match contexts.find(&name) {
        Some(i) if contexts.current == Some(i) => {
            state.info(format!("already on context {name}"));
            Vec::new()
        }
        Some(i) => switch(state, i),
        None if contexts.all.is_empty() => {
            state.error(format!(":ctx {name}: no contexts in console.toml"));
            Vec::new()
        }
        None => {
            let known = contexts.names().join(", ");
            state.error(format!(":ctx {name}: no such context (known: {known})"));
            Vec::new()
        }
    }
}

/// Put the console on context `i` with a fresh state: only the settings,
/// the screen, the pane and the typed reasons carry over.
pub fn switch(state: &mut State, i: usize) -> Vec<Effect> {
    let mut settings = state.settings.clone();
    if !settings.enter_context(i) {
        return Vec::new();
    }
    let name = settings.contexts.all[i].name.clone();
    let pane = state.pane;
    let reasons = std::mem::take(&mut state.recent_reasons);
    *state = State::new(settings, state.size);
    state.recent_reasons = reasons;
    state.pane = pane;
    if pane == PaneId::Audit {
        // Marked open, so the next Connected subscribes the new cluster's tail.
        let _ = audit::open(state);
    }
    state.relayout();
    state.info(format!("context {name}"));
    vec![Effect::Connect]
}

/// Context `on`, else the current one.
pub fn of(state: &State, on: Option<usize>) -> Option<&Context> {
    let contexts = &state.settings.contexts;
    match on {
        Some(i) => contexts.all.get(i),
        None => contexts.current(),
    }
}

/// Whether `on` is another context than the one the console is on.
pub fn elsewhere(state: &State, on: Option<usize>) -> bool {
    on.is_some_and(|i| Some(i) != state.settings.contexts.current)
}

/// The name of context `on` (None: the current one) when it is a production one.
fn production(state: &State, on: Option<usize>) -> Option<&str> {
    of(state, on).filter(|c| c.production).map(|c| c.name.as_str())
}

/// The typed name a write's confirmation needs on context `on` (None: the
/// current one), if it is a production one.
pub fn typed_name(state: &State, on: Option<usize>) -> Option<TypedName> {
    let name = production(state, on)?;
    Some(TypedName { name: name.to_string(), input: Input::default(), hint: None })
}

/// Why a confirmed write may not be sent: its context is a production one
/// and its name was not typed. Checked again at commit.
pub fn unconfirmed(state: &State, on: Option<usize>, typed: Option<&TypedName>) -> Option<String> {
    let name = production(state, on)?;
    match typed {
        Some(t) if t.name == name && t.matches() => None,
        _ => Some(format!("context {name} is production: type its name to confirm the write")),
    }
}

/// What a key in a typed confirmation does.
pub enum Typed {
    Commit,
    Cancel,
    Stay,
}

pub fn typed_key(t: &mut TypedName, action: Action) -> Typed {
    match action {
        Action::Input(req) => {
            t.input.handle(req);
            t.hint = None;
            Typed::Stay
        }
        Action::Submit if t.matches() => Typed::Commit,
        Action::Submit if t.input.value().is_empty() => {
            t.hint = Some(format!("type {} to confirm, esc to cancel", t.name));
            Typed::Stay
        }
        Action::Submit => {
            t.hint =
                Some(format!("\"{}\" is not {}: type the context's name exactly", t.input.value(), t.name));
            Typed::Stay
        }
        Action::Back => Typed::Cancel,
        _ => Typed::Stay,
    }
}
