//! The vocabulary of the console: what the operator asks for ([`Action`]),
//! what the app asks the outside world to do ([`Effect`], [`Rpc`]) and what
//! the outside world reports back ([`Msg`]).

use crate::jobs::{JobOp, JobSet};
use crate::pane::PaneId;
use crate::session::{self, Role, Session};
use spur_client::vocab::hostlist;
use spur_client::vocab::keys::Entity;
use spur_proto::v1::{Account, Node, Qos, TxnRow, User};
use std::sync::Arc;
use std::time::Duration;
use tui_input::InputRequest;

/// Everything that can change the state goes through one of these and
/// [`crate::dispatch::dispatch`].
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    // Bound in the keymap (normal, detail and help modes).
    Quit,
    Help,
    CommandMode,
    FilterMode,
    NextPane,
    PrevPane,
    GoPane(PaneId),
    Up,
    Down,
    PageUp,
    PageDown,
    HalfPageUp,
    HalfPageDown,
    Top,
    Bottom,
    SortNext,
    SortReverse,
    ToggleMark,
    Open,
    Back,
    Refresh,
    Edit,
    Delete,
    /// Nodes pane: drain, resume or down the marked (else the selected) nodes.
    NodeAction(NodeOp),
    /// Queue pane: cancel, hold, release or requeue the marked (else the selected) jobs.
    JobAction(JobOp),
    /// Queue pane: the next quick filter by job state (all, pending, running, finished).
    JobStates,
    /// Queue pane: open the Preemption pane on the selected job.
    Explain,
    /// HRES pane: flip DisableLayer of the selected layer, or DisableHRES on a resource's row.
    HresToggle,
    /// Audit pane: hold new rows back / show them again.
    TogglePause,
    /// Audit pane: edit the controller-side txn filter.
    TxnFilterMode,
    // Fixed keys inside prompts, forms and dialogs.
    Input(InputRequest),
    Submit,
    Complete,
    FocusNext,
    FocusPrev,
    // Mouse (opt-in) and terminal.
    ClickRow(u16),
    Scroll(i32),
    Resize(u16, u16),
    /// Ask for a write; dispatch turns it into a confirmation dialog.
    Request(WriteOp),
    /// Something the network task reported.
    Net(Msg),
}

impl Action {
    /// Actions that lead to a write. Dispatch refuses them in read-only mode
    /// and for a role below [`Action::role`].
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            Action::Edit
                | Action::Delete
                | Action::NodeAction(_)
                | Action::JobAction(_)
                | Action::HresToggle
                | Action::Request(_)
        )
    }

    /// The least role a write action needs.
    pub fn role(&self) -> Role {
        match self {
            Action::NodeAction(_) | Action::HresToggle => session::NODE_ROLE,
            Action::JobAction(_) => session::JOB_ROLE,
            Action::Request(op) => op.role(),
            _ => session::WRITE_ROLE,
        }
    }

    /// Short verb for refusals.
    pub fn verb(&self) -> &'static str {
        match self {
            Action::Request(op) => op.verb(),
            Action::NodeAction(op) => op.verb(),
            Action::JobAction(op) => op.verb(),
            Action::Edit => "edit",
            Action::HresToggle => "toggle a layer",
            _ => "delete",
        }
    }
}

/// What an on-call admin does to nodes, as `scontrol update state=` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeOp {
    Drain,
    Resume,
    Down,
}

impl NodeOp {
    /// The `state=` value the controller takes.
    pub fn state(self) -> &'static str {
        match self {
            NodeOp::Drain => "drain",
            NodeOp::Resume => "resume",
            NodeOp::Down => "down",
        }
    }

    /// Drain and down must say why (the controller refuses them otherwise):
    /// the reason is what the next on-call reads in `sinfo -R`.
    pub fn needs_reason(self) -> bool {
        self != NodeOp::Resume
    }

    pub fn title(self) -> &'static str {
        match self {
            NodeOp::Drain => "Drain",
            NodeOp::Resume => "Resume",
            NodeOp::Down => "Down",
        }
    }

    pub fn verb(self) -> &'static str {
        match self {
            NodeOp::Drain => "drain nodes",
            NodeOp::Resume => "resume nodes",
            NodeOp::Down => "down nodes",
        }
    }

    /// What the change does, for the confirmation.
    fn effect(self) -> &'static str {
        match self {
            NodeOp::Drain => "Running jobs finish; no new jobs start there.",
            NodeOp::Resume => "Clears drain/down and the reason; jobs may start there again.",
            NodeOp::Down => "Taken out of service now; no jobs start there until resumed.",
        }
    }
}

/// A change to the controller. Only dispatch's confirm path turns one of
/// these into an [`Rpc::Write`].
#[derive(Debug, Clone, PartialEq)]
pub enum WriteOp {
    DeleteQos {
        names: Vec<String>,
    },
    /// `sacctmgr modify ENTITY where FILTER set SET`, from an edit form;
    /// `diff` is what the confirmation shows.
    Modify {
        entity: Entity,
        filter: Vec<(String, String)>,
        set: Vec<(String, String)>,
        diff: Vec<String>,
    },
    DeleteAccount {
        names: Vec<String>,
    },
    /// (user, account) associations.
    DeleteUser {
        assocs: Vec<(String, String)>,
    },
    /// `scontrol update nodename=... state=... reason=...`; `reason` is empty for resume.
    UpdateNodes {
        nodes: Vec<String>,
        op: NodeOp,
        reason: String,
    },
    /// `scancel` / `scontrol hold|release|requeue`; `owners` are the jobs'
    /// users, named in the confirmation.
    UpdateJobs {
        op: JobOp,
        ids: Vec<u64>,
        owners: Vec<String>,
    },
    /// `scontrol update HRESName=R LayerName=L DisableLayer=..`, or `DisableHRES=` when `layer` is empty.
    UpdateHres {
        resource: String,
        layer: String,
        disable: bool,
    },
}

impl WriteOp {
    /// One value of every variant, so tests can prove every write is guarded.
    pub fn examples() -> Vec<WriteOp> {
        let mut all = vec![
            WriteOp::DeleteQos { names: vec!["low".into()] },
            WriteOp::Modify {
                entity: Entity::Qos,
                filter: vec![("name".into(), "low".into())],
                set: vec![("priority".into(), "5".into())],
                diff: vec!["priority: 1 → 5".into()],
            },
            WriteOp::Modify {
                entity: Entity::Account,
                filter: vec![("name".into(), "ml".into())],
                set: vec![("fairshare".into(), "60".into())],
                diff: vec!["fairshare: 50 → 60".into()],
            },
            WriteOp::Modify {
                entity: Entity::User,
                filter: vec![("name".into(), "alice".into()), ("account".into(), "ml".into())],
                set: vec![("defaultqos".into(), "normal".into())],
                diff: vec!["defaultqos: highprio → normal".into()],
            },
            WriteOp::DeleteAccount { names: vec!["ml".into()] },
            WriteOp::DeleteUser { assocs: vec![("alice".into(), "ml".into())] },
            WriteOp::UpdateNodes { nodes: vec!["node01".into()], op: NodeOp::Drain, reason: "fan".into() },
            WriteOp::UpdateNodes { nodes: vec!["node01".into()], op: NodeOp::Resume, reason: String::new() },
            WriteOp::UpdateNodes { nodes: vec!["node01".into()], op: NodeOp::Down, reason: "psu".into() },
        ];
        for op in [JobOp::Cancel, JobOp::Hold, JobOp::Release, JobOp::Requeue] {
            all.push(WriteOp::UpdateJobs { op, ids: vec![12, 13], owners: vec!["alice".into()] });
        }
        all.push(WriteOp::UpdateHres { resource: "power".into(), layer: "rack1".into(), disable: true });
        all.push(WriteOp::UpdateHres { resource: "power".into(), layer: String::new(), disable: false });
        for op in &all {
            // Exhaustive on purpose: a new variant fails to compile until it is listed above.
            match op {
                WriteOp::DeleteQos { .. }
                | WriteOp::Modify { .. }
                | WriteOp::DeleteAccount { .. }
                | WriteOp::DeleteUser { .. }
                | WriteOp::UpdateNodes { .. }
                | WriteOp::UpdateJobs { .. }
                | WriteOp::UpdateHres { .. } => {}
            }
        }
        all
    }

    /// Short verb for the status line and the read-only refusal.
    pub fn verb(&self) -> &'static str {
        match self {
            WriteOp::DeleteQos { .. } => "delete QOS",
            WriteOp::Modify { entity: Entity::Qos, .. } => "modify QOS",
            WriteOp::Modify { entity: Entity::Account, .. } => "modify account",
            WriteOp::Modify { entity: Entity::User, .. } => "modify user",
            WriteOp::DeleteAccount { .. } => "delete account",
            WriteOp::DeleteUser { .. } => "delete user association",
            WriteOp::UpdateNodes { op, .. } => op.verb(),
            WriteOp::UpdateJobs { op, .. } => op.verb(),
            WriteOp::UpdateHres { .. } => "update HRES",
        }
    }

    /// The least role the controller accepts for this write.
    pub fn role(&self) -> Role {
        match self {
            WriteOp::UpdateNodes { .. } | WriteOp::UpdateHres { .. } => session::NODE_ROLE,
            // Whose jobs they are is checked per job (`queue::refusal`).
            WriteOp::UpdateJobs { .. } => session::JOB_ROLE,
            _ => session::WRITE_ROLE,
        }
    }

    /// Whether the operation destroys records (a detail view of them closes).
    pub fn destructive(&self) -> bool {
        matches!(self, WriteOp::DeleteQos { .. } | WriteOp::DeleteAccount { .. } | WriteOp::DeleteUser { .. })
    }

    /// Whether the marks were the operation's targets, so they are spent once it is sent.
    pub fn consumes_marks(&self) -> bool {
        self.destructive() || matches!(self, WriteOp::UpdateNodes { .. } | WriteOp::UpdateJobs { .. })
    }

    /// The confirm button's label: it says what pressing it does.
    pub fn button(&self) -> &'static str {
        match self {
            WriteOp::Modify { .. } => "Apply",
            WriteOp::UpdateNodes { op, .. } => op.title(),
            WriteOp::UpdateJobs { op, .. } => op.button(),
            WriteOp::UpdateHres { disable: true, .. } => "Disable",
            WriteOp::UpdateHres { disable: false, .. } => "Enable",
            _ => "Delete",
        }
    }

    /// Title and body of the confirmation dialog.
    pub fn describe(&self) -> (String, Vec<String>) {
        match self {
            WriteOp::DeleteQos { names } => (
                format!("Delete {} QOS?", names.len()),
                names.iter().map(|n| format!("sacctmgr delete qos name={n}")).collect(),
            ),
            WriteOp::Modify { entity, filter, diff, .. } => {
                (format!("Modify {}?", subject(*entity, filter)), diff.clone())
            }
            WriteOp::DeleteAccount { names } => (
                format!("Delete {} account(s)?", names.len()),
                names.iter().map(|n| format!("sacctmgr delete account name={n}")).collect(),
            ),
            WriteOp::DeleteUser { assocs } => (
                format!("Delete {} association(s)?", assocs.len()),
                assocs.iter().map(|(u, a)| format!("sacctmgr delete user name={u} account={a}")).collect(),
            ),
            WriteOp::UpdateNodes { nodes, op, reason } => {
                let list = hostlist::compress(nodes);
                let what = match nodes.as_slice() {
                    [one] => one.clone(),
                    many => format!("{} nodes", many.len()),
                };
                let mut body = vec![format!("Nodes:  {list}")];
                let mut cmd = format!("scontrol update nodename={list} state={}", op.state());
                if op.needs_reason() {
                    body.push(format!("Reason: {reason}"));
                    cmd.push_str(&format!(" reason=\"{reason}\""));
                }
                body.extend([op.effect().to_string(), format!("= {cmd}")]);
                (format!("{} {what}?", op.title()), body)
            }
            WriteOp::UpdateJobs { op, ids, owners } => crate::queue::describe(*op, ids, owners),
            WriteOp::UpdateHres { resource, layer, disable } => {
                crate::hres::describe(resource, layer, *disable)
            }
        }
    }
}

/// How a modify names its record to people: "QOS highprio", "account ml",
/// "user alice in ml/gpu". Shared by the form, the dialog and the status line.
pub fn subject(entity: Entity, filter: &[(String, String)]) -> String {
    let get = |k: &str| filter.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    let name = get("name").unwrap_or_default();
    let mut s = match entity {
        Entity::Qos => format!("QOS {name}"),
        Entity::Account | Entity::User => format!("{} {name}", entity.as_str()),
    };
    if let Some(account) = get("account") {
        s.push_str(&format!(" in {account}"));
    }
    if let Some(partition) = get("partition") {
        s.push_str(&format!("/{partition}"));
    }
    s
}

/// What dispatch asks the app loop to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Quit,
    Rpc(Rpc),
}

/// Work for the network task.
#[derive(Debug, Clone, PartialEq)]
pub enum Rpc {
    FetchAll,
    /// Re-read one catalog list (the controller said it changed).
    FetchList(Catalog),
    Write(WriteOp),
    /// Ask the controller who the console is and what role it has.
    WhoAmI,
    /// (Re)start the txn tail; replaces any running one.
    Tail(TailSpec),
    /// Read every job (`Jobs.ListJobs`); see `queue` for when.
    FetchJobs,
    /// Read one pending job's explanation (`Jobs.Explain`); see `explain` for when.
    Explain(u64),
    /// Read the licenses and HRES layers (`Licenses.ShowLicenses`): on connect and when the watch says so.
    FetchLicenses,
}

/// One subscription to the txn log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailSpec {
    /// Generation: reports carry it back so rows of a replaced subscription are dropped.
    pub sub: u64,
    /// sacctmgr pairs, already validated with `TxnFilter::parse`.
    pub filter: Vec<(String, String)>,
    /// Resume after this row id (a reconnect). None: fill with the newest
    /// rows from `ListTxn`, then tail from the last of them.
    pub after_id: Option<i64>,
}

/// The records the console renders, as the controller returned them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// The controller's cluster name, shown in the breadcrumb when set.
    pub cluster: String,
    pub qos: Vec<Qos>,
    pub accounts: Vec<Account>,
    pub users: Vec<User>,
}

/// The accounting lists the console shows, re-read one at a time when the
/// controller's watch says one changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Catalog {
    Qos,
    Accounts,
    Users,
}

impl Catalog {
    pub const ALL: [Catalog; 3] = [Catalog::Qos, Catalog::Accounts, Catalog::Users];

    pub fn index(self) -> usize {
        self as usize
    }

    /// The lists to re-read when the controller says `entity` changed. An
    /// account change re-reads users too: deleting an account removes its
    /// associations, which live on the user records.
    pub fn for_entity(entity: &str) -> &'static [Catalog] {
        match entity {
            "qos" => &[Catalog::Qos],
            "account" => &[Catalog::Accounts, Catalog::Users],
            "user" => &[Catalog::Users],
            // An entity this console does not know: re-read everything rather than show stale data.
            _ => &Catalog::ALL,
        }
    }
}

/// One re-read catalog list.
#[derive(Debug, Clone, PartialEq)]
pub enum CatalogList {
    Qos(Vec<Qos>),
    Accounts { cluster: String, accounts: Vec<Account> },
    Users(Vec<User>),
}

impl CatalogList {
    pub fn kind(&self) -> Catalog {
        match self {
            CatalogList::Qos(_) => Catalog::Qos,
            CatalogList::Accounts { .. } => Catalog::Accounts,
            CatalogList::Users(_) => Catalog::Users,
        }
    }
}

/// What `Cluster.Watch` reported, batched: events arriving within a few
/// milliseconds travel as one update and cost one redraw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterUpdate {
    /// `nodes` is every node (a fresh stream or one that fell behind), not only changed ones.
    pub snapshot: bool,
    /// Nodes as they are now; the rest are unchanged unless `snapshot`.
    pub nodes: Vec<Node>,
    /// Catalog lists to re-read, without repeats.
    pub stale: Vec<Catalog>,
    /// The controller's note that this watcher missed accounting changes.
    pub lagged: Option<String>,
    /// Licenses changed (an HRES update, or jobs took or released some): re-read them.
    pub licenses: bool,
    /// Batches of changed jobs, oldest first (see `crate::queue::on_pushed`).
    pub jobs: Vec<spur_proto::v1::JobsChanged>,
}

/// Reports from the network task.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    Connected,
    /// The controller is unreachable; the task retries after `retry_in`.
    Reconnecting {
        attempt: u32,
        retry_in: Duration,
        error: String,
    },
    /// The task gave up (e.g. a malformed URL); nothing will change without a restart.
    Disconnected {
        error: String,
    },
    Loaded(Snapshot),
    FetchFailed {
        error: String,
    },
    WriteDone {
        summary: String,
    },
    /// The write landed, but the controller had a warning about it.
    WriteWarned {
        summary: String,
        warning: String,
    },
    WriteFailed {
        error: String,
    },
    /// The answer to [`Rpc::WhoAmI`].
    Session(Session),
    SessionFailed {
        error: String,
    },
    /// Txn rows in id order, batched so a busy log costs one redraw per batch.
    AuditRows {
        sub: u64,
        rows: Vec<TxnRow>,
        /// The controller's notice that this subscriber fell behind and was caught up.
        lagged: Option<String>,
    },
    /// The tail stopped for a reason other than losing the controller.
    AuditFailed {
        sub: u64,
        error: String,
    },
    /// Live nodes and catalog changes from `Cluster.Watch`.
    Cluster(ClusterUpdate),
    /// The controller refused `Cluster.Watch` (not merely lacks it): data is
    /// then re-read after writes, and the Nodes pane says why it is empty.
    WatchRefused {
        error: String,
    },
    /// The answer to [`Rpc::FetchList`].
    ListLoaded(CatalogList),
    ListFailed {
        list: Catalog,
        error: String,
    },
    /// The answer to [`Rpc::FetchLicenses`]: every plain license and HRES layer.
    Licenses(Vec<spur_proto::v1::License>),
    /// The answer to [`Rpc::FetchJobs`], compacted in the network task.
    Jobs(Arc<JobSet>),
    /// The answer to [`Rpc::Explain`].
    Explained {
        job: u64,
        answer: Result<Box<spur_proto::v1::Explanation>, String>,
    },
    /// `unsupported`: the controller has no Jobs service, which is not an error.
    JobsFailed {
        error: String,
        unsupported: bool,
    },
}
