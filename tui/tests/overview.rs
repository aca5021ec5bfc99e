//! The Overview pane: what it adds up from the jobs and nodes (and when:
//! once per change, never per frame), Enter on a pending reason opening the
//! Queue filtered to it, when the scheduler's figures are read, snapshots at
//! 80x24 and 200x50, and no panic at any size.

mod common;

use common::draw;
use spur_console::model::jobs::StateFilter;
use spur_console::model::overview::{AccountUse, NodeCounts, aggregate};
use spur_console::model::session::Role;
use spur_console::model::state::State;
use spur_console::{Action, ClusterUpdate, Effect, JobSet, Msg, PaneId, Rpc, dispatch};
use spur_proto::v1 as pb;
use std::sync::Arc;

const FETCH: Effect = Effect::Rpc(Rpc::FetchDiag);

/// The fixture's jobs and three more waiting for Priority, so reasons have different counts.
fn jobs() -> Vec<pb::Job> {
    let mut all = common::jobs();
    all.extend((200..203).map(|id| pb::Job {
        id,
        user: "carol".into(),
        account: "ml".into(),
        partition: "batch".into(),
        state: spur_proto::states::state_named("PENDING"),
        reason: spur_proto::states::reason_named("Priority"),
        ..Default::default()
    }));
    all
}

fn job_set() -> Arc<JobSet> {
    Arc::new(JobSet::from_pb(jobs(), common::now()))
}

/// sdiag's answer with an hour of samples.
fn diag() -> pb::DiagResponse {
    let rpc = |name: &str, id, count, total_us| pb::RpcStat { name: name.into(), id, count, total_us };
    let t0 = common::now() / 1000 - 3600;
    let history = (0..60)
        .map(|m| pb::DiagSample {
            time: t0 + m * 60,
            last_pass_us: 1_000 + (m as u64 % 7) * 400,
            jobs_started: (m as u64 * 3) % 11,
            bf_backfilled_jobs: (m as u64) % 3,
            rpcs_per_sec: 5.0 + (m % 5) as f64,
            jobs_pending: 6,
            jobs_running: 3,
        })
        .collect();
    pb::DiagResponse {
        jobs_pending: 6,
        jobs_running: 3,
        schedule_cycle_last: 2_400,
        rpcs: vec![
            rpc("Jobs/Submit", 26, 7, 49_000),
            rpc("Jobs/ListJobs", 28, 9, 900),
            rpc("Cluster/Diag", 24, 2, 4_000),
        ],
        history,
        ..Default::default()
    }
}

/// A console with the jobs and nodes, on the Overview with sdiag's figures read.
fn on_overview(size: (u16, u16)) -> State {
    let mut state = common::loaded(false, size);
    dispatch(&mut state, Action::Net(Msg::Session(common::session(Role::Operator))));
    let nodes = ClusterUpdate { snapshot: true, nodes: common::nodes(), ..Default::default() };
    dispatch(&mut state, Action::Net(Msg::Cluster(nodes)));
    dispatch(&mut state, Action::Net(Msg::Jobs(job_set())));
    assert!(dispatch(&mut state, Action::GoPane(PaneId::Overview)).contains(&FETCH));
    dispatch(&mut state, Action::Net(Msg::Diag(Box::new(diag()))));
    state
}

#[test]
fn partitions_reasons_and_accounts_are_added_up_from_the_jobs_and_nodes() {
    let set = job_set();
    let sums = aggregate(Some(&set), Some(&common::nodes()));
    let names: Vec<&str> = sums.partitions.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["batch", "gpu"]);
    let batch = &sums.partitions[0];
    // Down before drain, drain before the allocation state, as sinfo counts.
    assert_eq!(batch.nodes, NodeCounts { idle: 1, alloc: 1, mix: 1, drain: 2, down: 1 });
    assert_eq!((batch.cpus.used, batch.cpus.total), (4 + 16 + 8, 16 * 5 + 64));
    let gpu = &sums.partitions[1];
    assert_eq!((gpu.nodes.mix, gpu.gpus.used, gpu.gpus.total), (1, 2, 8));
    assert!(sums.gpus);
    // The queue's own reasons, most jobs first, ties by name.
    let reasons: Vec<(&str, u64)> = sums.reasons.iter().map(|(r, n)| (&**r, *n)).collect();
    assert_eq!(reasons, [("Priority", 4), ("JobHeldUser", 1), ("QOSGrpNodeLimit", 1)]);
    assert_eq!((sums.pending, sums.running), (6, 3));
    // Running (and completing) jobs' CPUs by account.
    let top: Vec<AccountUse> = sums.accounts.clone();
    assert_eq!((&*top[0].account, top[0].cpus, top[0].jobs), ("physics", 8, 2));
    assert_eq!((&*top[1].account, top[1].cpus, top[1].jobs), ("ml", 4, 1));
    // Nothing read yet: nothing to add.
    assert_eq!(aggregate(None, None).partitions.len(), 0);
}

#[test]
fn sums_are_made_once_per_change_never_per_frame() {
    let mut state = on_overview((80, 24));
    let before = state.overview.sums.clone();
    draw(&state);
    dispatch(&mut state, Action::Down);
    draw(&state);
    assert!(Arc::ptr_eq(&before, &state.overview.sums), "drawing and moving add nothing up");
    // A change while the pane is shown adds up again at once.
    dispatch(&mut state, Action::Net(Msg::Jobs(Arc::new(JobSet::from_pb(common::jobs(), common::now())))));
    assert!(!Arc::ptr_eq(&before, &state.overview.sums));
    assert_eq!(state.overview.sums.reasons[0].1, 1, "the three extra Priority jobs are gone");
    // While another pane is shown a change only marks them; opening the pane adds them up.
    dispatch(&mut state, Action::GoPane(PaneId::Nodes));
    let shown = state.overview.sums.clone();
    dispatch(&mut state, Action::Net(Msg::Jobs(job_set())));
    assert!(Arc::ptr_eq(&shown, &state.overview.sums) && state.overview.stale);
    dispatch(&mut state, Action::GoPane(PaneId::Overview));
    assert_eq!(state.overview.sums.reasons[0].1, 4);
}

#[test]
fn enter_on_a_reason_opens_the_queue_filtered_to_its_pending_jobs() {
    let mut state = on_overview((80, 24));
    let keys = |state: &State| -> Vec<String> {
        state.table(state.pane).unwrap().rows.into_iter().map(|r| r.key).collect()
    };
    assert_eq!(keys(&state), ["Priority", "JobHeldUser", "QOSGrpNodeLimit"]);
    // A click lands among the sections, not on a table's rows: it selects nothing.
    let y = state.rows_area.y + 2;
    dispatch(&mut state, Action::ClickRow(y));
    assert_eq!(state.view().selected, 0);
    dispatch(&mut state, Action::Down);
    dispatch(&mut state, Action::Down);
    dispatch(&mut state, Action::Open);
    assert_eq!(state.pane, PaneId::Queue);
    assert_eq!(state.view().job_states, StateFilter::Pending);
    assert_eq!(state.view().filter.as_ref().map(|f| f.text.as_str()), Some(r"\(QOSGrpNodeLimit\)"));
    assert_eq!(keys(&state), ["104"]);
    // Back on the Overview, Enter on Priority lists its four jobs.
    dispatch(&mut state, Action::GoPane(PaneId::Overview));
    dispatch(&mut state, Action::Top);
    dispatch(&mut state, Action::Open);
    assert_eq!(keys(&state), ["103", "200", "201", "202"]);
    let crumb = draw(&state).backend().to_string();
    assert!(crumb.contains("4 of 13 rows"), "{crumb}");
}

#[test]
fn the_figures_are_read_on_opening_on_changes_while_shown_and_on_r_one_at_a_time() {
    let mut state = on_overview((80, 24));
    // A pass (a batch of job changes) while shown reads them again.
    assert!(dispatch(&mut state, Action::Net(Msg::Jobs(job_set()))).contains(&FETCH));
    // In flight: `r` waits for the answer, which then reads once more.
    assert!(!dispatch(&mut state, Action::Refresh).contains(&FETCH));
    assert_eq!(dispatch(&mut state, Action::Net(Msg::Diag(Box::new(diag())))), [FETCH]);
    assert!(dispatch(&mut state, Action::Net(Msg::Diag(Box::new(diag())))).is_empty());
    // Elsewhere nothing is read for it.
    dispatch(&mut state, Action::GoPane(PaneId::Queue));
    assert!(!dispatch(&mut state, Action::Net(Msg::Jobs(job_set()))).contains(&FETCH));
    // A controller without Cluster.Diag: the section says so, and nothing is asked again.
    assert!(dispatch(&mut state, Action::GoPane(PaneId::Overview)).contains(&FETCH));
    let no = Msg::DiagFailed { error: "Unimplemented".into(), unsupported: true };
    assert!(dispatch(&mut state, Action::Net(no)).is_empty());
    assert!(!dispatch(&mut state, Action::Refresh).contains(&FETCH));
}

#[test]
fn overview_pane() {
    for size in [(80, 24), (200, 50)] {
        let mut state = on_overview(size);
        dispatch(&mut state, Action::Down);
        let name = format!("overview_{}x{}", size.0, size.1);
        insta::assert_snapshot!(name, draw(&state).backend());
    }
}

#[test]
fn the_pane_is_reached_by_its_number_and_name_and_draws_at_any_size() {
    let mut state = on_overview((80, 24));
    dispatch(&mut state, Action::GoPane(PaneId::Queue));
    let key = state.settings.keymap.keys_of(&Action::GoPane(PaneId::Overview));
    assert_eq!(key, "0");
    assert_eq!(PaneId::named("overview"), Some(PaneId::Overview));
    let tabs = draw(&state).backend().to_string();
    assert!(tabs.lines().next().unwrap().contains("0 Over"), "{tabs}");
    dispatch(&mut state, Action::GoPane(PaneId::Overview));
    for size in [(1, 1), (10, 5), (30, 8), (40, 12), (80, 10), (80, 24), (300, 80)] {
        dispatch(&mut state, Action::Resize(size.0, size.1));
        draw(&state);
    }
    // Before anything is read, too.
    let mut bare = State::new(common::settings(false), (80, 24));
    dispatch(&mut bare, Action::GoPane(PaneId::Overview));
    let text = draw(&bare).backend().to_string();
    assert!(text.contains("no nodes yet") && text.contains("reading sdiag"), "{text}");
}

#[test]
fn jobs_charged_to_no_account_are_named_so() {
    let mut state = on_overview((200, 50));
    let mut all = jobs();
    all.push(pb::Job {
        id: 300,
        user: "dana".into(),
        partition: "batch".into(),
        state: spur_proto::states::state_named("RUNNING"),
        num_cpus: 64,
        ..Default::default()
    });
    dispatch(&mut state, Action::Net(Msg::Jobs(Arc::new(JobSet::from_pb(all, common::now())))));
    let screen = draw(&state).backend().to_string();
    let line = screen.lines().find(|l| l.contains("64 CPUs")).unwrap_or_else(|| panic!("{screen}"));
    assert!(line.contains("(none)"), "a cluster without accounting still names the row: {line}");
}
