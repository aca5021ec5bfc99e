//! Each pane's whole declaration ([`Pane`]), in one table: its titles and
//! `:` names, whether it edits and deletes its rows, the keys it offers
//! (its hint line, most important first, and the only panes where a pane's
//! own keys run), what a delete there says instead, what opening it reads,
//! what its empty table says, and the two functions that build its rows and
//! its detail page from the state. The hint line, dispatch, the edit form,
//! the keymap's pane names, the `:` commands, the table view and the detail
//! overlay all read [`PaneId::decl`]; `tests/pane_keys.rs` holds every
//! declared key to doing something there, and every pane-only key that does
//! something to being declared.
//!
//! This is the one module that sees both the state and the panes' keys, so
//! nothing imports it by path: it adds `decl` to [`PaneId`], and every
//! caller reaches it through that method.

use crate::model::action::Action;
use crate::model::jobs::JobOp;
use crate::model::pane::{Hint, Offered, PaneId, Reads};
use crate::model::session;
use crate::model::state::State;
use crate::model::table::{Detail, TableModel};
use crate::model::view::PaneView;
use crate::model::write::NodeOp;
use crate::model::{
    accounts, audit, fairshare, hres, nodes, overview, preempt, provisioners, qos, queue, reservations,
};
use std::sync::LazyLock;

/// A pane, declared once.
#[derive(Debug, Clone)]
pub struct Pane {
    pub id: PaneId,
    pub title: &'static str,
    /// Its number key's line in the help.
    pub goto: &'static str,
    /// The tab's name when every full title does not fit on one line (80 columns).
    pub short_title: &'static str,
    /// Its name: the `[keys]` name of its number key and its `:` command;
    /// then the other words `:` takes for it.
    pub names: &'static [&'static str],
    /// Whether `e` edits and `D` deletes its rows (the edit form, or the Reservations prompt).
    pub edits: bool,
    /// The keys its hint line offers, most important first (as many as fit
    /// are shown). Keys that only some panes have ([`Action::pane_only`])
    /// run only on the panes that offer them.
    pub hints: Vec<Hint>,
    /// Where `D` is refused for the whole pane before its rows are built:
    /// the sentence, and the key that does instead (the Queue's cancel).
    pub not_deleted: Option<(&'static str, Action)>,
    pub reads: Reads,
    /// What its table says with no rows (and no filter).
    pub empty: &'static str,
    /// Its visible rows under a view, or None when the controller has sent no data for it.
    pub rows: RowsFn,
    /// The detail page of its row `key`, or None when there is no such row.
    pub detail: DetailFn,
}

/// Builds a pane's rows from the state, under a view (selection, filter, sort, open arrays).
pub type RowsFn = fn(&State, &PaneView) -> Option<TableModel>;
/// Builds the detail page of one of a pane's rows, by its key.
pub type DetailFn = fn(&State, &str) -> Option<Detail>;

fn hint(action: Action, label: &'static str, offered: Offered) -> Hint {
    Hint { action, label, offered }
}

fn always(action: Action, label: &'static str) -> Hint {
    hint(action, label, Offered::Always)
}

/// The keys of a read-only table: filter, detail, refresh, sort and mark.
fn browse() -> Vec<Hint> {
    vec![
        always(Action::FilterMode, "filter"),
        always(Action::Open, "detail"),
        always(Action::Refresh, "refresh"),
        always(Action::SortNext, "sort"),
        always(Action::ToggleMark, "mark"),
    ]
}

impl PaneId {
    /// The pane's declaration: the one place that says what it is and offers.
    pub fn decl(self) -> &'static Pane {
        static PANES: LazyLock<Vec<Pane>> = LazyLock::new(|| PaneId::ALL.into_iter().map(build).collect());
        &PANES[self.index()]
    }
}

fn build(id: PaneId) -> Pane {
    let pane = |title, goto, short_title, names, hints, (rows, detail): (RowsFn, DetailFn)| Pane {
        id,
        title,
        goto,
        short_title,
        names,
        edits: false,
        hints,
        not_deleted: None,
        reads: Reads::Shared,
        empty: "none defined",
        rows,
        detail,
    };
    match id {
        PaneId::Queue => {
            let job = |op, label| hint(Action::JobAction(op), label, Offered::Writable);
            let hints = vec![
                always(Action::ToggleMark, "mark"),
                // On an array's row Enter is what shows its tasks, so it is said early enough to fit.
                hint(Action::Open, "expand", Offered::OnArray),
                job(JobOp::Cancel, "cancel"),
                job(JobOp::Hold, "hold"),
                job(JobOp::Release, "release"),
                job(JobOp::Requeue, "requeue"),
                always(Action::JobStates, "state"),
                always(Action::FilterMode, "filter"),
                hint(Action::Open, "detail", Offered::OffArray),
                always(Action::SortNext, "sort"),
                always(Action::Explain, "why"),
                always(Action::Output(false), "output"),
                always(Action::Output(true), "stderr"),
            ];
            Pane {
                not_deleted: Some(("jobs are cancelled, not deleted", Action::JobAction(JobOp::Cancel))),
                empty: "no jobs",
                ..pane(
                    "Queue",
                    "go to Queue",
                    "Queue",
                    &["queue", "jobs", "squeue"],
                    hints,
                    (
                        |s, v| match &s.merged {
                            Some(m) => Some(m.table(v, s.now_ms())),
                            None => s.queue.jobs.as_ref().map(|j| queue::table(j, v, s.now_ms())),
                        },
                        |s, k| match &s.merged {
                            Some(m) => m.detail(k, s.now_ms()),
                            None => queue::detail(s.queue.jobs.as_deref()?, k, s.now_ms()),
                        },
                    ),
                )
            }
        }
        PaneId::Nodes => {
            let node = |op, label| hint(Action::NodeAction(op), label, Offered::Writes(session::NODE_ROLE));
            // On call, marking and draining come before browsing.
            let hints = vec![
                always(Action::ToggleMark, "mark"),
                node(NodeOp::Drain, "drain"),
                node(NodeOp::Resume, "resume"),
                node(NodeOp::Down, "down"),
                always(Action::FilterMode, "filter"),
                always(Action::Open, "detail"),
                always(Action::SortNext, "sort"),
            ];
            pane(
                "Nodes",
                "go to Nodes",
                "Nodes",
                &["nodes", "node", "sinfo"],
                hints,
                (
                    |s, v| s.nodes.list.as_deref().map(|n| nodes::table(n, v, s.loans())),
                    |s, k| {
                        let events = s.nodes.events.as_ref();
                        nodes::detail(s.nodes.list.as_deref()?, k, s.queue.jobs.as_deref(), events)
                    },
                ),
            )
        }
        PaneId::Qos | PaneId::Accounts => {
            let mut hints = browse();
            let write = |action, label| hint(action, label, Offered::Writes(session::WRITE_ROLE));
            hints.splice(3..3, [write(Action::Edit, "edit"), write(Action::Delete, "delete")]);
            let (title, goto, names, source): (_, _, &'static [&'static str], (RowsFn, DetailFn)) = match id {
                PaneId::Qos => (
                    "QOS",
                    "go to QOS",
                    &["qos"],
                    (
                        |s, v| {
                            Some(qos::table(
                                s.accounting.data.as_ref().map(|d| d.qos.as_slice()).unwrap_or_default(),
                                v,
                            ))
                        },
                        |s, k| qos::detail(&s.accounting.data.as_ref()?.qos, k),
                    ),
                ),
                _ => (
                    "Accounts",
                    "go to Accounts",
                    &["accounts", "account", "acct", "assoc", "users"],
                    (
                        |s, v| Some(accounts::table(s.accounting.data.as_ref(), v)),
                        |s, k| accounts::detail(s.accounting.data.as_ref()?, k),
                    ),
                ),
            };
            Pane { edits: true, ..pane(title, goto, title, names, hints, source) }
        }
        PaneId::Hres => {
            // Last, so the bar at 80 columns keeps the keys every table shares.
            let mut hints = browse();
            hints.push(hint(Action::HresToggle, "disable/enable", Offered::Writes(session::NODE_ROLE)));
            pane(
                "HRES",
                "go to HRES",
                "HRES",
                &["hres", "licenses"],
                hints,
                (
                    |s, v| s.hres.licenses.as_deref().map(|l| hres::table(l, v)),
                    |s, k| hres::detail(s.hres.licenses.as_deref()?, k),
                ),
            )
        }
        PaneId::Preempt => Pane {
            reads: Reads::Explanation,
            ..pane(
                "Preemption",
                "go to Preemption",
                "Preempt",
                &["preemption", "preempt"],
                browse(),
                (|s, v| Some(preempt::table(&s.preempt, v)), |s, k| preempt::detail(&s.preempt, k)),
            )
        },
        PaneId::Audit => {
            let hints = vec![
                always(Action::TogglePause, "pause"),
                always(Action::TxnFilterMode, "filter"),
                always(Action::Open, "info"),
                always(Action::FilterMode, "grep"),
                always(Action::Refresh, "retry"),
            ];
            Pane {
                reads: Reads::Tail,
                ..pane(
                    "Audit",
                    "go to Audit",
                    "Audit",
                    &["audit", "txn"],
                    hints,
                    (|s, v| Some(audit::table(&s.audit, v)), |s, k| audit::detail(&s.audit, k)),
                )
            }
        }
        PaneId::Provisioners => Pane {
            empty: "no provisioner definitions are configured",
            ..pane(
                "Provisioners",
                "go to Provisioners",
                "Prov",
                &["provisioners", "provisioner", "prov"],
                browse(),
                (
                    |s, v| s.provisioners.list.as_deref().map(|p| provisioners::table(p, v)),
                    |s, k| provisioners::detail(s.provisioners.list.as_deref()?, k),
                ),
            )
        },
        PaneId::Reservations => {
            let write = |action, label| hint(action, label, Offered::Writes(session::WRITE_ROLE));
            let mut hints = browse();
            hints.splice(
                2..2,
                [write(Action::NewResv, "new"), write(Action::Edit, "edit"), write(Action::Delete, "delete")],
            );
            Pane {
                edits: true,
                empty: "no reservations (n makes one)",
                ..pane(
                    "Reservations",
                    "go to Reservations",
                    "Resv",
                    &["reservations", "reservation", "resv"],
                    hints,
                    (
                        |s, v| s.resvs.list.as_ref().map(|l| reservations::table(&l.reservations, v)),
                        |s, k| reservations::detail(s.resvs.all(), k),
                    ),
                )
            }
        }
        // Its rows are the pending reasons; Enter lists a reason's jobs in the Queue.
        PaneId::Overview => Pane {
            reads: Reads::Diag,
            empty: "no jobs are pending",
            ..pane(
                "Overview",
                "go to Overview",
                "Over",
                &["overview", "sdiag", "summary"],
                vec![
                    always(Action::Open, "queue"),
                    always(Action::Refresh, "refresh"),
                    always(Action::FilterMode, "filter"),
                ],
                (|s, v| Some(overview::table(&s.overview.sums, v)), |_, _| None),
            )
        },
        PaneId::Fairshare => {
            // Read-only (marks do nothing here): shares are an account's fairshare, edited in Accounts.
            let hints = vec![
                always(Action::Open, "explain"),
                always(Action::Refresh, "refresh"),
                always(Action::FilterMode, "filter"),
                always(Action::SortNext, "sort"),
            ];
            Pane {
                reads: Reads::Shares,
                not_deleted: Some((
                    "shares are read here; an account's fairshare is edited in Accounts",
                    Action::GoPane(PaneId::Accounts),
                )),
                empty: "no accounts",
                ..pane(
                    "Fairshare",
                    "go to Fairshare",
                    "Share",
                    &["fairshare", "shares", "sshare"],
                    hints,
                    (
                        |s, v| s.fairshare.data.as_ref().map(|d| fairshare::table(d, v)),
                        |s, k| fairshare::detail(s.fairshare.data.as_ref()?, k),
                    ),
                )
            }
        }
    }
}
