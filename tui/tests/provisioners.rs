//! The Provisioners pane and the Nodes pane's Def column: snapshots at
//! 80x24 (and the list at 120x40), when the definitions are read and how
//! re-reads coalesce, a controller without `ListProvisioners`, and the ways
//! to reach the pane.

mod common;

use common::{draw, on_nodes, on_provisioners, provisioners};
use spur_console::model::session::Role;
use spur_console::model::state::{Mode, State};
use spur_console::update::command::{self, Command};
use spur_console::{Action, ClusterUpdate, Effect, Msg, PaneId, Rpc, dispatch};

const FETCH: Effect = Effect::Rpc(Rpc::FetchProvisioners);

fn keys(state: &State) -> Vec<String> {
    state.table(PaneId::Provisioners).unwrap().rows.into_iter().map(|r| r.key).collect()
}

#[test]
fn provisioners_pane() {
    for size in [(80, 24), (120, 40)] {
        let state = on_provisioners(size);
        let name = format!("provisioners_{}x{}", size.0, size.1);
        insta::assert_snapshot!(name, draw(&state).backend());
    }
}

#[test]
fn provisioner_detail() {
    let mut state = on_provisioners((80, 24));
    dispatch(&mut state, Action::Down); // cpu-nodes: every section has something
    dispatch(&mut state, Action::Open);
    assert!(matches!(&state.mode, Mode::Detail { key, .. } if key == "cpu-nodes"), "{:?}", state.mode);
    insta::assert_snapshot!("provisioner_detail_80x24", draw(&state).backend());
}

#[test]
fn nodes_show_their_definitions_at_80_columns() {
    let state = on_nodes((80, 24), Role::Operator);
    let text = draw(&state).backend().to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[2].contains(" Def "), "{}", lines[2]);
    let row = |name: &str| lines.iter().find(|l| l.contains(name)).copied().unwrap_or_default();
    assert!(row("node04").contains(" - "), "{text}");
    assert!(row("gpu01").contains("gpu-nodes,cpu-nodes"), "{text}");
}

#[test]
fn definitions_are_read_on_connect_after_node_changes_and_on_r_one_read_at_a_time() {
    let mut state = State::new(common::settings(false), (80, 24));
    assert!(dispatch(&mut state, Action::Net(Msg::Connected)).contains(&FETCH));
    // The first snapshot arrives with Connected, which already asked.
    let snapshot = ClusterUpdate { snapshot: true, nodes: common::nodes(), ..Default::default() };
    assert!(!dispatch(&mut state, Action::Net(Msg::Cluster(snapshot))).contains(&FETCH));
    // A node change while the read is under way only marks it; the answer brings one more read.
    let change = || ClusterUpdate { nodes: vec![common::nodes()[1].clone()], ..Default::default() };
    assert!(!dispatch(&mut state, Action::Net(Msg::Cluster(change()))).contains(&FETCH));
    assert!(!dispatch(&mut state, Action::Net(Msg::Cluster(change()))).contains(&FETCH));
    assert_eq!(dispatch(&mut state, Action::Net(Msg::Provisioners(provisioners()))), [FETCH]);
    assert!(dispatch(&mut state, Action::Net(Msg::Provisioners(provisioners()))).is_empty());
    // Nothing in flight: a node change reads at once, and `r` while it runs waits for it.
    assert!(dispatch(&mut state, Action::Net(Msg::Cluster(change()))).contains(&FETCH));
    assert!(!dispatch(&mut state, Action::Refresh).contains(&FETCH));
    assert_eq!(dispatch(&mut state, Action::Net(Msg::Provisioners(provisioners()))), [FETCH]);
    // A lost connection voids the read in flight; the next connect asks again.
    let lost =
        Msg::Reconnecting { attempt: 1, retry_in: std::time::Duration::from_secs(1), error: "x".into() };
    dispatch(&mut state, Action::Net(lost));
    assert!(dispatch(&mut state, Action::Net(Msg::Connected)).contains(&FETCH));
}

#[test]
fn a_controller_without_list_provisioners_leaves_the_pane_saying_so() {
    let mut state = on_nodes((80, 24), Role::Operator);
    let unsupported = Msg::ProvisionersFailed { error: "Unimplemented: no".into(), unsupported: true };
    assert!(dispatch(&mut state, Action::Net(unsupported)).is_empty());
    assert_eq!(state.last_error, None, "a missing RPC is not an error");
    dispatch(&mut state, Action::GoPane(PaneId::Provisioners));
    let text = draw(&state).backend().to_string();
    assert!(text.contains("Provisioners: not available from this controller yet."), "{text}");
    // Any other refusal is shown, and the definitions last read stay.
    dispatch(&mut state, Action::Net(Msg::Provisioners(provisioners())));
    let failed = Msg::ProvisionersFailed { error: "Internal: boom".into(), unsupported: false };
    dispatch(&mut state, Action::Net(failed));
    assert_eq!(state.last_error.as_deref(), Some("reading provisioner definitions: Internal: boom"));
    assert_eq!(keys(&state), ["gpu-nodes", "cpu-nodes", "aws-burst"]);
    // No definitions at all is said in the pane.
    dispatch(&mut state, Action::Net(Msg::Provisioners(vec![])));
    let text = draw(&state).backend().to_string();
    assert!(text.contains("no provisioner definitions are configured"), "{text}");
}

#[test]
fn the_pane_is_reached_by_command_and_number_and_its_rows_are_only_read() {
    for name in ["prov", "provisioner", "provisioners"] {
        assert_eq!(command::parse(name), Ok(Command::Pane(PaneId::Provisioners)), "{name}");
    }
    assert_eq!(command::complete("pr").candidates, ["preemption", "provisioners"]);
    let mut state = on_provisioners((80, 24));
    assert_eq!(state.settings.keymap.keys_of(&Action::GoPane(PaneId::Provisioners)), "8");
    // console.toml rebinds it by the pane's name.
    let km =
        spur_console::model::keymap::Keymap::with_overrides(&[("provisioners".into(), vec!["P".into()])]);
    assert_eq!(km.unwrap().keys_of(&Action::GoPane(PaneId::Provisioners)), "P");
    // The filter reads every cell: annotations and states too.
    dispatch(&mut state, Action::FilterMode);
    common::type_text(&mut state, "spot|! active");
    dispatch(&mut state, Action::Submit);
    assert_eq!(keys(&state), ["cpu-nodes", "aws-burst"]);
    dispatch(&mut state, Action::Back);
    state.session = Some(common::session(Role::Administrator));
    dispatch(&mut state, Action::Delete);
    let error = state.last_error.clone().unwrap_or_default();
    assert!(error.contains("provisioners.yaml") && !matches!(state.mode, Mode::Confirm(_)), "{error}");
}
