//! Where a step's tasks here write their output when `-o/-e` patterns name
//! files on the nodes (those with %t, %n or %N).

use super::runas::Output;
use spur_vocab::jobs::{PathVars, StepVars, expand_step_path};

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
