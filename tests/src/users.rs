//! Real users for the tests of identity: two unprivileged accounts (made
//! with `useradd` when missing, as `.ci/run` does), a private munged whose
//! socket they can reach, and the CLI run as each of them (`runuser`), so
//! no test takes root's success for a user's.

use crate::proc::bin;
use spur_munge::daemon::TestMunged;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The two test users' names.
pub const ALICE: &str = "spuralice";
pub const BOB: &str = "spurbob";

/// A user of this host.
#[derive(Debug, Clone)]
pub struct User {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// What a test of real users needs: root, munged, useradd and runuser.
/// None (and a note) where they are missing; CI sets SPUR_TEST_MUNGE=1,
/// which turns their absence into a failure.
pub fn available() -> bool {
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    let tools = ["runuser", "useradd"].iter().all(|t| {
        Command::new("sh")
            .args(["-c", &format!("command -v {t}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    let ok = root && tools && TestMunged::available();
    if !ok {
        assert!(
            std::env::var("SPUR_TEST_MUNGE").is_err(),
            "SPUR_TEST_MUNGE is set but this is not root with munged, useradd and runuser"
        );
        eprintln!("real-user tests need root, munged, useradd and runuser: skipped");
    }
    ok
}

/// The user `name`, made (with a home and bash) if this host has none.
pub fn user(name: &str) -> User {
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id").arg(flag).arg(name).output().ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    if id("-u").is_none() {
        // Another test process may make it at the same moment: its failure is fine if the user exists.
        let _ = Command::new("useradd").args(["-m", "-s", "/bin/bash", name]).status();
    }
    User { name: name.into(), uid: id("-u").expect("useradd made the user"), gid: id("-g").expect("gid") }
}

/// A directory anyone may traverse (0755): temp dirs are 0700, which would
/// keep users from their scripts, the munge socket and the binaries.
pub fn open_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    d
}

/// A copy of `spur` and its personalities where every user can run them
/// (the build tree may sit under a directory only root can enter).
pub fn user_links() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = open_dir();
        let spur = d.path().join("spur");
        std::fs::copy(bin("spur"), &spur).expect("copy spur");
        let out = Command::new(&spur).arg("install-links").arg(d.path()).output().expect("run spur");
        assert!(out.status.success(), "install-links: {}", String::from_utf8_lossy(&out.stderr));
        d
    })
    .path()
}

/// A cluster's identity plumbing: the private munged and where it listens.
pub struct Munged {
    pub daemon: TestMunged,
    _dir: tempfile::TempDir,
}

impl Munged {
    /// A munged with a key of its own, its socket reachable by every user.
    pub fn start() -> Munged {
        let dir = open_dir();
        let daemon = TestMunged::start(&dir.path().join("munge")).expect("start munged");
        Munged { daemon, _dir: dir }
    }

    pub fn socket(&self) -> PathBuf {
        self.daemon.socket()
    }

    /// The environment a client needs to reach the controller with a credential.
    pub fn env(&self, url: &str) -> Vec<(String, String)> {
        vec![
            ("SPUR_CONTROLLER_ADDR".into(), url.into()),
            ("SPUR_MUNGE_SOCKET".into(), self.socket().display().to_string()),
        ]
    }

    /// Runs a client personality as `user` (root: as root), with `extra` environment.
    pub fn run_as(
        &self,
        user: &str,
        url: &str,
        personality: &str,
        args: &[&str],
        extra: &[(&str, &str)],
    ) -> Output {
        let mut c = Command::new("runuser");
        c.args(["-u", user, "--", "env", "-i", "PATH=/usr/bin:/bin", &format!("USER={user}")]);
        for (k, v) in self.env(url) {
            c.arg(format!("{k}={v}"));
        }
        for (k, v) in extra {
            c.arg(format!("{k}={v}"));
        }
        c.arg(user_links().join(personality)).args(args);
        c.current_dir("/").stdin(Stdio::null()).output().expect("runuser")
    }

    /// [`Munged::run_as`] that must succeed; its stdout.
    pub fn ok_as(&self, user: &str, url: &str, personality: &str, args: &[&str]) -> String {
        let out = self.run_as(user, url, personality, args, &[]);
        crate::proc::expect_ok(&format!("{personality} {args:?} as {user}"), out)
    }

    /// [`Munged::run_as`] that must fail; its stderr.
    pub fn fails_as(
        &self,
        user: &str,
        url: &str,
        personality: &str,
        args: &[&str],
        extra: &[(&str, &str)],
    ) -> String {
        let out = self.run_as(user, url, personality, args, extra);
        assert!(!out.status.success(), "{personality} {args:?} as {user} should have failed");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// A credential of `user`'s, encoded by this munged (`munge -n`), as a
    /// client would attach it: for tests that replay or forge requests.
    pub fn credential_of(&self, user: &str) -> String {
        credential(&self.socket(), user)
    }
}

/// A credential of `user`'s from the munged at `socket` (`munge -n`).
pub fn credential(socket: &Path, user: &str) -> String {
    let out = Command::new("runuser")
        .args(["-u", user, "--", "munge", "-n", "-S"])
        .arg(socket)
        .output()
        .expect("munge -n");
    assert!(out.status.success(), "munge -n: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
