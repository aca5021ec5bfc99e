//! srun's standard input (`-i/--input`), as Slurm's srun: by default srun
//! reads its own stdin and sends it to task 0; `all` to every task, a task
//! id to that task, `none` gives the tasks /dev/null. A file name (with the
//! `-o` patterns %j %s %u %x ...) is read here by srun, once the step's id
//! is known, and sent to every task (each reads it whole, as Slurm's tasks
//! each open it); the per-task patterns %t %n %N are refused, since srun
//! opens one file.
//!
//! The reading is a thread of its own, bounded by the step's stream: a piece
//! waits until the stream takes it, so srun stops reading when the tasks do.
//! The end of the input closes the tasks' stdin. With `--pty` srun's stdin
//! goes to task 0, on its terminal, and srun's own terminal is raw meanwhile.

use super::on_nodes;
use crate::vocab::jobs::{PathVars, StepVars, expand_step_path};
use spur_proto::v1 as pb;
use std::io::{IsTerminal, Read};
use tokio::sync::mpsc;

/// The largest piece of input one message carries (the controller's limit).
pub const CHUNK: usize = 64 << 10;

/// Where the tasks' stdin comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Input {
    /// StepRequest.input: "" (task 0), a task id, "all" or "none".
    pub tasks: String,
    /// The file pattern srun reads; None: srun's own stdin.
    pub file: Option<String>,
}

/// `-i/--input`'s value ("" when not given).
pub fn parse(v: &str) -> Result<Input, String> {
    let v = v.trim();
    let own = |tasks: &str| Ok(Input { tasks: tasks.into(), file: None });
    match v {
        "" => own(""),
        "none" | "all" => own(v),
        n if n.bytes().all(|b| b.is_ascii_digit()) => {
            n.parse::<u32>().map_err(|_| format!("--input: '{n}' is not a task id"))?;
            own(n)
        }
        f if on_nodes(f) => Err(format!(
            "--input: '{f}': %t, %n and %N are not supported (srun reads one file and sends it to every task)"
        )),
        f => Ok(Input { tasks: "all".into(), file: Some(f.into()) }),
    }
}

/// srun's terminal size as (rows, cols); (0, 0) when stdin is no terminal.
pub fn window() -> (u32, u32) {
    if !std::io::stdin().is_terminal() {
        return (0, 0);
    }
    crossterm::terminal::size().map_or((0, 0), |(cols, rows)| (u32::from(rows), u32::from(cols)))
}

/// `--pty`: srun's terminal in raw mode (keys go to the task as typed, Ctrl-C
/// too) while it lives; restored when it is dropped, on every way out of
/// the step's loop. None when stdin is no terminal.
pub struct Raw(());

impl Raw {
    pub fn enter() -> Option<Raw> {
        if !std::io::stdin().is_terminal() {
            return None;
        }
        crossterm::terminal::enable_raw_mode().ok().map(|()| Raw(()))
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

impl Input {
    /// Starts sending the input of step `step` up `tx`; nothing for `none`.
    pub fn start(
        &self,
        vars: &PathVars,
        step: u32,
        workdir: &str,
        tx: &mpsc::Sender<pb::StepInput>,
    ) -> Result<(), String> {
        if self.tasks == "none" {
            return Ok(());
        }
        let source: Box<dyn Read + Send> = match &self.file {
            None => Box::new(std::io::stdin()),
            Some(p) => {
                let at = StepVars { step, task: 0, node_index: 0 };
                let mut path = expand_step_path(p, vars, &at);
                if !path.starts_with('/') && !workdir.is_empty() {
                    path = format!("{workdir}/{path}");
                }
                Box::new(std::fs::File::open(&path).map_err(|e| format!("--input: cannot open {path}: {e}"))?)
            }
        };
        let tx = tx.clone();
        // A plain thread: one blocked on a terminal never holds srun's exit.
        std::thread::Builder::new()
            .name("srun-stdin".into())
            .spawn(move || pump(source, &tx))
            .map_err(|e| format!("cannot read the input: {e}"))?;
        Ok(())
    }
}

/// Sends `source` up the step's stream in pieces, then its end.
fn pump(mut source: Box<dyn Read + Send>, tx: &mpsc::Sender<pb::StepInput>) {
    let send = |i| tx.blocking_send(pb::StepInput { input: Some(i) }).is_ok();
    let mut buf = vec![0u8; CHUNK];
    loop {
        match source.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if !send(pb::step_input::Input::Stdin(buf[..n].to_vec())) {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // An unreadable input ends like an empty one.
            Err(_) => break,
        }
    }
    send(pb::step_input::Input::StdinEof(true));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_reads_as_slurm_s_modes_or_a_file() {
        let own = |t: &str| Input { tasks: t.into(), file: None };
        assert_eq!(parse("").unwrap(), own(""));
        assert_eq!(parse("all").unwrap(), own("all"));
        assert_eq!(parse("none").unwrap(), own("none"));
        assert_eq!(parse("3").unwrap(), own("3"));
        assert_eq!(parse("in.%j").unwrap(), Input { tasks: "all".into(), file: Some("in.%j".into()) });
        assert!(parse("in.%t").unwrap_err().contains("--input"));
        assert!(parse("99999999999").unwrap_err().contains("--input"));
    }

    #[test]
    fn the_pump_sends_pieces_then_the_end() {
        let (tx, mut rx) = mpsc::channel(4);
        let big = vec![b'x'; CHUNK + 10];
        let t = std::thread::spawn(move || pump(Box::new(std::io::Cursor::new(big)), &tx));
        let mut got = vec![];
        while let Some(m) = rx.blocking_recv() {
            got.push(m.input.unwrap());
        }
        t.join().unwrap();
        use pb::step_input::Input as I;
        let sizes: Vec<_> = got.iter().map(|i| if let I::Stdin(d) = i { d.len() } else { 0 }).collect();
        assert_eq!(sizes, [CHUNK, 10, 0]);
        assert_eq!(got.last(), Some(&I::StdinEof(true)));
    }
}
