//! The Fairshare pane and a plugin in a real terminal, at 80x24 and
//! 200x50: tmux runs `spur-console` against a controller with one `spurd`
//! and a console.toml in a temp XDG_CONFIG_HOME. `0` opens the fairshare
//! tree, where account ml shows its shares; Enter on it explains them with
//! the formula filled in; the plugin's key on the running job's Queue row
//! runs `echo` with its job id and shows the output. A console.toml whose
//! plugin names an unknown field stops the console with an error naming
//! the plugin, its key and the field. `sshare -l` prints the same shares.
//!
//! Needs tmux. Without it the test is skipped with a note, except in CI
//! (`CI` set), where it must run (`.ci/run` installs tmux).

use spur_tests::cluster::Cluster;
use spur_tests::tmux::{Tmux, skip_without_tmux};
use std::path::Path;

/// Runs until `stop` exists in its directory.
const SCRIPT: &str = "#!/bin/sh\nwhile [ ! -e stop ]; do sleep 0.1; done\n";

const PLUGIN: &str = r#"
[[plugins]]
key = "X"
name = "echo-id"
panes = ["queue"]
command = ["echo", "plugin saw job {jobid}"]
"#;

const BAD: &str = r#"
[[plugins]]
key = "X"
name = "show"
panes = ["queue"]
command = ["scontrol", "show", "job", "{jobidd}"]
"#;

/// A console in its own tmux server, with `config` as its console.toml.
fn console(e: &Cluster, home: &Path, config: &str, (w, h): (u16, u16)) -> Tmux {
    std::fs::create_dir_all(home.join("spur")).unwrap();
    std::fs::write(home.join("spur").join("console.toml"), config).unwrap();
    Tmux::console(home, &["--controller", &e.c.url], (w, h))
}

fn fairshare_and_plugin_at(e: &Cluster, id: u64, size: (u16, u16)) {
    let home = e.dir.path().join(format!("home-{}x{}", size.0, size.1));
    let tmux = console(e, &home, PLUGIN, size);
    let sid = id.to_string();
    let row = |s: &str| s.lines().any(|l| l.split_whitespace().next() == Some(sid.as_str()));
    tmux.wait("the running job in the Queue", |s| s.contains("connected") && row(s));

    // The selection starts on the only job.
    tmux.keys(&["X"]);
    let said = format!("plugin saw job {id}");
    tmux.wait("the plugin's output", |s| s.contains(&said) && s.contains("plugin echo-id: echo"));
    tmux.wait("its end", |s| s.contains("finished"));
    tmux.keys(&["Escape"]);
    tmux.wait("back on the Queue", |s| !s.contains(&said) && row(s));

    // The eleventh pane has no number key: its command.
    tmux.type_text(":fairshare");
    tmux.keys(&["Enter"]);
    // ml (10) and science (30) under root: ml's NormShares is 10/40.
    let ml = |s: &str| {
        s.lines().any(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.iter().any(|x| x.ends_with("ml")) && w.contains(&"10") && w.contains(&"0.250000")
        })
    };
    tmux.wait("account ml with its shares in the Fairshare pane", |s| s.contains("Fairshare") && ml(s));
    // Rows: root, ml, ml's user root, science; the selection starts on root.
    tmux.keys(&["j", "Enter"]);
    tmux.wait("ml's NormShares formula filled in", |s| {
        s.contains("Account ml") && s.contains("= 10 / 40 × 1.000000 = 0.250000")
    });
    // Apart: an Esc followed at once by q reads as alt-q.
    tmux.keys(&["Escape"]);
    tmux.wait("back on the tree", |s| !s.contains("Account ml") && ml(s));
    tmux.keys(&["q"]);
    tmux.wait("the console to quit cleanly", |s| s.contains("console exited: 0"));
}

#[test]
fn the_fairshare_pane_and_a_plugin_in_tmux_at_80x24_and_200x50() {
    if skip_without_tmux("console fairshare tmux test") {
        return;
    }
    let e = Cluster::two_nodes(|t| t, &[]);
    e.ok("sacctmgr", "-i modify account name=ml set fairshare=10");
    e.ok("sacctmgr", "-i add account name=science fairshare=30");
    let script = e.dir.path().join("wait.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    let id = e.sbatch(&[script.to_str().unwrap()]);
    e.wait_field(id, "%T", "RUNNING");
    // The pane's numbers are sshare -l's: one answer, ListShares.
    let long = e.ok("sshare", "-l -a -P");
    assert!(long.lines().next().unwrap_or_default().ends_with("|FairShare|LevelFS"), "{long}");
    assert!(long.lines().any(|l| l.starts_with("ml||10|0.250000|")), "{long}");
    assert!(
        long.lines().any(|l| l.starts_with("science||30|0.750000|0|")),
        "an account with no users: {long}"
    );
    assert!(long.lines().any(|l| l.starts_with(" ml|root|1|0.250000|")), "{long}");
    fairshare_and_plugin_at(&e, id, (80, 24));
    fairshare_and_plugin_at(&e, id, (200, 50));

    // A bad template: the console does not start, and says which plugin, key and field.
    let tmux = console(&e, &e.dir.path().join("home-bad"), BAD, (80, 24));
    let screen = tmux.wait("the console to refuse its config", |s| s.contains("console exited: 1"));
    let flat: String = screen.split_whitespace().collect();
    assert!(flat.contains("plugin\"show\",key\"X\":unknownfield{jobidd}"), "{screen}");
    std::fs::write(e.dir.path().join("stop"), "").unwrap();
}
