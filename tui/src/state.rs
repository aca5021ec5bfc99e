//! The one application state. Only [`crate::dispatch`] mutates it; the
//! renderer only reads it.

use crate::action::{Snapshot, WriteOp};
use crate::audit::AuditLog;
use crate::config::ThemeName;
use crate::filter::Filter;
use crate::form::EditForm;
use crate::jobs::StateFilter;
use crate::keymap::Keymap;
use crate::live::Refetch;
use crate::nodes::ReasonPrompt;
use crate::pane::PaneId;
use crate::queue::Queue;
use crate::session::Session;
use spur_client::conn::Identity;
use spur_proto::v1::Node;
use std::collections::BTreeSet;
use std::time::Duration;
use tui_input::Input;

/// What the console is started with.
#[derive(Debug, Clone)]
pub struct Settings {
    pub controller: String,
    /// Who the console acts as; sent with every request (the audit log names it).
    pub identity: Identity,
    pub read_only: bool,
    pub mouse: bool,
    pub theme: ThemeName,
    pub keymap: Keymap,
    /// Where run times are read from; fixed in tests so snapshots hold still.
    pub clock: Clock,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    System,
    /// Epoch milliseconds.
    Fixed(i64),
}

impl Clock {
    pub fn now_ms(self) -> i64 {
        match self {
            Clock::System => chrono::Utc::now().timestamp_millis(),
            Clock::Fixed(ms) => ms,
        }
    }
}

impl Settings {
    pub fn new(controller: impl Into<String>) -> Settings {
        Settings {
            controller: controller.into(),
            identity: Identity { user: "unknown".into(), uid: None, token: None },
            read_only: false,
            mouse: false,
            theme: ThemeName::Default,
            keymap: Keymap::default(),
            clock: Clock::System,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Conn {
    Connecting,
    Connected,
    Reconnecting {
        attempt: u32,
        retry_in: Duration,
    },
    /// The network task gave up; only a restart helps.
    Disconnected,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Cancel,
    Confirm,
}

/// A pending write waiting for the operator's yes.
#[derive(Debug, Clone)]
pub struct Confirm {
    pub op: WriteOp,
    /// Starts on Cancel so a stray Enter never destroys anything.
    pub focus: Choice,
    /// Where Cancel returns (the edit form keeps its edits).
    pub prev: Mode,
}

/// A one-line prompt (`:` or `/`).
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    pub input: Input,
    /// Completion candidates or a parse error, shown beside the input.
    pub hint: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub enum Mode {
    #[default]
    Normal,
    /// The detail view of one row, by its key.
    Detail {
        key: String,
        scroll: u16,
    },
    Command(Prompt),
    Filter(Prompt),
    /// The Audit pane's controller-side filter (`Actor=alice Outcome=denied`).
    TxnFilter(Prompt),
    Help {
        scroll: u16,
        prev: Box<Mode>,
    },
    Confirm(Box<Confirm>),
    Form(Box<EditForm>),
    /// The reason field of a drain or down, before its confirmation.
    Reason(Box<ReasonPrompt>),
}

/// Per-pane view state, kept when switching panes.
#[derive(Debug, Clone, Default)]
pub struct PaneView {
    /// Index into the visible (filtered, sorted) rows.
    pub selected: usize,
    /// First visible row.
    pub offset: usize,
    /// (column index, descending).
    pub sort: Option<(usize, bool)>,
    pub filter: Option<Filter>,
    /// Row keys, so marks survive re-fetch, sorting and filtering.
    pub marks: BTreeSet<String>,
    /// Queue pane only: the `t` quick filter by job state.
    pub job_states: StateFilter,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub text: String,
    pub error: bool,
}

#[derive(Debug, Clone)]
pub struct State {
    pub settings: Settings,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    pub pane: PaneId,
    pub views: [PaneView; PaneId::ALL.len()],
    pub mode: Mode,
    pub conn: Conn,
    /// None until the first successful fetch.
    pub data: Option<Snapshot>,
    pub loading: bool,
    /// The latest feedback line (info or error).
    pub message: Option<Message>,
    /// The last error, kept in the status bar until a newer one replaces it.
    pub last_error: Option<String>,
    /// The Preemption pane's job and its explanation (`:explain ID`, `w`).
    pub explain: crate::explain::Explain,
    /// WhoAmI's answer for the current connection; None until it arrives.
    pub session: Option<Session>,
    /// The Audit pane's live tail.
    pub audit: AuditLog,
    /// Every node, live from `Cluster.Watch`; None until its first snapshot.
    pub nodes: Option<Vec<Node>>,
    /// `Cluster.Watch` is delivering on this connection, so writes need no
    /// re-fetch: their effect is pushed.
    pub live: bool,
    /// Why the controller refused `Cluster.Watch`, when it did.
    pub watch_error: Option<String>,
    /// Per catalog list (by [`crate::action::Catalog::index`]): a re-read under way.
    pub refetch: [Refetch; 3],
    /// Drain/down reasons typed this session, newest first, offered again.
    pub recent_reasons: Vec<String>,
    /// The Queue pane's jobs and their re-reads.
    pub queue: Queue,
    /// Licenses and HRES layers for the HRES pane; None until first read.
    pub licenses: Option<Vec<spur_proto::v1::License>>,
}

impl State {
    pub fn new(settings: Settings, size: (u16, u16)) -> State {
        State {
            settings,
            size,
            // squeue is what an operator looks at first.
            pane: PaneId::Queue,
            views: Default::default(),
            mode: Mode::Normal,
            conn: Conn::Connecting,
            data: None,
            loading: false,
            message: None,
            last_error: None,
            explain: Default::default(),
            session: None,
            audit: AuditLog::default(),
            nodes: None,
            licenses: None,
            live: false,
            watch_error: None,
            refetch: Default::default(),
            recent_reasons: Vec::new(),
            queue: Queue::default(),
        }
    }

    /// Now, by the settings' clock: run times are read against it.
    pub fn now_ms(&self) -> i64 {
        self.settings.clock.now_ms()
    }

    pub fn view(&self) -> &PaneView {
        &self.views[self.pane.index()]
    }

    pub fn view_mut(&mut self) -> &mut PaneView {
        &mut self.views[self.pane.index()]
    }

    pub fn info(&mut self, text: impl Into<String>) {
        self.message = Some(Message { text: text.into(), error: false });
    }

    pub fn error(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.last_error = Some(text.clone());
        self.message = Some(Message { text, error: true });
    }
}
