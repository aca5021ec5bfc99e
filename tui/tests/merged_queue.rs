//! The merged Queue (`:queue all`): every context's jobs with a Cluster
//! column, rows keyed by cluster and job id, each cluster's jobs read on
//! its own connection's connect and when its watch says jobs changed, and
//! a job action sent to the row's own cluster under that cluster's rules.

mod common;

use common::{draw, jobs, now, on_queue, type_text};
use spur_console::model::context::{Context, Contexts};
use spur_console::model::session::Role;
use spur_console::model::state::Mode;
use spur_console::{
    Action, ClusterUpdate, Effect, JobOp, JobSet, Msg, PaneId, Rpc, State, WriteOp, dispatch,
};
use std::sync::Arc;

fn ctx(name: &str, read_only: bool, production: bool) -> Context {
    Context {
        name: name.into(),
        controllers: vec![format!("http://{name}:6817")],
        token: None,
        read_only,
        production,
    }
}

fn command(state: &mut State, line: &str) -> Vec<Effect> {
    dispatch(state, Action::CommandMode);
    type_text(state, line);
    dispatch(state, Action::Submit)
}

fn remote(state: &mut State, ctx: usize, msg: Msg) -> Vec<Effect> {
    dispatch(state, Action::Net(Msg::Remote { ctx, msg: Box::new(msg) }))
}

/// On context `lab` (read-only) of lab and prod (production), the merged
/// Queue open with lab holding jobs 101.. and prod only 101 and 102.
fn merged(size: (u16, u16)) -> State {
    let mut state = on_queue(false, size, Some(Role::Operator));
    state.settings.contexts =
        Contexts { all: vec![ctx("lab", true, false), ctx("prod", false, true)], current: None };
    assert!(state.settings.enter_context(0));
    assert_eq!(command(&mut state, "queue all"), vec![Effect::Merge(true)]);
    for i in [0, 1] {
        assert_eq!(remote(&mut state, i, Msg::Connected), vec![Effect::RpcTo(i, Rpc::FetchJobs)]);
    }
    let lab = JobSet::from_pb(jobs(), now());
    let prod = JobSet::from_pb(jobs().into_iter().filter(|j| j.id <= 102).collect(), now());
    remote(&mut state, 0, Msg::Jobs(Arc::new(lab)));
    remote(&mut state, 1, Msg::Jobs(Arc::new(prod)));
    state
}

fn keys(state: &State) -> Vec<String> {
    state.table(PaneId::Queue).unwrap().rows.into_iter().map(|r| r.key).collect()
}

#[test]
fn every_cluster_s_jobs_in_one_table_keyed_by_cluster() {
    let mut state = merged((120, 40));
    let keys = keys(&state);
    let lab = jobs().len();
    assert_eq!(keys.len(), lab + 2, "{keys:?}");
    assert!(keys.contains(&"lab/101".to_string()) && keys.contains(&"prod/101".to_string()), "{keys:?}");
    let table = state.table(PaneId::Queue).unwrap();
    assert_eq!(table.columns[0].name, "Cluster");
    // Asked again from another pane: back to the same view, its jobs kept, no new connections.
    dispatch(&mut state, Action::GoPane(PaneId::Nodes));
    assert!(command(&mut state, "queue all").is_empty());
    assert_eq!((state.pane, self::keys(&state).len()), (PaneId::Queue, lab + 2));
    // A watch batch of prod's jobs reads them again, one read at a time.
    let changed = ClusterUpdate { jobs: vec![Default::default()], ..Default::default() };
    let effects = remote(&mut state, 1, Msg::Cluster(changed.clone()));
    assert_eq!(effects, vec![Effect::RpcTo(1, Rpc::FetchJobs)]);
    assert!(remote(&mut state, 1, Msg::Cluster(changed)).is_empty(), "a second read while one is under way");
    // An unreachable cluster's jobs go, and the crumb says so.
    remote(
        &mut state,
        1,
        Msg::Reconnecting { attempt: 1, retry_in: Default::default(), error: "gone".into() },
    );
    assert_eq!(self::keys(&state).len(), lab);
    assert!(state.merged.as_ref().unwrap().crumb().contains("prod ✖"));
    // `:queue` is the current context's own queue again.
    assert_eq!(command(&mut state, "queue"), vec![Effect::Merge(false)]);
    assert!(state.merged.is_none());
    assert!(self::keys(&state).iter().all(|k| !k.contains('/')));
}

/// Select the row with key `key`.
fn select(state: &mut State, key: &str) {
    let at = keys(state).iter().position(|k| k == key).unwrap();
    state.views[PaneId::Queue.index()].selected = at;
}

#[test]
fn a_write_goes_to_the_row_s_cluster_under_its_rules() {
    let mut state = merged((120, 40));
    // lab is read-only: refused, naming it, nothing sent.
    select(&mut state, "lab/103");
    assert!(dispatch(&mut state, Action::JobAction(JobOp::Cancel)).is_empty());
    assert!(state.last_error.clone().unwrap().contains("context lab is read-only"), "{:?}", state.last_error);
    assert!(matches!(state.mode, Mode::Normal));

    // prod is production: its name typed, then sent to prod's connection only.
    select(&mut state, "prod/101");
    dispatch(&mut state, Action::JobAction(JobOp::Cancel));
    let Mode::Confirm(c) = &state.mode else { panic!("no confirmation: {:?}", state.mode) };
    assert_eq!((c.on, c.typed.as_ref().map(|t| t.name.as_str())), (Some(1), Some("prod")));
    assert!(dispatch(&mut state, Action::Submit).is_empty());
    type_text(&mut state, "prod");
    let effects = dispatch(&mut state, Action::Submit);
    let want = WriteOp::UpdateJobs { op: JobOp::Cancel, ids: vec![101], owners: vec!["alice".into()] };
    assert_eq!(effects, vec![Effect::RpcTo(1, Rpc::Write(want))]);

    // Jobs of two clusters are not acted on together.
    for key in ["prod/102", "lab/104"] {
        state.views[PaneId::Queue.index()].marks.insert(key.into());
    }
    assert!(dispatch(&mut state, Action::JobAction(JobOp::Hold)).is_empty());
    assert!(state.last_error.clone().unwrap().contains("one cluster at a time"));
    // Keys that read by job id from the current cluster say where they work instead.
    assert!(dispatch(&mut state, Action::Explain).is_empty());
    assert!(state.message.clone().unwrap().text.contains("not in the merged Queue"));
}

#[test]
fn merged_queue_snapshots() {
    for (w, h) in [(80, 24), (200, 50)] {
        let state = merged((w, h));
        insta::assert_snapshot!(format!("merged_queue_{w}x{h}"), draw(&state).backend());
    }
}
