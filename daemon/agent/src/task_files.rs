//! Where a step's tasks here write their output: the files `-o/-e`
//! patterns name on the nodes (those with %t, %n or %N), or the step's
//! stream to the controller, in reports of at most 16 KiB (`CHUNK`).

use super::runas::Output;
use spur_proto::v1 as pb;
use spur_vocab::jobs::{PathVars, StepVars, expand_step_path};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;

/// The most output one report carries.
const CHUNK: usize = 16 << 10;

/// The files of one node's tasks: each distinct path emptied once, then
/// opened for appending by every task writing to it.
#[derive(Default)]
pub struct Outputs(Vec<String>);

impl Outputs {
    /// The file `pattern` names for one task; None: the stream.
    fn path(pattern: &str, vars: &PathVars, at: &StepVars, workdir: &str) -> Option<String> {
        if pattern.is_empty() {
            return None;
        }
        let path = expand_step_path(pattern, vars, at);
        Some(if !path.starts_with('/') && !workdir.is_empty() { format!("{workdir}/{path}") } else { path })
    }

    /// For the trampoline of a task running as another user: the first task
    /// naming a file empties it, the others append (they start after it).
    pub fn spec(&mut self, pattern: &str, vars: &PathVars, at: &StepVars, workdir: &str) -> Option<Output> {
        let path = Self::path(pattern, vars, at, workdir)?;
        let append = self.0.contains(&path);
        if !append {
            self.0.push(path.clone());
        }
        Some(Output { path, append })
    }

    /// The file `pattern` names for one task (None: the stream), its directories made.
    pub fn open(
        &mut self,
        pattern: &str,
        vars: &PathVars,
        at: &StepVars,
        workdir: &str,
    ) -> Result<Option<std::fs::File>, (String, i32)> {
        let Some(path) = Self::path(pattern, vars, at, workdir) else { return Ok(None) };
        let fail = |e: std::io::Error| (format!("spurd: error: cannot open {path}: {e}\n"), 1);
        if let Some(dir) = std::path::Path::new(&path).parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        if !self.0.contains(&path) {
            std::fs::File::create(&path).map_err(fail)?;
            self.0.push(path.clone());
        }
        std::fs::OpenOptions::new().append(true).open(&path).map(Some).map_err(fail)
    }
}

/// A task's stdout (or stderr) to the step's stream until it closes.
pub async fn relay(mut r: impl AsyncRead + Unpin, task: u32, stderr: bool, tx: mpsc::Sender<pb::StepReport>) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let data = buf[..n].to_vec();
        let report = if stderr {
            pb::StepReport { task, stderr: data, ..Default::default() }
        } else {
            pb::StepReport { task, stdout: data, ..Default::default() }
        };
        if tx.send(report).await.is_err() {
            return;
        }
    }
}
