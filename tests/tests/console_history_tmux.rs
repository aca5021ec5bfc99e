//! A finished job's efficiency and a node's history in a real terminal, at
//! 80x24 and 200x50: tmux runs `spur-console` against a controller with one
//! `spurd`. The Queue's Finished filter shows the Eff column with the `↓`
//! mark of a job that used almost nothing of what it asked for; a node
//! drained and resumed on the command line shows both events, with the
//! reason and who set it, in its detail page.
//!
//! Needs tmux. Without it the test is skipped with a note, except in CI
//! (`CI` set), where it must run (`.ci/run` installs tmux).

use spur_tests::cluster::Cluster;
use spur_tests::tmux::{Tmux, skip_without_tmux};

const REASON: &str = "fan_noise";

fn history_at(width: u16, height: u16) {
    let e = Cluster::two_nodes(|t| t, &[]);
    // A job with no wall-clock time is not judged: this one sleeps through its second.
    let id = e.sbatch(&["--mem=100M", "--wrap=sleep 1.5"]);
    e.wait_field(id, "%T", "COMPLETED");
    e.ok("scontrol", &format!("update nodename=node02 state=drain reason={REASON}"));
    e.ok("scontrol", "update nodename=node02 state=resume");

    let tmux = Tmux::console(e.dir.path(), &["--controller", &e.c.url], (width, height));
    tmux.wait("the console to connect", |s| s.contains("connected"));

    // All -> Pending -> Running -> Finished.
    tmux.keys(&["t", "t", "t"]);
    let sid = id.to_string();
    // Its row: the id first (the pane bar starts with "1" too, so the state as well).
    let row = |s: &str| {
        s.lines()
            .find(|l| l.split_whitespace().next() == Some(sid.as_str()) && l.contains(" CD "))
            .map(str::to_string)
    };
    let screen = tmux.wait("the finished job with its Eff cell", |s| {
        s.contains("Eff") && row(s).is_some_and(|r| r.contains('↓'))
    });
    assert!(row(&screen).unwrap().contains("↓ 0%/"), "a sleep used none of its CPU:\n{screen}");

    tmux.keys(&["2"]);
    tmux.wait("node02 in the Nodes pane", |s| s.lines().any(|l| l.contains("node02") && l.contains("IDLE")));
    // Rows are in name order and the selection starts on node01.
    tmux.keys(&["j", "Enter"]);
    tmux.wait("node02's page", |s| s.contains("Node node02"));
    // At 24 rows the events sit below the node's fields: scroll to them.
    let user = spur_client::conn::Identity::local().user;
    let events = tmux.wait("the drain and the resume, with reason and who", |s| {
        let seen = s.contains("DRAIN") && s.contains(REASON) && s.contains("IDLE") && s.contains(&user);
        if !seen {
            tmux.keys(&["C-d"]);
        }
        seen
    });
    assert!(events.lines().any(|l| l.contains("DRAIN") && l.contains(REASON)), "{events}");

    tmux.keys(&["Escape"]);
    tmux.wait("back on the Nodes pane", |s| !s.contains("Node node02") && s.contains("node01"));
    tmux.keys(&["q"]);
    tmux.wait("the console to quit cleanly", |s| s.contains("console exited: 0"));
}

#[test]
fn eff_column_and_node_history_at_80x24() {
    if !skip_without_tmux("console history tmux test") {
        history_at(80, 24);
    }
}

#[test]
fn eff_column_and_node_history_at_200x50() {
    if !skip_without_tmux("console history tmux test") {
        history_at(200, 50);
    }
}
