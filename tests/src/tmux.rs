//! A tmux server for the console tests in a real terminal: on its own
//! socket (`-S`, in the test's temp dir, so not even the socket file
//! outlives the test and the user's sessions are never touched), killed on
//! drop, so a failing test leaves nothing running.

use crate::proc::bin;
use crate::wait::wait_until_blocking;
use std::path::Path;
use std::process::{Command, Output, Stdio};

pub struct Tmux {
    pub socket: std::path::PathBuf,
}

impl Tmux {
    /// `spur-console ARGS` in session `console` of a new server of `size`
    /// (its socket in `home`), with `home` as its config home (the test's
    /// console.toml, or none: never the developer's) and no token or
    /// controller from the environment; when it exits the pane says
    /// `console exited: CODE` and stays.
    pub fn console(home: &Path, args: &[&str], size: (u16, u16)) -> Tmux {
        let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
        let command = format!(
            "env -u SPUR_TOKEN -u SPUR_CONSOLE_CONFIG -u SPUR_CONTROLLER_ADDR XDG_CONFIG_HOME={} {} {}; \
             echo \"console exited: $?\"; sleep 600",
            quote(&home.display().to_string()),
            quote(&bin("spur-console").display().to_string()),
            args.join(" "),
        );
        let tmux = Tmux { socket: home.join(format!("tmux-{}x{}.sock", size.0, size.1)) };
        let (w, h) = (size.0.to_string(), size.1.to_string());
        tmux.run(&["new-session", "-d", "-s", "console", "-x", &w, "-y", &h, &command]);
        tmux
    }

    pub fn run(&self, args: &[&str]) -> Output {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run tmux");
        assert!(out.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out
    }

    /// Named keys (`Enter`, `Tab`) or single characters, to the session `console`.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "console"];
        args.extend(keys);
        self.run(&args);
    }

    /// Text typed as is (`-l`: no key-name lookup, so "Enter" would be five letters).
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "console", "-l", text]);
    }

    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "console"]).stdout).into_owned()
    }

    /// Polls the screen until `check` holds; at the deadline fails showing the last screen.
    pub fn wait(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        wait_until_blocking(what, || {
            let screen = self.screen();
            if check(&screen) { Ok(screen) } else { Err(format!("the screen:\n{screen}")) }
        })
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").arg("-S").arg(&self.socket).arg("kill-server").output();
    }
}

/// Whether a console test must be skipped: tmux is missing (said in a note
/// naming `test`). In CI (`CI` set) tmux is required, and its absence fails.
pub fn skip_without_tmux(test: &str) -> bool {
    if has_tmux() {
        return false;
    }
    assert!(std::env::var_os("CI").is_none(), "tmux is required in CI (.ci/run installs it)");
    eprintln!("note: tmux is not installed; skipping the {test}");
    true
}

pub fn has_tmux() -> bool {
    Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success())
}

/// Single-quoted for sh.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
