//! Editing accounts and users in the Accounts pane: the same form, validation,
//! diff and confirmation as QOS editing, through `dispatch` only; and the
//! QOS's idle-fill flag, which the QOS pane shows and edits like any key.

mod common;

use common::{draw, loaded, session};
use spur_console::model::session::Role;
use spur_console::model::state::{Choice, Mode};
use spur_console::model::table::Target;
use spur_console::update::nav;
use spur_console::{Action, Effect, Msg, PaneId, Rpc, State, WriteOp, dispatch};
use spur_vocab::keys::Entity;
use tui_input::InputRequest;

fn pair(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

/// Moves the Accounts pane's selection to the row for `target`.
fn select(state: &mut State, target: Target) {
    dispatch(state, Action::GoPane(PaneId::Accounts));
    let rows = state.all_rows(PaneId::Accounts);
    let key = rows.into_iter().find(|r| r.target == target).map(|r| r.key).expect("row in the fixture");
    dispatch(state, Action::Top);
    while nav::current_key(state).as_deref() != Some(key.as_str()) {
        dispatch(state, Action::Down);
    }
}

fn alice() -> Target {
    Target::Assoc { user: "alice".into(), account: "ml".into(), partition: String::new() }
}

fn focused(state: &State) -> &'static str {
    match &state.mode {
        Mode::Form(f) => f.focused().map(|f| f.key()).unwrap_or_default(),
        _ => "",
    }
}

/// Focus `key` in the open form and replace its value with `text`.
fn set_field(state: &mut State, key: &str, text: &str) {
    let mut guard = 0;
    while focused(state) != key {
        dispatch(state, Action::FocusNext);
        guard += 1;
        assert!(guard < 50, "no field {key} in {:?}", state.mode);
    }
    dispatch(state, Action::Input(InputRequest::DeleteLine));
    for c in text.chars() {
        dispatch(state, Action::Input(InputRequest::InsertChar(c)));
    }
}

/// Submit the form, check the dialog, then press Apply: what was sent.
fn submit_and_confirm(state: &mut State) -> (WriteOp, Vec<Effect>) {
    assert!(dispatch(state, Action::Submit).is_empty(), "a write without confirmation");
    let Mode::Confirm(c) = &state.mode else { panic!("expected the diff dialog, got {:?}", state.mode) };
    assert_eq!(c.focus, Choice::Cancel);
    let op = c.op.clone();
    dispatch(state, Action::FocusNext);
    (op, dispatch(state, Action::Submit))
}

#[test]
fn account_form_has_the_account_keys_of_the_shared_table() {
    let mut state = loaded(false, (80, 24));
    select(&mut state, Target::Account("ml".into()));
    dispatch(&mut state, Action::Edit);
    let Mode::Form(f) = &state.mode else { panic!("no form: {:?}", state.last_error) };
    let keys: Vec<&str> = f.fields.iter().map(|f| f.key()).collect();
    assert_eq!(
        keys,
        ["description", "organization", "parent", "fairshare", "maxrunningjobs", "grptres", "grpsubmit"]
    );
    assert_eq!(f.subject(), "account ml");
}

#[test]
fn account_fairshare_sends_exactly_the_changed_pair() {
    let mut state = loaded(false, (80, 24));
    select(&mut state, Target::Account("ml".into()));
    dispatch(&mut state, Action::Edit);
    set_field(&mut state, "fairshare", "60");
    let (op, effects) = submit_and_confirm(&mut state);
    let want = WriteOp::Modify {
        entity: Entity::Account,
        filter: vec![pair("name", "ml")],
        set: vec![pair("fairshare", "60")],
        diff: vec!["fairshare: 50 → 60".into()],
    };
    assert_eq!(op, want);
    assert_eq!(op.describe().0, "Modify account ml?");
    assert_eq!(effects, vec![Effect::Rpc(Rpc::Write(want))]);
}

#[test]
fn qos_idlefillpreemptable_is_shown_and_sent_as_sacctmgr_spells_it() {
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::Down); // highprio
    let detail = state.detail(PaneId::Qos, "highprio").unwrap();
    assert!(detail.fields.contains(&pair("IdleFillPreemptable", "no")), "{:?}", detail.fields);
    dispatch(&mut state, Action::Edit);
    set_field(&mut state, "idlefillpreemptable", "yes");
    let (op, _) = submit_and_confirm(&mut state);
    let want = WriteOp::Modify {
        entity: Entity::Qos,
        filter: vec![pair("name", "highprio")],
        set: vec![pair("idlefillpreemptable", "yes")],
        diff: vec!["idlefillpreemptable: no → yes".into()],
    };
    assert_eq!(op, want);
}

#[test]
fn user_defaultqos_sends_exactly_the_changed_pair() {
    let mut state = loaded(false, (80, 24));
    select(&mut state, alice());
    dispatch(&mut state, Action::Edit);
    let Mode::Form(f) = &state.mode else { panic!("no form: {:?}", state.last_error) };
    let keys: Vec<&str> = f.fields.iter().map(|f| f.key()).collect();
    for key in ["qos", "defaultqos", "maxrunningjobs", "grptres", "maxwall"] {
        assert!(keys.contains(&key), "{key} missing from {keys:?}");
    }
    // The association's scope picks the record; modify cannot change it.
    for key in ["name", "account", "partition"] {
        assert!(!keys.contains(&key), "{key} in {keys:?}");
    }
    set_field(&mut state, "defaultqos", "normal");
    let (op, effects) = submit_and_confirm(&mut state);
    let want = WriteOp::Modify {
        entity: Entity::User,
        filter: vec![pair("name", "alice"), pair("account", "ml")],
        set: vec![pair("defaultqos", "normal")],
        diff: vec!["defaultqos: highprio → normal".into()],
    };
    assert_eq!(op, want);
    assert_eq!(op.describe().0, "Modify user alice in ml?");
    assert_eq!(effects, vec![Effect::Rpc(Rpc::Write(want))]);
}

#[test]
fn user_qos_allow_list_is_edited_as_a_list() {
    let mut state = loaded(false, (80, 24));
    select(&mut state, alice());
    dispatch(&mut state, Action::Edit);
    // The same list in another order and spacing still parses; a new entry is a change.
    set_field(&mut state, "qos", "highprio, normal,low");
    let (op, _) = submit_and_confirm(&mut state);
    let WriteOp::Modify { set, .. } = op else { panic!("{op:?}") };
    assert_eq!(set, vec![pair("qos", "highprio, normal,low")]);
}

#[test]
fn invalid_values_are_flagged_while_typing_and_block_submit() {
    for (target, key, bad) in [
        (Target::Account("ml".into()), "fairshare", "lots"),
        (alice(), "qos", "high prio!"),
        (alice(), "maxrunningjobs", "4x"),
    ] {
        let mut state = loaded(false, (80, 24));
        select(&mut state, target);
        dispatch(&mut state, Action::Edit);
        set_field(&mut state, key, bad);
        let Mode::Form(f) = &state.mode else { panic!("no form") };
        let err = f.focused().unwrap().change().unwrap_err();
        assert!(err.starts_with(&format!("{key}:")), "{err}");
        // The form shows it before any submit: the `!` flag and the parser's words.
        let text = draw(&state).backend().to_string();
        let flagged = text.lines().any(|l| l.contains("│ !") && l.split_whitespace().any(|w| w == key));
        assert!(flagged, "{key} not flagged:\n{text}");
        assert!(text.contains(&err[..err.len().min(30)]), "{err} not shown:\n{text}");
        assert!(dispatch(&mut state, Action::Submit).is_empty());
        assert!(matches!(state.mode, Mode::Form(_)), "{:?}", state.mode);
        assert!(state.last_error.as_deref().unwrap_or_default().contains(key), "{:?}", state.last_error);
    }
}

#[test]
fn read_only_and_role_refuse_before_the_form_opens() {
    for target in [Target::Account("ml".into()), alice()] {
        let mut state = loaded(true, (80, 24));
        select(&mut state, target.clone());
        assert!(dispatch(&mut state, Action::Edit).is_empty());
        assert!(matches!(state.mode, Mode::Normal), "{:?}", state.mode);
        assert!(state.last_error.as_deref().unwrap_or_default().contains("read-only"));

        let mut state = loaded(false, (80, 24));
        dispatch(&mut state, Action::Net(Msg::Session(session(Role::None))));
        select(&mut state, target);
        dispatch(&mut state, Action::Edit);
        assert!(matches!(state.mode, Mode::Normal), "{:?}", state.mode);
        assert!(state.last_error.as_deref().unwrap_or_default().contains("needs Operator"));
    }
    // A form opened before the switch to read-only still cannot send.
    let mut state = loaded(false, (80, 24));
    select(&mut state, alice());
    dispatch(&mut state, Action::Edit);
    set_field(&mut state, "defaultqos", "normal");
    state.settings.read_only = true;
    let mut effects = dispatch(&mut state, Action::Submit);
    effects.extend(dispatch(&mut state, Action::FocusNext));
    effects.extend(dispatch(&mut state, Action::Submit));
    assert!(!effects.iter().any(|e| matches!(e, Effect::Rpc(Rpc::Write(_)))));
}

#[test]
fn unchanged_form_sends_nothing() {
    let mut state = loaded(false, (80, 24));
    select(&mut state, Target::Account("physics".into()));
    dispatch(&mut state, Action::Edit);
    assert!(dispatch(&mut state, Action::Submit).is_empty());
    assert!(matches!(state.mode, Mode::Form(_)));
    assert_eq!(state.message.as_ref().map(|m| m.text.as_str()), Some("nothing changed"));
}

#[test]
fn a_partition_association_is_named_by_its_partition() {
    let user = spur_proto::v1::User { name: "bob".into(), admin_level: "None".into(), ..Default::default() };
    let assoc = spur_proto::v1::Association {
        user: "bob".into(),
        account: "physics".into(),
        partition: "gpu".into(),
        ..Default::default()
    };
    let f = spur_console::model::form::EditForm::assoc(&user, &assoc);
    assert_eq!(f.filter, vec![pair("name", "bob"), pair("account", "physics"), pair("partition", "gpu")]);
    assert_eq!(f.subject(), "user bob in physics/gpu");
}
