//! spur tail on the node: a job's output file read for the controller
//! (a `ReadOutput` command), its last lines first, then, while the job runs
//! here, what is written to it. The agent runs as root and the path is the
//! job's: the file is opened only if it is a regular file reached without a
//! final symlink (`O_NOFOLLOW`) and owned by the job's user, so a user
//! cannot point it at a file of someone else's. Pieces go one at a time
//! (`ReportOutput`), at most [`MAX_CHUNK`] bytes each: the next is read once
//! the controller has taken the last, so nothing but one piece is in memory.

use crate::link::Link;
use spur_proto::v1 as pb;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::time::{Duration, Instant, SystemTime};

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

/// Files' times come from the kernel's coarse clock (a tick, up to 10 ms, behind).
const COARSE: Duration = Duration::from_millis(15);

/// Whether `f` was last changed before a run that started at `t`: a new run
/// that truncates (or writes to) its file changes it, so until then it holds
/// an earlier run's.
fn older_than(f: &File, t: SystemTime) -> bool {
    let t = t.checked_sub(COARSE).unwrap_or(SystemTime::UNIX_EPOCH);
    let changed = f
        .metadata()
        .ok()
        .map(|m| SystemTime::UNIX_EPOCH + Duration::new(m.ctime() as u64, m.ctime_nsec() as u32));
    changed.is_some_and(|c| c < t)
}

/// Reads the file `r` names and sends it to the controller; `started` says
/// when the job's run (its id) started here, while it runs. Ends at the file's
/// end when not following or once the job has ended, or when the controller
/// refuses a piece (nobody reads it any more).
pub async fn read(r: pb::ReadOutput, started: impl Fn(u64, &str) -> Option<SystemTime>, link: Link) {
    let running = |job: u64, run: &str| started(job, run).is_some();
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
    let owner = r.uid.unwrap_or_else(|| nix::unistd::geteuid().as_raw());
    let since = Instant::now();
    let mut quiet = Instant::now();
    let f = loop {
        match open_checked(&r.path, owner) {
            Ok(f) => break f,
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && r.follow
                    && (running(r.job_id, &r.run_id) || since.elapsed() < OPEN_GRACE) =>
            {
                // The job has not opened it yet (its prologs run): the controller still hears from us.
                if quiet.elapsed() >= KEEPALIVE {
                    if !send(report(vec![], false, String::new(), String::new())).await {
                        return;
                    }
                    quiet = Instant::now();
                }
                tokio::time::sleep(POLL).await;
            }
            Err(e) => {
                let why = match e.kind() {
                    std::io::ErrorKind::NotFound => format!("{} does not exist on {}", r.path, r.node),
                    _ if e.raw_os_error() == Some(nix::libc::ELOOP) => format!("{} is a symlink", r.path),
                    _ => format!("cannot read {}: {e}", r.path),
                };
                send(report(vec![], true, why, String::new())).await;
                return;
            }
        }
    };
    // A requeued job's next run is read from its start, but the path is the
    // last run's until the new one opens it: reading before that would take
    // the old output for the new and miss the new where it is no longer.
    // (The launch may reach us just after this request: it is waited for too.)
    let earlier = |f: &File| match started(r.job_id, &r.run_id) {
        Some(t) => older_than(f, t),
        None => since.elapsed() < OPEN_GRACE,
    };
    while r.from_start && r.follow && earlier(&f) {
        if quiet.elapsed() >= KEEPALIVE {
            if !send(report(vec![], false, String::new(), String::new())).await {
                return;
            }
            quiet = Instant::now();
        }
        tokio::time::sleep(POLL).await;
    }
    let len = |f: &File| f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut at = 0;
    if !r.from_start {
        let end = len(&f);
        let start = end.saturating_sub(MAX_CHUNK as u64);
        let buf = read_at(&f, start, end).unwrap_or_default();
        at = start + buf.len() as u64;
        let first = last_lines(&buf, r.lines).to_vec();
        if !send(report(first, false, String::new(), String::new())).await {
            return;
        }
    }
    loop {
        // Whether the job runs is asked before the file's length: what it
        // wrote before it ended is read before the end is sent.
        let alive = r.follow && running(r.job_id, &r.run_id);
        // Once this run has ended, a change the job's next run made (here) is
        // that run's output, which its own read shows: this one ends.
        let taken = || started(r.job_id, "").is_some_and(|t| !older_than(&f, t));
        let end = len(&f);
        if r.follow && !alive && (end < at || taken()) {
            send(report(vec![], true, String::new(), String::new())).await;
            return;
        }
        let mut note = String::new();
        if end < at {
            note = format!("{} was truncated; reading it from its start", r.path);
            at = 0;
        }
        if end > at || !note.is_empty() {
            let buf = match read_at(&f, at, end) {
                Ok(b) => b,
                Err(e) => {
                    send(report(vec![], true, format!("cannot read {}: {e}", r.path), String::new())).await;
                    return;
                }
            };
            at += buf.len() as u64;
            if !send(report(buf, false, String::new(), note)).await {
                return;
            }
            quiet = Instant::now();
            continue;
        }
        if !alive {
            send(report(vec![], true, String::new(), String::new())).await;
            return;
        }
        if quiet.elapsed() >= KEEPALIVE {
            if !send(report(vec![], false, String::new(), String::new())).await {
                return;
            }
            quiet = Instant::now();
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_lines_of_a_buffer() {
        assert_eq!(last_lines(b"a\nb\nc\n", 2), b"b\nc\n");
        assert_eq!(last_lines(b"a\nb\nc", 2), b"b\nc", "an unfinished last line counts");
        assert_eq!(last_lines(b"a\nb\n", 10), b"a\nb\n", "fewer lines than asked: all");
        assert_eq!(last_lines(b"a\nb\n", 0), b"");
        assert_eq!(last_lines(b"", 3), b"");
    }

    #[test]
    fn a_file_is_an_earlier_runs_until_changed_after_the_run_started() {
        let path = std::env::temp_dir().join(format!("spur-output-runs-{}", std::process::id()));
        std::fs::write(&path, b"run 0\n").unwrap();
        let f = File::open(&path).unwrap();
        let later = SystemTime::now() + Duration::from_secs(60);
        assert!(older_than(&f, later), "written before the run started");
        assert!(!older_than(&f, SystemTime::UNIX_EPOCH), "an adopted run takes its file as it is");
        let just_now = SystemTime::now();
        std::fs::write(&path, b"run 1\n").unwrap();
        assert!(!older_than(&f, just_now), "truncated by the run: the coarse clock's lag allowed for");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn only_a_regular_file_of_the_owner_is_opened_never_through_a_symlink() {
        let dir = std::env::temp_dir().join(format!("spur-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("out");
        std::fs::write(&file, b"x\n").unwrap();
        let link = dir.join("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let me = nix::unistd::geteuid().as_raw();
        let p = |x: &std::path::Path| x.to_str().unwrap().to_string();
        assert!(open_checked(&p(&file), me).is_ok());
        let e = open_checked(&p(&file), me + 1).unwrap_err().to_string();
        assert!(e.contains("not the job's user"), "{e}");
        assert_eq!(open_checked(&p(&link), me).unwrap_err().raw_os_error(), Some(nix::libc::ELOOP));
        assert!(open_checked(&p(&dir), me).is_err(), "a directory is no output file");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_piece_is_at_most_the_chunk() {
        let dir = std::env::temp_dir().join(format!("spur-output-chunk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("big");
        std::fs::write(&file, vec![b'a'; MAX_CHUNK * 2 + 5]).unwrap();
        let f = File::open(&file).unwrap();
        let len = f.metadata().unwrap().len();
        assert_eq!(read_at(&f, 0, len).unwrap().len(), MAX_CHUNK);
        assert_eq!(read_at(&f, (MAX_CHUNK * 2) as u64, len).unwrap().len(), 5);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
