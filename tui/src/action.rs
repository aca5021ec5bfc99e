//! The vocabulary of the console: what the operator asks for ([`Action`]),
//! what the app asks the outside world to do ([`Effect`], [`Rpc`]) and what
//! the outside world reports back ([`Msg`]).

use crate::pane::PaneId;
use crate::session::Session;
use spur_proto::v1::{Account, Qos, TxnRow, User};
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
    /// and for a role below Operator.
    pub fn is_write(&self) -> bool {
        matches!(self, Action::Edit | Action::Delete | Action::Request(_))
    }
}

/// A change to the controller. Only dispatch's confirm path turns one of
/// these into an [`Rpc::Write`].
#[derive(Debug, Clone, PartialEq)]
pub enum WriteOp {
    DeleteQos {
        names: Vec<String>,
    },
    ModifyQos {
        name: String,
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
}

impl WriteOp {
    /// One value of every variant, so tests can prove every write is guarded.
    pub fn examples() -> Vec<WriteOp> {
        let all = vec![
            WriteOp::DeleteQos { names: vec!["low".into()] },
            WriteOp::ModifyQos {
                name: "low".into(),
                set: vec![("priority".into(), "5".into())],
                diff: vec!["priority: 1 → 5".into()],
            },
            WriteOp::DeleteAccount { names: vec!["ml".into()] },
            WriteOp::DeleteUser { assocs: vec![("alice".into(), "ml".into())] },
        ];
        for op in &all {
            // Exhaustive on purpose: a new variant fails to compile until it is listed above.
            match op {
                WriteOp::DeleteQos { .. }
                | WriteOp::ModifyQos { .. }
                | WriteOp::DeleteAccount { .. }
                | WriteOp::DeleteUser { .. } => {}
            }
        }
        all
    }

    /// Short verb for the status line and the read-only refusal.
    pub fn verb(&self) -> &'static str {
        match self {
            WriteOp::DeleteQos { .. } => "delete QOS",
            WriteOp::ModifyQos { .. } => "modify QOS",
            WriteOp::DeleteAccount { .. } => "delete account",
            WriteOp::DeleteUser { .. } => "delete user association",
        }
    }

    /// Whether the operation destroys records (the confirm button says so).
    pub fn destructive(&self) -> bool {
        !matches!(self, WriteOp::ModifyQos { .. })
    }

    /// Title and body of the confirmation dialog.
    pub fn describe(&self) -> (String, Vec<String>) {
        match self {
            WriteOp::DeleteQos { names } => (
                format!("Delete {} QOS?", names.len()),
                names.iter().map(|n| format!("sacctmgr delete qos name={n}")).collect(),
            ),
            WriteOp::ModifyQos { name, diff, .. } => (format!("Modify QOS {name}?"), diff.clone()),
            WriteOp::DeleteAccount { names } => (
                format!("Delete {} account(s)?", names.len()),
                names.iter().map(|n| format!("sacctmgr delete account name={n}")).collect(),
            ),
            WriteOp::DeleteUser { assocs } => (
                format!("Delete {} association(s)?", assocs.len()),
                assocs.iter().map(|(u, a)| format!("sacctmgr delete user name={u} account={a}")).collect(),
            ),
        }
    }
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
    Write(WriteOp),
    /// Ask the controller who the console is and what role it has.
    WhoAmI,
    /// (Re)start the txn tail; replaces any running one.
    Tail(TailSpec),
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
}
