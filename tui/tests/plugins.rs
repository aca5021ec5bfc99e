//! console.toml's `[[plugins]]`: templates checked at load (an unknown
//! field, a field the pane's rows lack, a key a pane already uses, each an
//! error naming the plugin), the argv filled in from the selected row with
//! no shell, a dangerous plugin behind the write role and a confirmation
//! naming its command, and the runner's timeout and output cap.

mod common;

use common::on_queue;
use spur_console::config;
use spur_console::model::plugin::{Piece, parse_word};
use spur_console::model::session::Role;
use spur_console::model::state::{Choice, Mode};
use spur_console::{Action, Effect, Msg, PaneId, WriteOp, dispatch};
use std::time::Duration;

fn plugin(key: &str, panes: &str, command: &str, dangerous: bool) -> String {
    format!(
        "[[plugins]]\nkey = \"{key}\"\nname = \"p{key}\"\npanes = {panes}\ncommand = {command}\ndangerous = {dangerous}\n"
    )
}

#[test]
fn a_good_plugin_loads_and_its_words_split_into_text_and_fields() {
    let c = config::parse(&plugin("X", r#"["nodes"]"#, r#"["ssh", "root@{node}"]"#, false)).unwrap();
    assert_eq!(c.plugins.len(), 1);
    assert_eq!(c.plugins[0].panes, [PaneId::Nodes]);
    assert_eq!(c.plugins[0].command[1], [Piece::Text("root@".into()), Piece::Field("node".into())]);
    assert_eq!(parse_word("{{x}}").unwrap(), [Piece::Text("{x}".into())], "doubled braces are braces");
    assert_eq!(parse_word("").unwrap(), [Piece::Text(String::new())]);
}

#[test]
fn bad_plugins_are_errors_that_name_them() {
    let cases = [
        (
            plugin("X", r#"["queue"]"#, r#"["scontrol", "show", "job", "{jobidd}"]"#, false),
            "unknown field {jobidd}",
        ),
        (
            plugin("X", r#"["nodes"]"#, r#"["echo", "{jobid}"]"#, false),
            "the nodes pane's rows have no {jobid}",
        ),
        (plugin("X", r#"["queue"]"#, r#"["echo", "{jobid"]"#, false), "a '{' without its '}'"),
        (plugin("X", r#"["queue"]"#, r#"["echo", "a}"]"#, false), "a '}' without its '{'"),
        (plugin("d", r#"["nodes"]"#, r#"["echo"]"#, false), "key \"d\" is the nodes pane's \"node_drain\""),
        (plugin("j", r#"["audit"]"#, r#"["echo"]"#, false), "key \"j\" is the audit pane's \"down\""),
        (plugin("1", r#"["queue"]"#, r#"["echo"]"#, false), "is the queue pane's \"queue\""),
        (plugin("X", r#"["bogus"]"#, r#"["echo"]"#, false), "no pane \"bogus\""),
        (plugin("X", r#"["queue"]"#, "[]", false), "command is empty"),
        (plugin("X", "[]", r#"["echo"]"#, false), "panes is empty"),
        (
            format!("{}shell = true\n", plugin("X", r#"["queue"]"#, r#"["echo"]"#, false)),
            "unknown key \"shell\"",
        ),
        (
            plugin("X", r#"["queue"]"#, r#"["echo"]"#, false).repeat(2),
            "also plugin \"pX\"'s on the queue pane",
        ),
    ];
    for (text, want) in cases {
        let err = config::parse(&text).err().unwrap_or_default();
        assert!(err.contains("plugin \"p") && err.contains(want), "{want:?} in {err:?}\nfrom\n{text}");
    }
    let err = config::parse(&plugin("X", r#"["queue"]"#, r#"["x", "{jobidd}"]"#, false)).unwrap_err();
    assert!(err.contains("plugin \"pX\", key \"X\": unknown field {jobidd}"), "{err}");
    assert!(
        config::parse(&plugin("S", r#"["queue"]"#, r#"["echo"]"#, false))
            .unwrap_err()
            .contains("\"reverse\"")
    );
    // A key another pane uses is free here (o is the Queue's output view, not the Nodes pane's).
    assert!(config::parse(&plugin("o", r#"["nodes"]"#, r#"["echo", "{node}"]"#, false)).is_ok());
    // A key rebound away in [keys] is free again.
    let text =
        format!("[keys]\nnode_drain = \"alt-d\"\n{}", plugin("d", r#"["nodes"]"#, r#"["echo"]"#, false));
    assert!(config::parse(&text).is_ok(), "{:?}", config::parse(&text).err());
}

fn with_plugins(text: &str, role: Role, read_only: bool) -> spur_console::State {
    let mut state = on_queue(read_only, (80, 24), Some(role));
    state.settings.plugins = config::parse(text).unwrap().plugins;
    state
}

fn selected_job(state: &spur_console::State) -> String {
    spur_console::update::nav::current_key(state).unwrap()
}

#[test]
fn the_key_fills_the_argv_from_the_selected_row_and_opens_the_output_view() {
    let mut state = with_plugins(
        &plugin("X", r#"["queue"]"#, r#"["echo", "job {jobid}", "{user}"]"#, false),
        Role::None,
        false,
    );
    let id = selected_job(&state);
    let term = common::draw(&state);
    let buf = term.backend().buffer();
    let hints: String = (0..80).map(|x| buf[(x, 22)].symbol().to_string()).collect();
    assert!(hints.contains("? help  q quit  : cmd  X pX"), "its name in the hints, early: {hints}");
    // Tall enough for the help's whole table.
    dispatch(&mut state, Action::Resize(120, 50));
    dispatch(&mut state, Action::Help);
    let help = format!("{:?}", common::draw(&state).backend());
    assert!(help.contains("X plugin pX (queue)"), "the help lists it: {help}");
    dispatch(&mut state, Action::Back);
    dispatch(&mut state, Action::Resize(80, 24));
    let effects = dispatch(&mut state, Action::Plugin(0));
    let Some(Effect::Run { argv, sub }) = effects.first().cloned() else { panic!("{effects:?}") };
    assert_eq!(argv[..2], ["echo".to_string(), format!("job {id}")], "one word each: no shell splits it");
    assert!(matches!(state.mode, Mode::Output));
    dispatch(&mut state, Action::Net(Msg::Output { sub, data: b"hello\n".to_vec(), note: String::new() }));
    dispatch(&mut state, Action::Net(Msg::OutputEnded { sub, error: None }));
    let v = state.output.as_ref().unwrap();
    assert_eq!(v.window(5), ["hello"]);
    assert!(v.title().starts_with(&format!("plugin pX: echo 'job {id}'")), "{}", v.title());
    assert_eq!(v.ended.as_deref(), Some("finished"));
    // On a pane it was not declared for, the key is not the plugin's.
    dispatch(&mut state, Action::Back);
    dispatch(&mut state, Action::GoPane(PaneId::Nodes));
    let key = crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('S'));
    assert_ne!(spur_console::update::keys::action_for_key(&state, key), Some(Action::Plugin(0)));
}

#[test]
fn a_row_without_the_field_says_so_and_runs_nothing() {
    let mut state =
        with_plugins(&plugin("X", r#"["queue"]"#, r#"["ssh", "{node}"]"#, false), Role::None, false);
    // The first rows are pending jobs: no node yet.
    let pending = state.queue.jobs.as_ref().unwrap().jobs.iter().find(|j| j.nodelist.is_empty()).unwrap().id;
    while selected_job(&state) != pending.to_string() {
        dispatch(&mut state, Action::Down);
    }
    assert!(dispatch(&mut state, Action::Plugin(0)).is_empty());
    assert!(state.last_error.as_deref().unwrap_or_default().contains("this row has no {node}"));
}

#[test]
fn a_dangerous_plugin_needs_the_write_role_and_a_confirmation_naming_its_command() {
    let text = plugin("X", r#"["queue"]"#, r#"["scancel", "{jobid}"]"#, true);
    let mut state = with_plugins(&text, Role::None, false);
    assert!(dispatch(&mut state, Action::Plugin(0)).is_empty());
    assert!(state.last_error.as_deref().unwrap_or_default().contains("refused"), "{:?}", state.last_error);
    let mut state = with_plugins(&text, Role::Operator, true);
    assert!(dispatch(&mut state, Action::Plugin(0)).is_empty());
    assert!(state.last_error.as_deref().unwrap_or_default().contains("read-only"));
    let mut state = with_plugins(&text, Role::Operator, false);
    let id = selected_job(&state);
    assert!(dispatch(&mut state, Action::Plugin(0)).is_empty());
    let Mode::Confirm(c) = &state.mode else { panic!("{:?}", state.mode) };
    assert_eq!(c.focus, Choice::Cancel);
    let (title, body) = c.op.describe();
    assert_eq!(title, "Run plugin pX?");
    assert!(body.contains(&format!("= scancel {id}")), "{body:?}");
    dispatch(&mut state, Action::FocusNext);
    let effects = dispatch(&mut state, Action::Submit);
    assert!(matches!(&effects[..], [Effect::Run { argv, .. }] if argv[1] == id), "{effects:?}");
    assert!(c_op(&effects).is_none(), "a plugin is not an RPC");
}

fn c_op(effects: &[Effect]) -> Option<WriteOp> {
    effects.iter().find_map(|e| match e {
        Effect::Rpc(spur_console::Rpc::Write(op)) => Some(op.clone()),
        _ => None,
    })
}

async fn run(argv: &[&str], cap: usize, timeout: Duration) -> (String, Result<(), String>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    let env = [("SPUR_CONTROLLER_ADDR", "http://ctl:6817")];
    let r = spur_console::net::plugin::run(1, &argv, &env, &tx, cap, timeout).await;
    drop(tx);
    let mut out = Vec::new();
    while let Some(Msg::Output { data, .. }) = rx.recv().await {
        out.extend(data);
    }
    (String::from_utf8_lossy(&out).into_owned(), r)
}

#[tokio::test]
async fn the_runner_shows_stdout_and_stderr_and_stops_at_its_bounds() {
    let long = Duration::from_secs(20);
    let (out, r) =
        run(&["sh", "-c", "echo out; echo err >&2; echo $SPUR_CONTROLLER_ADDR"], 1 << 20, long).await;
    assert!(r.is_ok() && out.contains("out\n") && out.contains("err\n"), "{out:?} {r:?}");
    assert!(out.contains("http://ctl:6817"), "the console's controller, for scontrol in a plugin: {out:?}");
    let (_, r) = run(&["sh", "-c", "exit 3"], 1 << 20, long).await;
    assert!(r.unwrap_err().contains("exit status: 3"));
    let (out, r) = run(&["sh", "-c", "yes"], 1000, long).await;
    assert_eq!(out.len(), 1000);
    assert!(r.unwrap_err().contains("output cut at 1000 bytes"));
    let (_, r) = run(&["sleep", "30"], 1 << 20, Duration::from_millis(200)).await;
    assert!(r.unwrap_err().contains("still running after"));
    let (_, r) = run(&["/no/such/program"], 1 << 20, long).await;
    assert!(r.unwrap_err().starts_with("/no/such/program: "));
}
