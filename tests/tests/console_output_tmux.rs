//! The job output view in a real terminal, at 80x24 and 200x50: tmux runs
//! `spur-console` against a controller with one `spurd`; `o` on the running
//! job's Queue row shows its stdout, a line the job writes after the view
//! opened arrives, the job's end is said, `O` shows its stderr, and Esc
//! goes back to the Queue.
//!
//! Needs tmux. Without it the test is skipped with a note, except in CI
//! (`CI` set), where it must run (`.ci/run` installs tmux).

use spur_tests::cluster::Cluster;
use spur_tests::tmux::{Tmux, skip_without_tmux};

/// Writes a few lines and a line to stderr, one more once `go` exists, and ends once `stop` exists.
const SCRIPT: &str = "#!/bin/sh
for i in 1 2 3 4 5; do echo early $i; done
echo 'to stderr' >&2
while [ ! -e go ]; do sleep 0.1; done
echo 'written after the view opened'
while [ ! -e stop ]; do sleep 0.1; done
";

fn watch_output_at(width: u16, height: u16) {
    let e = Cluster::two_nodes(|t| t, &[]);
    let script = e.dir.path().join("tailme.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    let id = e.sbatch(&["-e", "tailme-%j.err", script.to_str().unwrap()]);
    e.wait_field(id, "%T", "RUNNING");

    let tmux = Tmux::console(e.dir.path(), &["--controller", &e.c.url], (width, height));
    // Its row: the Name column is hidden at 80 columns, so the id in the first column.
    let sid = id.to_string();
    let row = |s: &str| s.lines().any(|l| l.split_whitespace().next() == Some(sid.as_str()));
    tmux.wait("the running job in the Queue", |s| s.contains("connected") && row(s));

    tmux.keys(&["o"]);
    let title = format!("job {id} stdout: following");
    tmux.wait("the job's stdout so far", |s| s.contains(&title) && s.contains("early 5"));
    std::fs::write(e.dir.path().join("go"), "").unwrap();
    tmux.wait("the line written after the view opened", |s| s.contains("written after the view opened"));
    std::fs::write(e.dir.path().join("stop"), "").unwrap();
    let ended = format!("job {id} stdout: job {id} has ended");
    tmux.wait("the job's end in the title", |s| s.contains(&ended));

    tmux.keys(&["Escape"]);
    tmux.wait("back on the Queue", |s| !s.contains(&ended) && row(s));
    tmux.keys(&["O"]);
    tmux.wait("the job's stderr", |s| s.contains(&format!("job {id} stderr")) && s.contains("to stderr"));
    tmux.keys(&["q"]);
    tmux.wait("q closes the view, not the console", |s| !s.contains("stderr:") && row(s));
    tmux.keys(&["q"]);
    tmux.wait("the console to quit cleanly", |s| s.contains("console exited: 0"));
}

#[test]
fn a_running_job_s_output_arrives_in_the_console_at_80x24_and_200x50() {
    if skip_without_tmux("console output tmux test") {
        return;
    }
    watch_output_at(80, 24);
    watch_output_at(200, 50);
}
