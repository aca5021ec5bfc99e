//! The Queue pane through dispatch alone: job actions and their guards,
//! the state and regex filters, and when the jobs are re-read.

mod common;

use common::{draw, jobs, now, on_queue};
use spur_console::model::jobs::StateFilter;
use spur_console::model::session::Role;
use spur_console::model::state::{Choice, Mode, State};
use spur_console::{Action, ClusterUpdate, Effect, JobOp, JobSet, Msg, PaneId, Rpc, WriteOp, dispatch};
use std::sync::Arc;
use tui_input::InputRequest;

const OPS: [JobOp; 4] = [JobOp::Cancel, JobOp::Hold, JobOp::Release, JobOp::Requeue];

fn keys(state: &State) -> Vec<String> {
    state.table(PaneId::Queue).unwrap().rows.into_iter().map(|r| r.key).collect()
}

/// Put the selection on job `id`.
fn select(state: &mut State, id: u64) {
    dispatch(state, Action::Top);
    while keys(state).get(state.view().selected) != Some(&id.to_string()) {
        let before = state.view().selected;
        dispatch(state, Action::Down);
        assert_ne!(before, state.view().selected, "job {id} is not shown");
    }
}

fn writes(effects: &[Effect]) -> Vec<WriteOp> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Rpc(Rpc::Write(op)) => Some(op.clone()),
            _ => None,
        })
        .collect()
}

fn loaded_again(state: &mut State, jobs: Vec<spur_proto::v1::Job>) -> Vec<Effect> {
    dispatch(state, Action::Net(Msg::Jobs(Arc::new(JobSet::from_pb(jobs, now())))))
}

#[test]
fn read_only_blocks_every_job_action_before_any_dialog() {
    for op in OPS {
        let mut state = on_queue(true, (80, 24), Some(Role::Administrator));
        select(&mut state, 104);
        let mut effects = dispatch(&mut state, Action::JobAction(op));
        for follow in [Action::FocusNext, Action::Submit] {
            effects.extend(dispatch(&mut state, follow));
        }
        assert!(writes(&effects).is_empty(), "{op:?} wrote in read-only mode");
        assert!(matches!(state.mode, Mode::Normal), "{op:?} opened {:?}", state.mode);
        let err = state.last_error.clone().unwrap_or_default();
        assert!(err.contains("read-only"), "{op:?}: {err}");
    }
}

#[test]
fn a_user_without_a_role_acts_on_their_own_jobs_only() {
    let mut state = on_queue(false, (80, 24), Some(Role::None));
    select(&mut state, 102); // bob's
    dispatch(&mut state, Action::JobAction(JobOp::Cancel));
    assert!(matches!(state.mode, Mode::Normal), "opened {:?}", state.mode);
    let err = state.last_error.clone().unwrap_or_default();
    assert!(err.contains("cancel jobs refused: job 102 belongs to bob"), "{err}");
    assert!(err.contains("Operator") && err.contains("you are alice, None"), "{err}");
    // A request that names bob's job some other way is refused the same.
    let op = WriteOp::UpdateJobs { op: JobOp::Hold, ids: vec![104, 103], owners: vec![] };
    dispatch(&mut state, Action::Request(op));
    assert!(matches!(state.mode, Mode::Normal));
    assert!(state.last_error.clone().unwrap_or_default().contains("job 103 belongs to carol"));
    // alice's own job opens the dialog.
    select(&mut state, 101);
    dispatch(&mut state, Action::JobAction(JobOp::Cancel));
    assert!(matches!(state.mode, Mode::Confirm(_)), "{:?}", state.message);
    // An Operator may act on anyone's.
    let mut state = on_queue(false, (80, 24), Some(Role::Operator));
    select(&mut state, 102);
    dispatch(&mut state, Action::JobAction(JobOp::Requeue));
    assert!(matches!(state.mode, Mode::Confirm(_)), "{:?}", state.message);
}

#[test]
fn confirmation_names_the_jobs_and_starts_on_cancel() {
    let mut state = on_queue(false, (80, 24), Some(Role::None));
    select(&mut state, 101);
    dispatch(&mut state, Action::ToggleMark);
    select(&mut state, 104);
    dispatch(&mut state, Action::ToggleMark);
    assert!(dispatch(&mut state, Action::JobAction(JobOp::Cancel)).is_empty());
    let Mode::Confirm(c) = &state.mode else { panic!("no dialog: {:?}", state.message) };
    assert_eq!(c.focus, Choice::Cancel);
    let (title, body) = c.op.describe();
    assert_eq!(title, "Cancel 2 jobs?");
    assert_eq!(body[0], "Jobs:   101,104");
    assert_eq!(body[3], "= scancel 101 104");
    let screen = draw(&state).backend().to_string();
    assert!(screen.contains("101,104") && screen.contains("[ Cancel ]"), "{screen}");
    // Enter on the default focus backs out; the marks stay.
    assert!(writes(&dispatch(&mut state, Action::Submit)).is_empty());
    assert!(matches!(state.mode, Mode::Normal));
    assert_eq!(state.view().marks.len(), 2);
    // Confirming sends exactly this write; its answer re-reads the jobs.
    dispatch(&mut state, Action::JobAction(JobOp::Cancel));
    dispatch(&mut state, Action::FocusNext);
    let effects = dispatch(&mut state, Action::Submit);
    let want = WriteOp::UpdateJobs { op: JobOp::Cancel, ids: vec![101, 104], owners: vec!["alice".into()] };
    assert_eq!(writes(&effects), [want]);
    assert!(state.view().marks.is_empty());
    let effects = dispatch(&mut state, Action::Net(Msg::WriteDone { summary: "cancelled 101,104".into() }));
    assert!(effects.contains(&Effect::Rpc(Rpc::FetchJobs)), "{effects:?}");
}

#[test]
fn actions_leave_out_jobs_they_do_not_apply_to() {
    let mut state = on_queue(false, (80, 24), Some(Role::Operator));
    for id in [101, 103, 105] {
        select(&mut state, id);
        dispatch(&mut state, Action::ToggleMark);
    }
    dispatch(&mut state, Action::JobAction(JobOp::Hold));
    let Mode::Confirm(c) = &state.mode else { panic!("no dialog: {:?}", state.message) };
    assert!(matches!(&c.op, WriteOp::UpdateJobs { ids, .. } if ids == &[103, 105]), "{:?}", c.op);
    assert_eq!(state.message.as_ref().map(|m| m.text.as_str()), Some("skipping 101 not pending"));
    dispatch(&mut state, Action::Back);
    dispatch(&mut state, Action::JobAction(JobOp::Release));
    let Mode::Confirm(c) = &state.mode else { panic!("no dialog: {:?}", state.message) };
    assert!(matches!(&c.op, WriteOp::UpdateJobs { ids, .. } if ids == &[105]), "{:?}", c.op);
    dispatch(&mut state, Action::Back);
    dispatch(&mut state, Action::Back); // clears the marks
    select(&mut state, 106);
    dispatch(&mut state, Action::JobAction(JobOp::Cancel));
    assert!(matches!(state.mode, Mode::Normal));
    assert_eq!(state.last_error.as_deref(), Some("cancel jobs: nothing to do: 106 already ended"));
    // D does not delete jobs, and says which key cancels.
    dispatch(&mut state, Action::Delete);
    assert_eq!(state.last_error.as_deref(), Some("jobs are cancelled, not deleted: press C"));
}

#[test]
fn t_cycles_the_state_filter_and_slash_matches_row_text() {
    let mut state = on_queue(false, (80, 24), None);
    assert_eq!(keys(&state).len(), 10);
    dispatch(&mut state, Action::JobStates);
    assert_eq!(state.view().job_states, StateFilter::Pending);
    assert_eq!(keys(&state), ["103", "104", "105"]);
    dispatch(&mut state, Action::JobStates);
    assert_eq!(keys(&state), ["101", "102", "110"]);
    dispatch(&mut state, Action::JobStates);
    assert_eq!(keys(&state), ["106", "107", "108", "109"]);
    dispatch(&mut state, Action::JobStates);
    assert_eq!(keys(&state).len(), 10);
    let filter = |state: &mut State, text: &str| {
        dispatch(state, Action::FilterMode);
        dispatch(state, Action::Input(InputRequest::DeleteLine));
        for c in text.chars() {
            dispatch(state, Action::Input(InputRequest::InsertChar(c)));
        }
        dispatch(state, Action::Submit);
    };
    // User, account, partition, QOS, the reason, the long state name, a loan.
    filter(&mut state, "bob");
    assert_eq!(keys(&state), ["102", "107", "110"]);
    filter(&mut state, "physics");
    assert_eq!(keys(&state), ["102", "105", "109", "110"]);
    filter(&mut state, "highprio|burst");
    assert_eq!(keys(&state), ["101", "110"]);
    filter(&mut state, "QOSGrp");
    assert_eq!(keys(&state), ["104"]);
    // A borrowed run by its word (its Borrowed cell says `yes`, its state `⇄`).
    filter(&mut state, "borrowed");
    assert_eq!(keys(&state), ["101"]);
    filter(&mut state, "!borrowed");
    assert_eq!(keys(&state).len(), 9);
    // A job by the reservation it asks for.
    filter(&mut state, "ml-day");
    assert_eq!(keys(&state), ["103"]);
    filter(&mut state, "pending");
    assert_eq!(keys(&state), ["103", "104", "105"]);
    // Both filters at once; the breadcrumb says which.
    dispatch(&mut state, Action::JobStates);
    dispatch(&mut state, Action::JobStates);
    assert!(keys(&state).is_empty());
    let screen = draw(&state).backend().to_string();
    assert!(screen.contains("running only › filter pending"), "{screen}");
}

#[test]
fn jobs_are_re_read_on_node_changes_actions_and_r_never_on_a_timer() {
    let mut state = on_queue(false, (80, 24), None);
    let first = ClusterUpdate { snapshot: true, nodes: common::nodes(), ..Default::default() };
    // The first snapshot comes with Connected, which already read the jobs.
    assert!(!dispatch(&mut state, Action::Net(Msg::Cluster(first))).contains(&Effect::Rpc(Rpc::FetchJobs)));
    let change = || ClusterUpdate { nodes: common::nodes()[..1].to_vec(), ..Default::default() };
    assert_eq!(dispatch(&mut state, Action::Net(Msg::Cluster(change()))), [Effect::Rpc(Rpc::FetchJobs)]);
    // While that read is out, more changes wait for one follow-up read.
    assert!(dispatch(&mut state, Action::Net(Msg::Cluster(change()))).is_empty());
    assert!(dispatch(&mut state, Action::Refresh).iter().all(|e| e != &Effect::Rpc(Rpc::FetchJobs)));
    assert_eq!(loaded_again(&mut state, jobs()), [Effect::Rpc(Rpc::FetchJobs)]);
    assert!(loaded_again(&mut state, jobs()).is_empty());
    assert!(dispatch(&mut state, Action::Refresh).contains(&Effect::Rpc(Rpc::FetchJobs)));
    // A controller without the Jobs service is not asked again on this connection.
    let error = "Unimplemented".to_string();
    dispatch(&mut state, Action::Net(Msg::JobsFailed { error, unsupported: true }));
    assert!(dispatch(&mut state, Action::Net(Msg::Cluster(change()))).is_empty());
    assert!(dispatch(&mut state, Action::Net(Msg::Connected)).contains(&Effect::Rpc(Rpc::FetchJobs)));
}

#[test]
fn selection_and_marks_follow_jobs_across_re_reads() {
    let mut state = on_queue(false, (80, 24), None);
    select(&mut state, 104);
    dispatch(&mut state, Action::ToggleMark);
    select(&mut state, 107);
    dispatch(&mut state, Action::ToggleMark);
    select(&mut state, 108);
    // 104 started elsewhere and went; 101 is gone too: the rows shift up.
    let rest: Vec<_> = jobs().into_iter().filter(|j| j.id != 104 && j.id != 101).collect();
    loaded_again(&mut state, rest);
    assert_eq!(keys(&state)[state.view().selected], "108");
    assert_eq!(state.view().marks.iter().cloned().collect::<Vec<_>>(), ["107"]);
    // Sorting by State keeps the selection on the job too.
    for _ in 0..6 {
        dispatch(&mut state, Action::SortNext);
    }
    assert_eq!(state.view().sort, Some((5, false)));
    assert_eq!(keys(&state)[..3], ["103", "105", "102"]);
    assert_eq!(keys(&state)[state.view().selected], "108");
}

fn pushed(seq: u64, jobs: Vec<spur_proto::v1::Job>) -> Action {
    let batch = spur_proto::v1::JobsChanged { jobs, seq, removed: vec![] };
    Action::Net(Msg::Cluster(ClusterUpdate { jobs: vec![batch], ..Default::default() }))
}

#[test]
fn pushed_job_changes_apply_in_place_and_replace_re_reads() {
    let mut state = on_queue(false, (80, 24), None);
    let first = ClusterUpdate { snapshot: true, nodes: common::nodes(), ..Default::default() };
    dispatch(&mut state, Action::Net(Msg::Cluster(first)));
    // The watch's opening (empty) batch: job changes follow, so node changes no longer re-read.
    assert!(dispatch(&mut state, pushed(1, vec![])).is_empty());
    let change = ClusterUpdate { nodes: common::nodes()[..1].to_vec(), ..Default::default() };
    assert!(dispatch(&mut state, Action::Net(Msg::Cluster(change))).is_empty());
    let mut new = jobs()[0].clone();
    new.id = 500;
    new.state = spur_proto::states::state_named("PENDING");
    let mut started = jobs().into_iter().find(|j| j.id == 104).unwrap();
    started.state = spur_proto::states::state_named("RUNNING");
    assert!(dispatch(&mut state, pushed(2, vec![new, started])).is_empty());
    let set = state.queue.jobs.clone().unwrap();
    assert_eq!(set.fetched_ms, state.now_ms(), "a batch is stamped by the console's clock, not the wall's");
    assert_eq!(
        (set.get(500).unwrap().state.as_str(), set.get(104).unwrap().state.as_str()),
        ("PENDING", "RUNNING")
    );
    assert!(keys(&state).contains(&"500".to_string()));

    // During a read, batches wait; those the listing already reflects are dropped.
    assert!(dispatch(&mut state, Action::Refresh).contains(&Effect::Rpc(Rpc::FetchJobs)));
    let mut ended = jobs().into_iter().find(|j| j.id == 104).unwrap();
    ended.state = spur_proto::states::state_named("COMPLETED");
    let mut older = ended.clone();
    older.state = spur_proto::states::state_named("PENDING");
    dispatch(&mut state, pushed(3, vec![older]));
    dispatch(&mut state, pushed(4, vec![ended]));
    assert_eq!(state.queue.jobs.clone().unwrap().get(104).unwrap().state.as_str(), "RUNNING", "held");
    let read = JobSet::from_pb(jobs(), now()).at_seq(3);
    dispatch(&mut state, Action::Net(Msg::Jobs(Arc::new(read))));
    assert_eq!(state.queue.jobs.clone().unwrap().get(104).unwrap().state.as_str(), "COMPLETED");
}
