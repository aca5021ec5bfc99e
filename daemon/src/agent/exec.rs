//! Running job processes on a node: launch a script with its environment and
//! output files, deliver signals, and report how each one ended.

use spur_proto::v1 as pb;
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// How a job process ended, or that it could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub job_id: u64,
    /// "exited" or "failed" (could not start).
    pub state: &'static str,
    pub exit_code: i32,
    pub signal: i32,
    pub message: String,
}

#[derive(Clone, Default)]
pub struct Executor {
    running: Arc<Mutex<HashMap<u64, (String, u32)>>>,
}

impl Executor {
    /// The jobs still running here, for re-registration.
    pub fn running(&self) -> Vec<pb::RunningJob> {
        let r = self.running.lock().unwrap_or_else(|p| p.into_inner());
        r.iter().map(|(id, (node, _))| pb::RunningJob { job_id: *id, node: node.clone() }).collect()
    }

    /// Starts the job; its end arrives on `ended`.
    pub fn launch(&self, l: pb::Launch, ended: mpsc::Sender<Ended>) {
        let job_id = l.job_id;
        let fail =
            move |message: String| Ended { job_id, state: "failed", exit_code: -1, signal: 0, message };
        let spawned = (|| -> Result<tokio::process::Child, String> {
            let open = |p: &str| -> Result<Stdio, String> {
                if p.is_empty() {
                    return Ok(Stdio::null());
                }
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map(Stdio::from)
                    .map_err(|e| format!("cannot open {p}: {e}"))
            };
            let mut cmd = tokio::process::Command::new("/bin/sh");
            cmd.arg("-c").arg(&l.script).stdin(Stdio::null()).stdout(open(&l.stdout_path)?);
            let err_path = if l.stderr_path.is_empty() { &l.stdout_path } else { &l.stderr_path };
            cmd.stderr(open(err_path)?);
            if !l.workdir.is_empty() {
                cmd.current_dir(&l.workdir);
            }
            for kv in &l.env {
                cmd.env(&kv.key, &kv.value);
            }
            cmd.kill_on_drop(false).spawn().map_err(|e| format!("cannot start /bin/sh: {e}"))
        })();
        let mut child = match spawned {
            Ok(c) => c,
            Err(m) => {
                tokio::spawn(async move {
                    let _ = ended.send(fail(m)).await;
                });
                return;
            }
        };
        let pid = child.id().unwrap_or(0);
        self.lock().insert(job_id, (l.node.clone(), pid));
        let me = self.clone();
        tokio::spawn(async move {
            let status = child.wait().await;
            let end = match status {
                Ok(s) => {
                    use std::os::unix::process::ExitStatusExt;
                    Ended {
                        job_id,
                        state: "exited",
                        exit_code: s.code().unwrap_or(-1),
                        signal: s.signal().unwrap_or(0),
                        message: String::new(),
                    }
                }
                Err(e) => fail(format!("wait failed: {e}")),
            };
            // Queued before it leaves the running list, so a re-registration
            // always finds the job in one of the two.
            let _ = ended.send(end).await;
            me.lock().remove(&job_id);
        });
    }

    /// Sends `signal` to the job's shell. Returns false when it is not running here.
    pub async fn signal(&self, job_id: u64, signal: i32) -> bool {
        let Some(pid) = self.lock().get(&job_id).map(|(_, pid)| *pid) else { return false };
        // `kill` avoids a libc binding for one call.
        tokio::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .await
            .is_ok_and(|s| s.success())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, (String, u32)>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn launch(script: &str, out: &str) -> pb::Launch {
        pb::Launch {
            job_id: 7,
            node: "n1".into(),
            script: script.into(),
            env: vec![pb::KeyValue { key: "SPUR_JOB_ID".into(), value: "7".into() }],
            stdout_path: out.into(),
            stderr_path: String::new(),
            workdir: String::new(),
        }
    }

    async fn next(rx: &mut mpsc::Receiver<Ended>) -> Ended {
        tokio::time::timeout(Duration::from_secs(30), rx.recv()).await.unwrap().unwrap()
    }

    #[tokio::test]
    async fn runs_with_env_writes_output_and_reports_exit() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.txt");
        let (tx, mut rx) = mpsc::channel(4);
        let ex = Executor::default();
        ex.launch(launch("echo job=$SPUR_JOB_ID; exit 3", out.to_str().unwrap()), tx);
        let end = next(&mut rx).await;
        assert_eq!((end.state, end.exit_code), ("exited", 3));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "job=7\n");
    }

    #[tokio::test]
    async fn a_signal_ends_the_job_and_is_reported() {
        let (tx, mut rx) = mpsc::channel(4);
        let ex = Executor::default();
        ex.launch(launch("exec sleep 300", ""), tx);
        assert_eq!(ex.running().len(), 1);
        assert!(ex.signal(7, 15).await);
        let end = next(&mut rx).await;
        assert_eq!((end.state, end.signal), ("exited", 15));
        assert!(!ex.signal(7, 15).await, "no longer running");
    }

    #[tokio::test]
    async fn an_unopenable_output_file_is_a_failed_start() {
        let (tx, mut rx) = mpsc::channel(4);
        Executor::default().launch(launch("true", "/nonexistent/dir/out"), tx);
        let end = next(&mut rx).await;
        assert_eq!(end.state, "failed");
        assert!(end.message.contains("/nonexistent/dir/out"), "{}", end.message);
    }
}
