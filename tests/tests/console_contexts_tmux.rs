//! Contexts in a real terminal: two independent controllers (each its own
//! temp dir and port), a console.toml naming both in a temp
//! XDG_CONFIG_HOME, and `spur-console` in tmux at 80x24 and 200x50. The
//! console starts on cluster a and shows its job; `:ctx b` shows cluster
//! b's job and none of a's; `:queue all` shows both with their Cluster;
//! b is a production context, so cancelling its job asks for its name
//! typed, and only the typed name sends it.
//!
//! Needs tmux (skipped with a note without it, except in CI).

use spur_tests::config::ClusterToml;
use spur_tests::proc::{Controller, bin, conf, field, ok};
use spur_tests::tmux::{Tmux, skip_without_tmux};
use spur_tests::wait::wait_until_blocking;
use std::path::Path;

/// A cluster whose one partition has its own name, so its jobs are told
/// apart on screen (both clusters number their jobs from 1).
fn start(dir: &Path, partition: &str) -> Controller {
    let db = format!("sqlite://{}/spur.db", dir.display());
    let cluster = ClusterToml::new().nodes("n[1-2]", 4, 4096).partition(partition, "n[1-2]");
    Controller::start(dir, &conf(&db, &cluster.build()))
}

/// Submits a job (no agent runs, so it stays pending) and returns its id.
fn submit(c: &Controller, partition: &str) -> u64 {
    let out = ok("sbatch", &c.url, &["--parsable", "-p", partition, "-o", "/dev/null", "--wrap", "true"]);
    out.trim().parse().expect("a job id")
}

/// The screen lines of the Queue pane's rows in `partition`.
fn rows_in<'a>(screen: &'a str, partition: &str) -> Vec<&'a str> {
    screen.lines().filter(|l| l.split_whitespace().any(|w| w == partition)).collect()
}

#[test]
fn the_console_switches_between_two_clusters_and_guards_the_production_one() {
    if skip_without_tmux("console contexts test") {
        return;
    }
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = start(dir_a.path(), "alpha");
    let b = start(dir_b.path(), "bravo");
    submit(&a, "alpha");
    let (first_b, second_b) = (submit(&b, "bravo"), submit(&b, "bravo"));

    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("spur")).unwrap();
    let toml = format!(
        "default_context = \"a\"\n\
         [[contexts]]\nname = \"a\"\ncontrollers = [\"{}\"]\n\
         [[contexts]]\nname = \"b\"\ncontrollers = [\"{}\"]\nproduction = true\n",
        a.addr(),
        b.addr()
    );
    std::fs::write(home.path().join("spur/console.toml"), toml).unwrap();

    // One job of b is cancelled per size: at 80x24 the first, at 200x50 the second.
    for ((w, h), job) in [((80, 24), first_b), ((200, 50), second_b)] {
        let tmux = Tmux::console(home.path(), &[], (w, h));
        tmux.wait("the console on context a with a's job", |s| {
            s.contains("ctx a") && s.contains("connected") && rows_in(s, "alpha").len() == 1
        });

        tmux.type_text(":ctx b");
        tmux.keys(&["Enter"]);
        let screen = tmux.wait("context b with b's jobs", |s| {
            s.contains("ctx b PROD") && s.contains("PRODUCTION: b") && !rows_in(s, "bravo").is_empty()
        });
        assert!(rows_in(&screen, "alpha").is_empty(), "a's job shown on b:\n{screen}");

        // Every context's queue in one, with the cluster of each row; then b's own again.
        tmux.type_text(":queue all");
        tmux.keys(&["Enter"]);
        let screen = tmux.wait("the merged Queue with both clusters", |s| {
            s.contains("all contexts") && !rows_in(s, "alpha").is_empty() && !rows_in(s, "bravo").is_empty()
        });
        let header = screen.lines().find(|l| l.contains("Partition")).unwrap_or_default();
        assert!(header.trim_start().starts_with("Cluster"), "{screen}");
        assert!(rows_in(&screen, "alpha").iter().all(|l| l.trim_start().starts_with("a ")), "{screen}");
        assert!(rows_in(&screen, "bravo").iter().all(|l| l.trim_start().starts_with("b ")), "{screen}");
        tmux.type_text(":queue");
        tmux.keys(&["Enter"]);
        tmux.wait("b's own queue again", |s| !s.contains("all contexts") && rows_in(s, "alpha").is_empty());

        // Pending jobs only (the first size's cancelled job drops out); the selection is on the first.
        tmux.keys(&["t"]);
        let screen =
            tmux.wait("b's pending jobs only", |s| s.contains("only") && !rows_in(s, "bravo").is_empty());
        let pending: Vec<&str> = rows_in(&screen, "bravo").into_iter().filter(|l| l.contains("PD")).collect();
        assert!(pending.first().is_some_and(|l| l.contains(&job.to_string())), "{screen}");
        tmux.keys(&["C"]);
        tmux.wait("the confirmation asking for b's name", |s| s.contains("type b to confirm"));
        // Enter alone sends nothing; a wrong name neither.
        tmux.keys(&["Enter"]);
        tmux.wait("the refusal of an empty name", |s| s.contains("type b to confirm, esc to cancel"));
        tmux.type_text("a");
        tmux.keys(&["Enter"]);
        tmux.wait("the refusal of a wrong name", |s| s.contains("\"a\" is not b"));
        assert_eq!(field(&b.url, job, "%T"), "PENDING");
        tmux.keys(&["BSpace"]);
        tmux.type_text("b");
        tmux.keys(&["Enter"]);
        wait_until_blocking(format!("job {job} of b cancelled"), || match field(&b.url, job, "%T") {
            s if s == "CANCELLED" => Ok(()),
            s => Err(s),
        });
        // Nothing was sent to a.
        assert_eq!(field(&a.url, 1, "%T"), "PENDING");

        tmux.keys(&["q"]);
        tmux.wait("the console to quit cleanly", |s| s.contains("console exited: 0"));
    }
}

/// A context without a controller stops the console before it draws or
/// connects anywhere, with the context and key named.
#[test]
fn a_context_without_a_controller_stops_the_console_at_start() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("spur")).unwrap();
    let toml = "[[contexts]]\nname = \"prod\"\nproduction = true\n";
    std::fs::write(home.path().join("spur/console.toml"), toml).unwrap();
    let out = std::process::Command::new(bin("spur-console"))
        .env("XDG_CONFIG_HOME", home.path())
        .env_remove("SPUR_CONSOLE_CONFIG")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("context \"prod\" controllers: at least one controller is required"), "{err}");
}
