//! The Overview pane in a real terminal, at 80x24 and 200x50: tmux runs
//! `spur-console` against a controller with one `spurd` hosting
//! node[01-02]. One job runs and three are held; the pane shows the
//! partition's row and the held jobs under their reason with their count,
//! and Enter on the reason opens the Queue filtered to those three jobs.
//!
//! Needs tmux. Without it the test is skipped with a note, except in CI
//! (`CI` set), where it must run (`.ci/run` installs tmux).

use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, field, ok};
use spur_tests::tmux::{Tmux, skip_without_tmux};
use spur_tests::wait::wait_until_blocking;

fn cluster() -> ClusterToml {
    ClusterToml::new()
        .heartbeat(1)
        .node_timeout(5)
        .nodes("node[01-02]", 4, 8192)
        .partition("batch", "node[01-02]")
}

/// The screen line whose first word is `word`.
fn row<'a>(screen: &'a str, word: &str) -> &'a str {
    screen.lines().find(|l| l.split_whitespace().next() == Some(word)).unwrap_or("")
}

fn overview_in_tmux(width: u16, height: u16) {
    if skip_without_tmux("console overview tmux test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = format!("sqlite://{}/spur.db", d.display());
    let c = Controller::start(d, &conf(&db, &cluster().build()));
    let _agent = Agent::start(&c.url, "node[01-02]", &[]);
    wait_until_blocking("the nodes up", || {
        let states = ok("sinfo", &c.url, &["-h", "-p", "batch", "-o", "%t"]);
        if states.trim() == "idle" { Ok(()) } else { Err(states) }
    });
    let wd = d.display().to_string();
    let submit = |extra: &[&str], script: &str| -> u64 {
        let mut args = vec!["--parsable", "-D", &wd, "-o", "/dev/null"];
        args.extend(extra);
        args.extend(["--wrap", script]);
        ok("sbatch", &c.url, &args).trim().parse().expect("a job id")
    };
    let running = submit(&[], "sleep 300");
    let held: Vec<u64> = (0..3).map(|_| submit(&["-H"], "true")).collect();
    wait_until_blocking("the first job running", || {
        let s = field(&c.url, running, "%T");
        if s == "RUNNING" { Ok(()) } else { Err(s) }
    });

    // Its own config home, empty: the test must not read the developer's console.toml.
    let tmux = Tmux::console(d, &["--controller", &c.url], (width, height));
    tmux.wait("the console to connect", |s| s.contains("connected"));
    // The tenth pane's key.
    tmux.keys(&["0"]);
    // The scheduler's figures come with sdiag's answer, which may follow the first frame.
    let screen = tmux.wait("the partition, the held jobs' reason with its count, the scheduler", |s| {
        let reason = row(s, "JobHeldUser");
        s.contains("Overview")
            && row(s, "batch").contains(" 2 ")
            && reason.split_whitespace().nth(1) == Some("3")
            && s.contains("Scheduler")
    });
    assert!(screen.contains("Pending by reason (3 jobs)"), "{screen}");
    assert!(screen.lines().count() <= usize::from(height), "{screen}");

    // The only reason is the first row: Enter lists its jobs in the Queue.
    tmux.keys(&["Enter"]);
    let screen = tmux.wait("the Queue filtered to the held jobs", |s| {
        s.contains("Queue ›") && held.iter().all(|id| !row(s, &id.to_string()).is_empty())
    });
    // The running job is filtered out (its id alone would match the tab bar's `1 Queue`).
    assert!(!screen.contains("▶ R"), "job {running} is filtered out:\n{screen}");
    assert!(screen.contains(r"\(JobHeldUser\)"), "the filter is shown:\n{screen}");
    assert!(screen.contains("3 of 4 rows"), "{screen}");

    tmux.keys(&["q"]);
    tmux.wait("the console to quit cleanly", |s| s.contains("console exited: 0"));
}

#[test]
fn the_overview_at_80x24_leads_from_a_reason_to_its_jobs() {
    overview_in_tmux(80, 24);
}

#[test]
fn the_overview_at_200x50_leads_from_a_reason_to_its_jobs() {
    overview_in_tmux(200, 50);
}
