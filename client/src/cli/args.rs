//! sacctmgr's command line: `[flags] VERB ENTITY [where] key=value... [set key=value...]`,
//! with the global flags accepted anywhere, including among the pairs.

use super::getopt::{Arg, Mode, Opt, Spec, switch, value};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Parsable {
    #[default]
    No,
    /// `-p`: `|` delimited with a trailing `|`.
    Trailing,
    /// `-P`: `|` delimited without a trailing `|`.
    NoTrailing,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags {
    pub noheader: bool,
    pub parsable: Parsable,
    pub immediate: bool,
    pub json: bool,
    pub help: bool,
    pub controller: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Add,
    Modify,
    Delete,
    Show,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Qos,
    Account,
    User,
    Association,
    Tres,
    Txn,
    /// Node history (`show event`), derived from the txn log's node rows.
    Event,
}

impl Target {
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Qos => "qos",
            Target::Account => "account",
            Target::User => "user",
            Target::Association => "association",
            Target::Tres => "tres",
            Target::Txn => "txn",
            Target::Event => "event",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub flags: Flags,
    pub verb: Verb,
    pub target: Target,
    /// Pairs that select records (`where` side; all pairs of show/delete).
    pub filter: Vec<(String, String)>,
    /// Pairs that set values (all pairs of add; the `set` side of modify).
    pub set: Vec<(String, String)>,
    pub format: Option<Vec<String>>,
    /// Slurm words Spur accepts without effect (a key, `WithAssoc`), one line each.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError(pub String);

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, ArgError> {
    Err(ArgError(msg.into()))
}

static FLAGS: Spec<Flags> = Spec { opts: OPTS, mode: Mode::AmongPairs, noun: "flag" };
const OPTS: &[Opt<Flags>] = &[
    switch("n/noheader", |f| f.noheader = true),
    switch("p/parsable", |f| {
        if f.parsable == Parsable::No {
            f.parsable = Parsable::Trailing;
        }
    }),
    // Both -p and -P give -P: flag order is not kept, so the no-trailing form wins.
    switch("P/parsable2", |f| f.parsable = Parsable::NoTrailing),
    switch("i/immediate", |f| f.immediate = true),
    switch("-/json", |f| f.json = true),
    switch("h/help", |f| f.help = true),
    value("-/controller", |f, v| f.controller = Some(v)),
];

/// sacctmgr's commands and entities, read by the vocabulary's keyword rule
/// (any case, any unambiguous prefix: `sacctmgr sh qos`).
const VERBS: &[(&str, &str)] = &[
    ("add", "add"),
    ("create", "add"),
    ("modify", "modify"),
    ("update", "modify"),
    ("delete", "delete"),
    ("remove", "delete"),
    ("show", "show"),
    ("list", "show"),
    ("dump", "show"),
];

fn verb(tok: &str) -> Result<Option<Verb>, ArgError> {
    let hit = crate::vocab::keyword::resolve_alias(tok, VERBS.iter().copied())
        .map_err(|e| ArgError(e.to_string()))?;
    Ok(hit.map(|v| match v {
        "add" => Verb::Add,
        "modify" => Verb::Modify,
        "delete" => Verb::Delete,
        _ => Verb::Show,
    }))
}

const TARGETS: &[(&str, &str)] = &[
    ("qos", "qos"),
    ("account", "account"),
    ("accounts", "account"),
    ("user", "user"),
    ("users", "user"),
    ("association", "association"),
    ("associations", "association"),
    ("assoc", "association"),
    ("tres", "tres"),
    ("txn", "txn"),
    ("transaction", "txn"),
    ("transactions", "txn"),
    ("event", "event"),
    ("events", "event"),
];

fn target(tok: &str) -> Result<Option<Target>, ArgError> {
    let hit = crate::vocab::keyword::resolve_alias(tok, TARGETS.iter().copied())
        .map_err(|e| ArgError(e.to_string()))?;
    Ok(hit.map(|t| match t {
        "qos" => Target::Qos,
        "account" => Target::Account,
        "user" => Target::User,
        "association" => Target::Association,
        "tres" => Target::Tres,
        "event" => Target::Event,
        _ => Target::Txn,
    }))
}

/// sacctmgr's other commands and entities (sacctmgr.1): named as not in
/// this release rather than unknown.
const LATER_VERBS: &[&str] =
    &["archive", "clear", "help", "load", "ping", "reconfigure", "shutdown", "version"];
const LATER_TARGETS: &[&str] = &[
    "cluster",
    "configuration",
    "coordinator",
    "federation",
    "job",
    "problem",
    "reservation",
    "resource",
    "runawayjobs",
    "stats",
    "wckeys",
];

/// `what` names one of `later` (by the same rule): Spur has it not.
fn later(tok: &str, later: &[&'static str], what: &str) -> Option<ArgError> {
    let name = crate::vocab::keyword::resolve(tok, later).ok().flatten()?;
    let hint = if name == "help" { " (see sacctmgr --help)" } else { "" };
    Some(ArgError(format!("{what}{name} is not available in this Spur release{hint}")))
}

/// Show's options that are words, not pairs: Slurm lists associations,
/// coordinators or deleted records with them.
const SHOW_WORDS: &[&str] = &["withassoc", "withcoord", "withdeleted"];

/// A `set` pair's key, checked by the vocabulary's rule (an ambiguous
/// prefix is refused here), or `None` with a warning for a Slurm key Spur
/// has no use for. Keys of entities the vocabulary has no table
/// for (txn filters) pass as they are, for the controller to judge.
fn canonical(target: Target, key: &str, warnings: &mut Vec<String>) -> Result<Option<String>, ArgError> {
    use crate::vocab::keys::{Entity, Resolved, resolve};
    let entity = match target {
        Target::Qos => Entity::Qos,
        Target::Account => Entity::Account,
        Target::User => Entity::User,
        _ => return Ok(Some(key.to_string())),
    };
    match resolve(entity, key).map_err(|e| ArgError(format!("{key}: {e}")))? {
        // Sent as typed: the controller reads it by the same rule.
        Some(Resolved::Key(_)) => Ok(Some(key.to_string())),
        Some(Resolved::NoEffect(name, why)) => {
            warnings.push(format!("{} key '{name}' has no effect in Spur: {why}", entity.as_str()));
            Ok(None)
        }
        // Unknown: the controller names it, as for any key it refuses.
        None => Ok(Some(key.to_string())),
    }
}

/// Parses only the global flags, for `--help` and the controller address;
/// anything malformed is left for [`parse`] to name.
pub fn parse_flags(args: &[String]) -> Flags {
    let mut flags = Flags::default();
    for item in FLAGS.items(args) {
        if let Ok(Arg::Flag(o, v)) = item {
            let _ = o.apply(&mut flags, v);
        }
    }
    flags
}

pub fn parse(args: &[String]) -> Result<Command, ArgError> {
    #[derive(PartialEq)]
    enum Side {
        Where,
        Set,
    }
    let mut flags = Flags::default();
    let (mut v, mut t) = (None, None);
    let (mut filter, mut set, mut format) = (vec![], vec![], None);
    let mut side = Side::Where;
    let mut bare_name = false;
    let mut warnings = vec![];
    // Flags are applied as they come, so errors are reported in line order.
    for item in FLAGS.items(args) {
        let tok = match item.map_err(ArgError)? {
            Arg::Flag(o, val) => {
                o.apply(&mut flags, val).map_err(ArgError)?;
                continue;
            }
            Arg::Word(w) => w,
        };
        if v.is_none() {
            v = Some(verb(&tok)?.ok_or_else(|| {
                later(&tok, LATER_VERBS, "").unwrap_or_else(|| {
                    ArgError(format!("unrecognised command '{tok}' (use add, modify, delete or show)"))
                })
            })?);
            continue;
        }
        if t.is_none() {
            t = Some(target(&tok)?.ok_or_else(|| {
                later(&tok, LATER_TARGETS, "entity ").unwrap_or_else(|| {
                    ArgError(format!(
                        "unknown entity '{tok}' (use account, user, qos, association, tres, txn or event)"
                    ))
                })
            })?);
            continue;
        }
        if v == Some(Verb::Show) && SHOW_WORDS.contains(&tok.to_ascii_lowercase().as_str()) {
            warnings.push(format!("{tok} has no effect in Spur: show lists what Spur keeps"));
            continue;
        }
        match tok.to_ascii_lowercase().as_str() {
            "where" => side = Side::Where,
            "set" if v == Some(Verb::Modify) => side = Side::Set,
            "set" => return err("'set' belongs to modify"),
            _ => match tok.split_once('=') {
                Some((k, val)) if k.eq_ignore_ascii_case("format") => {
                    format = Some(
                        val.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect(),
                    )
                }
                Some(("", _)) => return err(format!("unrecognised argument '{tok}'")),
                Some((k, val)) => match (v, &side) {
                    (Some(Verb::Add), _) | (Some(Verb::Modify), Side::Set) => {
                        let Some(target) = t else { continue };
                        if let Some(k) = canonical(target, k, &mut warnings)? {
                            set.push((k, val.to_string()));
                        }
                    }
                    _ => filter.push((k.to_string(), val.to_string())),
                },
                // `add qos NAME`, `delete account NAME`: a bare name, as Slurm (and its
                // Ansible roles) write it, once and before `set`.
                None if !bare_name
                    && !tok.starts_with('-')
                    && filter.is_empty()
                    && set.is_empty()
                    && side == Side::Where =>
                {
                    bare_name = true;
                    let pair = ("name".to_string(), tok.clone());
                    if v == Some(Verb::Add) { set.push(pair) } else { filter.push(pair) }
                }
                None => return err(format!("unrecognised argument '{tok}'")),
            },
        }
    }
    let (Some(verb), Some(target)) = (v, t) else {
        return err("usage: sacctmgr [-n] [-p|-P] [-i] add|modify|delete|show ENTITY [key=value ...]");
    };
    if verb == Verb::Modify && set.is_empty() && warnings.is_empty() {
        return err("modify needs 'set key=value' (what to change)");
    }
    if verb != Verb::Show
        && matches!(target, Target::Tres | Target::Association | Target::Txn | Target::Event)
    {
        return err(format!(
            "{} cannot be changed with {} (associations come from add user; TRES are built in; txn is the audit log; events are its node rows)",
            target.as_str(),
            match verb {
                Verb::Add => "add",
                Verb::Modify => "modify",
                _ => "delete",
            }
        ));
    }
    if format.is_some() && verb != Verb::Show {
        return err("format= only applies to show");
    }
    Ok(Command { flags, verb, target, filter, set, format, warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: &str) -> Result<Command, ArgError> {
        parse(&line.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn flags_anywhere_even_among_pairs() {
        let c = p("add qos name=x -i priority=5 -n").unwrap();
        assert!(c.flags.immediate && c.flags.noheader);
        assert_eq!(c.set, vec![("name".into(), "x".into()), ("priority".into(), "5".into())]);
        let c = p("show qos format=Name,Priority -P").unwrap();
        assert_eq!(c.flags.parsable, Parsable::NoTrailing);
        assert_eq!(c.format.unwrap(), vec!["Name", "Priority"]);
    }

    #[test]
    fn p_and_big_p_give_big_p() {
        assert_eq!(p("-P show qos -p").unwrap().flags.parsable, Parsable::NoTrailing);
        assert_eq!(p("-p show qos -P").unwrap().flags.parsable, Parsable::NoTrailing);
        assert_eq!(p("-nP show qos").unwrap().flags.parsable, Parsable::NoTrailing);
        assert_eq!(p("-p show qos").unwrap().flags.parsable, Parsable::Trailing);
    }

    #[test]
    fn modify_splits_where_and_set() {
        let c = p("modify user name=alice account=ml set maxjobs=6").unwrap();
        assert_eq!(c.filter.len(), 2);
        assert_eq!(c.set, vec![("maxjobs".into(), "6".into())]);
        let c = p("modify qos where name=a set priority=1").unwrap();
        assert_eq!(c.filter, vec![("name".into(), "a".into())]);
    }

    #[test]
    fn controller_and_long_flags_take_both_spellings() {
        let c = p("show qos --controller http://h:1 --noheader").unwrap();
        assert_eq!(c.flags.controller.as_deref(), Some("http://h:1"));
        assert!(c.flags.noheader);
        let c = p("--controller=http://h:2 show qos --parsable2 --json --immediate").unwrap();
        assert_eq!(c.flags.controller.as_deref(), Some("http://h:2"));
        assert!(c.flags.json && c.flags.immediate && c.flags.parsable == Parsable::NoTrailing);
        assert_eq!(p("show qos --controller").unwrap_err().0, "'--controller' needs a value");
        assert_eq!(p("show qos -nx").unwrap_err().0, "unrecognised flag '-x' in '-nx'");
        assert_eq!(p("show qos --noh").unwrap_err().0, "unrecognised argument '--noh'");
        assert!(parse_flags(&["-nx".into(), "--help".into()]).help);
    }

    #[test]
    fn a_bare_name_after_the_entity_is_its_name() {
        let c = p("add qos normal priority=10").unwrap();
        assert_eq!(c.set, [("name".to_string(), "normal".to_string()), ("priority".into(), "10".into())]);
        let c = p("delete account phys").unwrap();
        assert_eq!(c.filter, [("name".to_string(), "phys".to_string())]);
        let c = p("modify qos normal set priority=5").unwrap();
        assert_eq!(c.filter, [("name".to_string(), "normal".to_string())]);
        assert!(p("add qos a b").unwrap_err().0.contains("'b'"));
    }

    #[test]
    fn unknown_tokens_are_named_never_absorbed() {
        assert_eq!(p("add qos name=x bogus priority=1").unwrap_err().0, "unrecognised argument 'bogus'");
        assert!(p("show qos -x").unwrap_err().0.contains("'-x'"));
        assert!(p("frobnicate qos").unwrap_err().0.contains("'frobnicate'"));
        assert!(p("show widgets").unwrap_err().0.contains("'widgets'"));
        assert!(p("modify qos name=x").unwrap_err().0.contains("set"));
        assert!(p("add tres name=x").is_err());
        assert!(p("show").is_err());
    }
}
