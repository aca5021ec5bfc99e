//! `srun --pty`: a step's task 0 runs on a pseudo-terminal here. The agent
//! opens the pair (the size srun's terminal had), gives the trampoline the
//! terminal as its stdin, stdout and stderr, and keeps the master: what the
//! task writes comes back as its stdout, srun's stdin goes in. The
//! trampoline starts a session of its own and opens the terminal by name,
//! which makes it the session's controlling terminal, so the task's Ctrl-C
//! (a byte from srun's raw terminal) reaches it as SIGINT.

use nix::fcntl::{FcntlArg, FdFlag, fcntl};
use nix::pty::{Winsize, openpty};
use std::os::fd::OwnedFd;

/// A terminal pair: the master stays with the agent.
#[derive(Debug)]
pub struct Pty {
    pub master: OwnedFd,
    pub slave: OwnedFd,
    /// The terminal's name (`/dev/pts/N`).
    pub path: String,
}

/// A new pair of `rows` x `cols` (0: 24 x 80).
pub fn open(rows: u32, cols: u32) -> Result<Pty, String> {
    let dim = |n: u32, or: u16| if n == 0 { or } else { u16::try_from(n).unwrap_or(u16::MAX) };
    let size = Winsize { ws_row: dim(rows, 24), ws_col: dim(cols, 80), ws_xpixel: 0, ws_ypixel: 0 };
    let p = openpty(Some(&size), None).map_err(|e| format!("openpty: {e}"))?;
    // Not handed to whatever else the agent starts.
    for fd in [&p.master, &p.slave] {
        fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).map_err(|e| format!("openpty: {e}"))?;
    }
    let path = nix::unistd::ttyname(&p.slave).map_err(|e| format!("ttyname: {e}"))?;
    Ok(Pty { master: p.master, slave: p.slave, path: path.display().to_string() })
}

/// In the trampoline, before the exec: a session of its own whose
/// controlling terminal is `path` (opened by a session leader that has none).
pub fn take(path: &str) -> Result<(), String> {
    nix::unistd::setsid().map_err(|e| format!("setsid: {e}"))?;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map(drop)
        .map_err(|e| format!("cannot open the terminal {path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_has_the_size_asked_and_a_pts_name() {
        let Ok(p) = open(40, 100) else {
            eprintln!("no pseudo-terminals here (/dev/ptmx); skipped");
            return;
        };
        assert!(p.path.starts_with("/dev/pts/"), "{}", p.path);
        let f = std::fs::File::from(p.slave);
        let out = std::process::Command::new("stty").arg("size").stdin(f).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "40 100");
    }
}
