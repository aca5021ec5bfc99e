//! The edit form of a QOS, an account or a user association, from the
//! operator's side: opening it on the selected row and its keys. The form
//! itself, its fields and its diff are [`crate::model::form`]. Called only
//! from [`crate::update`], which checked read-only mode and the role before
//! the form opens and confirms its write after.

use crate::model::action::Action;
use crate::model::form::open;
use crate::model::state::{Mode, State};
use crate::model::write::WriteOp;
use crate::update::nav;

/// Open the form for the selected row (or the open detail).
pub fn edit(state: &mut State) {
    if !state.pane.edits() {
        state.info(format!("{}: nothing to edit here (QOS and Accounts only)", state.pane.title()));
        return;
    }
    let Some(target) = nav::current_target(state) else {
        state.info(format!("{}: nothing selected", state.pane.title()));
        return;
    };
    match open(state.accounting.data.as_ref(), &target) {
        Ok(f) => state.mode = Mode::Form(Box::new(f)),
        Err(e) => state.error(e),
    }
}

/// A key in the form; a submitted form with changes becomes the write to confirm.
pub fn key(state: &mut State, action: Action) -> Option<WriteOp> {
    let Mode::Form(f) = &mut state.mode else {
        return None;
    };
    let n = f.fields.len().max(1);
    match action {
        Action::Input(req) => {
            if let Some(field) = f.focused_mut() {
                field.input.handle(req);
            }
        }
        Action::FocusNext => f.focus = (f.focus + 1) % n,
        Action::FocusPrev => f.focus = (f.focus + n - 1) % n,
        Action::Back => {
            state.mode = Mode::Normal;
            state.info("edit cancelled");
        }
        Action::Submit => match f.to_write() {
            Ok(Some(op)) => return Some(op),
            Ok(None) => state.info("nothing changed"),
            Err(e) => state.error(e),
        },
        _ => {}
    }
    None
}
