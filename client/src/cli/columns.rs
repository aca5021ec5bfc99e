//! The columns of each `show`, with Slurm's names and headers. `format=`
//! picks and orders them, case-insensitively, with an optional `%width`.

use crate::vocab::time::{format_minutes, format_seconds};
use spur_proto::v1 as pb;

pub struct Column<T> {
    /// The name `format=` uses (and the JSON key).
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub header: &'static str,
    pub get: fn(&T) -> String,
}

const fn col<T>(
    name: &'static str,
    aliases: &'static [&'static str],
    header: &'static str,
    get: fn(&T) -> String,
) -> Column<T> {
    Column { name, aliases, header, get }
}

/// Picks columns by `format=` names, or the defaults.
pub fn select<'a, T>(
    all: &'a [Column<T>],
    defaults: &[&str],
    format: Option<&[String]>,
    entity: &str,
) -> Result<Vec<&'a Column<T>>, String> {
    let find = |want: &str| {
        let want = want.split('%').next().unwrap_or(want).trim();
        all.iter().find(|c| {
            c.name.eq_ignore_ascii_case(want) || c.aliases.iter().any(|a| a.eq_ignore_ascii_case(want))
        })
    };
    match format {
        None => Ok(defaults.iter().filter_map(|d| find(d)).collect()),
        Some(names) => names
            .iter()
            .map(|n| {
                find(n).ok_or_else(|| {
                    let known: Vec<&str> = all.iter().map(|c| c.name).collect();
                    format!("format: unknown {entity} column '{n}' (known: {})", known.join(","))
                })
            })
            .collect(),
    }
}

pub fn lim(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

pub fn wall(v: Option<i64>) -> String {
    v.map(|m| format_minutes(m.max(0) as u64)).unwrap_or_default()
}

/// Slurm shows fairshare as an integer in the Share column.
pub fn share(f: f64) -> String {
    format!("{}", f.round() as i64)
}

pub const QOS_DEFAULT: &[&str] = &[
    "Name",
    "Priority",
    "Preempt",
    "PreemptMode",
    "Flags",
    "UsageFactor",
    "GrpTRES",
    "GrpWall",
    "MaxTRES",
    "MaxWall",
    "MaxTRESPU",
    "MaxJobsPU",
    "MaxSubmitPU",
];

pub const QOS: &[Column<pb::Qos>] = &[
    col("Name", &["qos"], "Name", |q| q.name.clone()),
    col("Descr", &["description"], "Descr", |q| q.description.clone()),
    col("Priority", &[], "Priority", |q| q.priority.to_string()),
    col("Preempt", &[], "Preempt", |q| q.preempt.join(",")),
    col("PreemptExemptTime", &[], "PreemptExemptTime", |q| {
        q.preempt_exempt_time_secs.map(|s| format_seconds(s.max(0) as u64)).unwrap_or_default()
    }),
    col("PreemptMode", &[], "PreemptMode", |q| q.preempt_mode.clone()),
    col("Flags", &[], "Flags", |q| q.flags.join(",")),
    col("UsageFactor", &[], "UsageFactor", |q| format!("{:.6}", q.usage_factor)),
    col("GrpTRES", &[], "GrpTRES", |q| q.grp_tres.clone()),
    col("GrpSubmit", &["grpsubmitjobs"], "GrpSubmit", |q| lim(q.grp_submit)),
    col("GrpWall", &[], "GrpWall", |q| wall(q.grp_wall_minutes)),
    col("MaxTRES", &["maxtresperjob"], "MaxTRES", |q| q.max_tres_per_job.clone()),
    col("MaxWall", &["maxwallduration"], "MaxWall", |q| wall(q.max_wall_minutes)),
    col("MaxTRESPU", &["maxtresperuser"], "MaxTRESPU", |q| q.max_tres_per_user.clone()),
    col("MaxJobsPU", &["maxjobsperuser"], "MaxJobsPU", |q| lim(q.max_jobs_per_user)),
    col("MaxSubmitPU", &["maxsubmitjobsperuser", "maxsubmitjobspu"], "MaxSubmitPU", |q| {
        lim(q.max_submit_jobs_per_user)
    }),
    col("MaxSubmitPA", &["maxsubmitjobsperaccount", "maxsubmitjobspa"], "MaxSubmitPA", |q| {
        lim(q.max_submit_jobs_per_account)
    }),
    col("IdleFillPreemptable", &[], "IdleFillPreemptable", |q| {
        if q.idle_fill_preemptable { "yes".into() } else { "no".into() }
    }),
];

pub const ACCOUNT_DEFAULT: &[&str] = &["Account", "Descr", "Org", "Parent", "Share", "GrpTRES"];

pub const ACCOUNT: &[Column<pb::Account>] = &[
    col("Account", &["name"], "Account", |a| a.name.clone()),
    col("Descr", &["description"], "Descr", |a| a.description.clone()),
    col("Org", &["organization"], "Org", |a| a.organization.clone()),
    col("Parent", &["parentname"], "Parent", |a| a.parent.clone()),
    col("Share", &["fairshare"], "Share", |a| share(a.fairshare)),
    col("GrpTRES", &[], "GrpTRES", |a| a.grp_tres.clone()),
    col("MaxJobs", &["maxrunningjobs"], "MaxJobs", |a| lim(a.max_jobs)),
    col("GrpSubmit", &["grpsubmitjobs"], "GrpSubmit", |a| lim(a.grp_submit)),
];

/// One association, flattened for `show user` and `show association`.
pub struct AssocRow {
    pub cluster: String,
    pub user: String,
    pub admin: String,
    pub default_account: String,
    pub share: String,
    pub assoc: pb::Association,
}

pub const USER_DEFAULT: &[&str] = &[
    "User",
    "Account",
    "Admin",
    "DefaultAccount",
    "QOS",
    "DefaultQOS",
    "MaxJobs",
    "MaxSubmit",
    "GrpSubmit",
    "MaxWall",
    "MaxTRES",
    "GrpTRES",
];

pub const ASSOC_DEFAULT: &[&str] = &[
    "Cluster",
    "Account",
    "User",
    "Partition",
    "Share",
    "GrpTRES",
    "MaxJobs",
    "MaxSubmit",
    "GrpSubmit",
    "MaxWall",
    "MaxTRES",
    "QOS",
    "DefaultQOS",
];

pub const ASSOC: &[Column<AssocRow>] = &[
    col("Cluster", &[], "Cluster", |r| r.cluster.clone()),
    col("User", &["name"], "User", |r| r.user.clone()),
    col("Account", &[], "Account", |r| r.assoc.account.clone()),
    col("Partition", &[], "Partition", |r| r.assoc.partition.clone()),
    col("Admin", &["adminlevel"], "Admin", |r| r.admin.clone()),
    col("DefaultAccount", &["defacct", "def acct"], "Default Acct", |r| r.default_account.clone()),
    col("Share", &["fairshare"], "Share", |r| r.share.clone()),
    col("QOS", &[], "QOS", |r| r.assoc.qos.join(",")),
    col("DefaultQOS", &["defqos", "def qos"], "Def QOS", |r| r.assoc.default_qos.clone()),
    col("MaxJobs", &["maxrunningjobs"], "MaxJobs", |r| lim(r.assoc.max_jobs)),
    col("MaxSubmit", &["maxsubmitjobs"], "MaxSubmit", |r| lim(r.assoc.max_submit_jobs)),
    col("GrpSubmit", &["grpsubmitjobs"], "GrpSubmit", |r| lim(r.assoc.grp_submit)),
    col("MaxWall", &["maxwallduration"], "MaxWall", |r| wall(r.assoc.max_wall_minutes)),
    col("MaxTRES", &["maxtresperjob"], "MaxTRES", |r| r.assoc.max_tres_per_job.clone()),
    col("GrpTRES", &[], "GrpTRES", |r| r.assoc.grp_tres.clone()),
];

pub const TRES_DEFAULT: &[&str] = &["Type", "Name", "ID"];

pub const TRES: &[Column<pb::Tres>] = &[
    col("Type", &[], "Type", |t| t.r#type.clone()),
    col("Name", &[], "Name", |t| t.name.clone()),
    col("ID", &[], "ID", |t| t.id.to_string()),
];

pub const TXN_DEFAULT: &[&str] = &["Time", "Action", "Actor", "Where", "Info"];

pub const TXN: &[Column<pb::TxnRow>] = &[
    col("Time", &[], "Time", |r| crate::vocab::txn::format_time(r.time_ms)),
    col("Action", &[], "Action", |r| r.action.clone()),
    col("Actor", &[], "Actor", |r| r.actor.clone()),
    col("Where", &[], "Where", |r| format!("{}:{}", r.entity, r.name)),
    col("Info", &[], "Info", |r| r.info.clone()),
    col("Outcome", &[], "Outcome", |r| r.outcome.clone()),
    col("Verified", &[], "Verified", |r| if r.verified { "yes".into() } else { "no".into() }),
    col("Source", &[], "Source", |r| r.source.clone()),
    col("Peer", &[], "Peer", |r| r.peer.clone()),
    col("ID", &[], "ID", |r| r.id.to_string()),
    col("ActorUID", &[], "ActorUID", |r| lim(r.actor_uid)),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_is_case_insensitive_and_ordered() {
        let f = vec!["maxwall".to_string(), "NAME%20".to_string()];
        let cols = select(QOS, QOS_DEFAULT, Some(&f), "qos").unwrap();
        assert_eq!(cols.iter().map(|c| c.name).collect::<Vec<_>>(), ["MaxWall", "Name"]);
    }

    #[test]
    fn unknown_format_column_is_named() {
        let f = vec!["Bogus".to_string()];
        let err = select(QOS, QOS_DEFAULT, Some(&f), "qos").err().unwrap();
        assert!(err.contains("'Bogus'"), "{err}");
    }

    #[test]
    fn defaults_all_exist() {
        assert_eq!(select(QOS, QOS_DEFAULT, None, "qos").unwrap().len(), QOS_DEFAULT.len());
        assert_eq!(select(ACCOUNT, ACCOUNT_DEFAULT, None, "a").unwrap().len(), ACCOUNT_DEFAULT.len());
        assert_eq!(select(ASSOC, USER_DEFAULT, None, "u").unwrap().len(), USER_DEFAULT.len());
        assert_eq!(select(ASSOC, ASSOC_DEFAULT, None, "a").unwrap().len(), ASSOC_DEFAULT.len());
    }

    #[test]
    fn unset_is_blank_and_zero_is_zero() {
        assert_eq!(lim(None), "");
        assert_eq!(lim(Some(0)), "0");
        assert_eq!(wall(Some(1440)), "1-00:00:00");
        assert_eq!(share(1.0), "1");
    }
}
