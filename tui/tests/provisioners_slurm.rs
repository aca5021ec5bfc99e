//! The Provisioners pane for slurm definitions: the borrowed nodes of one
//! (requested, booting, active, draining) with their upstream job ids,
//! expiry and cost so far (its cost by account too), and another backing off, `unavailable` with the
//! upstream's error, all as the controller answered (nothing recomputed).
//! Snapshots at 80x24 and 200x50.

mod common;

use common::{draw, local_ms, on_nodes};
use spur_console::model::session::Role;
use spur_console::model::state::{Mode, State};
use spur_console::{Action, Msg, PaneId, dispatch};
use spur_proto::v1::{AccountCost, BorrowedNode, Provisioner};

fn node(name: &str, state: &str, job: &str, cost: f64) -> BorrowedNode {
    BorrowedNode {
        name: name.into(),
        state: state.into(),
        upstream_job: job.into(),
        expires_ms: local_ms("2026-03-01T07:01:00"),
        cost,
    }
}

fn definitions() -> Vec<Provisioner> {
    let burst = Provisioner {
        id: "burst".into(),
        backend: "slurm".into(),
        state: "active".into(),
        nodes: "burst-[1-4]".into(),
        node_count: 4,
        usable_nodes: 1,
        exclusive: "none".into(),
        cost_per_hour: 0.3,
        ttl: 3600,
        ttl_buffer: 60,
        node_hours: 2.5,
        cost: 0.75,
        borrowed: vec![
            node("burst-1", "draining", "4101", 0.29),
            node("burst-2", "active", "4102", 0.2),
            node("burst-3", "booting", "4103", 0.01),
            node("burst-4", "requested", "", 0.0),
        ],
        account_costs: vec![
            AccountCost { account: "bio".into(), cost: 0.2 },
            AccountCost { account: "phys".into(), cost: 0.35 },
        ],
        ..Default::default()
    };
    let failing = Provisioner {
        id: "burst-gpu".into(),
        backend: "slurm".into(),
        state: "unavailable".into(),
        exclusive: "none".into(),
        cost_per_hour: 2.0,
        ttl: 3600,
        unavailable_error: "/usr/bin/sbatch (upstream.slurm.bin_dir): exit status: 1: sbatch: error: \
                            invalid partition specified: gpu"
            .into(),
        retry_at_ms: local_ms("2026-03-01T06:00:30"),
        ..Default::default()
    };
    vec![burst, failing]
}

fn on_slurm(size: (u16, u16)) -> State {
    let mut state = on_nodes(size, Role::Operator);
    dispatch(&mut state, Action::Net(Msg::Provisioners(definitions())));
    dispatch(&mut state, Action::GoPane(PaneId::Provisioners));
    state
}

fn opened(size: (u16, u16), key: &str) -> State {
    let mut state = on_slurm(size);
    if key != "burst" {
        dispatch(&mut state, Action::Down);
    }
    dispatch(&mut state, Action::Open);
    assert!(matches!(&state.mode, Mode::Detail { key: k, .. } if k == key), "{:?}", state.mode);
    state
}

#[test]
fn slurm_definitions_list() {
    for size in [(80, 24), (200, 50)] {
        let state = on_slurm(size);
        let text = draw(&state).backend().to_string();
        assert!(text.contains("! unavailable"), "{text}");
        insta::assert_snapshot!(format!("slurm_list_{}x{}", size.0, size.1), draw(&state).backend());
    }
}

#[test]
fn a_slurm_definition_shows_its_borrowed_nodes() {
    for size in [(80, 24), (200, 50)] {
        let state = opened(size, "burst");
        let text = draw(&state).backend().to_string();
        let wants = [
            "Borrowed nodes (4):",
            "draining",
            "4103",
            "requested",
            "0.75 (2.50 node-hours)",
            "bio 0.20, phys 0.35",
        ];
        for want in wants {
            assert!(text.contains(want), "{want}: {text}");
        }
        insta::assert_snapshot!(format!("slurm_borrowed_{}x{}", size.0, size.1), draw(&state).backend());
    }
}

#[test]
fn a_failing_slurm_definition_says_unavailable_with_the_error() {
    for size in [(80, 24), (200, 50)] {
        let state = opened(size, "burst-gpu");
        let text = draw(&state).backend().to_string();
        assert!(text.contains("Unavailable") && text.contains("invalid partition"), "{text}");
        insta::assert_snapshot!(format!("slurm_unavailable_{}x{}", size.0, size.1), draw(&state).backend());
    }
}
