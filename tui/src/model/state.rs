//! The one application state. Only [`crate::update`] mutates it; the
//! views only read it.

use crate::model::accounts::Accounting;
use crate::model::audit::AuditLog;
use crate::model::context::Contexts;
use crate::model::form::EditForm;
use crate::model::hres::Hres;
use crate::model::jobs::{Expanded, Loans, NO_LOANS};
use crate::model::keymap::Keymap;
use crate::model::layout;
use crate::model::nodes::Nodes;
use crate::model::pane::PaneId;
use crate::model::preempt::Preempt;
use crate::model::provisioners::Provisioners;
use crate::model::queue::Queue;
use crate::model::session::Session;
use crate::model::table::{Detail, Rows, TableModel};
use crate::model::view::PaneView;
use crate::model::write::{NodeOp, WriteOp};
use ratatui::layout::Rect;
use spur_client::conn::Identity;
use std::time::Duration;
use tui_input::Input;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThemeName {
    #[default]
    Default,
    /// No colours: selection and marks by modifiers and symbols only.
    Mono,
}

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
    /// console.toml's `[[plugins]]`, checked at load.
    pub plugins: Vec<crate::model::plugin::Plugin>,
    /// Where run times are read from; fixed in tests so snapshots hold still.
    pub clock: Clock,
    /// console.toml's contexts and the one the console is on (`controller`
    /// and the identity's token are then that context's).
    pub contexts: Contexts,
    /// The local token (`SPUR_TOKEN`, `~/.spur/token`), for a context without a token file.
    pub local_token: Option<String>,
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
            identity: Identity::asserted("unknown", None),
            read_only: false,
            mouse: false,
            theme: ThemeName::Default,
            keymap: Keymap::default(),
            plugins: Vec::new(),
            clock: Clock::System,
            contexts: Contexts::default(),
            local_token: None,
        }
    }

    /// Put the console on context `i`: its controllers and its token (else
    /// the local one). False when there is no such context.
    pub fn enter_context(&mut self, i: usize) -> bool {
        let Some(ctx) = self.contexts.all.get(i) else { return false };
        self.controller = ctx.url();
        self.identity.token = ctx.token.clone().or_else(|| self.local_token.clone());
        self.contexts.current = Some(i);
        true
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

/// Which of several controllers the console is on (high availability).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OnController {
    pub controller: String,
    pub primary: Option<bool>,
    /// Reconnections since the first connection: each is a failover the
    /// console lived through (to another controller, or to the same one
    /// after the leader behind it changed).
    pub failovers: u32,
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
    /// On a production context: the name to type, and what has been typed.
    pub typed: Option<TypedName>,
    /// The context the write goes to, when not the current one (a row of the merged Queue).
    pub on: Option<usize>,
}

/// A production context's confirmation: the write is sent only once the
/// context's name is typed exactly, so a wrong window never gets a yes.
#[derive(Debug, Clone)]
pub struct TypedName {
    pub name: String,
    pub input: Input,
    /// Why Enter was refused (the name does not match).
    pub hint: Option<String>,
}

impl TypedName {
    pub fn matches(&self) -> bool {
        self.input.value() == self.name
    }
}

/// A one-line prompt (`:` or `/`).
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    pub input: Input,
    /// Completion candidates or a parse error, shown beside the input.
    pub hint: Option<String>,
}

/// Recent reasons offered at once.
pub const OFFERED: usize = 6;

/// The reason field of a drain or down.
#[derive(Debug, Clone)]
pub struct ReasonPrompt {
    pub op: NodeOp,
    pub nodes: Vec<String>,
    pub input: Input,
    /// What the operator typed; recent reasons are matched against it, so
    /// walking the list and coming back restores it.
    pub typed: String,
    /// Every reason on offer, best first.
    pub recent: Vec<String>,
    /// The offered reason shown in the field, as an index into [`ReasonPrompt::offered`].
    pub pick: Option<usize>,
    /// Why Enter was refused (an empty reason).
    pub hint: Option<String>,
    /// Where Esc returns (the detail view the action started from).
    pub prev: Box<Mode>,
}

impl ReasonPrompt {
    /// The recent reasons that contain what was typed (ignoring case).
    pub fn offered(&self) -> Vec<&str> {
        let want = self.typed.trim().to_lowercase();
        self.recent
            .iter()
            .map(String::as_str)
            .filter(|r| r.to_lowercase().contains(&want))
            .take(OFFERED)
            .collect()
    }

    /// Down/Tab walks the offered reasons, past the last back to what was typed.
    pub fn walk(&mut self, forward: bool) {
        let n = self.offered().len();
        if n == 0 {
            return;
        }
        self.pick = match (self.pick, forward) {
            (None, true) => Some(0),
            (None, false) => Some(n - 1),
            (Some(i), true) if i + 1 < n => Some(i + 1),
            (Some(i), false) if i > 0 => Some(i - 1),
            _ => None,
        };
        let text = match self.pick {
            Some(i) => self.offered()[i].to_string(),
            None => self.typed.clone(),
        };
        self.input = Input::new(text);
        self.hint = None;
    }
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
    /// A reservation typed as `scontrol create|update reservation`'s words.
    Resv(Box<ResvPrompt>),
    /// A job's output, live (`State::output`), in place of the table.
    Output,
}

/// The words of a new reservation, or of a change to `editing`, checked as they are typed.
#[derive(Debug, Clone, Default)]
pub struct ResvPrompt {
    pub prompt: Prompt,
    pub editing: Option<String>,
}

impl Mode {
    /// The modes stacked on screen, bottom first (a dialog over a form, help over a detail view).
    pub fn layers(&self) -> Vec<&Mode> {
        let mut stack = vec![self];
        let mut cur = self;
        loop {
            cur = match cur {
                Mode::Help { prev, .. } => prev,
                Mode::Confirm(c) => &c.prev,
                Mode::Reason(r) => &r.prev,
                _ => break,
            };
            stack.push(cur);
        }
        stack.reverse();
        stack
    }
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
    /// Where table rows are drawn: the page height and the rows a click
    /// can hit. Kept by `update` whenever what it depends on changes (the
    /// size, the banner, the pane, the Preemption summary), so moving
    /// around never asks the layout.
    pub rows_area: Rect,
    pub pane: PaneId,
    pub views: [PaneView; PaneId::ALL.len()],
    pub mode: Mode,
    pub conn: Conn,
    /// Set when the console was given several controllers.
    pub on: Option<OnController>,
    pub loading: bool,
    /// The latest feedback line (info or error).
    pub message: Option<Message>,
    /// The last error, kept in the status bar until a newer one replaces it.
    pub last_error: Option<String>,
    /// WhoAmI's answer for the current connection; None until it arrives.
    pub session: Option<Session>,
    /// `Cluster.Watch` is delivering on this connection, so writes need no
    /// re-fetch: their effect is pushed.
    pub live: bool,
    /// Why the controller refused `Cluster.Watch`, when it did.
    pub watch_error: Option<String>,
    /// Drain/down reasons typed this session, newest first, offered again.
    pub recent_reasons: Vec<String>,
    // Each pane's data, one struct per pane (the QOS and Accounts panes
    // share the catalog); each that reads its data keeps its `Refetch`.
    /// The Queue pane's jobs and their re-reads.
    pub queue: Queue,
    /// The Nodes pane's nodes, pushed by the watch.
    pub nodes: Nodes,
    /// The QOS and Accounts panes' catalog and its lists' re-reads.
    pub accounting: Accounting,
    /// The HRES pane's licenses and layers.
    pub hres: Hres,
    /// The Preemption pane's job and its explanation (`:explain ID`, `w`).
    pub preempt: Preempt,
    /// The Audit pane's live tail.
    pub audit: AuditLog,
    /// The Provisioners pane's definitions.
    pub provisioners: Provisioners,
    pub resvs: crate::model::reservations::Reservations,
    /// The Overview pane's sums of the jobs and nodes, and the scheduler's figures.
    pub overview: crate::model::overview::Overview,
    /// The Fairshare pane's tree (`ListShares`).
    pub fairshare: crate::model::fairshare::Fairshare,
    /// The job output view (`o`/`O`), while it is open or until another replaces it.
    pub output: Option<crate::model::output::OutputView>,
    /// The generation of the last output stream asked for.
    pub output_seq: u64,
    /// The merged Queue of every context (`:queue all`) while it is open.
    pub merged: Option<crate::model::merged::Merged>,
}

impl State {
    pub fn new(settings: Settings, size: (u16, u16)) -> State {
        let mut state = State {
            settings,
            size,
            rows_area: Rect::default(),
            // squeue is what an operator looks at first.
            pane: PaneId::Queue,
            views: Default::default(),
            mode: Mode::Normal,
            conn: Conn::Connecting,
            on: None,
            loading: false,
            message: None,
            last_error: None,
            session: None,
            live: false,
            watch_error: None,
            recent_reasons: Vec::new(),
            queue: Queue::default(),
            nodes: Nodes::default(),
            accounting: Accounting::default(),
            hres: Hres::default(),
            preempt: Preempt::default(),
            audit: AuditLog::default(),
            provisioners: Provisioners::default(),
            resvs: Default::default(),
            overview: Default::default(),
            fairshare: Default::default(),
            output: None,
            output_seq: 0,
            merged: None,
        };
        state.relayout();
        state
    }

    /// The controller is unreachable: a two-line banner takes room from the body.
    pub fn shows_banner(&self) -> bool {
        matches!(self.conn, Conn::Reconnecting { .. } | Conn::Disconnected)
    }

    /// The screen is framed: the console is on a production context.
    pub fn framed(&self) -> bool {
        self.settings.contexts.production().is_some()
    }

    /// The lines shown above the current pane's table (only the Preemption pane has them).
    pub fn summary(&self) -> Vec<(String, bool)> {
        if self.pane == PaneId::Preempt { self.preempt.summary() } else { Vec::new() }
    }

    /// Recompute [`State::rows_area`]; `update` calls it whenever the size,
    /// the connection, the pane or the Preemption summary changes.
    pub fn relayout(&mut self) {
        self.rows_area = layout::rows_area(self.size, self.framed(), self.shows_banner(), &self.summary());
    }

    /// Rows per page, at least one.
    pub fn page(&self) -> usize {
        usize::from(self.rows_area.height.max(1))
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

    /// The nodes idle-fill has lent out, from the jobs read (none before the first read).
    pub fn loans(&self) -> &Loans {
        self.queue.jobs.as_ref().map_or(&NO_LOANS, |j| &j.loans)
    }

    /// The visible rows of a pane, or None when the controller has no data for it.
    pub fn table(&self, pane: PaneId) -> Option<TableModel> {
        self.table_with(pane, &self.views[pane.index()])
    }

    /// Every row of a pane, ignoring the filter (to resolve marks hidden by
    /// it), with every job array open (to resolve marks on their records).
    pub fn all_rows(&self, pane: PaneId) -> Rows {
        let every = PaneView { expanded: Expanded::all(), ..PaneView::default() };
        self.table_with(pane, &every).map(|t| t.rows).unwrap_or_default()
    }

    fn table_with(&self, pane: PaneId, view: &PaneView) -> Option<TableModel> {
        (pane.decl().rows)(self, view)
    }

    /// The detail page of the pane's row `key`.
    pub fn detail(&self, pane: PaneId, key: &str) -> Option<Detail> {
        (pane.decl().detail)(self, key)
    }
}
