//! The Reservations pane's writes from the operator's side: `n` opens a
//! prompt for a new reservation's words, `e` one for changes to the
//! selected reservation; every key re-checks the words with the CLI's
//! parser ([`crate::model::reservations::checked`]) and Enter turns them
//! into the write to confirm. Read-only mode and roles were checked by
//! dispatch before the prompt opens.

use crate::model::action::Action;
use crate::model::reservations::checked;
use crate::model::state::{Mode, Prompt, ResvPrompt, State};
use crate::model::table::Target;
use crate::model::write::WriteOp;
use crate::update::nav;
use tui_input::Input;

fn now(state: &State) -> chrono::DateTime<chrono::Local> {
    chrono::DateTime::from_timestamp_millis(state.now_ms()).unwrap_or_default().with_timezone(&chrono::Local)
}

fn hint(state: &State, line: &str, editing: Option<&str>) -> Option<String> {
    match checked(line, editing, now(state)) {
        Ok(WriteOp::Reservation { summary, .. }) => Some(format!("✓ {}", summary.join("; "))),
        Ok(_) => None,
        Err(e) => Some(e),
    }
}

/// `n`: an empty prompt, with the words a maintenance window takes as its hint.
pub fn open_new(state: &mut State) {
    let prompt = Prompt {
        input: Input::default(),
        hint: Some("e.g. StartTime=now+1hour Duration=2:00:00 Nodes=LIST Users=root Flags=MAINT".into()),
    };
    state.mode = Mode::Resv(Box::new(ResvPrompt { prompt, editing: None }));
}

/// `e` on a reservation: a prompt for what to change.
pub fn open_edit(state: &mut State) {
    let Some(Target::Reservation(name)) = nav::current_target(state) else {
        state.info("Reservations: nothing selected");
        return;
    };
    let prompt =
        Prompt { input: Input::default(), hint: Some("e.g. EndTime=... Nodes+=LIST Users-=NAME".into()) };
    state.mode = Mode::Resv(Box::new(ResvPrompt { prompt, editing: Some(name) }));
}

/// A key at the prompt; Enter with words that check out is the write to confirm.
pub fn prompt(state: &mut State, action: Action) -> Option<WriteOp> {
    let Mode::Resv(r) = &state.mode else { return None };
    let (line, editing) = (r.prompt.input.value().to_string(), r.editing.clone());
    match action {
        Action::Input(req) => {
            let mut input = r.prompt.input.clone();
            input.handle(req);
            let hint = hint(state, input.value(), editing.as_deref());
            if let Mode::Resv(r) = &mut state.mode {
                (r.prompt.input, r.prompt.hint) = (input, hint);
            }
        }
        Action::Submit => match checked(&line, editing.as_deref(), now(state)) {
            Ok(op) => return Some(op),
            Err(e) => {
                if let Mode::Resv(r) = &mut state.mode {
                    r.prompt.hint = Some(e);
                }
            }
        },
        Action::Back => {
            state.mode = Mode::Normal;
            state.info("reservation cancelled");
        }
        _ => {}
    }
    None
}
