//! Every `sacctmgr` key, with its aliases and value kind, defined once.
//!
//! The controller validates writes with [`parse`]; the CLI and the console
//! use the same table, so a value is accepted or refused identically everywhere.

use crate::names_impl::{AdminLevel, PreemptMode, QosFlags};
use crate::{time_impl as time, tres_impl as tres};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
/// A sacctmgr entity that has keys.
pub enum Entity {
    /// A QOS.
    Qos,
    /// An account.
    Account,
    /// A user association.
    User,
}

impl Entity {
    /// The entity's sacctmgr name.
    pub fn as_str(self) -> &'static str {
        match self {
            Entity::Qos => "qos",
            Entity::Account => "account",
            Entity::User => "user",
        }
    }

    /// The keys this entity takes.
    pub fn keys(self) -> &'static [KeyDef] {
        match self {
            Entity::Qos => QOS_KEYS,
            Entity::Account => ACCOUNT_KEYS,
            Entity::User => USER_KEYS,
        }
    }
}

/// How a key's value is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An entity name: lower-cased, `[a-z0-9_.-]`.
    Name,
    /// Free text.
    Text,
    /// A whole number (-1 clears).
    Int,
    /// A decimal number.
    Float,
    /// A count limit: `-1` (or empty) lifts it, `0` is a literal 0.
    Count,
    /// A wall-time limit in minutes, `-1` lifts it.
    Minutes,
    /// A duration in seconds, `-1` clears it.
    Seconds,
    /// `1`/`yes`/`true` triggers the action the key names.
    Trigger,
    /// A TRES list (`cpu=4,mem=8G`).
    Tres,
    /// A comma-separated list of names.
    NameList,
    /// A preempt mode.
    PreemptMode,
    /// QOS flags.
    QosFlags,
    /// Yes or no.
    Bool,
    /// An admin level.
    AdminLevel,
}

#[derive(Debug)]
/// One key: its canonical name, aliases, value kind and help line.
pub struct KeyDef {
    /// The canonical (lower-case) name.
    pub key: &'static str,
    /// Other spellings Slurm accepts.
    pub aliases: &'static [&'static str],
    /// What the value must be.
    pub kind: Kind,
    /// One line of help.
    pub help: &'static str,
}

const fn k(key: &'static str, aliases: &'static [&'static str], kind: Kind, help: &'static str) -> KeyDef {
    KeyDef { key, aliases, kind, help }
}

/// Every QOS key.
pub const QOS_KEYS: &[KeyDef] = &[
    k("name", &["qos"], Kind::Name, "QOS name"),
    k("description", &["descr"], Kind::Text, "free-text description"),
    k("priority", &[], Kind::Int, "base priority seed (1000 + priority)"),
    k("preemptmode", &[], Kind::PreemptMode, "off, cancel, requeue or suspend"),
    k("preempt", &[], Kind::NameList, "QOS this QOS may preempt"),
    k("preemptexempttime", &[], Kind::Seconds, "seconds a job runs before it can be preempted"),
    k("clearpreemptexempttime", &[], Kind::Trigger, "revert preemptexempttime to partition/global"),
    k("usagefactor", &[], Kind::Float, "multiplier on charged usage"),
    k("maxjobsperuser", &["maxjobspu"], Kind::Count, "running jobs per user"),
    k("maxwall", &["maxwallduration", "maxwalldurationperjob"], Kind::Minutes, "wall time per job"),
    k("maxtresperjob", &["maxtres"], Kind::Tres, "TRES cap for one job"),
    k("maxsubmitjobsperuser", &["maxsubmitjobspu", "maxsubmitpu"], Kind::Count, "submitted jobs per user"),
    k(
        "maxsubmitjobsperaccount",
        &["maxsubmitpa", "maxsubmitjobspa"],
        Kind::Count,
        "submitted jobs per account",
    ),
    k("grpsubmit", &["grpsubmitjobs"], Kind::Count, "submitted jobs across the QOS"),
    k("maxtresperuser", &["maxtrespu"], Kind::Tres, "TRES cap across one user's jobs"),
    k("grptres", &[], Kind::Tres, "TRES cap across all jobs of the QOS"),
    k("grpwall", &[], Kind::Minutes, "wall-clock budget across the QOS"),
    k("flags", &[], Kind::QosFlags, "QOS flags (DenyOnLimit)"),
    k("idlefillpreemptable", &[], Kind::Bool, "jobs reclaimable by idle-fill even inside quota"),
];

/// Every account key.
pub const ACCOUNT_KEYS: &[KeyDef] = &[
    k("name", &["account"], Kind::Name, "account name"),
    k("description", &["descr"], Kind::Text, "free-text description"),
    k("organization", &["org"], Kind::Text, "organization"),
    k("parent", &[], Kind::Name, "parent account (default root)"),
    k("fairshare", &["share", "shares"], Kind::Float, "fairshare weight"),
    k("maxrunningjobs", &["maxjobs"], Kind::Count, "running jobs of the account"),
    k("grptres", &[], Kind::Tres, "TRES cap across the account's jobs"),
    k("grpsubmit", &["grpsubmitjobs"], Kind::Count, "submitted jobs across the account and its sub-accounts"),
];

/// Every user-association key.
pub const USER_KEYS: &[KeyDef] = &[
    k("name", &["user"], Kind::Name, "user name"),
    k("account", &[], Kind::Name, "account to attach the user to"),
    k("defaultaccount", &[], Kind::Name, "account to attach, marked as the default"),
    k("partition", &[], Kind::Name, "partition of the association (blank: all)"),
    k("adminlevel", &[], Kind::AdminLevel, "None, Operator or Administrator"),
    k("defaultqos", &[], Kind::Name, "QOS used when the job names none"),
    // Slurm's QosLevel is the association's QOS list.
    k("qos", &["qoslevel"], Kind::NameList, "QOS allow-list"),
    k("maxrunningjobs", &["maxjobs"], Kind::Count, "running jobs of the association"),
    k("maxsubmitjobs", &["maxsubmit"], Kind::Count, "submitted jobs of the user"),
    k("grpsubmit", &["grpsubmitjobs"], Kind::Count, "submitted jobs of the association"),
    k("maxtresperjob", &["maxtres"], Kind::Tres, "TRES cap for one job"),
    k("grptres", &[], Kind::Tres, "TRES cap across the association's jobs"),
    k("maxwall", &["maxwallduration"], Kind::Minutes, "wall time per job"),
];

/// A value parsed by its key's [`Kind`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A name.
    Name(String),
    /// Text.
    Text(String),
    /// A whole number.
    Int(i64),
    /// A decimal number.
    Float(f64),
    /// `None` lifts the limit.
    Limit(Option<u64>),
    /// Set or cleared.
    Trigger(bool),
    /// A TRES change.
    Tres(tres::TresPatch),
    /// A list of names.
    List(Vec<String>),
    /// A preempt mode.
    PreemptMode(PreemptMode),
    /// QOS flags.
    Flags(QosFlags),
    /// Yes or no.
    Bool(bool),
    /// An admin level.
    Admin(AdminLevel),
}

/// A refused key or value. Its text names the key, and the value when there is one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct KeyError {
    /// The key as given.
    pub key: String,
    /// What is wrong with it.
    pub message: String,
}

impl KeyError {
    /// An error about `key`.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        KeyError { key: key.into(), message: message.into() }
    }
}

/// Slurm's keys of sacctmgr.1 that Spur accepts without effect, per entity,
/// with why: `(key, entities, why)`. The association keys belong to
/// accounts and users alike.
pub const NO_EFFECT: &[(&str, &[Entity], &str)] = &[
    ("cluster", ACCT_USER, "Spur serves one cluster"),
    ("rawusage", ALL, "Spur's usage is measured, not set"),
    ("grpjobs", ALL, "Spur limits running jobs with MaxJobs (accounts, users) and MaxJobsPU (QOS)"),
    ("grpjobsaccrue", ALL, ACCRUE),
    ("maxjobsaccrue", ACCT_USER, ACCRUE),
    ("grptresmins", ALL, MINS),
    ("grptresrunmins", ALL, MINS),
    ("grpwall", ACCT_USER, "Spur keeps wall budgets on QOS (GrpWall) only"),
    ("priority", ACCT_USER, "Spur's association priority comes from its QOS and fair share"),
    ("flags", &[Entity::Account], "Spur has no account flags (coordinators)"),
    (
        "defaultqos",
        &[Entity::Account],
        "a default QOS is a user association's in Spur (DefaultQOS on the user)",
    ),
    ("qoslevel", &[Entity::Account], "QOS lists are a user association's in Spur (QOS on the user)"),
    ("newname", &[Entity::User], "Spur renames no user; delete and add"),
    ("defaultwckey", &[Entity::User], WCKEYS),
    ("wckeys", &[Entity::User], WCKEYS),
    ("gracetime", &[Entity::Qos], "Spur's preemption has no grace time (PreemptExemptTime protects a job)"),
    ("limitfactor", &[Entity::Qos], "Spur's QOS limits are not scaled"),
    ("minpriothreshold", &[Entity::Qos], "Spur reserves no resources by priority threshold"),
    ("usagethreshold", &[Entity::Qos], "Spur has no usage threshold on a QOS"),
];

const ALL: &[Entity] = &[Entity::Qos, Entity::Account, Entity::User];
const ACCT_USER: &[Entity] = &[Entity::Account, Entity::User];
const ACCRUE: &str = "Spur's jobs accrue age from eligibility without a limit";
const MINS: &str = "Spur has no TRES-minute budgets";
const WCKEYS: &str = "Spur accepts any WCKey a job names (no WCKey table)";

/// What a typed key of an entity is.
#[derive(Debug, Clone, Copy)]
pub enum Resolved {
    /// One of Spur's keys.
    Key(&'static KeyDef),
    /// A Slurm key Spur accepts without effect: its name, and why.
    NoEffect(&'static str, &'static str),
}

impl PartialEq for Resolved {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Resolved::Key(a), Resolved::Key(b)) => a.key == b.key,
            (Resolved::NoEffect(a, x), Resolved::NoEffect(b, y)) => a == b && x == y,
            _ => false,
        }
    }
}

/// The key `key` names for `entity` by the vocabulary's keyword rule (any
/// case, any unambiguous prefix of a key or alias); `Ok(None)` for none.
pub fn resolve(entity: Entity, key: &str) -> Result<Option<Resolved>, crate::keyword_impl::Ambiguous> {
    let spur = entity
        .keys()
        .iter()
        .flat_map(|d| std::iter::once(d.key).chain(d.aliases.iter().copied()).map(|s| (s, d.key)));
    let slurm = NO_EFFECT.iter().filter(|(_, es, _)| es.contains(&entity)).map(|(k, ..)| (*k, *k));
    let Some(name) = crate::keyword_impl::resolve_alias(key, spur.chain(slurm))? else { return Ok(None) };
    Ok(Some(match entity.keys().iter().find(|d| d.key == name) {
        Some(d) => Resolved::Key(d),
        None => {
            let why = NO_EFFECT.iter().find(|(k, ..)| *k == name).map_or("", |(_, _, why)| *why);
            Resolved::NoEffect(name, why)
        }
    }))
}

/// The key `key` (any alias or unambiguous prefix, any case) of `entity`.
pub fn lookup(entity: Entity, key: &str) -> Option<&'static KeyDef> {
    match resolve(entity, key) {
        Ok(Some(Resolved::Key(d))) => Some(d),
        _ => None,
    }
}

/// Parses one `key=value` pair for `entity`.
pub fn parse(entity: Entity, key: &str, raw: &str) -> Result<(&'static KeyDef, Value), KeyError> {
    let what = entity.as_str();
    let def = match resolve(entity, key).map_err(|e| KeyError::new(key, e.to_string()))? {
        Some(Resolved::Key(d)) => d,
        Some(Resolved::NoEffect(name, why)) => {
            return Err(KeyError::new(key, format!("{what} key '{name}' has no effect in Spur: {why}")));
        }
        None => return Err(KeyError::new(key, format!("unknown {what} key '{key}'"))),
    };
    let value = parse_value(def, raw).map_err(|m| KeyError::new(key, m))?;
    Ok((def, value))
}

/// Parses `raw` as `def`'s kind.
pub fn parse_value(def: &KeyDef, raw: &str) -> Result<Value, String> {
    let raw = raw.trim();
    Ok(match def.kind {
        Kind::Name => Value::Name(parse_name(raw)?),
        Kind::Text => Value::Text(raw.to_string()),
        Kind::Int => Value::Int(raw.parse().map_err(|_| format!("'{raw}' is not a whole number"))?),
        Kind::Float => {
            let v: f64 = raw.parse().map_err(|_| format!("'{raw}' is not a number"))?;
            if !v.is_finite() || v < 0.0 {
                return Err(format!("'{raw}' must be a number of 0 or more"));
            }
            Value::Float(v)
        }
        Kind::Count => Value::Limit(parse_limit(raw, |s| {
            s.parse::<u64>().map_err(|_| format!("'{s}' is not a count (a whole number, or -1 for no limit)"))
        })?),
        Kind::Minutes => Value::Limit(parse_limit(raw, time::parse_minutes)?),
        Kind::Seconds => Value::Limit(parse_limit(raw, time::parse_seconds)?),
        Kind::Trigger => Value::Trigger(parse_bool(raw)?),
        Kind::Tres => Value::Tres(tres::parse_patch(raw)?),
        Kind::NameList => Value::List(parse_name_list(raw)?),
        Kind::PreemptMode => Value::PreemptMode(PreemptMode::parse(raw)?),
        Kind::QosFlags => Value::Flags(QosFlags::parse(raw)?),
        Kind::Bool => Value::Bool(parse_bool(raw)?),
        Kind::AdminLevel => Value::Admin(AdminLevel::parse(raw)?),
    })
}

fn parse_limit(raw: &str, f: impl Fn(&str) -> Result<u64, String>) -> Result<Option<u64>, String> {
    if raw.is_empty() || raw == "-1" || raw.eq_ignore_ascii_case("unlimited") {
        return Ok(None);
    }
    f(raw).map(Some)
}

/// `yes`/`no` and their usual spellings.
pub fn parse_bool(raw: &str) -> Result<bool, String> {
    match raw.to_ascii_lowercase().as_str() {
        "yes" | "true" | "1" | "y" | "on" => Ok(true),
        "no" | "false" | "0" | "n" | "off" => Ok(false),
        _ => Err(format!("'{raw}' is not yes/no, true/false or 1/0")),
    }
}

/// Names are lower-cased, as sacctmgr does, and limited to characters that
/// survive `-P` output and hostlist-style parsing.
pub fn parse_name(raw: &str) -> Result<String, String> {
    if raw.is_empty() {
        return Err("a name is required".into());
    }
    let ok = raw.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !ok {
        return Err(format!("'{raw}' is not a valid name (letters, digits, '_', '-', '.')"));
    }
    Ok(raw.to_ascii_lowercase())
}

/// A comma-separated list of valid names.
pub fn parse_name_list(raw: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let name = parse_name(part)?;
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alias_resolves_to_its_key() {
        for entity in [Entity::Qos, Entity::Account, Entity::User] {
            for def in entity.keys() {
                assert_eq!(lookup(entity, def.key).unwrap().key, def.key);
                for alias in def.aliases {
                    assert_eq!(lookup(entity, alias).unwrap().key, def.key, "{alias}");
                    assert_eq!(lookup(entity, &alias.to_uppercase()).unwrap().key, def.key);
                }
            }
        }
    }

    #[test]
    fn keys_are_defined_once_per_entity() {
        for entity in [Entity::Qos, Entity::Account, Entity::User] {
            let mut seen = std::collections::HashSet::new();
            for def in entity.keys() {
                for name in std::iter::once(&def.key).chain(def.aliases) {
                    assert!(seen.insert(*name), "{name} twice in {entity:?}");
                }
            }
        }
    }

    #[test]
    fn keys_take_unambiguous_prefixes_and_slurm_s_other_keys_have_no_effect() {
        assert_eq!(lookup(Entity::Qos, "MaxW").unwrap().key, "maxwall");
        assert_eq!(lookup(Entity::Qos, "descr").unwrap().key, "description");
        assert_eq!(lookup(Entity::User, "QosLevel").unwrap().key, "qos");
        let e = resolve(Entity::Qos, "grp").unwrap_err();
        assert!(e.candidates.contains(&"grptres") && e.candidates.contains(&"grpjobs"), "{e}");
        assert_eq!(
            resolve(Entity::Account, "Cluster"),
            Ok(Some(Resolved::NoEffect("cluster", "Spur serves one cluster")))
        );
        assert_eq!(resolve(Entity::Qos, "cluster"), Ok(None));
        let e = parse(Entity::User, "wckeys", "a").unwrap_err();
        assert!(e.to_string().contains("has no effect"), "{e}");
    }

    #[test]
    fn limits_follow_the_value_rules() {
        let p = |k: &str, v: &str| parse(Entity::Qos, k, v).map(|(_, v)| v);
        assert_eq!(p("maxjobspu", "-1"), Ok(Value::Limit(None)));
        assert_eq!(p("maxjobspu", "0"), Ok(Value::Limit(Some(0))));
        assert_eq!(p("maxwall", "1-00:00:00"), Ok(Value::Limit(Some(1440))));
        assert_eq!(p("grpwall", "10:00"), Ok(Value::Limit(Some(600))));
        assert_eq!(p("preemptexempttime", "120"), Ok(Value::Limit(Some(120))));
    }

    #[test]
    fn errors_name_the_key() {
        let e = parse(Entity::Qos, "maxwall", "abc").unwrap_err();
        assert_eq!(e.key, "maxwall");
        assert!(e.to_string().starts_with("maxwall: 'abc'"), "{e}");
        let e = parse(Entity::Qos, "bogus", "1").unwrap_err();
        assert!(e.to_string().contains("unknown qos key 'bogus'"), "{e}");
        assert!(parse(Entity::Qos, "maxjobspu", "-2").is_err());
        assert!(parse(Entity::Qos, "usagefactor", "-1").is_err());
        assert!(parse(Entity::Qos, "idlefillpreemptable", "maybe").is_err());
        assert!(parse(Entity::User, "adminlevel", "god").is_err());
        assert!(parse(Entity::Account, "name", "a b").is_err());
    }

    #[test]
    fn bools_take_every_spelling() {
        for (raw, want) in
            [("yes", true), ("true", true), ("1", true), ("no", false), ("false", false), ("0", false)]
        {
            assert_eq!(parse_bool(raw), Ok(want));
        }
    }
}
