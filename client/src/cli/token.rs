//! `spur token`: mint a user JWT locally (`user`), and manage node admission
//! tokens on the controller (`create`, `list`, `revoke`).

use super::args::Flags;
use super::getopt::{Mode, Opt, Spec, check, switch, value};
use super::output;
use crate::conn::{self, Identity};
use crate::token::{Claims, mint, parse_ttl};
use crate::vocab::hostlist;
use crate::vocab::names::AdminLevel;
use crate::vocab::txn::format_time;
use spur_proto::v1 as pb;
use std::path::{Path, PathBuf};

const USAGE: &str = "\
usage: spur token [--controller URL] COMMAND
  user --name NAME [--admin-level LEVEL] [--uid UID] [--ttl 24h] [--config /etc/spur/spur.conf] [--key-file F]
                     mint a user JWT locally from the controller's key (no server round trip, so not audited)
  create [--ttl TTL] [--nodes HOSTLIST] [--once]
                     create a node admission token; prints it once. --nodes: every node an agent
                     registers with it must be in HOSTLIST; --once: it admits one registration
  list [--json]      list admission tokens: ID, created, expires, status, nodes, once, used
  revoke ID          revoke an admission token by ID";

#[derive(Debug)]
struct TokenArgs {
    controller: Option<String>,
    help: bool,
    name: Option<String>,
    admin_level: String,
    uid: Option<u32>,
    ttl: Option<String>,
    /// create: the hostlist the token is bound to, checked as a hostlist.
    nodes: Option<String>,
    /// create: single use.
    once: bool,
    /// list: JSON rows.
    json: bool,
    /// spur.conf to read [auth] jwt_key / jwt_key_file from.
    config: PathBuf,
    /// Read the key from this file instead (one trailing newline ignored).
    key_file: Option<PathBuf>,
}

impl Default for TokenArgs {
    fn default() -> Self {
        TokenArgs {
            controller: None,
            help: false,
            name: None,
            admin_level: "None".into(),
            uid: None,
            ttl: None,
            nodes: None,
            once: false,
            json: false,
            config: "/etc/spur/spur.conf".into(),
            key_file: None,
        }
    }
}

/// Before the subcommand: the flags every subcommand also takes.
static GLOBAL: Spec<TokenArgs> = Spec { opts: BARE_OPTS, mode: Mode::Leading, noun: "flag" };
static BARE: Spec<TokenArgs> = Spec { opts: BARE_OPTS, mode: Mode::Anywhere, noun: "flag" };
static USER: Spec<TokenArgs> = Spec { opts: USER_OPTS, mode: Mode::Anywhere, noun: "flag" };
static CREATE: Spec<TokenArgs> = Spec { opts: CREATE_OPTS, mode: Mode::Anywhere, noun: "flag" };
static LIST: Spec<TokenArgs> = Spec { opts: LIST_OPTS, mode: Mode::Anywhere, noun: "flag" };
const BARE_OPTS: &[Opt<TokenArgs>] =
    &[value("-/controller", |a, v| a.controller = Some(v)), switch("h/help", |a| a.help = true)];
const CREATE_OPTS: &[Opt<TokenArgs>] = &[
    value("-/ttl", |a, v| a.ttl = Some(v)),
    // The controller checks it again, and bounds it by the cluster's size.
    check("-/nodes", |a, v| {
        hostlist::count(&v).map(|_| a.nodes = Some(v)).map_err(|e| format!("--nodes: {e}"))
    }),
    switch("-/once", |a| a.once = true),
    value("-/controller", |a, v| a.controller = Some(v)),
    switch("h/help", |a| a.help = true),
];
const LIST_OPTS: &[Opt<TokenArgs>] = &[
    switch("-/json", |a| a.json = true),
    value("-/controller", |a, v| a.controller = Some(v)),
    switch("h/help", |a| a.help = true),
];
const USER_OPTS: &[Opt<TokenArgs>] = &[
    value("-/name", |a, v| a.name = Some(v)),
    value("-/admin-level", |a, v| a.admin_level = v),
    check("-/uid", |a, v| {
        v.trim().parse().map(|u| a.uid = Some(u)).map_err(|_| format!("--uid: '{v}' is not a uid"))
    }),
    value("-/ttl", |a, v| a.ttl = Some(v)),
    value("-/config", |a, v| a.config = v.into()),
    value("-/key-file", |a, v| a.key_file = Some(v.into())),
    value("-/controller", |a, v| a.controller = Some(v)),
    switch("h/help", |a| a.help = true),
];

/// A parsed command line; `None` asks for the usage.
fn parse(argv: &[String]) -> Result<Option<(TokenArgs, Cmd)>, String> {
    let mut a = TokenArgs::default();
    let words = GLOBAL.parse(argv, &mut a)?;
    let Some((sub, rest)) = words.split_first() else {
        return if a.help {
            Ok(None)
        } else {
            Err("say what to do: user, create, list or revoke (see spur token --help)".into())
        };
    };
    let spec = match sub.as_str() {
        "user" => &USER,
        "create" => &CREATE,
        "list" => &LIST,
        "revoke" => &BARE,
        _ => return Err(format!("unrecognised command '{sub}' (use user, create, list or revoke)")),
    };
    let words = spec.parse(rest, &mut a).map_err(|e| format!("{sub}: {e}"))?;
    if a.help {
        return Ok(None);
    }
    let cmd = match (sub.as_str(), words.as_slice()) {
        ("revoke", [id]) => Cmd::Revoke(id.clone()),
        ("revoke", []) => return Err("revoke: needs a token ID".into()),
        ("revoke", [_, x, ..]) | (_, [x, ..]) => return Err(format!("{sub}: unexpected argument '{x}'")),
        ("user", _) => Cmd::User,
        ("create", _) => Cmd::Create,
        _ => Cmd::List,
    };
    Ok(Some((a, cmd)))
}

enum Cmd {
    User,
    Create,
    List,
    Revoke(String),
}

pub async fn main(argv: &[String]) -> i32 {
    match parse(argv) {
        Ok(None) => output::emit("spur token", &format!("{USAGE}\n")),
        Ok(Some((args, cmd))) => output::finish("spur token", run(args, cmd).await),
        Err(e) => output::finish("spur token", Err(e)),
    }
}

async fn run(args: TokenArgs, cmd: Cmd) -> Result<String, String> {
    let cmd = match cmd {
        Cmd::User => {
            let name = args.name.ok_or("user: --name is required (the user the token is for)")?;
            let level = AdminLevel::parse(&args.admin_level).map_err(|m| format!("--admin-level: {m}"))?;
            let (key, source) = match args.key_file {
                Some(f) => (read_key_file(&f)?, format!("--key-file {}", f.display())),
                None => (key_from_config(&args.config)?, args.config.display().to_string()),
            };
            // The controller refuses such a key, so a token from it could never be used.
            crate::token::check_key(&key).map_err(|m| format!("{source}: {m}"))?;
            let now = chrono::Utc::now().timestamp();
            let ttl = i64::try_from(parse_ttl(args.ttl.as_deref().unwrap_or("24h"))?).unwrap_or(i64::MAX);
            let exp = now.saturating_add(ttl);
            let claims =
                Claims { sub: name, uid: args.uid, admin_level: level.as_str().into(), iat: now, exp };
            return Ok(format!("{}\n", mint(&key, &claims)?));
        }
        Cmd::Create => AdmissionCmd::Create(pb::CreateTokenRequest {
            ttl_secs: args.ttl.map(|t| parse_ttl(&t)).transpose()?.map(|t| t as i64),
            nodes: args.nodes,
            once: args.once,
        }),
        Cmd::List => AdmissionCmd::List { json: args.json },
        Cmd::Revoke(id) => AdmissionCmd::Revoke(id),
    };
    admission(args.controller.as_deref(), cmd).await
}

fn read_key_file(path: &Path) -> Result<Vec<u8>, String> {
    let mut bytes =
        std::fs::read(path).map_err(|e| format!("cannot read key file {}: {e}", path.display()))?;
    if bytes.ends_with(b"\r\n") {
        bytes.truncate(bytes.len() - 2);
    } else if bytes.ends_with(b"\n") {
        bytes.pop();
    }
    Ok(bytes)
}

/// Reads `[auth] jwt_key` or `jwt_key_file` (relative to spur.conf) from spur.conf.
fn key_from_config(path: &Path) -> Result<Vec<u8>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let doc: toml::Table = text.parse().map_err(|e| format!("{}: {e}", path.display()))?;
    let auth = doc.get("auth").and_then(|a| a.as_table());
    let get = |k: &str| auth.and_then(|a| a.get(k)).and_then(|v| v.as_str());
    match (get("jwt_key"), get("jwt_key_file")) {
        (Some(k), None) => Ok(k.as_bytes().to_vec()),
        (None, Some(f)) => read_key_file(&path.parent().unwrap_or(Path::new(".")).join(f)),
        (Some(_), Some(_)) => {
            Err(format!("{}: auth.jwt_key and auth.jwt_key_file are both set", path.display()))
        }
        (None, None) => {
            Err(format!("{}: no auth.jwt_key or auth.jwt_key_file (use --key-file)", path.display()))
        }
    }
}

async fn admission(controller: Option<&str>, cmd: AdmissionCmd) -> Result<String, String> {
    let mut c = conn::connect_flag(controller, Identity::local()).await?;
    let st = |s: tonic::Status| s.message().to_string();
    match cmd {
        AdmissionCmd::Create(req) => {
            let r = c.admission.create_token(req).await.map_err(st)?;
            Ok(format!("{}\n", r.into_inner().token))
        }
        AdmissionCmd::List { json } => {
            let tokens =
                c.admission.list_tokens(pb::ListTokensRequest {}).await.map_err(st)?.into_inner().tokens;
            let rows: Vec<Vec<String>> = tokens.iter().map(token_row).collect();
            Ok(match json {
                true => output::json(&LIST_COLUMNS, &rows),
                false => output::render(&LIST_COLUMNS, &rows, &Flags::default()),
            })
        }
        AdmissionCmd::Revoke(id) => {
            c.admission.revoke_token(pb::RevokeTokenRequest { id: id.clone() }).await.map_err(st)?;
            Ok(format!("revoked {id}\n"))
        }
    }
}

enum AdmissionCmd {
    Create(pb::CreateTokenRequest),
    List { json: bool },
    Revoke(String),
}

const LIST_COLUMNS: [&str; 7] = ["ID", "Created", "Expires", "Status", "Nodes", "Once", "Used"];

/// One row of `spur token list`, in `LIST_COLUMNS`' order. A single-use
/// token's Used is when it was spent, else `never`; a reusable one's is `-`.
fn token_row(t: &pb::AdmissionToken) -> Vec<String> {
    let status = match (t.revoked, t.used_ms) {
        (true, _) => "revoked",
        (false, Some(_)) => "used",
        (false, None) => "active",
    };
    let used = match (t.once, t.used_ms) {
        (_, Some(ms)) => format_time(ms),
        (true, None) => "never".into(),
        (false, None) => "-".into(),
    };
    vec![
        t.id.clone(),
        format_time(t.created_ms),
        t.expires_ms.map(format_time).unwrap_or_else(|| "never".into()),
        status.into(),
        if t.nodes.is_empty() { "ALL".into() } else { t.nodes.clone() },
        if t.once { "yes".into() } else { "no".into() },
        used,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Option<(TokenArgs, Cmd)>, String> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn subcommands_take_their_own_flags() {
        let (a, cmd) =
            p("user --name alice --admin-level=Operator --uid 1000 --ttl 1h --key-file k").unwrap().unwrap();
        assert!(matches!(cmd, Cmd::User));
        assert_eq!(
            (a.name.as_deref(), a.admin_level.as_str(), a.uid),
            (Some("alice"), "Operator", Some(1000))
        );
        assert_eq!((a.ttl.as_deref(), a.key_file), (Some("1h"), Some(PathBuf::from("k"))));
        assert_eq!(a.config, PathBuf::from("/etc/spur/spur.conf"));
        let (a, cmd) = p("--controller http://c:1 create --ttl=2h").unwrap().unwrap();
        assert!(matches!(cmd, Cmd::Create));
        assert_eq!((a.controller.as_deref(), a.ttl.as_deref()), (Some("http://c:1"), Some("2h")));
        let (a, _) = p("create --nodes node[01-04] --once").unwrap().unwrap();
        assert_eq!((a.nodes.as_deref(), a.once), (Some("node[01-04]"), true));
        let (a, cmd) = p("list --json").unwrap().unwrap();
        assert!(matches!(cmd, Cmd::List) && a.json);
        let (a, cmd) = p("revoke T1 --controller=http://c:2").unwrap().unwrap();
        assert!(matches!(cmd, Cmd::Revoke(id) if id == "T1"));
        assert_eq!(a.controller.as_deref(), Some("http://c:2"));
        assert!(matches!(p("list").unwrap(), Some((_, Cmd::List))));
        assert!(p("--help").unwrap().is_none());
        assert!(p("user --help").unwrap().is_none());
    }

    #[test]
    fn bad_lines_are_named() {
        let e = |s: &str| p(s).err().unwrap();
        assert_eq!(e("list --name x"), "list: unrecognised flag '--name'");
        assert_eq!(e("user --uid me"), "user: --uid: 'me' is not a uid");
        assert_eq!(e("user --name"), "user: '--name' needs a value");
        assert_eq!(e("revoke"), "revoke: needs a token ID");
        assert_eq!(e("revoke a b"), "revoke: unexpected argument 'b'");
        assert_eq!(e("create now"), "create: unexpected argument 'now'");
        assert_eq!(e("create --nodes node[1-"), "create: --nodes: 'node[1-' has an unclosed '['");
        assert_eq!(e("list --once"), "list: unrecognised flag '--once'");
        assert!(e("mint").contains("unrecognised command 'mint'"));
        assert!(e("").contains("say what to do"));
    }

    #[test]
    fn list_rows_show_binding_and_use() {
        let t = |once, used_ms, nodes: &str| pb::AdmissionToken {
            id: "ab12".into(),
            once,
            used_ms,
            nodes: nodes.into(),
            ..Default::default()
        };
        let cols = |r: Vec<String>| (r[3].clone(), r[4].clone(), r[5].clone(), r[6].clone());
        let s = |v: &str| v.to_string();
        assert_eq!(cols(token_row(&t(false, None, ""))), (s("active"), s("ALL"), s("no"), s("-")));
        assert_eq!(
            cols(token_row(&t(true, None, "n[1-2]"))),
            (s("active"), s("n[1-2]"), s("yes"), s("never"))
        );
        let used = cols(token_row(&t(true, Some(0), "")));
        assert_eq!((used.0, used.2), (s("used"), s("yes")));
        assert_eq!(used.3, format_time(0));
    }
}
