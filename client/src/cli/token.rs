//! `spur token`: mint a user JWT locally (`user`), and manage node admission
//! tokens on the controller (`create`, `list`, `revoke`).

use super::args::Flags;
use super::output;
use crate::conn::{self, Identity};
use crate::token::{Claims, mint, parse_ttl};
use crate::vocab::names::AdminLevel;
use crate::vocab::txn::format_time;
use clap::{Parser, Subcommand};
use spur_proto::v1 as pb;
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(name = "spur token", about = "User tokens and node admission tokens")]
struct TokenArgs {
    #[arg(long, global = true)]
    controller: Option<String>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Mint a user JWT locally from the controller's key (no server round trip, so not audited).
    User {
        #[arg(long)]
        name: String,
        #[arg(long = "admin-level", default_value = "None")]
        admin_level: String,
        #[arg(long)]
        uid: Option<u32>,
        #[arg(long, default_value = "24h")]
        ttl: String,
        /// spur.conf to read [auth] jwt_key / jwt_key_file from.
        #[arg(long, default_value = "/etc/spur/spur.conf")]
        config: PathBuf,
        /// Read the key from this file instead (one trailing newline ignored).
        #[arg(long = "key-file")]
        key_file: Option<PathBuf>,
    },
    /// Create a node admission token; prints it once.
    Create {
        #[arg(long)]
        ttl: Option<String>,
    },
    /// List admission tokens: ID, created, expires, status.
    List,
    /// Revoke an admission token by ID.
    Revoke { id: String },
}

pub async fn main(argv: &[String]) -> i32 {
    let args = match TokenArgs::try_parse_from(
        std::iter::once("spur token".to_string()).chain(argv.iter().cloned()),
    ) {
        Ok(a) => a,
        Err(e) => return output::clap_exit("spur token", &e),
    };
    super::output::finish("spur token", run(args).await)
}

async fn run(args: TokenArgs) -> Result<String, String> {
    let cmd = match args.cmd {
        Cmd::User { name, admin_level, uid, ttl, config, key_file } => {
            let level = AdminLevel::parse(&admin_level).map_err(|m| format!("--admin-level: {m}"))?;
            let (key, source) = match key_file {
                Some(f) => (read_key_file(&f)?, format!("--key-file {}", f.display())),
                None => (key_from_config(&config)?, config.display().to_string()),
            };
            // The controller refuses such a key, so a token from it could never be used.
            crate::token::check_key(&key).map_err(|m| format!("{source}: {m}"))?;
            let now = chrono::Utc::now().timestamp();
            let ttl = i64::try_from(parse_ttl(&ttl)?).unwrap_or(i64::MAX);
            let exp = now.saturating_add(ttl);
            let claims = Claims { sub: name, uid, admin_level: level.as_str().into(), iat: now, exp };
            return Ok(format!("{}\n", mint(&key, &claims)?));
        }
        Cmd::Create { ttl } => AdmissionCmd::Create(ttl.map(|t| parse_ttl(&t)).transpose()?),
        Cmd::List => AdmissionCmd::List,
        Cmd::Revoke { id } => AdmissionCmd::Revoke(id),
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
        AdmissionCmd::Create(ttl) => {
            let r = c
                .admission
                .create_token(pb::CreateTokenRequest { ttl_secs: ttl.map(|t| t as i64) })
                .await
                .map_err(st)?;
            Ok(format!("{}\n", r.into_inner().token))
        }
        AdmissionCmd::List => {
            let tokens =
                c.admission.list_tokens(pb::ListTokensRequest {}).await.map_err(st)?.into_inner().tokens;
            let rows: Vec<Vec<String>> = tokens
                .iter()
                .map(|t| {
                    vec![
                        t.id.clone(),
                        format_time(t.created_ms),
                        t.expires_ms.map(format_time).unwrap_or_else(|| "never".into()),
                        if t.revoked { "revoked".into() } else { "active".into() },
                    ]
                })
                .collect();
            Ok(output::render(&["ID", "Created", "Expires", "Status"], &rows, &Flags::default()))
        }
        AdmissionCmd::Revoke(id) => {
            c.admission.revoke_token(pb::RevokeTokenRequest { id: id.clone() }).await.map_err(st)?;
            Ok(format!("revoked {id}\n"))
        }
    }
}

enum AdmissionCmd {
    Create(Option<u64>),
    List,
    Revoke(String),
}
