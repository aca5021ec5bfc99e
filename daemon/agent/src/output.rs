//! spur tail on the node: a job's output file read for the controller
//! (a `ReadOutput` command), its last lines first, then, while the job runs
//! here, what is written to it. The agent runs as root and the path is the
//! job's: the file is opened only if it is a regular file reached without a
//! final symlink (`O_NOFOLLOW`) and owned by the job's user, so a user
//! cannot point it at a file of someone else's. Pieces go one at a time
//! (`ReportOutput`), at most [`MAX_CHUNK`] bytes each: the next is read once
//! the controller has taken the last, so nothing but one piece is in memory.
//!
//! A requeued job's runs share one path, which a run truncates in place (the
//! inode stays) or appends to. Which bytes are whose is never guessed from
//! times: a run's trampoline says which file it opened and how long it was
//! then, before the run's program starts ([`OpenedFile`], kept in the run's
//! record), and a followed read of that run waits for it and reads that file
//! from there; a read of an earlier run ends once the next run is launched
//! here ([`Fence`]), before that run can open the file.

use crate::link::Link;
use crate::runas::OpenedFile;
use spur_proto::v1 as pb;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The largest piece sent, and the most of the file's end the first lines come from.
pub const MAX_CHUNK: usize = 64 << 10;
/// How often a followed file that did not grow is looked at again.
const POLL: Duration = Duration::from_millis(200);
/// An empty piece at least this often, so a tail nobody reads is found out.
pub const KEEPALIVE: Duration = Duration::from_secs(2);
/// How long a followed file that does not exist yet is waited for (the job is starting).
const OPEN_GRACE: Duration = Duration::from_secs(5);

/// Opens `path` for reading if it is a regular file, not a symlink, owned by `owner`.
pub fn open_checked(path: &str, owner: u32) -> std::io::Result<File> {
    let f = File::options()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits() | nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(std::io::Error::other(format!("{path} is not a regular file")));
    }
    if m.uid() != owner {
        return Err(std::io::Error::other(format!(
            "{path} is owned by uid {}, not the job's user (uid {owner})",
            m.uid()
        )));
    }
    Ok(f)
}

/// The end of `buf` holding its last `n` lines (a last line without its newline counts).
pub fn last_lines(buf: &[u8], n: u32) -> &[u8] {
    if n == 0 {
        return &[];
    }
    let body = buf.strip_suffix(b"\n").unwrap_or(buf);
    let mut seen = 0;
    for (i, b) in body.iter().enumerate().rev() {
        if *b == b'\n' {
            seen += 1;
            if seen == n {
                return &buf[i + 1..];
            }
        }
    }
    buf
}

/// Up to [`MAX_CHUNK`] bytes of `f` from `at` (fewer at its end).
fn read_at(f: &File, at: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let want = usize::try_from(len.saturating_sub(at)).unwrap_or(MAX_CHUNK).min(MAX_CHUNK);
    let mut buf = vec![0; want];
    let n = f.read_at(&mut buf, at)?;
    buf.truncate(n);
    Ok(buf)
}

/// What the supervisor of a job's run here recorded of the output files it opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// Not yet: the run is starting (its prologs, its trampoline).
    Pending,
    /// The files as the run opened them, before its program started.
    Files(Vec<OpenedFile>),
    /// The run's supervisor records none (an older spurd): its files are read as they are.
    Unrecorded,
    /// The run ended here before it opened them.
    Never,
    /// No such run here: its launch has not arrived, or it ended and is forgotten.
    Unknown,
}

/// What a read asks of the agent about a job's runs here.
pub trait Runs: Send + Sync + 'static {
    /// Whether run `run` of `job` (any run when empty) runs here now.
    fn runs(&self, job: u64, run: &str) -> bool;
    /// What run `run` of `job` opened, as far as recorded.
    fn opened(&self, job: u64, run: &str) -> Opened;
    /// A fence that another run's launch of `job` here crosses.
    fn fence(&self, job: u64, run: &str) -> Arc<Fence>;
}

/// Crossed once another run of the job is launched here. From then on the
/// file may be that run's (a path truncated in place keeps its inode), so a
/// read of this run ends; a piece read before the fence was checked is sent
/// only if the fence was still up after it was read, so it was read before
/// the next run's supervisor (started after the fence) could open the file.
#[derive(Debug)]
pub struct Fence {
    job: u64,
    run: String,
    crossed: AtomicBool,
}

impl Fence {
    pub fn crossed(&self) -> bool {
        self.crossed.load(Ordering::SeqCst)
    }
}

/// The fences of the reads in progress here: one per read, gone with it.
#[derive(Debug, Clone, Default)]
pub struct Fences(Arc<Mutex<Vec<Weak<Fence>>>>);

impl Fences {
    pub fn watch(&self, job: u64, run: &str) -> Arc<Fence> {
        let fence = Arc::new(Fence { job, run: run.to_string(), crossed: AtomicBool::new(false) });
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|f| f.strong_count() > 0);
        all.push(Arc::downgrade(&fence));
        fence
    }

    /// Run `run` of `job` is launched here (called before its supervisor starts):
    /// every read of another run of the job ends. A read that names no run
    /// (an older controller) follows any run, as before.
    pub fn launched(&self, job: u64, run: &str) {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|f| f.strong_count() > 0);
        for f in all.iter().filter_map(Weak::upgrade) {
            if f.job == job && !f.run.is_empty() && f.run != run {
                f.crossed.store(true, Ordering::SeqCst);
            }
        }
    }
}

/// Where a read starts.
enum Begin {
    /// The run has not opened its file yet (or its launch has not arrived).
    Wait,
    /// The file, and where this run's output in it begins.
    From(File, u64),
    /// Nothing of this run to read (a note says why, when it is worth saying).
    End(String),
    Fail(String),
}

/// The file of `r`'s run: for a followed read, the one the run opened (its
/// trampoline recorded which, and where its output begins), never an
/// earlier run's that is still at the path. `grace_over`: the run's launch
/// is no longer waited for.
fn begin(runs: &impl Runs, r: &pb::ReadOutput, fence: &Fence, grace_over: bool) -> Begin {
    if fence.crossed() {
        return Begin::End(String::new());
    }
    let mine = match r.follow.then(|| runs.opened(r.job_id, &r.run_id)) {
        Some(Opened::Files(files)) => files.into_iter().find(|f| f.path == r.path),
        Some(Opened::Pending) => return Begin::Wait,
        // A next run's read may come before its launch; a first read's run was
        // here already, or has ended and its record is gone: its file as it is.
        Some(Opened::Unknown) if r.from_start && !grace_over => return Begin::Wait,
        Some(Opened::Never) => {
            return Begin::End(format!("job {}'s run ended before it opened {}", r.job_id, r.path));
        }
        _ => None,
    };
    let owner = r.uid.unwrap_or_else(|| nix::unistd::geteuid().as_raw());
    match open_checked(&r.path, owner) {
        // Another file at the path than the run opened was put there since: all of it is newer.
        Ok(f) => {
            let start = mine.filter(|m| m.is(&f)).map_or(0, |m| m.start);
            Begin::From(f, start)
        }
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                && r.follow
                && (runs.runs(r.job_id, &r.run_id) || !grace_over) =>
        {
            Begin::Wait
        }
        Err(e) => Begin::Fail(match e.kind() {
            std::io::ErrorKind::NotFound => format!("{} does not exist on {}", r.path, r.node),
            _ if e.raw_os_error() == Some(nix::libc::ELOOP) => format!("{} is a symlink", r.path),
            _ => format!("cannot read {}: {e}", r.path),
        }),
    }
}

/// What one look at the file gives.
#[derive(Debug, PartialEq)]
enum Step {
    /// Bytes of this run (and a note to show before them).
    Piece(Vec<u8>, String),
    /// Nothing new; the run goes on.
    Idle,
    /// All of this run's output has been read.
    End,
    Fail(String),
}

/// The next piece of `f` from `*at`. `alive` (asked before the file's
/// length, so what the run wrote before it ended is read before the end):
/// whether the followed run still runs here.
fn step(f: &File, path: &str, at: &mut u64, follow: bool, alive: bool, fence: &Fence) -> Step {
    if fence.crossed() {
        return Step::End;
    }
    let end = f.metadata().map(|m| m.len()).unwrap_or(0);
    if follow && !alive && end < *at {
        return Step::End;
    }
    let mut note = String::new();
    if end < *at {
        note = format!("{path} was truncated; reading it from its start");
        *at = 0;
    }
    if end <= *at && note.is_empty() {
        return if alive { Step::Idle } else { Step::End };
    }
    let buf = match read_at(f, *at, end) {
        Ok(b) => b,
        Err(e) => return Step::Fail(format!("cannot read {path}: {e}")),
    };
    // Asked again after the read: a run launched meanwhile may have written what was read.
    if fence.crossed() {
        return Step::End;
    }
    *at += buf.len() as u64;
    Step::Piece(buf, note)
}

/// Reads the file `r` names and sends it to the controller. Ends at the
/// file's end when not following, or once the job's run has ended here (or
/// another run of it is launched here), or when the controller refuses a
/// piece (nobody reads it any more).
pub async fn read(r: pb::ReadOutput, runs: impl Runs, link: Link) {
    // First of all: a launch from now on ends this read.
    let fence = runs.fence(r.job_id, &r.run_id);
    let report = |data: Vec<u8>, eof: bool, error: String, note: String| pb::OutputReport {
        agent_id: link.agent_id.clone(),
        agent_key: link.agent_key.clone(),
        request_id: r.request_id,
        node: r.node.clone(),
        data,
        eof,
        error,
        note,
    };
    let send = |p: pb::OutputReport| async { link.client.clone().report_output(p).await.is_ok() };
    let since = Instant::now();
    let mut quiet = Instant::now();
    let (f, start) = loop {
        match begin(&runs, &r, &fence, since.elapsed() >= OPEN_GRACE) {
            Begin::From(f, start) => break (f, start),
            Begin::Wait => {
                // The run has not opened its file yet (its prologs run): the controller still hears from us.
                if quiet.elapsed() >= KEEPALIVE {
                    if !send(report(vec![], false, String::new(), String::new())).await {
                        return;
                    }
                    quiet = Instant::now();
                }
                tokio::time::sleep(POLL).await;
            }
            Begin::End(note) => {
                send(report(vec![], true, String::new(), note)).await;
                return;
            }
            Begin::Fail(why) => {
                send(report(vec![], true, why, String::new())).await;
                return;
            }
        }
    };
    let mut at = start;
    if !r.from_start {
        let end = f.metadata().map(|m| m.len()).unwrap_or(0);
        let first = end.saturating_sub(MAX_CHUNK as u64).max(start);
        let buf = read_at(&f, first, end).unwrap_or_default();
        if fence.crossed() {
            send(report(vec![], true, String::new(), String::new())).await;
            return;
        }
        at = first + buf.len() as u64;
        if !send(report(last_lines(&buf, r.lines).to_vec(), false, String::new(), String::new())).await {
            return;
        }
    }
    loop {
        let alive = r.follow && runs.runs(r.job_id, &r.run_id);
        match step(&f, &r.path, &mut at, r.follow, alive, &fence) {
            Step::Piece(buf, note) => {
                if !send(report(buf, false, String::new(), note)).await {
                    return;
                }
                quiet = Instant::now();
            }
            Step::Idle => {
                if quiet.elapsed() >= KEEPALIVE {
                    if !send(report(vec![], false, String::new(), String::new())).await {
                        return;
                    }
                    quiet = Instant::now();
                }
                tokio::time::sleep(POLL).await;
            }
            Step::End => {
                send(report(vec![], true, String::new(), String::new())).await;
                return;
            }
            Step::Fail(why) => {
                send(report(vec![], true, why, String::new())).await;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests;
