//! Contexts: console.toml's `[[contexts]]` checked at load (every bad case
//! an error naming the context and key), `:ctx` switching (the old
//! cluster's data gone), a read-only context refusing writes, and a
//! production context's frame and typed confirmation.

mod common;

use common::{draw, on_nodes, type_text};
use spur_console::config;
use spur_console::model::context::{Context, Contexts};
use spur_console::model::session::Role;
use spur_console::model::state::Mode;
use spur_console::{Action, Effect, NodeOp, PaneId, Rpc, State, dispatch};
use std::path::PathBuf;

const TWO: &str = r#"
default_context = "b"
[[contexts]]
name = "a"
controllers = ["ctl1:6817", "http://ctl2:6817"]
[[contexts]]
name = "b"
controllers = ["10.0.0.9:7000"]
read_only = true
production = true
"#;

/// A token file of this test's own (no tempfile dependency without the demo feature).
fn token_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("spur-console-ctx-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn good_contexts_load_in_order_with_their_rules() {
    let c = config::parse(TWO).unwrap();
    assert_eq!(c.default_context.as_deref(), Some("b"));
    let names: Vec<&str> = c.contexts.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(c.contexts[0].url(), "http://ctl1:6817,http://ctl2:6817");
    assert!(!c.contexts[0].read_only && !c.contexts[0].production);
    assert!(c.contexts[1].read_only && c.contexts[1].production);
    assert_eq!(c.contexts[0].token, None);
    // `current` is the other spelling; no contexts at all is the console as before.
    assert_eq!(
        config::parse(&TWO.replace("default_context", "current")).unwrap().default_context.as_deref(),
        Some("b")
    );
    let none = config::parse("[theme]\nname = \"mono\"\n").unwrap();
    assert!(none.contexts.is_empty() && none.default_context.is_none());
}

#[test]
fn a_token_file_is_read_at_load() {
    let path = token_file("good", "  eyJhbGciOi.x.y\n");
    let text =
        format!("[[contexts]]\nname = \"j\"\ncontrollers = [\"c:1\"]\ntoken_file = \"{}\"\n", path.display());
    let c = config::parse(&text).unwrap();
    assert_eq!(c.contexts[0].token.as_deref(), Some("eyJhbGciOi.x.y"));
    std::fs::remove_file(path).unwrap();
}

#[test]
fn every_bad_context_is_an_error_naming_the_context_and_key() {
    let empty = token_file("empty", "\n");
    let cases = [
        ("[[contexts]]\nname = \"p\"\n", "context \"p\" controllers: at least one controller is required"),
        ("[[contexts]]\nname = \"p\"\ncontrollers = []\n", "context \"p\" controllers: at least one"),
        ("[[contexts]]\nname = \"p\"\ncontrollers = \"c:1\"\n", "context \"p\" controllers: expected a list"),
        (
            "[[contexts]]\nname = \"p\"\ncontrollers = [\"a:1,b:1\"]\n",
            "context \"p\" controllers: \"a:1,b:1\" is not one address",
        ),
        (
            "[[contexts]]\nname = \"p\"\ncontrollers = [\"c:1\"]\n[[contexts]]\nname = \"p\"\ncontrollers = [\"d:1\"]\n",
            "context \"p\": duplicate name",
        ),
        (
            "[[contexts]]\nname = \"p\"\ncontrollers = [\"c:1\"]\nprod = true\n",
            "context \"p\": unknown key \"prod\"",
        ),
        (
            "[[contexts]]\nname = \"p\"\ncontrollers = [\"c:1\"]\nread_only = \"yes\"\n",
            "context \"p\" read_only: expected true or false",
        ),
        (
            "[[contexts]]\nname = \"p\"\ncontrollers = [\"c:1\"]\ntoken_file = \"/nonexistent/spur/t\"\n",
            "context \"p\" token_file: /nonexistent/spur/t:",
        ),
        (
            &format!(
                "[[contexts]]\nname = \"p\"\ncontrollers = [\"c:1\"]\ntoken_file = \"{}\"\n",
                empty.display()
            ),
            "is empty",
        ),
        ("[[contexts]]\ncontrollers = [\"c:1\"]\n", "contexts[0]: name is required"),
        (
            "default_context = \"x\"\n[[contexts]]\nname = \"p\"\ncontrollers = [\"c:1\"]\n",
            "default_context = \"x\": no [[contexts]]",
        ),
        (
            "[[contexts]]\nname = \"p\"\ncontrollers = [\"c:1\"]\ndefault_context = \"p\"\n",
            "put it before the first [[contexts]]",
        ),
        ("contexts = 3\n", "contexts: expected [[contexts]] tables"),
    ];
    for (text, want) in cases {
        let err = config::parse(text).expect_err(text);
        assert!(err.contains(want), "{text}\n  said: {err}\n  want: {want}");
    }
    std::fs::remove_file(empty).unwrap();
}

fn ctx(name: &str, read_only: bool, production: bool) -> Context {
    Context {
        name: name.into(),
        controllers: vec![format!("http://{name}:6817")],
        token: (name == "b").then(|| "tok-b".to_string()),
        read_only,
        production,
    }
}

/// A console on context `a` of a, b (b read-only) and p (production), with nodes and a session.
fn on_contexts(size: (u16, u16), current: &str) -> State {
    let mut state = on_nodes(size, Role::Administrator);
    state.settings.contexts = Contexts {
        all: vec![ctx("a", false, false), ctx("b", true, false), ctx("p", false, true)],
        current: None,
    };
    let i = state.settings.contexts.find(current).unwrap();
    assert!(state.settings.enter_context(i));
    state.relayout();
    state
}

fn command(state: &mut State, line: &str) -> Vec<Effect> {
    dispatch(state, Action::CommandMode);
    type_text(state, line);
    dispatch(state, Action::Submit)
}

fn writes(effects: &[Effect]) -> usize {
    effects.iter().filter(|e| matches!(e, Effect::Rpc(Rpc::Write(_)))).count()
}

#[test]
fn ctx_lists_and_a_switch_starts_over_on_the_new_cluster() {
    let mut state = on_contexts((80, 24), "a");
    assert!(command(&mut state, "ctx").is_empty());
    let listing = state.message.clone().unwrap().text;
    assert!(
        listing.contains("*a") && listing.contains("p (production)") && listing.contains("b (read-only)"),
        "{listing}"
    );
    assert!(state.table(PaneId::Nodes).is_some_and(|t| !t.rows.is_empty()));
    assert!(state.accounting.data.is_some());

    let effects = command(&mut state, "ctx b");
    assert_eq!(effects, vec![Effect::Connect]);
    assert_eq!(state.settings.controller, "http://b:6817");
    assert_eq!(state.settings.identity.token.as_deref(), Some("tok-b"));
    assert_eq!(state.settings.contexts.current().map(|c| c.name.as_str()), Some("b"));
    // Nothing of cluster a is left to be shown as b's: no nodes, no catalog, no session.
    assert!(state.table(PaneId::Nodes).is_none_or(|t| t.rows.is_empty()));
    assert!(state.accounting.data.is_none() && state.session.is_none());
    assert_eq!(state.pane, PaneId::Nodes, "the pane stays");

    // Back to a: a context without a token file takes the local one.
    state.settings.local_token = Some("local".into());
    assert_eq!(command(&mut state, "ctx a"), vec![Effect::Connect]);
    assert_eq!(state.settings.identity.token.as_deref(), Some("local"));
    assert!(command(&mut state, "ctx nope").is_empty());
    assert!(state.last_error.clone().unwrap().contains("no such context (known: a, b, p)"));
}

#[test]
fn a_read_only_context_refuses_every_write_naming_itself() {
    for op in [NodeOp::Drain, NodeOp::Resume, NodeOp::Down] {
        let mut state = on_contexts((80, 24), "b");
        dispatch(&mut state, Action::Net(spur_console::Msg::Session(common::session(Role::Administrator))));
        let mut effects = dispatch(&mut state, Action::NodeAction(op));
        for example in spur_console::WriteOp::examples() {
            effects.extend(dispatch(&mut state, Action::Request(example)));
            effects.extend(dispatch(&mut state, Action::FocusNext));
            effects.extend(dispatch(&mut state, Action::Submit));
        }
        assert_eq!(writes(&effects), 0);
        assert!(matches!(state.mode, Mode::Normal), "{:?}", state.mode);
        let err = state.last_error.clone().unwrap();
        assert!(err.contains("context b is read-only"), "{err}");
    }
}

/// Drain node01 with a reason on the current context, up to its confirmation.
fn drain(state: &mut State) {
    dispatch(state, Action::NodeAction(NodeOp::Drain));
    type_text(state, "fan");
    dispatch(state, Action::Submit);
}

#[test]
fn a_production_write_is_sent_only_once_the_name_is_typed_exactly() {
    let mut state = on_contexts((80, 24), "p");
    drain(&mut state);
    let Mode::Confirm(c) = &state.mode else { panic!("no confirmation: {:?}", state.mode) };
    assert_eq!(c.typed.as_ref().map(|t| t.name.as_str()), Some("p"));
    // Enter, Tab-Enter: nothing is sent without the name.
    let mut effects = dispatch(&mut state, Action::Submit);
    effects.extend(dispatch(&mut state, Action::FocusNext));
    effects.extend(dispatch(&mut state, Action::Submit));
    type_text(&mut state, "P");
    effects.extend(dispatch(&mut state, Action::Submit));
    assert_eq!(writes(&effects), 0);
    let Mode::Confirm(c) = &state.mode else { panic!("the dialog closed: {:?}", state.mode) };
    assert!(c.typed.as_ref().unwrap().hint.as_deref().unwrap_or_default().contains("not p"));
    dispatch(&mut state, Action::Input(tui_input::InputRequest::DeletePrevChar));
    type_text(&mut state, "p");
    let effects = dispatch(&mut state, Action::Submit);
    assert_eq!(writes(&effects), 1, "{effects:?}");

    // Esc cancels; and a non-production context keeps the plain dialog.
    drain(&mut state);
    assert!(dispatch(&mut state, Action::Back).is_empty());
    assert!(!matches!(state.mode, Mode::Confirm(_)));
    let mut plain = on_contexts((80, 24), "a");
    drain(&mut plain);
    let Mode::Confirm(c) = &plain.mode else { panic!("no confirmation") };
    assert!(c.typed.is_none());
}

#[test]
fn snapshots_of_the_status_bar_and_the_production_frame() {
    for size in [(80, 24), (200, 50)] {
        let (w, h) = size;
        let state = on_contexts(size, "a");
        insta::assert_snapshot!(format!("context_status_{w}x{h}"), draw(&state).backend());
        let mut prod = on_contexts(size, "p");
        insta::assert_snapshot!(format!("context_production_{w}x{h}"), draw(&prod).backend());
        drain(&mut prod);
        type_text(&mut prod, "p");
        insta::assert_snapshot!(format!("context_production_confirm_{w}x{h}"), draw(&prod).backend());
    }
}
