//! The writes the console can ask of the controller ([`WriteOp`], with the
//! node actions of [`NodeOp`]): how each is named, which role it needs and
//! what its confirmation says. Kept apart from the rest of the vocabulary so
//! every guarded write is listed in one place.

use crate::model::jobs::JobOp;
use crate::model::session::{self, Role};
use crate::model::{hres, queue};
use spur_vocab::hostlist;
use spur_vocab::keys::Entity;

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
/// these into a write RPC (`Rpc::Write`).
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
    /// `scontrol create reservation WORDS`, or `update ReservationName=NAME WORDS`
    /// (`editing`); `summary` names the nodes and the window for the confirmation.
    Reservation {
        editing: Option<String>,
        words: Vec<String>,
        summary: Vec<String>,
    },
    /// `scontrol delete ReservationName=NAME`, each.
    DeleteReservations {
        names: Vec<String>,
    },
    /// A plugin marked `dangerous`: its command, run locally (not an RPC)
    /// once confirmed, as the write role only.
    RunPlugin {
        name: String,
        argv: Vec<String>,
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
        let words =
            vec!["StartTime=now+1hour".into(), "Duration=60".into(), "Nodes=n1".into(), "Users=root".into()];
        all.push(WriteOp::Reservation { editing: None, words: words.clone(), summary: vec![] });
        all.push(WriteOp::Reservation { editing: Some("maint".into()), words, summary: vec![] });
        all.push(WriteOp::DeleteReservations { names: vec!["maint".into()] });
        all.push(WriteOp::RunPlugin {
            name: "drain-all".into(),
            argv: vec!["scontrol".into(), "show".into()],
        });
        for op in &all {
            // Exhaustive on purpose: a new variant fails to compile until it is listed above.
            match op {
                WriteOp::DeleteQos { .. }
                | WriteOp::Modify { .. }
                | WriteOp::DeleteAccount { .. }
                | WriteOp::DeleteUser { .. }
                | WriteOp::UpdateNodes { .. }
                | WriteOp::UpdateJobs { .. }
                | WriteOp::UpdateHres { .. }
                | WriteOp::Reservation { .. }
                | WriteOp::DeleteReservations { .. }
                | WriteOp::RunPlugin { .. } => {}
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
            WriteOp::Reservation { editing: None, .. } => "create a reservation",
            WriteOp::Reservation { .. } => "update a reservation",
            WriteOp::DeleteReservations { .. } => "delete reservations",
            WriteOp::RunPlugin { .. } => "run a dangerous plugin",
        }
    }

    /// The least role the controller accepts for this write.
    pub fn role(&self) -> Role {
        match self {
            WriteOp::UpdateNodes { .. } | WriteOp::UpdateHres { .. } => session::NODE_ROLE,
            // Whose jobs they are is checked per job (`update::queue::refusal`).
            WriteOp::UpdateJobs { .. } => session::JOB_ROLE,
            _ => session::WRITE_ROLE,
        }
    }

    /// Whether the operation destroys records (a detail view of them closes).
    pub fn destructive(&self) -> bool {
        matches!(
            self,
            WriteOp::DeleteQos { .. }
                | WriteOp::DeleteAccount { .. }
                | WriteOp::DeleteUser { .. }
                | WriteOp::DeleteReservations { .. }
        )
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
            WriteOp::Reservation { editing: None, .. } => "Create",
            WriteOp::Reservation { .. } => "Apply",
            WriteOp::RunPlugin { .. } => "Run",
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
            WriteOp::UpdateJobs { op, ids, owners } => queue::describe(*op, ids, owners),
            WriteOp::UpdateHres { resource, layer, disable } => hres::describe(resource, layer, *disable),
            WriteOp::Reservation { editing, words, summary } => {
                let mut body = summary.clone();
                let line = match editing {
                    None => format!("= scontrol create reservation {}", words.join(" ")),
                    Some(_) => format!("= scontrol update {}", words.join(" ")),
                };
                body.push(line);
                let title = match editing {
                    None => "Create this reservation?".to_string(),
                    Some(n) => format!("Change reservation {n}?"),
                };
                (title, body)
            }
            WriteOp::DeleteReservations { names } => (
                format!("Delete {} reservation(s)?", names.len()),
                names.iter().map(|n| format!("= scontrol delete ReservationName={n}")).collect(),
            ),
            WriteOp::RunPlugin { name, argv } => (
                format!("Run plugin {name}?"),
                vec![
                    "It is marked dangerous in console.toml; it runs here, as you.".to_string(),
                    format!("= {}", shown(argv)),
                ],
            ),
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

/// A plugin's argv as the confirmation and the output view name it: a
/// word with a blank or a quote is quoted as a shell would need it.
pub fn shown(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if a.is_empty() || a.contains(char::is_whitespace) || a.contains('\'') {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
