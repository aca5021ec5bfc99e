//! Who is calling, and what they may do.
//!
//! - `mod.rs`: [`Authenticator`]: a request's headers to a [`Caller`], or the refusal.
//! - `handoff.rs`: the caller a follower hands to the leader with a forwarded request.
//! - `munge.rs`: the `munge` plugin: a credential decoded by munged, the name from the user database.
//! - `tests.rs`: the plugins' and roles' unit tests.
//!
//! Identity comes from the `[auth]` plugin: `none` trusts the asserted local
//! user and uid (uid 0 is an admin); `jwt` verifies an HS256 bearer token;
//! `munge` decodes a MUNGE credential, so the uid and gid are the ones the
//! caller's kernel vouched for (and a bearer token is still taken, for
//! services that cannot get a credential, as Slurm's AuthAltTypes).
//! `mode` decides whether a token is required (`required`), verified when
//! present (`permissive`), or ignored (`disabled`). Roles come from the
//! user's `adminlevel` (and a verified token's claim), checked in one place:
//! the RPC gate, against the classification table.

mod handoff;
mod munge;

use crate::accounting::{Caller, Catalog};
use crate::config::{AuthMode, AuthPlugin, Config};
use spur_proto::token;
use spur_proto::wire::{MUNGE_ERROR_HEADER, MUNGE_HEADER, UID_HEADER, USER_HEADER};
use spur_vocab::names::AdminLevel;

pub use munge::user_name;

pub type Role = AdminLevel;

/// Why a credential was refused; the text is what the caller is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// `mode = required` and no bearer token.
    #[error("authentication required")]
    Required,
    /// A bearer token that does not verify (expired, forged, malformed).
    #[error(transparent)]
    Token(#[from] token::TokenError),
    /// Plugin `munge` and no credential; the client's own reason when it sent one.
    #[error("a MUNGE credential is required{}", why.as_deref().map(|w| format!(" (the client has none: {w})")).unwrap_or_default())]
    NoCredential { why: Option<String> },
    /// munged refused the credential (replayed, expired, another key, not one).
    #[error("MUNGE credential refused: {0}")]
    Munge(String),
    /// munged vouched for a uid this host's user database does not know.
    #[error("uid {0} has no entry in the controller's user database")]
    UnknownUid(u32),
    /// An agent RPC with a credential of a uid that is not the agents'.
    #[error("the agent protocol takes credentials of uid 0{} only, not uid {uid}", agent.map(|u| format!(" or {u}")).unwrap_or_default())]
    NotAgent { uid: u32, agent: Option<u32> },
}

pub struct Authenticator {
    plugin: AuthPlugin,
    mode: AuthMode,
    key: Option<Vec<u8>>,
    munge: Option<munge::Decoder>,
    agent_uid: Option<u32>,
}

impl Authenticator {
    pub fn from_config(cfg: &Config) -> anyhow::Result<Authenticator> {
        let munge = match cfg.auth.plugin {
            AuthPlugin::Munge => Some(munge::Decoder::load(cfg.auth.munge_socket.as_deref())?),
            _ => None,
        };
        Ok(Authenticator {
            plugin: cfg.auth.plugin,
            mode: cfg.auth.mode,
            key: cfg.jwt_secret()?,
            munge,
            agent_uid: cfg.auth.agent_uid,
        })
    }

    pub fn mode(&self) -> AuthMode {
        self.mode
    }

    /// Whether establishing a caller talks to munged (blocking: the layer
    /// runs it off the async workers).
    pub fn blocks(&self) -> bool {
        self.munge.is_some()
    }

    /// Establishes the caller, or refuses with the reason the caller is told.
    pub fn authenticate(&self, headers: &http::HeaderMap, peer: String) -> Result<Caller, AuthError> {
        let header = |k: &str| header(headers, k);
        let bearer = header("authorization").and_then(|v| v.strip_prefix("Bearer ")).map(str::trim);
        if let Some(m) = &self.munge {
            return match (header(MUNGE_HEADER), bearer, &self.key) {
                (Some(cred), _, _) => m.caller(cred, peer),
                (None, Some(t), Some(key)) => token_caller(key, t, peer),
                (None, _, _) => {
                    Err(AuthError::NoCredential { why: header(MUNGE_ERROR_HEADER).map(str::to_string) })
                }
            };
        }
        let asserted = Caller {
            user: header(USER_HEADER).unwrap_or("unknown").to_string(),
            peer,
            asserted_uid: header(UID_HEADER).and_then(|u| u.parse().ok()),
            ..Caller::default()
        };
        let checks_tokens = self.plugin == AuthPlugin::Jwt && self.mode != AuthMode::Disabled;
        match (checks_tokens, bearer, &self.key) {
            (true, Some(t), Some(key)) => token_caller(key, t, asserted.peer),
            (true, None, _) if self.mode == AuthMode::Required => Err(AuthError::Required),
            _ => Ok(asserted),
        }
    }

    /// The agent protocol's caller check: under `munge`, a credential of uid
    /// 0 (or `agent_uid`); under the other plugins, nothing (the agent key
    /// and admission tokens are the check, `nodes/agents.rs`).
    pub fn authenticate_agent(&self, headers: &http::HeaderMap, peer: String) -> Result<Caller, AuthError> {
        let anonymous = Caller { user: "anonymous".into(), peer: peer.clone(), ..Caller::default() };
        let Some(m) = &self.munge else { return Ok(anonymous) };
        let Some(cred) = header(headers, MUNGE_HEADER) else {
            let why = header(headers, MUNGE_ERROR_HEADER).map(str::to_string);
            return Err(AuthError::NoCredential { why });
        };
        let who = m.decode(cred)?;
        if who.uid != 0 && Some(who.uid) != self.agent_uid {
            return Err(AuthError::NotAgent { uid: who.uid, agent: self.agent_uid });
        }
        Ok(Caller { uid: Some(who.uid), gid: Some(who.gid), verified: true, ..anonymous })
    }

    /// The caller's role: the user's adminlevel, raised by a verified token's
    /// claim; uid 0 is an Administrator (as Slurm's root) when the kernel
    /// vouched for it (`munge`) or under the `none` plugin, where it is asserted.
    pub fn role(&self, caller: &Caller, catalog: &Catalog) -> Role {
        let stored = catalog.users.get(&caller.user).map(|u| u.admin_level).unwrap_or_default();
        let claimed = if caller.verified { caller.claimed_level.unwrap_or_default() } else { Role::None };
        let root = match self.plugin {
            AuthPlugin::None => !caller.verified && caller.asserted_uid == Some(0),
            AuthPlugin::Munge => caller.verified && caller.uid == Some(0),
            AuthPlugin::Jwt => false,
        };
        let root = if root { Role::Administrator } else { Role::None };
        stored.max(claimed).max(root)
    }
}

/// A request header's text, trimmed; None when missing, empty or not text.
fn header<'h>(headers: &'h http::HeaderMap, key: &str) -> Option<&'h str> {
    headers.get(key).and_then(|v| v.to_str().ok()).map(str::trim).filter(|s| !s.is_empty())
}

/// The caller a verified bearer token names.
fn token_caller(key: &[u8], t: &str, peer: String) -> Result<Caller, AuthError> {
    let claims = token::verify(key, t)?;
    Ok(Caller {
        user: claims.sub,
        verified: true,
        // A JWT carries whatever uid it was minted with, so it is not
        // an attribution the kernel vouched for.
        uid: None,
        asserted_uid: claims.uid,
        claimed_level: AdminLevel::parse(&claims.admin_level).ok(),
        peer,
        ..Caller::default()
    })
}

#[cfg(test)]
mod tests;
