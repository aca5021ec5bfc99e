//! Applying `sacctmgr add/modify qos` pairs to a QOS, and validating it.

use super::Catalog;
use super::pairs::{Pair, internal};
use crate::error::{Error, Result};
use crate::model::Qos;
use spur_vocab::keys::Value;

pub fn apply(q: &mut Qos, pairs: &[Pair]) -> Result<()> {
    let has = |k: &str| pairs.iter().any(|p| p.def.key == k);
    if has("preemptexempttime") && has("clearpreemptexempttime") {
        return Err(Error::invalid(
            "clearpreemptexempttime",
            "cannot be combined with preemptexempttime= in one command",
        ));
    }
    for p in pairs {
        match (p.def.key, &p.value) {
            ("name", _) => {}
            ("description", Value::Text(t)) => q.description = t.clone(),
            ("priority", Value::Int(v)) => q.priority = *v,
            ("preemptmode", Value::PreemptMode(m)) => q.preempt_mode = *m,
            ("preempt", Value::List(l)) => q.preempt = l.clone(),
            ("preemptexempttime", Value::Limit(v)) => q.preempt_exempt_time = *v,
            ("clearpreemptexempttime", Value::Trigger(t)) => {
                if *t {
                    q.preempt_exempt_time = None;
                }
            }
            ("usagefactor", Value::Float(v)) => q.usage_factor = *v,
            ("maxjobsperuser", Value::Limit(v)) => q.max_jobs_per_user = *v,
            ("maxwall", Value::Limit(v)) => q.max_wall = *v,
            ("maxtresperjob", Value::Tres(t)) => q.max_tres_per_job = t.apply(&q.max_tres_per_job),
            ("maxsubmitjobsperuser", Value::Limit(v)) => q.max_submit_jobs_per_user = *v,
            ("maxsubmitjobsperaccount", Value::Limit(v)) => q.max_submit_jobs_per_account = *v,
            ("grpsubmit", Value::Limit(v)) => q.grp_submit = *v,
            ("maxtresperuser", Value::Tres(t)) => q.max_tres_per_user = t.apply(&q.max_tres_per_user),
            ("grptres", Value::Tres(t)) => q.grp_tres = t.apply(&q.grp_tres),
            ("grpwall", Value::Limit(v)) => q.grp_wall = *v,
            ("flags", Value::Flags(f)) => q.flags = *f,
            ("idlefillpreemptable", Value::Bool(b)) => q.idle_fill_preemptable = *b,
            (k, _) => return Err(internal(k)),
        }
    }
    Ok(())
}

/// Cross-record checks: the preempt allow-list names existing QOS.
pub fn validate(q: &Qos, catalog: &Catalog) -> Result<()> {
    for name in &q.preempt {
        if name != &q.name && !catalog.qos.contains_key(name) {
            return Err(Error::invalid("preempt", format!("QOS '{name}' does not exist")));
        }
    }
    Ok(())
}

/// The placeholder `show qos` prints when no QOS exists: preemption off, usage factor 1.0.
pub fn synthetic_normal() -> Qos {
    Qos { name: "normal".into(), ..Qos::default() }
}
