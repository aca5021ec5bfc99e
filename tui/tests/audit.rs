//! The Audit pane and the role rule, through `dispatch` only (no network).

mod common;

use common::{draw, loaded, on_audit, session, txn, txn_rows};
use spur_console::model::action::TailSpec;
use spur_console::model::audit::{CAPACITY, TailStatus};
use spur_console::model::session::Role;
use spur_console::model::state::Mode;
use spur_console::{Action, Effect, Msg, PaneId, Rpc, State, WriteOp, dispatch};
use tui_input::InputRequest;

fn ids(state: &State) -> Vec<i64> {
    state.audit.rows.iter().map(|e| e.txn.id).collect()
}

fn rows(state: &mut State, rows: Vec<spur_proto::v1::TxnRow>) {
    let sub = state.audit.sub;
    dispatch(state, Action::Net(Msg::AuditRows { sub, rows, lagged: None }));
}

fn typed(state: &mut State, text: &str) {
    dispatch(state, Action::Input(InputRequest::DeleteLine));
    for c in text.chars() {
        dispatch(state, Action::Input(InputRequest::InsertChar(c)));
    }
}

fn hint(state: &State) -> Option<String> {
    match &state.mode {
        Mode::TxnFilter(p) => p.hint.clone(),
        other => panic!("not in the txn filter prompt: {other:?}"),
    }
}

fn tail(sub: u64, filter: &[(&str, &str)], after_id: Option<i64>) -> Effect {
    let filter = filter.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Effect::Rpc(Rpc::Tail(TailSpec { sub, filter, after_id }))
}

#[test]
fn none_role_refuses_every_write_with_the_reason() {
    let mut actions = vec![Action::Edit, Action::Delete];
    // Job actions are open to a job's owner whatever the role (tests/queue.rs).
    let examples = WriteOp::examples().into_iter().filter(|op| !matches!(op, WriteOp::UpdateJobs { .. }));
    actions.extend(examples.map(Action::Request));
    for pane in [PaneId::Qos, PaneId::Accounts, PaneId::Audit] {
        for action in &actions {
            let mut state = loaded(false, (80, 24));
            dispatch(&mut state, Action::Net(Msg::Session(session(Role::None))));
            dispatch(&mut state, Action::GoPane(pane));
            dispatch(&mut state, Action::Down);
            let mut effects = dispatch(&mut state, action.clone());
            for follow in [Action::FocusNext, Action::Submit, Action::Submit] {
                effects.extend(dispatch(&mut state, follow));
            }
            assert!(!effects.iter().any(|e| matches!(e, Effect::Rpc(Rpc::Write(_)))), "{action:?} wrote");
            assert!(matches!(state.mode, Mode::Normal), "{action:?} opened {:?}", state.mode);
            let err = state.last_error.clone().unwrap_or_default();
            // Node writes need more than accounting writes; either way the reason names both roles.
            let want = format!("needs {}; you are None", action.role().as_str());
            assert!(err.contains(&want), "{action:?}: {err}");
        }
    }
    // The status bar says so too, and the hint line stops offering edit/delete.
    let mut state = loaded(false, (100, 24));
    dispatch(&mut state, Action::Net(Msg::Session(session(Role::None))));
    let text = draw(&state).backend().to_string();
    assert!(text.contains("alice: None, verified │ no writes: needs Operator │"), "{text}");
    assert!(!text.contains("e edit"), "{text}");
}

#[test]
fn operator_may_write_and_the_role_comes_from_whoami_on_connect() {
    let mut state = loaded(false, (80, 24));
    let effects = dispatch(&mut state, Action::Net(Msg::Connected));
    let want = [Rpc::FetchAll, Rpc::WhoAmI, Rpc::FetchJobs, Rpc::FetchLicenses, Rpc::FetchProvisioners]
        .map(Effect::Rpc);
    assert_eq!(effects, want);
    dispatch(&mut state, Action::Net(Msg::Session(session(Role::Operator))));
    dispatch(&mut state, Action::Request(WriteOp::DeleteQos { names: vec!["low".into()] }));
    assert!(matches!(state.mode, Mode::Confirm(_)));
    // A refusal from the controller makes the console ask who it is again.
    let error = "delete QOS: PermissionDenied: DeleteQos needs the Operator role".to_string();
    let effects = dispatch(&mut state, Action::Net(Msg::WriteFailed { error }));
    assert!(effects.contains(&Effect::Rpc(Rpc::WhoAmI)), "{effects:?}");
}

#[test]
fn opening_fills_then_a_reconnect_resumes_after_the_last_row() {
    let mut state = loaded(false, (80, 24));
    assert_eq!(dispatch(&mut state, Action::GoPane(PaneId::Audit)), [tail(1, &[], None)]);
    // Leaving and coming back does not subscribe again.
    dispatch(&mut state, Action::GoPane(PaneId::Qos));
    assert!(dispatch(&mut state, Action::GoPane(PaneId::Audit)).is_empty());
    rows(&mut state, txn_rows());
    assert_eq!(ids(&state), [1, 2, 3, 4, 5]);
    assert_eq!(state.audit.status, TailStatus::Live);
    let error = "cannot connect".to_string();
    let retry_in = std::time::Duration::from_secs(1);
    dispatch(&mut state, Action::Net(Msg::Reconnecting { attempt: 1, retry_in, error }));
    let text = draw(&state).backend().to_string();
    assert!(text.contains("○ offline, resumes after #5"), "{text}");
    let effects = dispatch(&mut state, Action::Net(Msg::Connected));
    assert!(effects.contains(&tail(2, &[], Some(5))), "{effects:?}");
    // Rows of the replaced subscription are dropped; an overlapping replay adds no duplicate.
    dispatch(
        &mut state,
        Action::Net(Msg::AuditRows {
            sub: 1,
            rows: vec![txn(9, "x", "create", "qos:x", "success")],
            lagged: None,
        }),
    );
    let replay = vec![
        txn(4, "carol", "create", "user:carol", "error"),
        txn(6, "dave", "delete", "qos:low", "success"),
    ];
    let lagged = Some("fell 3 rows behind the live stream".to_string());
    dispatch(&mut state, Action::Net(Msg::AuditRows { sub: 2, rows: replay, lagged }));
    assert_eq!(ids(&state), [1, 2, 3, 4, 5, 6]);
    let msg = state.message.clone().map(|m| m.text).unwrap_or_default();
    assert!(msg.contains("fell 3 rows behind"), "{msg}");
}

#[test]
fn pause_holds_rows_and_counts_them_until_resumed() {
    let mut state = on_audit((80, 24));
    dispatch(&mut state, Action::TogglePause);
    rows(
        &mut state,
        vec![txn(6, "a", "create", "qos:a", "success"), txn(7, "b", "create", "qos:b", "success")],
    );
    assert_eq!(ids(&state), [1, 2, 3, 4, 5]);
    assert_eq!(state.audit.arrived, 2);
    let text = draw(&state).backend().to_string();
    assert!(text.contains("paused, 2 new"), "{text}");
    dispatch(&mut state, Action::TogglePause);
    assert_eq!(ids(&state), [1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(state.audit.arrived, 0);
    // The selection was on the last row, so it follows the tail.
    assert_eq!(state.view().selected, 6);
}

#[test]
fn the_buffer_is_bounded_paused_or_not() {
    let mut state = on_audit((80, 24));
    dispatch(&mut state, Action::Up); // off the bottom: stays on its record
    let batch =
        |from: i64, n: i64| (from..from + n).map(|i| txn(i, "a", "update", "qos:a", "success")).collect();
    rows(&mut state, batch(6, 3000));
    rows(&mut state, batch(3006, 3000));
    assert_eq!(state.audit.rows.len(), CAPACITY);
    assert_eq!(state.audit.rows.front().map(|e| e.txn.id), Some(6005 - CAPACITY as i64 + 1));
    dispatch(&mut state, Action::TogglePause);
    rows(&mut state, batch(6006, 6000));
    assert_eq!(state.audit.held.len(), CAPACITY);
    assert_eq!(state.audit.arrived, 6000);
    assert_eq!(state.audit.rows.back().map(|e| e.txn.id), Some(6005));
    dispatch(&mut state, Action::TogglePause);
    assert_eq!(state.audit.rows.len(), CAPACITY);
    assert_eq!(state.audit.rows.back().map(|e| e.txn.id), Some(12005));
    // Following the tail, the newest row is on screen and selected (only on-screen rows are drawn).
    dispatch(&mut state, Action::Bottom);
    let term = draw(&state);
    let buf = term.backend().buffer();
    let line = |y: u16| (0..80).map(|x| buf[(x, y)].symbol()).collect::<String>();
    let y = (3..22).find(|&y| buf[(3, y)].modifier.contains(ratatui::style::Modifier::REVERSED));
    let y = y.expect("a selected row on screen");
    // Row 12005 is 12,005 s after 09:00:00.
    assert!(line(y).contains("2026-03-01T12:20:05"), "{}", line(y));
    assert_eq!(state.view().selected, CAPACITY - 1);
}

#[test]
fn filter_is_validated_while_typing_and_resubscribes_on_enter() {
    let mut state = on_audit((80, 24));
    dispatch(&mut state, Action::TxnFilterMode);
    typed(&mut state, "Outcome=maybe");
    assert!(hint(&state).unwrap_or_default().contains("'maybe' is not an outcome"));
    // Too long for the prompt line at 80 columns: the status bar shows it whole.
    let screen = draw(&state).backend().to_string();
    let status = screen.lines().last().unwrap_or_default().to_string();
    assert!(status.contains("Outcome: 'maybe' is not an outcome (success, denied, error)"), "{screen}");
    assert!(dispatch(&mut state, Action::Submit).is_empty(), "an invalid filter is not sent");
    typed(&mut state, "alice");
    assert!(hint(&state).unwrap_or_default().contains("expected Key=value"));
    typed(&mut state, "Colour=red");
    assert!(hint(&state).unwrap_or_default().contains("Colour: unknown txn filter (use Actor"));
    typed(&mut state, "Start=yesterday");
    assert!(hint(&state).unwrap_or_default().contains("'yesterday' is not a time"));
    typed(&mut state, "Actor=alice Out");
    dispatch(&mut state, Action::Complete);
    dispatch(&mut state, Action::Input(InputRequest::InsertChar('d')));
    dispatch(&mut state, Action::Complete);
    assert_eq!(hint(&state), None);
    let effects = dispatch(&mut state, Action::Submit);
    assert_eq!(effects, [tail(2, &[("Actor", "alice"), ("Outcome", "denied")], None)]);
    assert!(matches!(state.mode, Mode::Normal));
    assert!(ids(&state).is_empty(), "rows chosen by the old filter are dropped");
    assert_eq!(state.audit.filter_text, "Actor=alice Outcome=denied");
    // Esc leaves the filter in force; an empty one clears it.
    dispatch(&mut state, Action::TxnFilterMode);
    dispatch(&mut state, Action::Back);
    assert_eq!(state.audit.filter_text, "Actor=alice Outcome=denied");
    dispatch(&mut state, Action::TxnFilterMode);
    typed(&mut state, "");
    assert_eq!(dispatch(&mut state, Action::Submit), [tail(3, &[], None)]);
}

#[test]
fn permission_denied_is_the_pane_body() {
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::GoPane(PaneId::Audit));
    let error = "PermissionDenied: ListTxn needs the Operator role; 'bob' has None".to_string();
    dispatch(&mut state, Action::Net(Msg::AuditFailed { sub: 1, error }));
    let text = draw(&state).backend().to_string();
    assert!(text.contains("✗ audit log unavailable: PermissionDenied: ListTxn needs the Operator"), "{text}");
    // r retries from where it stopped.
    let effects = dispatch(&mut state, Action::Refresh);
    assert!(effects.contains(&tail(2, &[], None)), "{effects:?}");
}

#[test]
fn enter_shows_info_as_pretty_json_and_keys_outside_audit_explain_themselves() {
    let mut state = on_audit((80, 24));
    dispatch(&mut state, Action::Top);
    dispatch(&mut state, Action::Down); // the denied row
    dispatch(&mut state, Action::Open);
    let text = draw(&state).backend().to_string();
    assert!(text.contains("txn 2 — delete account:physics by bob"), "{text}");
    assert!(text.contains("\"params\": {") && text.contains("\"name\": \"physics\""), "{text}");
    assert!(state.detail(PaneId::Audit, "2").is_some());
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::TogglePause);
    assert!(state.message.map(|m| m.text).unwrap_or_default().contains("Audit pane"));
}
