mod common;

use common::loaded;
use spur_console::config;
use spur_console::model::filter::Filter;
use spur_console::model::keymap::{KeySpec, Keymap};
use spur_console::model::state::{Choice, Mode};
use spur_console::update::command::{self, Command};
use spur_console::{Action, Effect, PaneId, Rpc, WriteOp, dispatch};
use spur_vocab::keys::Entity;
use tui_input::InputRequest;

fn all_write_actions() -> Vec<Action> {
    let mut actions = vec![Action::Edit, Action::Delete];
    actions.extend(WriteOp::examples().into_iter().map(Action::Request));
    actions
}

fn writes(effects: &[Effect]) -> usize {
    effects.iter().filter(|e| matches!(e, Effect::Rpc(Rpc::Write(_)))).count()
}

#[test]
fn read_only_blocks_every_write_action() {
    for pane in [PaneId::Qos, PaneId::Accounts] {
        for action in all_write_actions() {
            let mut state = loaded(true, (80, 24));
            dispatch(&mut state, Action::GoPane(pane));
            dispatch(&mut state, Action::Down);
            let mut effects = dispatch(&mut state, action.clone());
            // Even pressing through anything that opened must not write.
            for follow in [Action::FocusNext, Action::Submit, Action::Submit] {
                effects.extend(dispatch(&mut state, follow));
            }
            assert_eq!(writes(&effects), 0, "{action:?} wrote in read-only mode");
            assert!(
                !matches!(state.mode, Mode::Confirm(_) | Mode::Form(_)),
                "{action:?} opened {:?}",
                state.mode
            );
            let err = state.last_error.clone().unwrap_or_default();
            assert!(err.contains("read-only"), "{action:?}: {err}");
        }
    }
}

#[test]
fn writes_ask_for_confirmation_with_focus_on_cancel() {
    for op in WriteOp::examples() {
        let mut state = loaded(false, (80, 24));
        let effects = dispatch(&mut state, Action::Request(op.clone()));
        assert!(effects.is_empty());
        let Mode::Confirm(c) = &state.mode else { panic!("no dialog for {op:?}") };
        assert_eq!(c.focus, Choice::Cancel);
        // Enter on the default focus cancels.
        assert_eq!(writes(&dispatch(&mut state, Action::Submit)), 0);
        assert!(matches!(state.mode, Mode::Normal));
        // Moving to the confirm button and pressing it sends exactly this write.
        dispatch(&mut state, Action::Request(op.clone()));
        dispatch(&mut state, Action::FocusNext);
        let effects = dispatch(&mut state, Action::Submit);
        match op {
            // A dangerous plugin runs here once confirmed; it is not an RPC.
            WriteOp::RunPlugin { argv, .. } => {
                assert!(matches!(&effects[..], [Effect::Run { argv: a, .. }] if *a == argv), "{effects:?}")
            }
            op => assert_eq!(effects, vec![Effect::Rpc(Rpc::Write(op))]),
        }
    }
}

#[test]
fn delete_key_targets_selection_then_marks() {
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::GoPane(PaneId::Qos));
    dispatch(&mut state, Action::Down);
    dispatch(&mut state, Action::Delete);
    let Mode::Confirm(c) = &state.mode else { panic!("expected a dialog") };
    assert_eq!(c.op, WriteOp::DeleteQos { names: vec!["highprio".into()] });
    dispatch(&mut state, Action::Back);
    dispatch(&mut state, Action::ToggleMark); // highprio, moves to low
    dispatch(&mut state, Action::ToggleMark); // low
    dispatch(&mut state, Action::Delete);
    let Mode::Confirm(c) = &state.mode else { panic!("expected a dialog") };
    assert_eq!(c.op, WriteOp::DeleteQos { names: vec!["highprio".into(), "low".into()] });
}

#[test]
fn edit_form_sends_only_changed_fields_after_confirm() {
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::Down); // highprio
    dispatch(&mut state, Action::Edit);
    assert!(matches!(state.mode, Mode::Form(_)));
    dispatch(&mut state, Action::FocusNext); // priority
    dispatch(&mut state, Action::Input(InputRequest::DeleteLine));
    for c in "120".chars() {
        dispatch(&mut state, Action::Input(InputRequest::InsertChar(c)));
    }
    let focused = |state: &spur_console::State| match &state.mode {
        Mode::Form(f) => f.focused().map(|f| f.key()).unwrap_or_default(),
        _ => "",
    };
    while focused(&state) != "maxjobsperuser" {
        dispatch(&mut state, Action::FocusNext);
    }
    dispatch(&mut state, Action::Input(InputRequest::DeleteLine));
    dispatch(&mut state, Action::Submit);
    let Mode::Confirm(c) = &state.mode else { panic!("expected the diff dialog, got {:?}", state.mode) };
    assert_eq!(c.focus, Choice::Cancel);
    let WriteOp::Modify { entity: Entity::Qos, filter, set, diff } = &c.op else { panic!("{:?}", c.op) };
    assert_eq!(filter, &vec![("name".to_string(), "highprio".to_string())]);
    assert_eq!(set, &vec![("priority".into(), "120".into()), ("maxjobsperuser".into(), "-1".into())]);
    assert_eq!(diff[0], "priority: 100 → 120");
    // Cancel returns to the form with the edits intact.
    dispatch(&mut state, Action::Back);
    assert!(matches!(state.mode, Mode::Form(_)));
    // A value the controller would refuse keeps the form open and names the key.
    dispatch(&mut state, Action::Input(InputRequest::InsertChar('x')));
    assert!(dispatch(&mut state, Action::Submit).is_empty());
    assert!(matches!(state.mode, Mode::Form(_)));
    assert!(
        state.last_error.as_deref().unwrap_or_default().contains("maxjobsperuser"),
        "{:?}",
        state.last_error
    );
}

#[test]
fn equivalent_spellings_are_not_changes() {
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::Down); // highprio: maxwall 1-00:00:00, usagefactor 1.5
    dispatch(&mut state, Action::Edit);
    let Mode::Form(f) = &mut state.mode else { panic!("no form") };
    for field in &mut f.fields {
        match field.key() {
            "maxwall" => field.input = "1440".into(),
            "usagefactor" => field.input = "1.50".into(),
            _ => {}
        }
    }
    assert_eq!(f.to_write(), Ok(None));
}

#[test]
fn filter_with_bang_inverts() {
    let f = Filter::parse("high").unwrap().unwrap();
    assert!(f.matches("highprio") && !f.matches("low"));
    let f = Filter::parse("!high").unwrap().unwrap();
    assert!(!f.matches("highprio") && f.matches("low"));
    assert!(Filter::parse("").unwrap().is_none());
    assert!(Filter::parse("(").is_err());

    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::FilterMode);
    for c in "!prio".chars() {
        dispatch(&mut state, Action::Input(InputRequest::InsertChar(c)));
    }
    dispatch(&mut state, Action::Submit);
    let names: Vec<String> = state.table(PaneId::Qos).unwrap().rows.into_iter().map(|r| r.key).collect();
    assert_eq!(names, ["normal", "low", "scavenger"]);
    dispatch(&mut state, Action::Back); // clears the filter
    assert_eq!(state.table(PaneId::Qos).unwrap().rows.len(), 4);
}

#[test]
fn account_tree_filter_keeps_ancestors() {
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::GoPane(PaneId::Accounts));
    let keys = |state: &spur_console::State| -> Vec<String> {
        state.table(PaneId::Accounts).unwrap().rows.into_iter().map(|r| r.key).collect()
    };
    assert_eq!(keys(&state)[0], "acct:root");
    dispatch(&mut state, Action::FilterMode);
    for c in "carol".chars() {
        dispatch(&mut state, Action::Input(InputRequest::InsertChar(c)));
    }
    assert_eq!(keys(&state), ["acct:root", "acct:research", "acct:ml", "user:carol@ml/"]);
}

#[test]
fn command_completion_and_parsing() {
    assert_eq!(command::complete("ac").line, "accounts");
    assert_eq!(command::complete("ex").line, "explain ");
    let c = command::complete("qu");
    assert_eq!(c.candidates, ["queue", "quit"]);
    assert_eq!(c.line, "qu");
    assert_eq!(command::complete("n").line, "nodes");
    assert_eq!(command::complete("h").candidates, ["help", "hres"]);
    assert!(command::complete("zz").candidates.is_empty());
    assert_eq!(command::parse("qos"), Ok(Command::Pane(PaneId::Qos)));
    assert_eq!(command::parse("q"), Ok(Command::Quit));
    assert_eq!(command::parse("explain 42"), Ok(Command::Explain(42)));
    assert!(command::parse("explain x").unwrap_err().contains("'x' is not a job id"));
    assert!(command::parse("explain").is_err());
    assert!(command::parse("bogus").is_err());

    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::CommandMode);
    for c in "ac".chars() {
        dispatch(&mut state, Action::Input(InputRequest::InsertChar(c)));
    }
    dispatch(&mut state, Action::Complete);
    dispatch(&mut state, Action::Submit);
    assert_eq!(state.pane, PaneId::Accounts);
    dispatch(&mut state, Action::CommandMode);
    for c in "quit".chars() {
        dispatch(&mut state, Action::Input(InputRequest::InsertChar(c)));
    }
    assert_eq!(dispatch(&mut state, Action::Submit), vec![Effect::Quit]);
}

#[test]
fn keymap_defaults_have_no_conflicts_and_config_errors_name_things() {
    Keymap::with_overrides(&[]).expect("defaults conflict-free");
    let err = config::parse("[keys]\nrefresh = \"q\"\n").unwrap_err();
    assert!(err.contains("\"q\"") && err.contains("quit") && err.contains("refresh"), "{err}");
    let err = config::parse("[keys]\nfrobnicate = \"x\"\n").unwrap_err();
    assert!(err.contains("frobnicate"), "{err}");
    let err = config::parse("[colours]\nx = 1\n").unwrap_err();
    assert!(err.contains("colours"), "{err}");
    let err = config::parse("[theme]\nname = \"neon\"\n").unwrap_err();
    assert!(err.contains("neon"), "{err}");
    let cfg = config::parse("[keys]\nquit = [\"Z\", \"ctrl-q\"]\n[theme]\nname = \"mono\"\n").unwrap();
    assert_eq!(cfg.keymap.action_for(KeySpec::parse("Z").unwrap()), Some(&Action::Quit));
    assert_eq!(cfg.keymap.action_for(KeySpec::parse("q").unwrap()), None);
    assert_eq!(cfg.theme, spur_console::model::state::ThemeName::Mono);
}

#[test]
fn sorting_cycles_and_reverses() {
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::SortNext); // Name ▲
    dispatch(&mut state, Action::SortNext); // Priority ▲
    let names: Vec<String> = state.table(PaneId::Qos).unwrap().rows.into_iter().map(|r| r.key).collect();
    assert_eq!(names, ["scavenger", "normal", "low", "highprio"]);
    dispatch(&mut state, Action::SortReverse);
    let first = state.table(PaneId::Qos).unwrap().rows.key(0).unwrap();
    assert_eq!(first, "highprio");
}

#[test]
fn reconnect_and_write_results_refetch() {
    let mut state = loaded(false, (80, 24));
    let msg = spur_console::Msg::WriteDone { summary: "deleted".into() };
    assert_eq!(dispatch(&mut state, Action::Net(msg)), vec![Effect::Rpc(Rpc::FetchAll)]);
    let msg = spur_console::Msg::WriteFailed { error: "NotFound".into() };
    assert_eq!(dispatch(&mut state, Action::Net(msg)), vec![Effect::Rpc(Rpc::FetchAll)]);
    assert_eq!(dispatch(&mut state, Action::Refresh), vec![Effect::Rpc(Rpc::FetchAll)]);
}

#[test]
fn mouse_click_selects_the_row_under_it() {
    let mut state = loaded(false, (80, 24));
    // Tabs, breadcrumb, then the header at y=2: the row at y=5 is index 2.
    dispatch(&mut state, Action::ClickRow(5));
    assert_eq!(state.view().selected, 2);
    dispatch(&mut state, Action::ClickRow(20)); // below the last row: ignored
    assert_eq!(state.view().selected, 2);
    dispatch(&mut state, Action::Scroll(-3));
    assert_eq!(state.view().selected, 0);
}

#[test]
fn detail_view_opens_and_esc_goes_back() {
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::Down);
    dispatch(&mut state, Action::Open);
    assert!(matches!(&state.mode, Mode::Detail { key, .. } if key == "highprio"));
    dispatch(&mut state, Action::Help);
    dispatch(&mut state, Action::Back);
    assert!(matches!(&state.mode, Mode::Detail { .. }));
    dispatch(&mut state, Action::Back);
    assert!(matches!(state.mode, Mode::Normal));
}

#[test]
fn explain_command_opens_preemption_for_the_job() {
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::CommandMode);
    for c in "explain 4242".chars() {
        dispatch(&mut state, Action::Input(InputRequest::InsertChar(c)));
    }
    let effects = dispatch(&mut state, Action::Submit);
    assert_eq!(state.pane, PaneId::Preempt);
    assert_eq!(state.preempt.job, Some(4242));
    assert_eq!(effects, vec![Effect::Rpc(Rpc::Explain(4242))]);
    let text = common::draw(&state).backend().to_string();
    assert!(text.contains("job 4242") && text.contains("loading"), "{text}");
}

#[test]
fn accounts_without_a_root_record_hang_under_root() {
    let mut snapshot = common::snapshot();
    snapshot.accounts.retain(|a| a.name != "root");
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::Net(spur_console::Msg::Loaded(snapshot)));
    let table = state.table(PaneId::Accounts).unwrap();
    assert_eq!(table.rows.get(0).unwrap().target, spur_console::model::table::Target::Root);
    assert_eq!(table.rows.len(), table.total);
    // Root cannot be deleted, even by marking it.
    dispatch(&mut state, Action::GoPane(PaneId::Accounts));
    dispatch(&mut state, Action::Delete);
    assert!(matches!(state.mode, Mode::Normal));
    assert!(state.last_error.unwrap_or_default().contains("root"));
}
