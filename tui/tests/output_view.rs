//! The job output view with dispatch and the renderer: `o`/`O` on a Queue
//! row asks for the selected job's stdout or stderr, pieces become lines,
//! Esc or `q` closes it and stops the stream (q does not quit), pieces of a
//! closed view are dropped, and `O` stays the HRES pane's toggle there.

mod common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use spur_console::model::action::OutputSpec;
use spur_console::model::session::Role;
use spur_console::model::state::Mode;
use spur_console::update::keys::action_for_key;
use spur_console::{Action, Effect, Msg, PaneId, Rpc, dispatch};

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn screen(state: &spur_console::State) -> String {
    let term = common::draw(state);
    let buf = term.backend().buffer();
    (0..buf.area.height)
        .map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol().to_string()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn o_streams_the_selected_job_s_stdout_and_esc_stops_it() {
    let mut state = common::on_queue(false, (100, 30), Some(Role::Administrator));
    let job = spur_console::update::nav::current_key(&state).unwrap().parse::<u64>().unwrap();
    let o = action_for_key(&state, key('o')).unwrap();
    assert_eq!(o, Action::Output(false));
    let effects = dispatch(&mut state, o);
    assert_eq!(effects, vec![Effect::Rpc(Rpc::Output(OutputSpec { sub: 1, job, stderr: false }))]);
    assert!(matches!(state.mode, Mode::Output));
    let piece = |data: &[u8], note: &str| Msg::Output { sub: 1, data: data.to_vec(), note: note.into() };
    dispatch(&mut state, Action::Net(piece(b"hello\nwor", "")));
    dispatch(&mut state, Action::Net(piece(b"ld\n", "")));
    dispatch(&mut state, Action::Net(piece(b"", "job ran again: its new output")));
    let s = screen(&state);
    assert!(s.contains(&format!("job {job} stdout: following")), "{s}");
    assert!(
        s.contains("hello") && s.contains("── job ran again: its new output ──") && s.contains("world"),
        "{s}"
    );
    // q closes the view rather than quitting, and stops the stream.
    let q = action_for_key(&state, key('q')).unwrap();
    assert_eq!(dispatch(&mut state, q), vec![Effect::Rpc(Rpc::StopOutput)]);
    assert!(matches!(state.mode, Mode::Normal));
    assert!(state.output.is_none());
    // A piece of the closed stream changes nothing.
    dispatch(&mut state, Action::Net(piece(b"late\n", "")));
    assert!(state.output.is_none());
}

#[test]
fn capital_o_is_stderr_on_the_queue_and_the_layer_toggle_on_the_hres_pane() {
    let mut state = common::on_queue(false, (100, 30), Some(Role::Administrator));
    assert_eq!(action_for_key(&state, key('O')), Some(Action::Output(true)));
    let effects = dispatch(&mut state, Action::Output(true));
    assert!(
        matches!(&effects[..], [Effect::Rpc(Rpc::Output(OutputSpec { stderr: true, .. }))]),
        "{effects:?}"
    );
    // The stream ends with a refusal: said in the view and the status line; Esc sends nothing more.
    let error =
        Some("job 101 belongs to 'alice'; only its owner or an Operator may read its output".to_string());
    dispatch(&mut state, Action::Net(Msg::OutputEnded { sub: 1, error }));
    let s = screen(&state);
    assert!(s.contains("stderr: job 101 belongs to 'alice'"), "{s}");
    assert_eq!(dispatch(&mut state, Action::Back), vec![]);
    dispatch(&mut state, Action::GoPane(PaneId::Hres));
    assert_eq!(action_for_key(&state, key('O')), Some(Action::HresToggle));
    // Elsewhere o says where it works.
    dispatch(&mut state, Action::GoPane(PaneId::Nodes));
    assert_eq!(dispatch(&mut state, Action::Output(false)), vec![]);
    assert_eq!(state.message.unwrap().text, "that key works in the Queue pane (1)");
}

#[test]
fn scrolling_up_holds_the_view_and_a_lost_connection_is_said() {
    let mut state = common::on_queue(false, (100, 12), Some(Role::Administrator));
    dispatch(&mut state, Action::Output(false));
    let lines: String = (0..50).map(|i| format!("line {i}\n")).collect();
    dispatch(&mut state, Action::Net(Msg::Output { sub: 1, data: lines.into_bytes(), note: String::new() }));
    assert!(screen(&state).contains("line 49"));
    dispatch(&mut state, Action::PageUp);
    let s = screen(&state);
    assert!(!s.contains("line 49") && s.contains("lines up; G follows"), "{s}");
    dispatch(&mut state, Action::Bottom);
    assert!(screen(&state).contains("line 49"));
    let lost =
        Msg::Reconnecting { attempt: 1, retry_in: std::time::Duration::from_secs(1), error: "x".into() };
    dispatch(&mut state, Action::Net(lost));
    assert!(screen(&state).contains("connection to the controller was lost"));
}

#[test]
fn two_keys_of_one_pane_may_not_share_a_key_but_keys_of_different_panes_may() {
    use spur_console::model::keymap::Keymap;
    let e = Keymap::with_overrides(&[("job_output".into(), vec!["w".into()])]).unwrap_err().to_string();
    assert!(e.contains("key \"w\" is bound to both"), "{e}");
    let shared = Keymap::with_overrides(&[("job_output".into(), vec!["d".into()])]);
    assert!(shared.is_ok(), "d drains on the Nodes pane, where no output is offered");
    let e = Keymap::with_overrides(&[("job_output".into(), vec!["j".into()])]).unwrap_err().to_string();
    assert!(e.contains("\"down\""), "a key every pane has: {e}");
}
