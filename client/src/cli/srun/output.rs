//! Where the tasks' output goes on srun's side: its own stdout and stderr
//! (with `-l`, each line prefixed by its task's id, as `0: `, the width of
//! the largest id), a file srun writes (`-o/-e` patterns without `%t %n
//! %N`), or nowhere (`none`, or a file the nodes write). Output is written
//! as it comes; with labels, a line waits for its end (the last, unfinished
//! one is written at the step's end).

use crate::vocab::jobs::{PathVars, StepVars, expand_step_path};
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;

/// One destination.
pub enum Dest {
    Stdout,
    Stderr,
    File(File),
    /// `none`, or written on the nodes.
    Nowhere,
}

impl Dest {
    fn write(&mut self, bytes: &[u8]) {
        // srun goes on when its own output is closed: the tasks' ends still count.
        let _ = match self {
            Dest::Stdout => {
                std::io::stdout().lock().write_all(bytes).and_then(|()| std::io::stdout().flush())
            }
            Dest::Stderr => std::io::stderr().lock().write_all(bytes),
            Dest::File(f) => f.write_all(bytes),
            Dest::Nowhere => Ok(()),
        };
    }
}

/// The file (or `none`) a pattern srun writes itself names, for step `step`
/// of job `vars.job_id`; relative to `workdir`; emptied first unless
/// `append` (`--open-mode=append`). None: the pattern is empty.
pub fn open(
    pattern: &str,
    vars: &PathVars,
    step: u32,
    workdir: &str,
    append: bool,
) -> Result<Option<Dest>, String> {
    if pattern.is_empty() {
        return Ok(None);
    }
    if pattern == "none" {
        return Ok(Some(Dest::Nowhere));
    }
    let at = StepVars { step, task: 0, node_index: 0 };
    let mut path = expand_step_path(pattern, vars, &at);
    if !path.starts_with('/') && !workdir.is_empty() {
        path = format!("{workdir}/{path}");
    }
    if let Some(dir) = std::path::Path::new(&path).parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let opened = if append {
        std::fs::OpenOptions::new().create(true).append(true).open(&path)
    } else {
        File::create(&path)
    };
    opened.map(|f| Some(Dest::File(f))).map_err(|e| format!("cannot open {path}: {e}"))
}

/// The tasks' output, as srun writes it.
pub struct Sink {
    out: Dest,
    err: Dest,
    /// `-l`: the label's width (digits of the largest task id); None without labels.
    label: Option<usize>,
    /// An unfinished line of each (task, stderr).
    partial: HashMap<(u32, bool), Vec<u8>>,
}

impl Sink {
    pub fn new(out: Dest, err: Dest, label: bool, ntasks: u32) -> Sink {
        let width = ntasks.saturating_sub(1).max(1).to_string().len();
        Sink { out, err, label: label.then_some(width), partial: HashMap::new() }
    }

    pub fn write(&mut self, task: u32, stderr: bool, bytes: &[u8]) {
        let text = match self.label {
            None => bytes.to_vec(),
            Some(w) => labelled(task, w, self.partial.entry((task, stderr)).or_default(), bytes),
        };
        if !text.is_empty() {
            if stderr { self.err.write(&text) } else { self.out.write(&text) }
        }
    }

    /// Writes the unfinished lines, labelled, at the step's end.
    pub fn finish(&mut self) {
        let mut rest: Vec<((u32, bool), Vec<u8>)> =
            self.partial.drain().filter(|(_, b)| !b.is_empty()).collect();
        rest.sort_by_key(|(k, _)| *k);
        for ((task, stderr), line) in rest {
            let mut text = format!("{task:>w$}: ", w = self.label.unwrap_or(1)).into_bytes();
            text.extend(line);
            if stderr { self.err.write(&text) } else { self.out.write(&text) }
        }
    }
}

/// The whole lines of `pending` + `bytes`, each prefixed `task: `; the rest stays pending.
pub fn labelled(task: u32, width: usize, pending: &mut Vec<u8>, bytes: &[u8]) -> Vec<u8> {
    pending.extend_from_slice(bytes);
    let Some(last) = pending.iter().rposition(|b| *b == b'\n') else { return vec![] };
    let whole: Vec<u8> = pending.drain(..=last).collect();
    let mut out = Vec::with_capacity(whole.len() + 8);
    for line in whole.split_inclusive(|b| *b == b'\n') {
        out.extend(format!("{task:>width$}: ").into_bytes());
        out.extend_from_slice(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_go_on_whole_lines_and_pad_to_the_largest_id() {
        let mut p = vec![];
        assert_eq!(labelled(0, 1, &mut p, b"a\nb"), b"0: a\n");
        assert_eq!(p, b"b");
        assert_eq!(labelled(0, 1, &mut p, b"c\nd\n"), b"0: bc\n0: d\n");
        assert!(p.is_empty());
        assert_eq!(labelled(3, 2, &mut p, b"x\n"), b" 3: x\n");
        assert!(labelled(3, 2, &mut p, b"no end").is_empty());
    }

    #[test]
    fn srun_s_own_files_are_expanded_and_made() {
        let dir = tempfile::tempdir().unwrap();
        let wd = dir.path().display().to_string();
        let vars = PathVars { job_id: 12, user: "u", name: "x", node: "", array: None };
        let write = |append: bool, text: &[u8]| {
            let Some(Dest::File(mut f)) = open("logs/%j.%s.out", &vars, 3, &wd, append).unwrap() else {
                panic!()
            };
            f.write_all(text).unwrap();
        };
        let read = || std::fs::read_to_string(dir.path().join("logs/12.3.out")).unwrap();
        write(false, b"hi");
        assert_eq!(read(), "hi");
        // --open-mode=append keeps what is there; truncate (the default) empties it.
        write(true, b" again");
        assert_eq!(read(), "hi again");
        write(false, b"new");
        assert_eq!(read(), "new");
        assert!(matches!(open("none", &vars, 0, &wd, false).unwrap(), Some(Dest::Nowhere)));
        assert!(open("", &vars, 0, &wd, false).unwrap().is_none());
    }
}
