//! The console in a real terminal: tmux runs `spur-console` against a
//! controller with one `spurd` hosting node[01-04]. Keystrokes drain node02
//! through the Nodes pane; the screen is read back with `capture-pane`,
//! then the Audit pane and `sinfo -R` must agree.
//!
//! Needs tmux. Without it the test is skipped with a note, except in CI
//! (`CI` set), where it must run (`.ci/run` installs tmux).

use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, ok};
use spur_tests::tmux::{Tmux, has_tmux, skip_without_tmux};
use spur_tests::wait::wait_until_blocking;

fn cluster() -> ClusterToml {
    ClusterToml::new()
        .heartbeat(1)
        .node_timeout(5)
        .nodes("node[01-04]", 4, 8192)
        .partition("batch", "node[01-04]")
}

/// Fits sinfo -R's 20-column REASON, so the assertion sees it whole.
const REASON: &str = "bad DIMM (tmux)";

/// The screen line that shows `node`'s row.
fn row<'a>(screen: &'a str, node: &str) -> &'a str {
    screen.lines().find(|l| l.split_whitespace().next() == Some(node)).unwrap_or("")
}

#[test]
fn drain_a_node_from_the_console_in_tmux() {
    if skip_without_tmux("console tmux test") {
        return;
    }
    // Node actions need Administrator; under the default auth plugin only uid 0 is one
    // without a token, and a user cannot grant themselves the role.
    if spur_client::conn::Identity::local().uid != Some(0) {
        assert!(std::env::var_os("CI").is_none(), "CI runs the tests as root");
        eprintln!("note: not uid 0, so not Administrator; skipping the console tmux test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let c = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    let _agent = Agent::start(&c.url, "node[01-04]", &[]);

    // Its own config home, empty: the test must not read the developer's console.toml.
    let tmux = Tmux::console(dir.path(), &["--controller", &c.url], (100, 30));

    tmux.wait("the console to connect as Administrator", |s| {
        s.contains("Administrator") && s.contains("connected")
    });
    tmux.keys(&["2"]);
    tmux.wait("node[01-04] to register (IDLE)", |s| {
        ["node01", "node02", "node03", "node04"].iter().all(|n| row(s, n).contains("IDLE"))
    });
    // Rows are in name order and the selection starts on node01.
    tmux.keys(&["j", "d"]);
    tmux.wait("the reason field for node02", |s| {
        s.contains("Drain node02") && s.contains("Reason (required")
    });
    tmux.type_text(REASON);
    tmux.wait("the typed reason", |s| s.contains(&format!("> {REASON}")));
    tmux.keys(&["Enter"]);
    tmux.wait("the confirmation naming node and reason", |s| {
        s.contains("Drain node02?") && s.contains(&format!("Reason: {REASON}")) && s.contains("[ Cancel ]")
    });
    // Focus starts on Cancel: move it to Drain, then press it.
    tmux.keys(&["Tab", "Enter"]);
    let screen = tmux.wait("node02 drained, live from the watch", |s| {
        let r = row(s, "node02");
        (r.contains("DRAINED") || r.contains("DRAINING")) && r.contains(REASON)
    });
    assert!(row(&screen, "node02").contains('◐'), "{screen}");
    assert!(!row(&screen, "node01").contains("DRAIN"), "only node02 was drained:\n{screen}");

    tmux.keys(&["7"]);
    tmux.wait("the drain in the Audit pane", |s| {
        s.lines().any(|l| l.contains("node:node02") && l.contains("update"))
    });

    let reasons = ok("sinfo", &c.url, &["-R"]);
    let line =
        reasons.lines().find(|l| l.contains(REASON)).unwrap_or_else(|| panic!("no reason:\n{reasons}"));
    // Attributed to the console's user, as the controller saw it.
    let user = spur_client::conn::Identity::local().user;
    assert!(line.contains("node02") && line.contains(&user), "{reasons}");

    tmux.keys(&["q"]);
    tmux.wait("the console to quit cleanly", |s| s.contains("console exited: 0"));
}

/// Two controllers on one PostgreSQL database; the console at 80x24 is
/// given both and sits on the leader, tailing the audit log. The leader is
/// killed: the console follows to the new leader, says so in its status
/// bar, and its tail goes on with the rows written meanwhile (no gap).
#[test]
fn the_console_follows_a_failover_and_its_audit_tail_has_no_gap() {
    let ci = std::env::var_os("CI").is_some();
    if !has_tmux() || spur_client::conn::Identity::local().uid != Some(0) {
        assert!(!ci, "CI has tmux and runs as root");
        eprintln!("note: no tmux or not root; skipping the console failover test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(db) = rt.block_on(spur_tests::db::fresh_url(spur_tests::db::Backend::Postgres, dir.path()))
    else {
        return;
    };
    let config = dir.path().join("spur.conf");
    let cluster = cluster().set("controller", "leader_lease_secs", 3);
    std::fs::write(&config, conf(&db, &cluster.build())).unwrap();
    let mut first = Controller::start_shared(&config, &dir.path().join("first.log"));
    first.wait_leading();
    let second = Controller::start_shared(&config, &dir.path().join("second.log"));
    let both = format!("{},{}", first.addr(), second.addr());
    // A request that meets the takeover is refused with "retry" (never half done): retried.
    let add = |name: &str| {
        wait_until_blocking(format!("account {name} added"), || {
            let out = spur_tests::proc::run("sacctmgr", &both, &["-i", "add", "account", name]);
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            match out.status.success() {
                true => Ok(()),
                false if err.contains("retry") => Err(err),
                false => panic!("sacctmgr add account {name}: {err}"),
            }
        })
    };

    let tmux = Tmux::console(dir.path(), &["--controller", &both], (80, 24));
    let on_first = format!("on {} leader", first.addr());
    tmux.wait("the console on the leader", |s| s.contains("connected") && s.contains(&on_first));
    tmux.keys(&["7"]);
    add("before");
    tmux.wait("the first row in the tail", |s| s.contains("account:before"));

    first.kill_hard();
    add("during");
    let on_second = format!("on {} leader ⇄ failover", second.addr());
    tmux.wait("the console on the new leader, the failover said", |s| s.contains(&on_second));
    add("after");
    let screen = tmux.wait("the tail going on without a gap", |s| {
        ["account:before", "account:during", "account:after"].iter().all(|r| s.contains(r))
    });
    assert!(!screen.contains("offline"), "{screen}");
    tmux.keys(&["q"]);
    tmux.wait("the console to quit cleanly", |s| s.contains("console exited: 0"));
}
