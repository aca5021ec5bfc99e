//! A job's runs as the agent keeps them: their records, their ends, what they opened.

use super::*;
use crate::runas::OpenedFile;

#[test]
fn a_run_s_files_are_known_once_its_supervisor_records_them_and_an_older_one_s_are_read_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let ex = Executor::new(StateDir::open(&dir.path().join("state")).unwrap(), "/bin/false".into());
    let file = OpenedFile { path: "/o".into(), dev: 1, ino: 2, start: 0 };
    let rec = |run: &str, pgid: i32, records_opened: bool, opened: Option<Vec<OpenedFile>>| RunRecord {
        job_id: 7,
        run_id: run.into(),
        node: "n1".into(),
        stepd_pid: 1,
        stepd_start: 1,
        pgid,
        job_start: 0,
        cgroup: None,
        records_opened,
        opened,
    };
    let put = |r: RunRecord| state::write_atomic(&ex.state.run_path(7), &r).unwrap();
    assert_eq!(ex.opened(7, "b"), Opened::Unknown, "not launched here yet");
    let run = Run { node: "n1".into(), pgid: 0, cgroup: None, run_id: "b".into() };
    ex.lock().insert(7, run);
    put(rec("a", 5, true, Some(vec![file.clone()])));
    assert_eq!(ex.opened(7, "b"), Opened::Pending, "the last run's record is not b's");
    put(rec("b", 6, true, None));
    assert_eq!(ex.opened(7, "b"), Opened::Pending, "b's trampoline has not opened yet");
    put(rec("b", 6, true, Some(vec![file.clone()])));
    assert_eq!(ex.opened(7, "b"), Opened::Files(vec![file.clone()]));
    put(rec("b", 6, false, None));
    assert_eq!(ex.opened(7, "b"), Opened::Unrecorded, "an older spurd's supervisor");
    put(rec("b", 0, true, None));
    ex.lock().clear();
    assert_eq!(ex.opened(7, "b"), Opened::Never, "b ended in its prologs");
    // b's end is taken: what it opened is kept for a read that comes later.
    put(rec("b", 6, true, Some(vec![file.clone()])));
    ex.forget(7, "b");
    assert!(ex.state.runs_of(7).is_none());
    assert_eq!(ex.opened(7, "b"), Opened::Files(vec![file.clone()]));
    assert_eq!(ex.opened(7, "c"), Opened::Unknown);
    // A record of an older spurd loads: it records nothing of the files.
    let old = r#"{"job_id":7,"node":"n1","stepd_pid":1,"stepd_start":1,"pgid":6,"job_start":1}"#;
    std::fs::write(ex.state.run_path(7), old).unwrap();
    assert_eq!(ex.opened(7, ""), Opened::Unrecorded);
}

#[test]
fn the_end_of_a_last_run_taken_after_the_next_run_s_launch_leaves_that_run_s_files() {
    let dir = tempfile::tempdir().unwrap();
    let ex = Executor::new(StateDir::open(&dir.path().join("state")).unwrap(), "/bin/false".into());
    let st = ex.state.clone();
    // Run a ended (its end queued); run b was launched before a's end was taken.
    state::write_atomic(&st.end_path(7), &Ended { run_id: "a".into(), ..Ended::failed(7, "x".into()) })
        .unwrap();
    let launch = LaunchFile::from(&pb::Launch { job_id: 7, run_id: "b".into(), ..Default::default() });
    state::write_atomic(&st.launch_path(7), &launch).unwrap();
    std::fs::write(st.script_path(7, false), "#!/bin/sh\n").unwrap();
    ex.lock().insert(7, Run { node: "n1".into(), pgid: 0, cgroup: None, run_id: "b".into() });
    ex.forget(7, "a");
    assert!(st.ended(7).is_none(), "a's end goes");
    assert!(st.launch_path(7).exists() && st.script_path(7, false).exists(), "b's files stay");
    // b's supervisor has recorded it, and b has ended: a's end taken late still leaves b's.
    let rec = RunRecord {
        job_id: 7,
        run_id: "b".into(),
        node: "n1".into(),
        stepd_pid: 1,
        stepd_start: 1,
        pgid: 6,
        job_start: 1,
        cgroup: None,
        records_opened: true,
        opened: None,
    };
    state::write_atomic(&st.run_path(7), &rec).unwrap();
    ex.lock().clear();
    ex.forget(7, "a");
    assert_eq!(st.runs_of(7), Some(rec));
    ex.forget(7, "b");
    assert!(st.runs_of(7).is_none() && !st.script_path(7, false).exists());
}
