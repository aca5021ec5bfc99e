//! The reads of a job's output, a requeued job's runs played on a real file.

use super::*;

#[test]
fn the_last_lines_of_a_buffer() {
    assert_eq!(last_lines(b"a\nb\nc\n", 2), b"b\nc\n");
    assert_eq!(last_lines(b"a\nb\nc", 2), b"b\nc", "an unfinished last line counts");
    assert_eq!(last_lines(b"a\nb\n", 10), b"a\nb\n", "fewer lines than asked: all");
    assert_eq!(last_lines(b"a\nb\n", 0), b"");
    assert_eq!(last_lines(b"", 3), b"");
}

/// An agent with one job (7) whose runs the test plays.
#[derive(Default)]
struct Agent {
    /// The run of job 7 running here.
    running: Mutex<String>,
    opened: Mutex<Option<Opened>>,
    fences: Fences,
}

impl Runs for Arc<Agent> {
    fn runs(&self, job: u64, run: &str) -> bool {
        let r = self.running.lock().unwrap();
        job == 7 && !r.is_empty() && (run.is_empty() || *r == run)
    }
    fn opened(&self, _: u64, _: &str) -> Opened {
        self.opened.lock().unwrap().clone().unwrap_or(Opened::Unknown)
    }
    fn fence(&self, job: u64, run: &str) -> Arc<Fence> {
        self.fences.watch(job, run)
    }
}

impl Agent {
    /// The agent launches `run` (a fence for every other run's read); its trampoline has not opened yet.
    fn launch(&self, run: &str) {
        self.fences.launched(7, run);
        *self.running.lock().unwrap() = run.into();
        *self.opened.lock().unwrap() = Some(Opened::Pending);
    }
    /// The run's trampoline opens `path` (as `runas` does) and says which file it opened.
    fn open(&self, path: &std::path::Path, append: bool) -> File {
        let p = path.to_str().unwrap();
        let f = crate::runas::open_output(p, append).unwrap();
        let id = OpenedFile::of(p, &f).unwrap();
        *self.opened.lock().unwrap() = Some(Opened::Files(vec![id]));
        f
    }
}

fn followed(path: &std::path::Path, run: &str) -> pb::ReadOutput {
    pb::ReadOutput {
        job_id: 7,
        path: path.to_str().unwrap().into(),
        follow: true,
        from_start: true,
        run_id: run.into(),
        ..Default::default()
    }
}

/// A read of `r` as far as it goes now: its pieces, and whether it ended.
fn drain(agent: &Arc<Agent>, f: &File, r: &pb::ReadOutput, at: &mut u64, fence: &Fence) -> (String, bool) {
    let mut got = String::new();
    loop {
        let alive = agent.runs(7, &r.run_id);
        match step(f, &r.path, at, true, alive, fence) {
            Step::Piece(b, _) => got.push_str(std::str::from_utf8(&b).unwrap()),
            Step::Idle => return (got, false),
            Step::End => return (got, true),
            Step::Fail(e) => panic!("{e}"),
        }
    }
}

#[test]
fn a_next_run_s_read_never_returns_the_last_run_s_bytes() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    for append in [false, true] {
        let path = dir.path().join(format!("out-{append}"));
        let agent = Arc::new(Agent::default());
        agent.launch("a");
        writeln!(agent.open(&path, append), "run 0").unwrap();
        // Run b is launched; run a's last write lands after that (its kill
        // is on its way): the file changed after b started, but b has not opened it.
        agent.launch("b");
        let r = followed(&path, "b");
        let fence = agent.fence(7, "b");
        writeln!(File::options().append(true).open(&path).unwrap(), "run 0 again").unwrap();
        assert!(matches!(begin(&agent, &r, &fence, false), Begin::Wait), "b has not opened its file");
        assert!(matches!(begin(&agent, &r, &fence, true), Begin::Wait), "nor after the launch's grace");
        // b's trampoline truncates the file in place (the same inode) or appends to it.
        let mut b = agent.open(&path, append);
        writeln!(b, "run 1").unwrap();
        let Begin::From(f, mut at) = begin(&agent, &r, &fence, false) else { panic!("b's file") };
        assert_eq!(drain(&agent, &f, &r, &mut at, &fence), ("run 1\n".into(), false), "append {append}");
        writeln!(b, "more").unwrap();
        *agent.running.lock().unwrap() = String::new();
        assert_eq!(drain(&agent, &f, &r, &mut at, &fence), ("more\n".into(), true), "append {append}");
    }
}

#[test]
fn a_last_run_s_read_never_returns_the_next_run_s_bytes() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let agent = Arc::new(Agent::default());
    agent.launch("a");
    let mut a = agent.open(&path, false);
    writeln!(a, "run 0").unwrap();
    let r = followed(&path, "a");
    let fence = agent.fence(7, "a");
    let Begin::From(f, mut at) = begin(&agent, &r, &fence, false) else { panic!("a's file") };
    assert_eq!(drain(&agent, &f, &r, &mut at, &fence), ("run 0\n".into(), false));
    // Run a ends, b runs and ends before a's read looks again: b truncated
    // the file in place and wrote more than a had.
    *agent.running.lock().unwrap() = String::new();
    agent.launch("b");
    writeln!(agent.open(&path, false), "run 1, longer than run 0's").unwrap();
    *agent.running.lock().unwrap() = String::new();
    assert_eq!(drain(&agent, &f, &r, &mut at, &fence), (String::new(), true), "a's read ends at b's launch");
    drop(fence);
    // A launch of the same run (sent twice), or of another job, leaves a read be.
    let fence = agent.fence(7, "b");
    agent.fences.launched(7, "b");
    agent.fences.launched(8, "c");
    assert!(!fence.crossed());
    // A read that names no run (an older controller) follows any run, as before.
    let any = agent.fence(7, "");
    agent.fences.launched(7, "d");
    assert!(fence.crossed() && !any.crossed());
    drop((fence, any));
    agent.fences.launched(7, "e");
    assert!(agent.fences.0.lock().unwrap().is_empty(), "a read's fence goes with it");
}

#[test]
fn a_run_that_ended_before_opening_its_file_has_nothing_to_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    std::fs::write(&path, "run 0\n").unwrap();
    let agent = Arc::new(Agent::default());
    *agent.opened.lock().unwrap() = Some(Opened::Never);
    let r = followed(&path, "b");
    let fence = agent.fence(7, "b");
    let Begin::End(note) = begin(&agent, &r, &fence, false) else { panic!("no read") };
    assert!(note.contains("ended before it opened"), "{note}");
    // A supervisor of an older spurd records nothing: the file is read as it is.
    *agent.opened.lock().unwrap() = Some(Opened::Unrecorded);
    assert!(matches!(begin(&agent, &r, &fence, false), Begin::From(_, 0)));
    // No record of the run: a next run's launch is waited for a while; a
    // first read (of a job that ended and is forgotten here, say) is not.
    *agent.opened.lock().unwrap() = Some(Opened::Unknown);
    assert!(matches!(begin(&agent, &r, &fence, false), Begin::Wait));
    assert!(matches!(begin(&agent, &r, &fence, true), Begin::From(_, 0)));
    let first = pb::ReadOutput { from_start: false, ..r };
    assert!(matches!(begin(&agent, &first, &fence, false), Begin::From(_, 0)));
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
