//! The one place where domain records become proto messages.

use crate::accounting::ChangeOut;
use crate::model::{Account, Assoc, Qos, User};
use spur_client::vocab::tres::{self, format_map};
use spur_proto::v1 as pb;

fn lim(v: Option<u64>) -> Option<i64> {
    v.map(|v| i64::try_from(v).unwrap_or(i64::MAX))
}

pub fn qos(q: &Qos, synthetic: bool) -> pb::Qos {
    pb::Qos {
        name: q.name.clone(),
        description: q.description.clone(),
        priority: q.priority,
        preempt_mode: q.preempt_mode.as_str().into(),
        preempt: q.preempt.clone(),
        preempt_exempt_time_secs: lim(q.preempt_exempt_time),
        usage_factor: q.usage_factor,
        max_jobs_per_user: lim(q.max_jobs_per_user),
        max_wall_minutes: lim(q.max_wall),
        max_tres_per_job: format_map(&q.max_tres_per_job),
        max_submit_jobs_per_user: lim(q.max_submit_jobs_per_user),
        max_submit_jobs_per_account: lim(q.max_submit_jobs_per_account),
        grp_submit: lim(q.grp_submit),
        max_tres_per_user: format_map(&q.max_tres_per_user),
        grp_tres: format_map(&q.grp_tres),
        grp_wall_minutes: lim(q.grp_wall),
        flags: q.flags.names().into_iter().map(String::from).collect(),
        idle_fill_preemptable: q.idle_fill_preemptable,
        synthetic,
    }
}

pub fn account(a: &Account) -> pb::Account {
    pb::Account {
        name: a.name.clone(),
        description: a.description.clone(),
        organization: a.organization.clone(),
        parent: a.parent.clone(),
        fairshare: a.fairshare,
        max_jobs: lim(a.max_jobs),
        grp_tres: format_map(&a.grp_tres),
    }
}

pub fn assoc(user: &str, a: &Assoc) -> pb::Association {
    pb::Association {
        user: user.into(),
        account: a.account.clone(),
        partition: a.partition.clone(),
        qos: a.qos.clone(),
        default_qos: a.default_qos.clone(),
        max_jobs: lim(a.max_jobs),
        max_submit_jobs: lim(a.max_submit_jobs),
        grp_submit: lim(a.grp_submit),
        max_tres_per_job: format_map(&a.max_tres_per_job),
        grp_tres: format_map(&a.grp_tres),
        max_wall_minutes: lim(a.max_wall),
    }
}

pub fn user(u: &User, assocs: &[&Assoc]) -> pb::User {
    pb::User {
        name: u.name.clone(),
        admin_level: u.admin_level.as_str().into(),
        default_account: u.default_account.clone(),
        associations: assocs.iter().map(|a| assoc(&u.name, a)).collect(),
    }
}

pub fn tres_table() -> Vec<pb::Tres> {
    tres::TRES
        .iter()
        .map(|t| {
            let (ty, name) = tres::type_and_name(t);
            pb::Tres { id: i64::from(t.id), r#type: ty.into(), name: name.into() }
        })
        .collect()
}

pub fn change(c: &ChangeOut) -> pb::Change {
    pb::Change {
        entity: c.entity.into(),
        name: c.name.clone(),
        action: c.action.as_str().into(),
        changed_json: if c.changed.is_null() { String::new() } else { c.changed.to_string() },
    }
}

pub fn kvs(pairs: &[pb::KeyValue]) -> Vec<(String, String)> {
    pairs.iter().map(|kv| (kv.key.clone(), kv.value.clone())).collect()
}
