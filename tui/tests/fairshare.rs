//! The Fairshare pane: the account tree from ListShares with its users as
//! leaves, each number as the controller sent it, the detail's formulas
//! filled in with the row's own inputs (snapshots at 80x24 and 200x50), and
//! its reads (on opening the pane and on `r`, one at a time).

mod common;

use common::shares::shares;
use common::{draw, loaded};
use spur_console::{Action, Effect, Msg, PaneId, Rpc, dispatch};

fn on_fairshare(size: (u16, u16)) -> (spur_console::State, Vec<Effect>) {
    let mut state = loaded(false, size);
    let effects = dispatch(&mut state, Action::GoPane(PaneId::Fairshare));
    dispatch(&mut state, Action::Net(Msg::Shares(shares())));
    (state, effects)
}

fn select(state: &mut spur_console::State, key: &str) {
    dispatch(state, Action::Top);
    for _ in 0..20 {
        if spur_console::update::nav::current_key(state).as_deref() == Some(key) {
            return;
        }
        dispatch(state, Action::Down);
    }
    panic!("no row {key}");
}

#[test]
fn the_tree_puts_accounts_under_their_parents_and_users_under_their_accounts() {
    let (state, _) = on_fairshare((120, 40));
    let rows: Vec<_> = state.table(PaneId::Fairshare).unwrap().rows.into_iter().collect();
    let drawn: Vec<String> =
        rows.iter().map(|r| format!("{}{}{}", r.prefix, r.cells[0], r.cells[1])).collect();
    assert_eq!(
        drawn,
        [
            "root",
            "├─ml",
            "│ ├─mlalice",
            "│ └─mlbob",
            "└─science",
            "  ├─chem",
            "  └─physics",
            "    └─physicscarol"
        ]
    );
    let ml = rows.iter().find(|r| r.key == "ml").unwrap();
    assert_eq!(ml.cells[2..].to_vec(), ["10", "0.250000", "3600", "0.100000", "2.500000", ""]);
    let bob = rows.iter().find(|r| r.key == "ml/bob").unwrap();
    assert_eq!(bob.cells[6..].to_vec(), ["inf", "1.234567"], "the wire's numbers, as sshare -l prints them");
}

#[test]
fn the_detail_fills_each_formula_with_the_rows_numbers() {
    let (state, _) = on_fairshare((120, 40));
    let ml = state.detail(PaneId::Fairshare, "ml").unwrap();
    let body = ml.body.join("\n");
    for want in [
        "NormShares = RawShares / sum of siblings' RawShares × parent's NormShares",
        "           = 10 / 40 × 1.000000 = 0.250000",
        "EffectvUsage = RawUsage / the cluster's RawUsage",
        "             = 3600 / 36000 = 0.100000",
        "LevelFS = NormShares / EffectvUsage",
        "        = 0.250000 / 0.100000 = 2.500000",
        "above 1: under-served",
        "FairShare is a user's factor; an account has none of its own.",
    ] {
        assert!(body.contains(want), "{want:?} in\n{body}");
    }
    let bob = state.detail(PaneId::Fairshare, "ml/bob").unwrap().body.join("\n");
    for want in [
        "NormShares = RawShares / 2 user(s) of ml × ml's NormShares",
        "           = 1 / 2 × 0.250000 = 0.125000",
        "        = 0.125000 / 0.000000 = inf",
        "no usage yet",
        "FairShare = 2^(1 - EffectvUsage / NormShares)",
        // The result is the controller's, not recomputed (2^(1 - 0) would be 2).
        "          = 2^(1 - 0.000000 / 0.125000) = 1.234567",
    ] {
        assert!(bob.contains(want), "{want:?} in\n{bob}");
    }
    let carol = state.detail(PaneId::Fairshare, "physics/carol").unwrap();
    assert!(carol.body.join("\n").contains("below 1: over-served"), "{:?}", carol.body);
    assert!(state.detail(PaneId::Fairshare, "nobody").is_none());
    let root = state.detail(PaneId::Fairshare, "root").unwrap();
    assert!(root.fields.contains(&("RawUsage".into(), "36000".into())), "{:?}", root.fields);
    assert!(root.body[1].ends_with("by their RawShares: ml 10, science 30."), "{:?}", root.body);
}

#[test]
fn fairshare_snapshots() {
    for size in [(80, 24), (200, 50)] {
        let (mut state, _) = on_fairshare(size);
        insta::assert_snapshot!(format!("fairshare_{}x{}", size.0, size.1), draw(&state).backend());
        select(&mut state, "ml/alice");
        dispatch(&mut state, Action::Open);
        insta::assert_snapshot!(format!("fairshare_detail_{}x{}", size.0, size.1), draw(&state).backend());
    }
}

#[test]
fn opening_the_pane_and_r_read_the_shares_one_at_a_time() {
    let reads = |e: &[Effect]| e.iter().filter(|e| **e == Effect::Rpc(Rpc::FetchShares)).count();
    let mut state = loaded(false, (80, 24));
    assert_eq!(reads(&dispatch(&mut state, Action::GoPane(PaneId::Fairshare))), 1);
    assert_eq!(reads(&dispatch(&mut state, Action::Refresh)), 0, "a read is under way");
    assert_eq!(reads(&dispatch(&mut state, Action::Net(Msg::Shares(shares())))), 1, "the follow-up");
    dispatch(&mut state, Action::Net(Msg::SharesFailed { error: "Unavailable".into() }));
    assert!(state.last_error.as_deref().is_some_and(|e| e.contains("reading fair shares")));
    assert_eq!(reads(&dispatch(&mut state, Action::Refresh)), 1);
    dispatch(&mut state, Action::GoPane(PaneId::Queue));
    assert_eq!(reads(&dispatch(&mut state, Action::Refresh)), 0, "only where the pane is open");
}

#[test]
fn delete_there_points_to_accounts() {
    let (mut state, _) = on_fairshare((80, 24));
    select(&mut state, "ml");
    let effects = dispatch(&mut state, Action::Delete);
    assert!(effects.is_empty());
    let said = state.message.as_ref().map(|m| m.text.clone()).unwrap_or_default();
    assert!(said.contains("edited in Accounts") && said.contains('4'), "{said}");
}

#[test]
fn the_eleventh_pane_has_no_number_and_its_tab_shows_at_80_columns() {
    let mut state = loaded(false, (80, 24));
    assert_eq!(PaneId::Overview.key().as_deref(), Some("0"), "the tenth is 0");
    assert_eq!(PaneId::Fairshare.key(), None, "no number is left for the eleventh");
    dispatch(&mut state, Action::GoPane(PaneId::Fairshare));
    let top: String = (0..80).map(|x| draw(&state).backend().buffer()[(x, 0)].symbol().to_string()).collect();
    assert!(top.contains(" Share") && top.contains("0 Over"), "{top}");
}

#[test]
fn a_cluster_without_accounts_says_so_at_the_root() {
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::GoPane(PaneId::Fairshare));
    let bare = spur_proto::v1::ListSharesResponse { total_usage: 8.0, ..Default::default() };
    dispatch(&mut state, Action::Net(Msg::Shares(bare)));
    select(&mut state, "root");
    let body = state.detail(PaneId::Fairshare, "root").unwrap().body.join("\n");
    assert!(body.contains("No account is under it yet"), "{body}");
    assert!(!body.contains("RawShares: ."), "no empty list: {body}");
}
