//! The edit form of a QOS, an account or one of a user's associations: one
//! field per `sacctmgr modify` key of the shared vocabulary
//! (`spur_vocab::keys::Entity::keys`), prefilled with the current
//! value in the spelling an admin would type.
//!
//! One form type for all three, so every entity is validated, diffed and
//! confirmed the same way. Submitting validates every changed field with the
//! same parser the controller uses and yields a diff; only changed keys are
//! sent, because modify preserves every key it is not given.

use crate::model::action::Snapshot;
use crate::model::format;
use crate::model::table::Target;
use crate::model::write::WriteOp;
use spur_proto::v1::{Account, Association, Qos, User};
use spur_vocab::keys::{self, Entity, KeyDef, Kind};
use tui_input::Input;

#[derive(Debug, Clone)]
pub struct FormField {
    pub def: &'static KeyDef,
    pub original: String,
    pub input: Input,
}

#[derive(Debug, Clone)]
pub struct EditForm {
    pub entity: Entity,
    /// The record, as `sacctmgr modify ENTITY where ...` names it.
    pub filter: Vec<(String, String)>,
    pub fields: Vec<FormField>,
    pub focus: usize,
}

/// One changed field, as shown in the confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    pub key: &'static str,
    pub from: String,
    pub to: String,
    /// The pair sent to the controller.
    pub wire: (String, String),
}

/// The form for a row of the QOS or Accounts pane, or why there is none.
pub fn open(data: Option<&Snapshot>, target: &Target) -> Result<EditForm, String> {
    let gone = |what: String| format!("{what} is no longer there; wait for the refresh");
    let data = data.ok_or("nothing loaded yet")?;
    match target {
        Target::Qos(name) => {
            let q = data.qos.iter().find(|q| &q.name == name).ok_or_else(|| gone(format!("QOS {name}")))?;
            if q.synthetic {
                return Err(format!(
                    "{name} is a placeholder shown while no QOS exists; add one with sacctmgr"
                ));
            }
            Ok(EditForm::qos(q))
        }
        Target::Account(name) => data
            .accounts
            .iter()
            .find(|a| &a.name == name)
            .map(EditForm::account)
            .ok_or_else(|| gone(format!("account {name}"))),
        Target::Assoc { user, account, partition } => data
            .users
            .iter()
            .filter(|u| &u.name == user)
            .find_map(|u| {
                let a = u.associations.iter().find(|a| &a.account == account && &a.partition == partition)?;
                Some(EditForm::assoc(u, a))
            })
            .ok_or_else(|| gone(format!("user {user} in {account}"))),
        Target::Root => Err("the controller has no root account record to edit".into()),
        Target::Txn(_) => Err("txn rows are the audit record; they cannot be edited".into()),
        Target::Job(_)
        | Target::Node(_)
        | Target::Layer { .. }
        | Target::Provisioner(_)
        | Target::Reservation(_)
        | Target::Reason(_) => Err("only QOS, accounts and users are edited here".into()),
    }
}

/// The current value of a QOS key as sacctmgr would accept it back; None for
/// keys the console cannot read from a record (they are left out of the form).
fn qos_value(q: &Qos, key: &str) -> Option<String> {
    Some(match key {
        "description" => q.description.clone(),
        "priority" => q.priority.to_string(),
        "preemptmode" => q.preempt_mode.clone(),
        "preempt" => format::list(&q.preempt),
        "preemptexempttime" => q.preempt_exempt_time_secs.map(format::seconds).unwrap_or_default(),
        "usagefactor" => format::factor(q.usage_factor),
        "maxjobsperuser" => format::limit(q.max_jobs_per_user),
        "maxwall" => format::wall(q.max_wall_minutes),
        "maxtresperjob" => q.max_tres_per_job.clone(),
        "maxsubmitjobsperuser" => format::limit(q.max_submit_jobs_per_user),
        "maxsubmitjobsperaccount" => format::limit(q.max_submit_jobs_per_account),
        "grpsubmit" => format::limit(q.grp_submit),
        "maxtresperuser" => q.max_tres_per_user.clone(),
        "grptres" => q.grp_tres.clone(),
        "grpwall" => format::wall(q.grp_wall_minutes),
        "flags" => format::list(&q.flags),
        "idlefillpreemptable" => if q.idle_fill_preemptable { "yes" } else { "no" }.to_string(),
        _ => return None,
    })
}

/// [`qos_value`] for an account; `name` is the `where`, not a value.
fn account_value(a: &Account, key: &str) -> Option<String> {
    Some(match key {
        "description" => a.description.clone(),
        "organization" => a.organization.clone(),
        "parent" => a.parent.clone(),
        "fairshare" => format::factor(a.fairshare),
        "maxrunningjobs" => format::limit(a.max_jobs),
        "grptres" => a.grp_tres.clone(),
        "grpsubmit" => format::limit(a.grp_submit),
        _ => return None,
    })
}

/// [`qos_value`] for a user and one association; name, account and
/// partition pick the association and cannot be changed by a modify.
fn user_value(u: &User, a: &Association, key: &str) -> Option<String> {
    Some(match key {
        "adminlevel" => u.admin_level.clone(),
        "defaultaccount" => u.default_account.clone(),
        "defaultqos" => a.default_qos.clone(),
        "qos" => format::list(&a.qos),
        "maxrunningjobs" => format::limit(a.max_jobs),
        "maxsubmitjobs" => format::limit(a.max_submit_jobs),
        "grpsubmit" => format::limit(a.grp_submit),
        "maxtresperjob" => a.max_tres_per_job.clone(),
        "grptres" => a.grp_tres.clone(),
        "maxwall" => format::wall(a.max_wall_minutes),
        _ => return None,
    })
}

fn pair(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

impl EditForm {
    fn new(
        entity: Entity,
        filter: Vec<(String, String)>,
        value: impl Fn(&str) -> Option<String>,
    ) -> EditForm {
        let fields = entity
            .keys()
            .iter()
            // Triggers are actions, not values.
            .filter(|d| d.kind != Kind::Trigger)
            .filter_map(|def| {
                let original = value(def.key)?;
                Some(FormField { def, input: Input::new(original.clone()), original })
            })
            .collect();
        EditForm { entity, filter, fields, focus: 0 }
    }

    pub fn qos(q: &Qos) -> EditForm {
        EditForm::new(Entity::Qos, vec![pair("name", &q.name)], |k| qos_value(q, k))
    }

    pub fn account(a: &Account) -> EditForm {
        EditForm::new(Entity::Account, vec![pair("name", &a.name)], |k| account_value(a, k))
    }

    /// The association's limits and QOS, and the user's own keys.
    pub fn assoc(u: &User, a: &Association) -> EditForm {
        let mut filter = vec![pair("name", &u.name), pair("account", &a.account)];
        // An empty partition is the account-wide association; sacctmgr names
        // it by leaving partition= out (which also reaches any per-partition
        // association of that account, exactly as the CLI would).
        if !a.partition.is_empty() {
            filter.push(pair("partition", &a.partition));
        }
        EditForm::new(Entity::User, filter, |k| user_value(u, a, k))
    }

    /// "QOS highprio", "user alice in ml": the dialog titles name it so.
    pub fn subject(&self) -> String {
        crate::model::write::subject(self.entity, &self.filter)
    }

    pub fn focused(&self) -> Option<&FormField> {
        self.fields.get(self.focus)
    }

    pub fn focused_mut(&mut self) -> Option<&mut FormField> {
        self.fields.get_mut(self.focus)
    }

    /// The write this form asks for: Ok(None) when nothing changed, Err naming
    /// the first field whose new value the controller would refuse.
    pub fn to_write(&self) -> Result<Option<WriteOp>, String> {
        let changes: Vec<FieldChange> =
            self.fields.iter().filter_map(|f| f.change().transpose()).collect::<Result<_, _>>()?;
        if changes.is_empty() {
            return Ok(None);
        }
        Ok(Some(WriteOp::Modify {
            entity: self.entity,
            filter: self.filter.clone(),
            diff: changes.iter().map(|c| format!("{}: {} → {}", c.key, c.from, c.to)).collect(),
            set: changes.into_iter().map(|c| c.wire).collect(),
        }))
    }
}

impl FormField {
    pub fn key(&self) -> &'static str {
        self.def.key
    }

    /// The change this field makes (None when it still means what the
    /// controller has), or the parser's complaint about the new value.
    pub fn change(&self) -> Result<Option<FieldChange>, String> {
        let new = self.input.value().trim();
        let old = self.original.as_str();
        if new == old {
            return Ok(None);
        }
        // An emptied limit means "no limit", which sacctmgr spells -1.
        let lifts = new.is_empty() && matches!(self.def.kind, Kind::Count | Kind::Minutes | Kind::Seconds);
        let wire = if lifts { "-1" } else { new };
        let parsed = keys::parse_value(self.def, wire).map_err(|e| format!("{}: {e}", self.def.key))?;
        // `1` and `1.0`, or `1440` and `1-00:00:00`, are no change.
        if keys::parse_value(self.def, old).is_ok_and(|o| o == parsed) {
            return Ok(None);
        }
        let shown = |v: &str| if v.is_empty() { "(unset)".to_string() } else { v.to_string() };
        Ok(Some(FieldChange {
            key: self.def.key,
            from: shown(old),
            to: shown(new),
            wire: (self.def.key.to_string(), wire.to_string()),
        }))
    }
}
