//! The QOS edit form: one field per `sacctmgr modify qos` key of the shared
//! vocabulary (`spur_client::vocab::keys::QOS_KEYS`), prefilled with the
//! current value in the spelling an admin would type.
//!
//! Submitting validates every changed field with the same parser the
//! controller uses and yields a diff; only changed keys are sent, because
//! modify preserves every key it is not given.

use crate::action::WriteOp;
use crate::format;
use spur_client::vocab::keys::{self, KeyDef, Kind, QOS_KEYS};
use spur_proto::v1::Qos;
use tui_input::Input;

#[derive(Debug, Clone)]
pub struct FormField {
    pub def: &'static KeyDef,
    pub original: String,
    pub input: Input,
}

#[derive(Debug, Clone)]
pub struct QosForm {
    pub name: String,
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

/// The current value of a QOS key as sacctmgr would accept it back; None for
/// keys the console cannot read from a record (they are left out of the form).
fn current(q: &Qos, key: &str) -> Option<String> {
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

impl QosForm {
    pub fn from_qos(q: &Qos) -> QosForm {
        let fields = QOS_KEYS
            .iter()
            // The name is the `where`; triggers are actions, not values.
            .filter(|d| !matches!(d.kind, Kind::Name | Kind::Trigger))
            .filter_map(|def| {
                let original = current(q, def.key)?;
                Some(FormField { def, input: Input::new(original.clone()), original })
            })
            .collect();
        QosForm { name: q.name.clone(), fields, focus: 0 }
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
        Ok(Some(WriteOp::ModifyQos {
            name: self.name.clone(),
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
