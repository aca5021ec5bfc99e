//! The Reservations pane: the list the watch pushes, the detail with its
//! scontrol line, `n` and `e` as a prompt checked as typed, and `D`, all
//! through the one write path (read-only mode and roles included).

mod common;

use common::{draw, on_reservations, type_text};
use spur_console::model::session::Role;
use spur_console::model::state::Mode;
use spur_console::model::write::WriteOp;
use spur_console::{Action, Effect, Rpc, dispatch};

#[test]
fn reservations_pane() {
    let state = on_reservations((120, 40), Role::Operator);
    insta::assert_snapshot!("reservations_120x40", format!("{:?}", draw(&state).backend()));
    let small = on_reservations((80, 24), Role::Operator);
    let screen = format!("{:?}", draw(&small).backend());
    assert!(screen.contains("maint") && screen.contains("active") && screen.contains("upcoming"), "{screen}");
    assert!(screen.contains("n new"), "the hint line offers n: {screen}");
}

#[test]
fn the_detail_gives_the_scontrol_line_that_makes_it() {
    let state = on_reservations((120, 40), Role::Operator);
    let d = state.detail(spur_console::PaneId::Reservations, "ml-day").unwrap();
    assert!(d.fields.iter().any(|(k, v)| k == "Accounts" && v == "ml"));
    assert!(
        d.body.iter().any(|l| l.contains("scontrol create reservation ReservationName=ml-day")),
        "{:?}",
        d.body
    );
}

#[test]
fn n_checks_the_words_as_typed_and_confirms_naming_nodes_and_window() {
    let mut state = on_reservations((120, 40), Role::Operator);
    dispatch(&mut state, Action::NewResv);
    type_text(&mut state, "StartTime=now+1hour Duration=2:00:00 Nodes=node[03-04]");
    let Mode::Resv(p) = &state.mode else { panic!("{:?}", state.mode) };
    assert_eq!(p.prompt.hint.as_deref(), Some("Users= or Accounts= says who may use it"));
    type_text(&mut state, " Users=root Flags=BOGUS");
    let Mode::Resv(p) = &state.mode else { panic!() };
    assert!(p.prompt.hint.as_deref().unwrap_or_default().contains("'BOGUS' is not a reservation flag"));
    for _ in 0.." Flags=BOGUS".len() {
        dispatch(&mut state, Action::Input(tui_input::InputRequest::DeletePrevChar));
    }
    let Mode::Resv(p) = &state.mode else { panic!() };
    assert!(
        p.prompt.hint.as_deref().unwrap_or_default().starts_with("✓ Nodes:  node[03-04]"),
        "{:?}",
        p.prompt.hint
    );
    dispatch(&mut state, Action::Submit);
    let Mode::Confirm(c) = &state.mode else { panic!("{:?}", state.mode) };
    let (title, body) = c.op.describe();
    assert_eq!(title, "Create this reservation?");
    assert!(body.iter().any(|l| l.starts_with("Window: ")), "{body:?}");
    assert!(body.last().unwrap().starts_with("= scontrol create reservation StartTime=now+1hour"));
    dispatch(&mut state, Action::FocusNext);
    let effects = dispatch(&mut state, Action::Submit);
    assert!(
        matches!(&effects[..], [Effect::Rpc(Rpc::Write(WriteOp::Reservation { editing: None, .. }))]),
        "{effects:?}"
    );
}

#[test]
fn e_changes_the_selected_one_and_d_deletes_it() {
    let mut state = on_reservations((120, 40), Role::Operator);
    dispatch(&mut state, Action::Edit);
    type_text(&mut state, "Nodes+=node03");
    dispatch(&mut state, Action::Submit);
    let Mode::Confirm(c) = &state.mode else { panic!("{:?}", state.mode) };
    assert!(
        matches!(&c.op, WriteOp::Reservation { editing: Some(n), words, .. } if n == "maint" && words[0] == "ReservationName=maint")
    );
    dispatch(&mut state, Action::Back);
    dispatch(&mut state, Action::Back);
    dispatch(&mut state, Action::Delete);
    let Mode::Confirm(c) = &state.mode else { panic!("{:?}", state.mode) };
    assert_eq!(c.op, WriteOp::DeleteReservations { names: vec!["maint".into()] });
}

#[test]
fn below_operator_or_read_only_nothing_is_written() {
    let mut state = on_reservations((120, 40), Role::None);
    dispatch(&mut state, Action::NewResv);
    assert!(matches!(state.mode, Mode::Normal));
    let mut ro = on_reservations((120, 40), Role::Operator);
    ro.settings.read_only = true;
    dispatch(&mut ro, Action::Delete);
    assert!(matches!(ro.mode, Mode::Normal));
}
