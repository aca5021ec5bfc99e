//! A private munged for tests (feature `test-daemon`): its own key, socket
//! and files in a temporary directory, stopped when dropped. Two of them with
//! different keys stand for two clusters; one with the same key as another
//! (`with_key`) for a second host of one.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct TestMunged {
    dir: PathBuf,
    child: Child,
}

impl TestMunged {
    /// Whether munged is installed here.
    pub fn available() -> bool {
        Command::new("munged").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
    }

    /// Starts munged in `dir` with a new random key.
    pub fn start(dir: &Path) -> Result<TestMunged, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let key = dir.join("munge.key");
        let status = Command::new("mungekey")
            .args(["--create", "--force", "--keyfile"])
            .arg(&key)
            .status()
            .map_err(|e| format!("mungekey: {e}"))?;
        if !status.success() {
            return Err(format!("mungekey --create failed: {status}"));
        }
        Self::with_key(dir, &key, &[])
    }

    /// Starts munged in `dir` with the key at `key`; `wrapper` runs before it
    /// (`["faketime", "-f", "-1h"]` for a host whose clock is an hour behind).
    pub fn with_key(dir: &Path, key: &Path, wrapper: &[&str]) -> Result<TestMunged, String> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        // munged refuses a socket directory others can write to.
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
        let local_key = dir.join("munge.key");
        if key != local_key {
            std::fs::copy(key, &local_key).map_err(|e| format!("{}: {e}", key.display()))?;
        }
        let _ = std::fs::set_permissions(&local_key, std::fs::Permissions::from_mode(0o600));
        let (program, pre) = match wrapper.split_first() {
            Some((p, rest)) => (p.to_string(), rest.iter().map(|s| s.to_string()).collect()),
            None => ("munged".to_string(), vec![]),
        };
        let mut cmd = Command::new(program);
        if !wrapper.is_empty() {
            cmd.args(pre).arg("munged");
        }
        let socket = dir.join("munge.socket");
        cmd.args(["--foreground", "--force", "--num-threads=4"])
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", local_key.display()))
            .arg(format!("--pid-file={}", dir.join("munged.pid").display()))
            .arg(format!("--seed-file={}", dir.join("munged.seed").display()))
            .arg(format!("--log-file={}", dir.join("munged.log").display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd.spawn().map_err(|e| format!("munged: {e}"))?;
        let me = TestMunged { dir: dir.to_path_buf(), child };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !socket.exists() {
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(dir.join("munged.log")).unwrap_or_default();
                return Err(format!("munged did not create {} in 20 s: {log}", socket.display()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(me)
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.join("munge.socket")
    }

    pub fn key(&self) -> PathBuf {
        self.dir.join("munge.key")
    }
}

impl Drop for TestMunged {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
