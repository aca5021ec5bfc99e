mod common;

use common::{draw, loaded};
use ratatui::style::Modifier;
use spur_console::model::state::Conn;
use spur_console::{Action, Msg, PaneId, dispatch};
use std::time::Duration;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

#[test]
fn qos_pane() {
    for size in SIZES {
        let mut state = loaded(false, size);
        dispatch(&mut state, Action::Down);
        let name = format!("qos_{}x{}", size.0, size.1);
        insta::assert_snapshot!(name, draw(&state).backend());
    }
}

#[test]
fn accounts_pane() {
    for size in SIZES {
        let mut state = loaded(false, size);
        dispatch(&mut state, Action::GoPane(PaneId::Accounts));
        dispatch(&mut state, Action::Down);
        dispatch(&mut state, Action::ToggleMark);
        let name = format!("accounts_{}x{}", size.0, size.1);
        insta::assert_snapshot!(name, draw(&state).backend());
    }
}

#[test]
fn help_overlay() {
    for size in SIZES {
        let mut state = loaded(false, size);
        dispatch(&mut state, Action::Help);
        let name = format!("help_{}x{}", size.0, size.1);
        insta::assert_snapshot!(name, draw(&state).backend());
    }
}

#[test]
fn delete_confirmation_and_unreachable_banner() {
    let mut state = loaded(true, (80, 24));
    state.settings.read_only = false;
    dispatch(&mut state, Action::Down);
    dispatch(&mut state, Action::Delete);
    insta::assert_snapshot!("confirm_delete_80x24", draw(&state).backend());

    let mut state = loaded(true, (80, 24));
    let error = "cannot connect: tcp connect error: Connection refused".to_string();
    dispatch(
        &mut state,
        Action::Net(Msg::Reconnecting { attempt: 3, retry_in: Duration::from_secs(2), error }),
    );
    assert!(matches!(state.conn, Conn::Reconnecting { .. }));
    insta::assert_snapshot!("reconnecting_80x24", draw(&state).backend());
}

#[test]
fn qos_edit_form() {
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::Down);
    dispatch(&mut state, Action::Edit);
    dispatch(&mut state, Action::FocusNext);
    dispatch(&mut state, Action::Input(tui_input::InputRequest::InsertChar('0')));
    insta::assert_snapshot!("qos_form_80x24", draw(&state).backend());
}

#[test]
fn account_edit_form() {
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::GoPane(PaneId::Accounts));
    for _ in 0..3 {
        dispatch(&mut state, Action::Down); // root, research, bob, ml
    }
    dispatch(&mut state, Action::Edit);
    assert!(matches!(state.mode, spur_console::model::state::Mode::Form(_)), "{:?}", state.last_error);
    while !matches!(&state.mode, spur_console::model::state::Mode::Form(f) if f.focus == 3) {
        dispatch(&mut state, Action::FocusNext); // fairshare
    }
    dispatch(&mut state, Action::Input(tui_input::InputRequest::InsertChar('0')));
    insta::assert_snapshot!("account_form_80x24", draw(&state).backend());
}

#[test]
fn unavailable_pane_says_so() {
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::GoPane(PaneId::Hres));
    let text = draw(&state).backend().to_string();
    assert!(text.contains("not available from this controller yet"), "{text}");
}

#[test]
fn selected_row_is_reversed_and_bold() {
    for pane in [PaneId::Qos, PaneId::Accounts] {
        let mut state = loaded(false, (80, 24));
        dispatch(&mut state, Action::GoPane(pane));
        dispatch(&mut state, Action::Down);
        let term = draw(&state);
        let buf = term.backend().buffer();
        // Rows start under tabs, breadcrumb and the table header: selection 1 is screen row 4.
        let selected_y = 4;
        for y in 3..8 {
            let cell = &buf[(5, y)];
            let reversed =
                cell.modifier.contains(Modifier::REVERSED) && cell.modifier.contains(Modifier::BOLD);
            assert_eq!(reversed, y == selected_y, "{pane:?} row {y}: {:?}", cell.modifier);
        }
    }
}

#[test]
fn audit_pane() {
    for size in SIZES {
        let mut state = common::on_audit(size);
        let role = spur_console::model::session::Role::Operator;
        dispatch(&mut state, Action::Net(Msg::Session(common::session(role))));
        let name = format!("audit_{}x{}", size.0, size.1);
        insta::assert_snapshot!(name, draw(&state).backend());
    }
}

#[test]
fn denied_and_error_rows_are_bold_with_a_symbol_and_coloured_unless_mono() {
    use ratatui::style::Color;
    for theme in [spur_console::model::state::ThemeName::Mono, spur_console::model::state::ThemeName::Default]
    {
        let mut state = common::on_audit((80, 24));
        state.settings.theme = theme;
        dispatch(&mut state, Action::Top); // keep the selection off the rows checked
        let term = draw(&state);
        let buf = term.backend().buffer();
        // Rows 1..5 are screen rows 3..7; row 2 is denied, row 4 an error.
        for (y, symbol, colour) in [(4u16, "✗", Color::Red), (6, "!", Color::Yellow), (5, "", Color::Reset)]
        {
            let line: String = (0..80).map(|x| buf[(x, y)].symbol()).collect();
            let cell = &buf[(3, y)];
            let alert = !symbol.is_empty();
            assert_eq!(cell.modifier.contains(Modifier::BOLD), alert, "row y={y}: {line}");
            if alert {
                assert!(line.contains(&format!("{symbol} ")), "{line}");
            }
            let mono = theme == spur_console::model::state::ThemeName::Mono;
            let want = if mono || !alert { Color::Reset } else { colour };
            assert_eq!(cell.fg, want, "row y={y} theme {theme:?}");
        }
    }
}

#[test]
fn nodes_pane() {
    for size in SIZES {
        let mut state = common::on_nodes(size, spur_console::model::session::Role::Administrator);
        // The jobs say which nodes are on loan: job 101 borrowed gpu01 (`  MIXED ⇄`).
        let jobs = spur_console::JobSet::from_pb(common::jobs(), common::now());
        dispatch(&mut state, Action::Net(Msg::Jobs(std::sync::Arc::new(jobs))));
        dispatch(&mut state, Action::Down);
        dispatch(&mut state, Action::ToggleMark); // node02 marked, node03 selected
        let name = format!("nodes_{}x{}", size.0, size.1);
        insta::assert_snapshot!(name, draw(&state).backend());
    }
}

#[test]
fn drain_dialog() {
    let mut state = common::on_nodes((80, 24), spur_console::model::session::Role::Administrator);
    dispatch(&mut state, Action::Down); // node02
    dispatch(&mut state, Action::NodeAction(spur_console::NodeOp::Drain));
    insta::assert_snapshot!("drain_reason_80x24", draw(&state).backend());
    common::type_text(&mut state, "dimm");
    dispatch(&mut state, Action::FocusNext); // the only offered reason with "dimm": bad DIMM
    dispatch(&mut state, Action::Submit);
    insta::assert_snapshot!("drain_confirm_80x24", draw(&state).backend());
}

#[test]
fn node_states_are_bold_with_a_symbol_and_coloured_unless_mono() {
    use ratatui::style::Color;
    for theme in [spur_console::model::state::ThemeName::Mono, spur_console::model::state::ThemeName::Default]
    {
        let mut state = common::on_nodes((120, 40), spur_console::model::session::Role::Administrator);
        state.settings.theme = theme;
        let term = draw(&state);
        let buf = term.backend().buffer();
        // Rows start at y=3: node01 (selected), node02 draining, node03 drained, node04 down*, node05.
        let mono = theme == spur_console::model::state::ThemeName::Mono;
        for (y, symbol, colour) in [(4u16, "◐", Color::Yellow), (5, "◐", Color::Yellow), (6, "▼", Color::Red)]
        {
            let line: String = (0..120).map(|x| buf[(x, y)].symbol()).collect();
            assert!(line.contains(symbol), "{line}");
            let cell = &buf[(3, y)];
            assert!(cell.modifier.contains(Modifier::BOLD), "y={y}: {line}");
            assert_eq!(cell.fg, if mono { Color::Reset } else { colour }, "y={y} {theme:?}");
        }
        let plain = &buf[(3, 7)];
        assert!(!plain.modifier.contains(Modifier::BOLD));
    }
}

/// With several controllers the status bar names the one the console is
/// on and its role first, and counts the failovers it lived through; it
/// stays within 80 columns.
#[test]
fn the_status_bar_names_the_controller_and_counts_failovers() {
    let mut state = loaded(false, (80, 24));
    let status = |state: &spur_console::State| {
        let text = format!("{}", draw(state).backend());
        text.lines().rev().find(|l| l.contains("connected")).unwrap_or_default().to_string()
    };
    assert!(!status(&state).contains("on "), "one controller: as configured\n{}", status(&state));
    let on = |c: &str, primary| Msg::On { controller: c.into(), primary };
    dispatch(&mut state, Action::Net(on("http://10.0.0.1:6817", Some(true))));
    dispatch(&mut state, Action::Net(Msg::Connected));
    let line = status(&state);
    assert!(line.contains("on 10.0.0.1:6817 leader") && !line.contains("failover"), "{line}");
    dispatch(&mut state, Action::Net(on("http://10.0.0.2:6817", Some(true))));
    dispatch(&mut state, Action::Net(Msg::Connected));
    let line = status(&state);
    assert!(line.contains("on 10.0.0.2:6817 leader ⇄ failover 1"), "{line}");
    dispatch(&mut state, Action::Net(on("http://10.0.0.2:6817", Some(false))));
    assert!(status(&state).contains("follower ⇄ failover 2"), "{}", status(&state));
}
