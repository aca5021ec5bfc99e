//! Job arrays in the Queue pane, through dispatch alone: an array is one
//! row until Enter opens it and Enter folds it again; the filters, the
//! sort, marks and job actions work with arrays' rows as with jobs'.

mod common;

use common::{array_jobs, draw, now, on_arrays};
use spur_console::model::jobs::WHERE_COL;
use spur_console::model::session::Role;
use spur_console::model::state::{Mode, State};
use spur_console::model::table::{Alert, Row};
use spur_console::{Action, Effect, JobOp, JobSet, Msg, PaneId, Rpc, WriteOp, dispatch};
use std::sync::Arc;
use tui_input::InputRequest;

fn rows(state: &State) -> Vec<Row> {
    state.table(PaneId::Queue).unwrap().rows.into_iter().collect()
}

fn keys(state: &State) -> Vec<String> {
    rows(state).into_iter().map(|r| r.key).collect()
}

fn row(state: &State, key: &str) -> Row {
    rows(state).into_iter().find(|r| r.key == key).unwrap_or_else(|| panic!("no row {key}"))
}

fn select(state: &mut State, key: &str) {
    let at = keys(state).iter().position(|k| k == key).unwrap_or_else(|| panic!("{key} is not shown"));
    dispatch(state, Action::Top);
    for _ in 0..at {
        dispatch(state, Action::Down);
    }
}

fn filter(state: &mut State, text: &str) {
    dispatch(state, Action::FilterMode);
    dispatch(state, Action::Input(InputRequest::DeleteLine));
    for c in text.chars() {
        dispatch(state, Action::Input(InputRequest::InsertChar(c)));
    }
    dispatch(state, Action::Submit);
}

const JOBS: [&str; 10] = ["101", "102", "103", "104", "105", "106", "107", "108", "109", "110"];
const TASKS: [&str; 5] = ["111", "112", "113", "114", "115"];

#[test]
fn enter_opens_an_array_beneath_its_row_and_folds_it_again() {
    let mut state = on_arrays((80, 24), None);
    assert_eq!(keys(&state), [&JOBS[..], &["111_*"]].concat());
    let array = row(&state, "111_*");
    assert_eq!(array.prefix, "▸ ");
    assert_eq!(array.cells[0], "111_*");
    assert_eq!(array.cells[5], "▶ R", "its most active record's state");
    assert_eq!(array.cells[7], "2", "the nodes its running tasks hold");
    assert_eq!(array.cells[WHERE_COL], "10 tasks: 2 R, 6 PD (Priority), 1 CD, 1 F");
    assert_eq!(array.alert, Some(Alert::JobFailed), "a failed task marks its array");

    select(&mut state, "111_*");
    dispatch(&mut state, Action::Open);
    assert!(matches!(state.mode, Mode::Normal), "{:?}", state.mode);
    assert_eq!(keys(&state), [&JOBS[..], &["111_*"], &TASKS[..]].concat());
    assert_eq!(keys(&state)[state.view().selected], "111_*");
    let glyphs: Vec<String> =
        rows(&state)[10..].iter().map(|r| format!("{}{}", r.prefix, r.cells[0])).collect();
    assert_eq!(glyphs, ["▾ 111_*", "├─111_[4-9]", "├─111_0", "├─111_1", "├─111_2", "└─111_3"]);
    assert_eq!(
        row(&state, "112").cells[WHERE_COL],
        "node03",
        "a task's row is its record's, as squeue shows it"
    );

    dispatch(&mut state, Action::Open);
    assert_eq!(keys(&state), [&JOBS[..], &["111_*"]].concat());
    assert_eq!(row(&state, "111_*").prefix, "▸ ");
}

#[test]
fn enter_on_a_job_or_an_array_s_task_opens_its_detail() {
    let mut state = on_arrays((80, 24), None);
    select(&mut state, "104");
    dispatch(&mut state, Action::Open);
    assert!(matches!(&state.mode, Mode::Detail { key, .. } if key == "104"), "{:?}", state.mode);
    dispatch(&mut state, Action::Back);
    select(&mut state, "111_*");
    dispatch(&mut state, Action::Open);
    select(&mut state, "112");
    dispatch(&mut state, Action::Open);
    assert!(matches!(&state.mode, Mode::Detail { key, .. } if key == "112"), "{:?}", state.mode);
    let screen = draw(&state).backend().to_string();
    assert!(screen.contains("Array") && screen.contains("111_0"), "{screen}");
    // Enter in the detail view does not fold the array behind it.
    dispatch(&mut state, Action::Open);
    dispatch(&mut state, Action::Back);
    assert!(keys(&state).contains(&"112".to_string()));
}

#[test]
fn an_array_counts_the_tasks_the_filters_let_through() {
    let mut state = on_arrays((80, 24), None);
    dispatch(&mut state, Action::JobStates);
    assert_eq!(keys(&state), ["103", "104", "105", "111_*"]);
    assert_eq!(row(&state, "111_*").cells[WHERE_COL], "6 tasks: 6 PD (Priority)");
    assert_eq!(row(&state, "111_*").cells[5], "◷ PD");
    assert_eq!(row(&state, "111_*").alert, None);
    dispatch(&mut state, Action::JobStates);
    assert_eq!(keys(&state), ["101", "102", "110", "111_*"]);
    assert_eq!(row(&state, "111_*").cells[WHERE_COL], "2 tasks: 2 R");
    dispatch(&mut state, Action::JobStates);
    assert_eq!(row(&state, "111_*").cells[WHERE_COL], "2 tasks: 1 CD, 1 F");
    assert_eq!(row(&state, "111_*").cells[5], "✗ F", "once all have ended, a failure shows first");
    dispatch(&mut state, Action::JobStates);

    filter(&mut state, "NonZeroExit");
    assert_eq!(keys(&state), ["107", "111_*"]);
    assert_eq!(row(&state, "111_*").cells[WHERE_COL], "1 task: 1 F");
    select(&mut state, "111_*");
    dispatch(&mut state, Action::Open);
    assert_eq!(keys(&state), ["107", "111_*", "115"], "an open array shows the tasks that match");
    filter(&mut state, "sweep");
    assert_eq!(keys(&state), [&["111_*"], &TASKS[..]].concat());
    dispatch(&mut state, Action::Back);
    assert_eq!(keys(&state).len(), 16, "the array stays open with the filter cleared");
}

#[test]
fn an_array_sorts_where_its_first_task_does_and_its_tasks_follow_the_sort() {
    let mut state = on_arrays((80, 24), None);
    select(&mut state, "111_*");
    dispatch(&mut state, Action::Open);
    dispatch(&mut state, Action::SortReverse);
    assert_eq!(state.view().sort, Some((0, true)));
    let tasks_desc: Vec<&str> = TASKS.iter().rev().copied().collect();
    assert_eq!(keys(&state)[..6], [&["111_*"], &tasks_desc[..]].concat());
    assert_eq!(keys(&state)[state.view().selected], "111_*", "the selection stays on the array");
    // By State: the pending remainder ranks the array among the pending jobs.
    dispatch(&mut state, Action::SortReverse);
    for _ in 0..5 {
        dispatch(&mut state, Action::SortNext);
    }
    assert_eq!(state.view().sort, Some((5, false)));
    assert_eq!(keys(&state)[..6], ["103", "104", "105", "111_*", "111", "112"]);
}

#[test]
fn an_array_s_row_acts_for_all_its_records() {
    let mut state = on_arrays((80, 24), Some(Role::Operator));
    select(&mut state, "111_*");
    dispatch(&mut state, Action::JobAction(JobOp::Cancel));
    let Mode::Confirm(c) = &state.mode else { panic!("no dialog: {:?}", state.message) };
    let want =
        WriteOp::UpdateJobs { op: JobOp::Cancel, ids: vec![111, 112, 113], owners: vec!["alice".into()] };
    assert_eq!(c.op, want);
    let note = state.message.as_ref().map(|m| m.text.as_str());
    assert_eq!(note, Some("skipping 114 already ended, 115 already ended"));
    dispatch(&mut state, Action::Back);
    // Marked together with one of its own tasks, each record is named once.
    dispatch(&mut state, Action::ToggleMark);
    select(&mut state, "111_*");
    dispatch(&mut state, Action::Open);
    select(&mut state, "112");
    dispatch(&mut state, Action::ToggleMark);
    dispatch(&mut state, Action::JobAction(JobOp::Hold));
    let Mode::Confirm(c) = &state.mode else { panic!("no dialog: {:?}", state.message) };
    assert!(matches!(&c.op, WriteOp::UpdateJobs { ids, .. } if ids == &[111]), "{:?}", c.op);
    dispatch(&mut state, Action::Back);
    // w on the array explains the array's own record.
    select(&mut state, "111_*");
    let effects = dispatch(&mut state, Action::Explain);
    assert!(effects.contains(&Effect::Rpc(Rpc::Explain(111))), "{effects:?}");
}

#[test]
fn marks_on_tasks_survive_folding_and_re_reads() {
    let mut state = on_arrays((80, 24), None);
    select(&mut state, "111_*");
    dispatch(&mut state, Action::ToggleMark);
    select(&mut state, "111_*");
    dispatch(&mut state, Action::Open);
    select(&mut state, "113");
    dispatch(&mut state, Action::ToggleMark);
    select(&mut state, "111_*");
    dispatch(&mut state, Action::Open);
    let marks = |s: &State| s.view().marks.iter().cloned().collect::<Vec<_>>();
    assert_eq!(marks(&state), ["111_*", "113"]);
    let reread =
        |s: &mut State, jobs| dispatch(s, Action::Net(Msg::Jobs(Arc::new(JobSet::from_pb(jobs, now())))));
    reread(&mut state, array_jobs());
    assert_eq!(marks(&state), ["111_*", "113"], "a folded array's records are still there");
    assert_eq!(keys(&state)[state.view().selected], "111_*");
    reread(&mut state, array_jobs().into_iter().filter(|j| j.id != 113).collect());
    assert_eq!(marks(&state), ["111_*"]);
    reread(&mut state, common::jobs());
    assert!(marks(&state).is_empty(), "the array is gone");
}

#[test]
fn the_hint_line_says_what_enter_does_to_an_array() {
    let mut state = on_arrays((80, 24), Some(Role::Operator));
    let hints = |s: &State| draw(s).backend().to_string().lines().nth(22).unwrap_or_default().to_string();
    assert!(!hints(&state).contains("enter"), "{}", hints(&state));
    select(&mut state, "111_*");
    assert!(hints(&state).contains("space mark  enter expand  C cancel"), "{}", hints(&state));
    dispatch(&mut state, Action::Open);
    assert!(hints(&state).contains("enter fold"), "{}", hints(&state));
}

#[test]
fn arrays_folded_and_open() {
    for size in [(80, 24), (120, 40)] {
        let mut state = on_arrays(size, Some(Role::Operator));
        select(&mut state, "111_*");
        let name = format!("arrays_folded_{}x{}", size.0, size.1);
        insta::assert_snapshot!(name, draw(&state).backend());
        dispatch(&mut state, Action::Open);
        dispatch(&mut state, Action::Down);
        dispatch(&mut state, Action::ToggleMark);
        let name = format!("arrays_open_{}x{}", size.0, size.1);
        insta::assert_snapshot!(name, draw(&state).backend());
    }
}
