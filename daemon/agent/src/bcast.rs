//! sbcast on a node: the pieces of a file (`BcastFile` commands, in order)
//! fed to `spurd __exec`, which drops to the job's user before anything
//! opens the destination (runas.rs), then a small `sh` writes it, refusing an
//! existing file without `--force` and applying `-p`'s mode and time. A file
//! written as root into a user's directory would let a user overwrite what
//! they cannot; this way the kernel checks the user's own rights.

use super::link::Link;
use super::runas::{ExecSpec, RunAs};
use spur_proto::v1 as pb;
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// Pieces a copy buffers before the command loop waits for its writer.
const PIECES: usize = 8;
/// A copy whose next piece does not come in this long is abandoned (its `sh` killed).
const IDLE: Duration = Duration::from_secs(120);

/// `$1` the destination, `$2` `force` or not, `$3` an octal mode and `$4` a time for `-p`.
const WRITE: &str = r#"if [ "$2" != force ] && [ -e "$1" ]; then
  echo "$1 exists (sbcast --force replaces it)" >&2; exit 17
fi
cat > "$1" || exit 1
if [ -n "$3" ]; then chmod "$3" "$1" && touch -m -d "@$4" "$1" || exit 1; fi"#;

type Writers = HashMap<(u64, String), mpsc::Sender<Vec<u8>>>;

/// The copies in progress here, by (request, node).
#[derive(Clone, Default)]
pub struct Copies {
    writers: Arc<Mutex<Writers>>,
}

/// The trampoline's spec and arguments for one copy.
fn spec(b: &pb::BcastFile, user: Option<RunAs>) -> ExecSpec {
    let (mode, mtime) =
        if b.preserve { (format!("{:o}", b.mode & 0o7777), b.mtime.to_string()) } else { Default::default() };
    let force = if b.force { "force" } else { "" };
    let argv = ["/bin/sh", "-c", WRITE, "sbcast", &b.dest, force, &mode, &mtime];
    ExecSpec { user, argv: argv.iter().map(|s| s.to_string()).collect(), ..Default::default() }
}

impl Copies {
    fn lock(&self) -> std::sync::MutexGuard<'_, Writers> {
        self.writers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One piece, in the order the controller sent them.
    pub async fn piece(&self, b: pb::BcastFile, link: &Link) {
        let key = (b.request_id, b.node.clone());
        if b.first {
            match self.start(&b, link.clone()) {
                Ok(tx) => {
                    self.lock().insert(key.clone(), tx);
                }
                Err(e) => return report(link, &b, e).await,
            }
        }
        let tx = self.lock().get(&key).cloned();
        if let Some(tx) = tx
            && !b.data.is_empty()
        {
            // A writer that gave up (its sh failed) has reported already.
            let _ = tx.send(b.data).await;
        }
        if b.last {
            // The writer sees the end of its pieces, closes the file and reports.
            self.lock().remove(&key);
        }
    }

    /// Starts the trampoline for a copy; its writer reports when it ends.
    fn start(&self, b: &pb::BcastFile, link: Link) -> Result<mpsc::Sender<Vec<u8>>, String> {
        let user = RunAs::resolve(b.uid, b.gid, &b.user, &b.node)?;
        let path = [("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")];
        let mut cmd = tokio::process::Command::from(spec(b, user).command(path, false)?);
        cmd.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped()).kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| format!("cannot start spurd __exec: {e}"))?;
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(PIECES);
        let (me, head) = (self.clone(), pb::BcastFile { data: vec![], ..b.clone() });
        tokio::spawn(async move {
            let mut stdin = child.stdin.take();
            let mut idle = false;
            loop {
                match tokio::time::timeout(IDLE, rx.recv()).await {
                    Ok(Some(d)) => {
                        // A write to a sh that exited (the file exists) fails; its stderr says why.
                        if let Some(s) = stdin.as_mut()
                            && s.write_all(&d).await.is_err()
                        {
                            stdin = None;
                        }
                    }
                    Ok(None) => break,
                    Err(_) => {
                        idle = true;
                        break;
                    }
                }
            }
            drop(stdin);
            me.lock().remove(&(head.request_id, head.node.clone()));
            let error = if idle {
                let _ = child.kill().await;
                format!("no piece of the file for {} s; the copy was abandoned", IDLE.as_secs())
            } else {
                match child.wait_with_output().await {
                    Ok(o) if o.status.success() => String::new(),
                    Ok(o) => {
                        let err = String::from_utf8_lossy(&o.stderr).trim().to_string();
                        if err.is_empty() {
                            format!("writing {} failed ({})", head.dest, o.status)
                        } else {
                            err
                        }
                    }
                    Err(e) => format!("writing {}: {e}", head.dest),
                }
            };
            report(&link, &head, error).await;
        });
        Ok(tx)
    }
}

async fn report(link: &Link, b: &pb::BcastFile, error: String) {
    let r = pb::BcastReport {
        agent_id: link.agent_id.clone(),
        agent_key: link.agent_key.clone(),
        request_id: b.request_id,
        node: b.node.clone(),
        error,
    };
    if let Err(e) = link.client.clone().report_bcast(r).await {
        tracing::warn!(job = b.job_id, error = %e.message(), "cannot report an sbcast copy");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_names_the_file_as_an_argument_never_in_the_script() {
        let b = pb::BcastFile {
            dest: "/tmp/a b; rm -rf x".into(),
            preserve: true,
            mode: 0o100755,
            mtime: 42,
            ..Default::default()
        };
        let s = spec(&b, None);
        assert_eq!(s.argv[..3], ["/bin/sh", "-c", WRITE]);
        assert_eq!(s.argv[3..], ["sbcast", "/tmp/a b; rm -rf x", "", "755", "42"]);
        assert!(s.user.is_none());
    }

    #[test]
    fn the_script_refuses_an_existing_file_without_force_and_preserves_with_p() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("f");
        let run = |force: &str, mode: &str, input: &str| {
            let mut c = std::process::Command::new("/bin/sh");
            c.args(["-c", WRITE, "sbcast", dest.to_str().unwrap(), force, mode, "1000000000"]);
            c.stdin(Stdio::piped()).stderr(Stdio::piped());
            let mut child = c.spawn().unwrap();
            use std::io::Write;
            let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
            child.wait_with_output().unwrap()
        };
        assert!(run("", "", "one").status.success());
        let again = run("", "", "two");
        assert_eq!(again.status.code(), Some(17));
        assert!(String::from_utf8_lossy(&again.stderr).contains("exists"));
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "one");
        assert!(run("force", "640", "three").status.success());
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "three");
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(&dest).unwrap();
        assert_eq!((m.mode() & 0o7777, m.mtime()), (0o640, 1_000_000_000));
    }
}
