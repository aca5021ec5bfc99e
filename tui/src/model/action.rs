//! The vocabulary of the console: what the operator asks for ([`Action`]),
//! what the app asks the outside world to do ([`Effect`], [`Rpc`]) and what
//! the outside world reports back ([`Msg`]).

use crate::model::jobs::{JobOp, JobSet};
use crate::model::pane::PaneId;
use crate::model::session::{self, Role, Session};
use crate::model::write::{NodeOp, WriteOp};
use spur_proto::v1::{Account, Node, Qos, TxnRow, User};
use std::sync::Arc;
use std::time::Duration;
use tui_input::InputRequest;

/// Everything that can change the state goes through one of these and
/// [`crate::update::dispatch()`].
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
    /// Queue pane: the selected job's stdout (stderr when true), live.
    Output(bool),
    /// HRES pane: flip DisableLayer of the selected layer, or DisableHRES on a resource's row.
    HresToggle,
    /// The Reservations pane's `n`: a new reservation, typed as scontrol's words.
    NewResv,
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
    /// console.toml's plugin at this index, on the selected row.
    Plugin(usize),
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
                | Action::NewResv
                | Action::Request(_)
        )
    }

    /// Keys only some panes have: each runs only on the panes whose
    /// declaration (`Pane::hints` in `model/decl.rs`) offers it.
    /// Every write but a `:` request, and four pane-only views.
    pub fn pane_only(&self) -> bool {
        (self.is_write() && !matches!(self, Action::Request(_)))
            || matches!(
                self,
                Action::JobStates
                    | Action::Explain
                    | Action::Output(_)
                    | Action::TogglePause
                    | Action::TxnFilterMode
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
            Action::NewResv => "create a reservation",
            _ => "delete",
        }
    }
}

/// What dispatch asks the app loop to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Quit,
    Rpc(Rpc),
    /// Drop the connection and its streams and connect to `settings.controller`
    /// as `settings.identity` (a context switch; the state has started over).
    Connect,
    /// Open (true) or close the merged Queue's connections, one per context.
    Merge(bool),
    /// Work for context `.0`'s connection of the merged Queue.
    RpcTo(usize, Rpc),
    /// Run a plugin's command (`net/plugin.rs`); its output comes back as `Msg::Output` with `sub`.
    Run {
        sub: u64,
        argv: Vec<String>,
    },
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
    /// Read every job (`Jobs.ListJobs`); see `update::queue` for when.
    FetchJobs,
    /// Read one pending job's explanation (`Jobs.Explain`); see `update::preempt` for when.
    Explain(u64),
    /// Read the licenses and HRES layers (`Licenses.ShowLicenses`): on connect and when the watch says so.
    FetchLicenses,
    /// Read the provisioner definitions (`Nodes.ListProvisioners`); see `update::provisioners` for when.
    FetchProvisioners,
    /// Read one node's history (its txn rows), when its detail opens; see `update::nodes`.
    NodeEvents(String),
    /// Stream a job's output (`Steps.TailOutput`, following); replaces any running one.
    Output(OutputSpec),
    /// Stop the job output stream.
    StopOutput,
    /// Read the scheduler's figures (`Cluster.Diag`); see `update::overview` for when.
    FetchDiag,
    /// Read the fairshare tree (`Jobs.ListShares`); see `update::fairshare` for when.
    FetchShares,
}

/// One job output stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSpec {
    /// Generation: reports carry it back so pieces of a closed view are dropped.
    pub sub: u64,
    pub job: u64,
    pub stderr: bool,
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
    /// Batches of changed jobs, oldest first (see `crate::update::queue::on_pushed`).
    pub jobs: Vec<spur_proto::v1::JobsChanged>,
    /// The reservations, whole, when they changed (or a window began or ended).
    pub reservations: Option<spur_proto::v1::ListReservationsResponse>,
}

/// Reports from the network task.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    Connected,
    /// Sent before [`Msg::Connected`] when the console was given several
    /// controllers (high availability): the one it reached, and whether it
    /// is the leader (None: it did not say).
    On {
        controller: String,
        primary: Option<bool>,
    },
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
    /// The answer to [`Rpc::NodeEvents`]: the node's txn rows, oldest first, or why not.
    NodeEvents {
        node: String,
        rows: Result<Vec<TxnRow>, String>,
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
    /// [`Rpc::FetchLicenses`] was refused (a controller without the service); the pane says it has no data.
    LicensesFailed,
    /// The answer to [`Rpc::FetchProvisioners`]: every definition with its pool.
    Provisioners(Vec<spur_proto::v1::Provisioner>),
    /// `unsupported`: the controller has no `ListProvisioners`, which is not an error.
    ProvisionersFailed {
        error: String,
        unsupported: bool,
    },
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
    /// A piece of a job's output (`data`), or a line of the stream's own (`note`).
    Output {
        sub: u64,
        data: Vec<u8>,
        note: String,
    },
    /// The answer to [`Rpc::FetchDiag`].
    Diag(Box<spur_proto::v1::DiagResponse>),
    /// `unsupported`: the controller has no `Cluster.Diag`, which is not an error.
    DiagFailed {
        error: String,
        unsupported: bool,
    },
    /// The output stream ended: the job's end (None) or why not.
    OutputEnded {
        sub: u64,
        error: Option<String>,
    },
    /// A report of context `ctx`'s connection of the merged Queue.
    Remote {
        ctx: usize,
        msg: Box<Msg>,
    },
    /// The answer to [`Rpc::FetchShares`].
    Shares(spur_proto::v1::ListSharesResponse),
    SharesFailed {
        error: String,
    },
}
