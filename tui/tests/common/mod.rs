//! Fixed fake data and helpers shared by the console's tests.
// Each test binary uses part of this; the proto may grow fields, which keep their defaults.
#![allow(dead_code, clippy::needless_update)]

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use spur_client::conn::Identity;
use spur_console::model::state::ThemeName;
use spur_console::model::state::{Settings, State};
use spur_console::{Action, Msg, Snapshot, dispatch, render};
use spur_proto::v1::{Account, Association, Qos, User};

pub mod shares;

#[path = "../fake/provisioners.rs"]
mod fake_provisioners;
pub use fake_provisioners::sample as provisioners;

fn qos(name: &str, priority: i64) -> Qos {
    Qos { name: name.into(), priority, preempt_mode: "off".into(), usage_factor: 1.0, ..Default::default() }
}

pub fn snapshot() -> Snapshot {
    let normal = qos("normal", 0);
    let high = Qos {
        preempt_mode: "cancel".into(),
        preempt: vec!["low".into(), "scavenger".into()],
        max_jobs_per_user: Some(8),
        max_wall_minutes: Some(1440),
        max_tres_per_job: "cpu=64,node=2".into(),
        grp_tres: "gres/gpu=8".into(),
        usage_factor: 1.5,
        ..qos("highprio", 100)
    };
    let low = Qos {
        preempt_mode: "requeue".into(),
        max_submit_jobs_per_user: Some(0),
        grp_wall_minutes: Some(600),
        max_wall_minutes: Some(120),
        max_tres_per_user: "cpu=32".into(),
        flags: vec!["DenyOnLimit".into()],
        usage_factor: 0.5,
        ..qos("low", 10)
    };
    let scavenger = Qos { preempt_mode: "requeue".into(), usage_factor: 0.0, ..qos("scavenger", -5000) };
    let account = |name: &str, parent: &str, share: f64, grp: &str| Account {
        name: name.into(),
        parent: parent.into(),
        fairshare: share,
        grp_tres: grp.into(),
        ..Default::default()
    };
    let accounts = vec![
        account("root", "", 1.0, ""),
        account("research", "root", 100.0, ""),
        account("ml", "research", 50.0, "gres/gpu=16"),
        account("physics", "", 30.0, "cpu=256"),
    ];
    let assoc = |user: &str, account: &str| Association {
        user: user.into(),
        account: account.into(),
        ..Default::default()
    };
    let users = vec![
        User {
            name: "alice".into(),
            admin_level: "None".into(),
            default_account: "ml".into(),
            associations: vec![Association {
                qos: vec!["highprio".into(), "normal".into()],
                default_qos: "highprio".into(),
                ..assoc("alice", "ml")
            }],
            ..Default::default()
        },
        User {
            name: "carol".into(),
            admin_level: "None".into(),
            default_account: "ml".into(),
            associations: vec![Association {
                max_jobs: Some(4),
                max_submit_jobs: Some(8),
                max_wall_minutes: Some(1440),
                grp_tres: "cpu=64".into(),
                ..assoc("carol", "ml")
            }],
            ..Default::default()
        },
        User {
            name: "bob".into(),
            admin_level: "Administrator".into(),
            default_account: "research".into(),
            associations: vec![assoc("bob", "research"), assoc("bob", "physics")],
            ..Default::default()
        },
    ];
    Snapshot { cluster: String::new(), qos: vec![normal, high, low, scavenger], accounts, users }
}

pub fn settings(read_only: bool) -> Settings {
    let mut s = Settings::new("http://localhost:6817");
    s.identity = Identity::asserted("alice", Some(1000));
    s.read_only = read_only;
    s.theme = ThemeName::Mono;
    s.clock = spur_console::model::state::Clock::Fixed(now());
    s
}

/// The fixed "now" of every test: run times are read against it.
pub fn now() -> i64 {
    local_ms("2026-03-01T10:00:00")
}

/// A connected console with the fixture loaded.
pub fn loaded(read_only: bool, size: (u16, u16)) -> State {
    let mut state = State::new(settings(read_only), size);
    dispatch(&mut state, Action::Net(Msg::Connected));
    dispatch(&mut state, Action::Net(Msg::Loaded(snapshot())));
    // The console opens on the Queue; most tests are about the accounting panes.
    dispatch(&mut state, Action::GoPane(spur_console::PaneId::Qos));
    state
}

pub fn draw(state: &State) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(state.size.0, state.size.1)).unwrap();
    term.draw(|f| render(state, f)).unwrap();
    term
}

/// Epoch ms of a local wall-clock time, so rendered times are the same in every time zone.
pub fn local_ms(time: &str) -> i64 {
    spur_vocab::txn::parse_time(time, chrono::Local::now()).expect("fixture time")
}

pub fn txn(id: i64, actor: &str, action: &str, at: &str, outcome: &str) -> spur_proto::v1::TxnRow {
    let (entity, name) = at.split_once(':').unwrap_or((at, ""));
    spur_proto::v1::TxnRow {
        id,
        time_ms: local_ms("2026-03-01T09:00:00") + id * 1000,
        actor: actor.into(),
        actor_uid: Some(1000 + id),
        verified: outcome != "denied",
        peer: format!("10.0.0.{id}:5{id:04}"),
        action: action.into(),
        entity: entity.into(),
        name: name.into(),
        outcome: outcome.into(),
        info: format!(r#"{{"params":{{"name":"{name}"}},"id":{id}}}"#),
        source: "api".into(),
        ..Default::default()
    }
}

/// Fixed txn rows: successes, one denied attempt, one error.
pub fn txn_rows() -> Vec<spur_proto::v1::TxnRow> {
    vec![
        txn(1, "alice", "create", "qos:normal", "success"),
        txn(2, "bob", "delete", "account:physics", "denied"),
        txn(3, "alice", "update", "qos:highprio", "success"),
        txn(4, "carol", "create", "user:carol", "error"),
        txn(5, "root", "update", "qos:scavenger", "success"),
    ]
}

pub fn session(role: spur_console::model::session::Role) -> spur_console::model::session::Session {
    spur_console::model::session::Session {
        user: "alice".into(),
        role,
        verified: true,
        cluster: "demo".into(),
        auth_mode: "permissive".into(),
    }
}

/// A console on the Audit pane with [`txn_rows`] loaded by its first subscription.
pub fn on_audit(size: (u16, u16)) -> State {
    let mut state = loaded(false, size);
    dispatch(&mut state, Action::GoPane(spur_console::PaneId::Audit));
    let sub = state.audit.sub;
    dispatch(&mut state, Action::Net(Msg::AuditRows { sub, rows: txn_rows(), lagged: None }));
    state
}

fn node(name: &str, base: &str, cpus: (u32, u32), partitions: &[&str]) -> spur_proto::v1::Node {
    spur_proto::v1::Node {
        name: name.into(),
        base_state: base.into(),
        alloc_cpus: cpus.0,
        cpus: cpus.1,
        memory_mb: 65536,
        alloc_memory_mb: u64::from(cpus.0) * 4096,
        partitions: partitions.iter().map(|p| p.to_string()).collect(),
        running_jobs: u32::from(cpus.0 > 0),
        agent_host: "rack1".into(),
        last_heartbeat_ms: local_ms("2026-03-01T09:30:00"),
        ..Default::default()
    }
}

fn with_reason(mut n: spur_proto::v1::Node, reason: &str, user: &str, at: &str) -> spur_proto::v1::Node {
    n.reason = reason.into();
    n.reason_user = user.into();
    n.reason_uid = Some(0);
    n.reason_time_ms = local_ms(at);
    n
}

/// Nodes in every state an on-call scans for: idle, draining (jobs still
/// run), drained, down and not responding, allocated, and a GPU node; in
/// [`provisioners`]' pools (node04's facts broke cpu-nodes' condition).
pub fn nodes() -> Vec<spur_proto::v1::Node> {
    let mut all = bare_nodes();
    for n in &mut all {
        n.definitions = match n.name.as_str() {
            "node04" => vec![],
            "gpu01" => vec!["gpu-nodes".into(), "cpu-nodes".into()],
            _ => vec!["cpu-nodes".into()],
        };
    }
    all
}

fn bare_nodes() -> Vec<spur_proto::v1::Node> {
    let batch = &["batch"];
    let mut draining = node("node02", "MIXED", (4, 16), batch);
    draining.drain = true;
    let mut drained = node("node03", "IDLE", (0, 16), batch);
    drained.drain = true;
    let mut down = node("node04", "DOWN", (0, 16), batch);
    down.not_responding = true;
    let mut gpu = node("gpu01", "MIXED", (8, 64), &["gpu", "batch"]);
    gpu.memory_mb = 512 * 1024;
    gpu.gres = "gpu:8".into();
    gpu.gres_used = "gpu:2".into();
    vec![
        node("node01", "IDLE", (0, 16), batch),
        with_reason(draining, "bad DIMM", "root", "2026-03-01T08:15:00"),
        with_reason(drained, "kernel upgrade", "alice", "2026-03-01T07:00:00"),
        with_reason(down, "Not responding", "spur", "2026-03-01T09:00:00"),
        node("node05", "ALLOCATED", (16, 16), batch),
        gpu,
    ]
}

/// A console on the Nodes pane with [`nodes`] from the watch's snapshot, as `role`.
pub fn on_nodes(size: (u16, u16), role: spur_console::model::session::Role) -> State {
    let mut state = loaded(false, size);
    let update = spur_console::ClusterUpdate { snapshot: true, nodes: nodes(), ..Default::default() };
    dispatch(&mut state, Action::Net(Msg::Cluster(update)));
    dispatch(&mut state, Action::Net(Msg::Session(session(role))));
    dispatch(&mut state, Action::GoPane(spur_console::PaneId::Nodes));
    state
}

/// A console on the Provisioners pane with [`nodes`] and [`provisioners`] read.
pub fn on_provisioners(size: (u16, u16)) -> State {
    let mut state = on_nodes(size, spur_console::model::session::Role::Operator);
    dispatch(&mut state, Action::Net(Msg::Provisioners(provisioners())));
    dispatch(&mut state, Action::GoPane(spur_console::PaneId::Provisioners));
    state
}

/// Type text into whatever prompt is open.
pub fn type_text(state: &mut State, text: &str) {
    for c in text.chars() {
        dispatch(state, Action::Input(tui_input::InputRequest::InsertChar(c)));
    }
}

fn job(id: u64, user: &str, account: &str, qos: &str, partition: &str, state: &str) -> spur_proto::v1::Job {
    spur_proto::v1::Job {
        id,
        name: format!("job{id}"),
        user: user.into(),
        account: account.into(),
        qos: qos.into(),
        partition: partition.into(),
        state: spur_proto::states::state_named(state),
        priority: 1000.0 - id as f64,
        time_limit_minutes: Some(60),
        submit_ms: local_ms("2026-03-01T06:00:00") + id as i64 * 1000,
        num_nodes: 1,
        num_cpus: 4,
        spec: Some(Box::new(spur_proto::v1::JobSpec {
            workdir: "/home/x".into(),
            mem_mb: 4096,
            ..Default::default()
        })),
        ..Default::default()
    }
}

fn ran(mut j: spur_proto::v1::Job, nodes: &[&str], start: &str, end: Option<&str>) -> spur_proto::v1::Job {
    j.nodes = nodes.iter().map(|n| n.to_string()).collect();
    j.num_nodes = nodes.len() as u32;
    j.start_ms = local_ms(start);
    j.end_ms = end.map_or(0, local_ms);
    j
}

fn waiting(mut j: spur_proto::v1::Job, reason: &str, detail: &str) -> spur_proto::v1::Job {
    j.reason = spur_proto::states::reason_named(reason);
    j.reason_detail = detail.into();
    j
}

fn in_reservation(mut j: spur_proto::v1::Job, name: &str) -> spur_proto::v1::Job {
    if let Some(spec) = j.spec.as_mut() {
        spec.reservation = name.into();
    }
    j
}

/// Jobs in every state the Queue pane tells apart: running (one for two
/// days, one on nodes idle-fill lent it), pending for three reasons
/// (priority, a QOS limit, a user hold), completing, completed, failed,
/// cancelled and timed out; 103 asks for reservation ml-day. alice (the
/// console's user) owns 101, 104 and 106.
pub fn jobs() -> Vec<spur_proto::v1::Job> {
    let mut held = waiting(job(105, "dave", "physics", "normal", "batch", "PENDING"), "JobHeldUser", "");
    held.spec.as_mut().unwrap().hold = true;
    let mut failed = ran(
        job(107, "bob", "research", "normal", "batch", "FAILED"),
        &["node05"],
        "2026-03-01T09:00:00",
        Some("2026-03-01T09:00:42"),
    );
    failed.exit_code = 1;
    failed.reason = spur_proto::states::reason_named("NonZeroExitCode");
    let mut timeout = ran(
        job(109, "dave", "physics", "normal", "batch", "TIMEOUT"),
        &["node04"],
        "2026-03-01T07:00:00",
        Some("2026-03-01T08:00:00"),
    );
    timeout.reason = spur_proto::states::reason_named("TimeLimit");
    // Idle-fill lent 101 its nodes: the Queue marks it, the Nodes pane marks gpu01.
    let borrowed = spur_proto::v1::Job {
        borrowed: true,
        ..ran(
            job(101, "alice", "ml", "highprio", "gpu", "RUNNING"),
            &["gpu01", "gpu02"],
            "2026-03-01T09:12:30",
            None,
        )
    };
    vec![
        borrowed,
        ran(
            job(102, "bob", "physics", "normal", "batch", "RUNNING"),
            &["node01", "node02", "node03"],
            "2026-02-27T08:00:00",
            None,
        ),
        in_reservation(
            waiting(
                job(103, "carol", "ml", "", "batch", "PENDING"),
                "Priority",
                "2 jobs of higher priority wait for batch",
            ),
            "ml-day",
        ),
        waiting(
            job(104, "alice", "ml", "gpu", "gpu", "PENDING"),
            "QOSGrpNodeLimit",
            "QOSGrpNodeLimit: QOS gpu is at 2/2 nodes (GrpTRES=node=2); job 104 needs 1 more",
        ),
        held,
        ran(
            job(106, "alice", "ml", "normal", "batch", "COMPLETED"),
            &["node01"],
            "2026-03-01T08:00:00",
            Some("2026-03-01T08:05:07"),
        ),
        failed,
        job(108, "carol", "ml", "normal", "batch", "CANCELLED"),
        timeout,
        ran(
            job(110, "bob", "physics", "burst", "batch", "COMPLETING"),
            &["node02", "node03"],
            "2026-03-01T09:58:00",
            None,
        ),
    ]
}

/// A console on the Queue pane with [`jobs`] loaded, as `role` (None: WhoAmI not answered).
pub fn on_queue(
    read_only: bool,
    size: (u16, u16),
    role: Option<spur_console::model::session::Role>,
) -> State {
    let mut state = loaded(read_only, size);
    if let Some(role) = role {
        dispatch(&mut state, Action::Net(Msg::Session(session(role))));
    }
    let set = spur_console::JobSet::from_pb(jobs(), now());
    dispatch(&mut state, Action::Net(Msg::Jobs(std::sync::Arc::new(set))));
    dispatch(&mut state, Action::GoPane(spur_console::PaneId::Queue));
    state
}

/// [`jobs`] and alice's array 111 of ten tasks: 0 and 1 running (records
/// 112 and 113), 2 completed (114), 3 failed (115), and 4-9 waiting in the
/// array's own record, as the controller splits a task off when it starts.
pub fn array_jobs() -> Vec<spur_proto::v1::Job> {
    let task = |id: u64, t: u32, state: &str| spur_proto::v1::Job {
        name: "sweep".into(),
        array_job_id: 111,
        array_task_id: Some(t),
        ..job(id, "alice", "ml", "normal", "batch", state)
    };
    let at = |h: &str| format!("2026-03-01T{h}");
    let mut failed = ran(task(115, 3, "FAILED"), &["node04"], &at("09:40:00"), Some(&at("09:41:10")));
    failed.exit_code = 1;
    failed.reason = spur_proto::states::reason_named("NonZeroExitCode");
    let rest = spur_proto::v1::Job {
        array_task_id: None,
        array_pending: "4-9".into(),
        ..waiting(task(111, 0, "PENDING"), "Priority", "2 jobs of higher priority wait for batch")
    };
    let mut all = jobs();
    all.extend([
        rest,
        ran(task(112, 0, "RUNNING"), &["node03"], &at("09:50:00"), None),
        ran(task(113, 1, "RUNNING"), &["node04"], &at("09:55:00"), None),
        ran(task(114, 2, "COMPLETED"), &["node03"], &at("09:30:00"), Some(&at("09:49:30"))),
        failed,
    ]);
    all
}

/// [`on_queue`] with [`array_jobs`].
pub fn on_arrays(size: (u16, u16), role: Option<spur_console::model::session::Role>) -> State {
    let mut state = on_queue(false, size, role);
    let set = spur_console::JobSet::from_pb(array_jobs(), now());
    dispatch(&mut state, Action::Net(Msg::Jobs(std::sync::Arc::new(set))));
    state
}

/// A maintenance window in force on node[01-02] and an upcoming reservation for account ml.
pub fn reservations() -> spur_proto::v1::ListReservationsResponse {
    let r = |name: &str, start: &str, end: &str, nodes: &str, state: &str| spur_proto::v1::Reservation {
        name: name.into(),
        start_ms: local_ms(start),
        end_ms: local_ms(end),
        nodes: nodes.into(),
        node_count: 2,
        state: state.into(),
        ..Default::default()
    };
    let maint = spur_proto::v1::Reservation {
        users: "root".into(),
        flags: "MAINT,SPEC_NODES".into(),
        maint: true,
        ..r("maint", "2026-03-01T09:00:00", "2026-03-01T13:00:00", "node[01-02]", "ACTIVE")
    };
    let ml = spur_proto::v1::Reservation {
        accounts: "ml".into(),
        licenses: "matlab:2".into(),
        ..r("ml-day", "2026-03-02T08:00:00", "2026-03-02T18:00:00", "node[05-06]", "INACTIVE")
    };
    spur_proto::v1::ListReservationsResponse { reservations: vec![maint, ml], now_ms: now() }
}

/// The console on the Reservations pane with [`reservations`] pushed.
pub fn on_reservations(size: (u16, u16), role: spur_console::model::session::Role) -> State {
    let mut state = on_nodes(size, role);
    let update = spur_console::ClusterUpdate { reservations: Some(reservations()), ..Default::default() };
    dispatch(&mut state, Action::Net(Msg::Cluster(update)));
    dispatch(&mut state, Action::GoPane(spur_console::PaneId::Reservations));
    state
}
