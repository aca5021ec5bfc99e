//! Who is calling, and what they may do.
//!
//! Identity comes from the `[auth]` plugin: `none` trusts the asserted local
//! user and uid (uid 0 is an admin); `jwt` verifies an HS256 bearer token.
//! `mode` decides whether a token is required (`required`), verified when
//! present (`permissive`), or ignored (`disabled`). Roles come from the
//! user's `adminlevel` (and a verified token's claim), checked in one place:
//! the RPC gate, against the classification table.

use crate::accounting::{Caller, Catalog};
use crate::config::{AuthMode, AuthPlugin, Config};
use spur_proto::token;
use spur_proto::wire::{UID_HEADER, USER_HEADER};
use spur_vocab::names::AdminLevel;

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
}

pub struct Authenticator {
    plugin: AuthPlugin,
    mode: AuthMode,
    key: Option<Vec<u8>>,
}

impl Authenticator {
    pub fn from_config(cfg: &Config) -> anyhow::Result<Authenticator> {
        Ok(Authenticator { plugin: cfg.auth.plugin, mode: cfg.auth.mode, key: cfg.jwt_secret()? })
    }

    pub fn mode(&self) -> AuthMode {
        self.mode
    }

    /// Establishes the caller, or refuses with the reason the caller is told.
    pub fn authenticate(&self, headers: &http::HeaderMap, peer: String) -> Result<Caller, AuthError> {
        let header =
            |k: &str| headers.get(k).and_then(|v| v.to_str().ok()).map(str::trim).filter(|s| !s.is_empty());
        let asserted = Caller {
            user: header(USER_HEADER).unwrap_or("unknown").to_string(),
            uid: None,
            verified: false,
            peer,
            asserted_uid: header(UID_HEADER).and_then(|u| u.parse().ok()),
            claimed_level: None,
            role: Role::None,
        };
        let bearer = header("authorization").and_then(|v| v.strip_prefix("Bearer ")).map(str::trim);
        let checks_tokens = self.plugin == AuthPlugin::Jwt && self.mode != AuthMode::Disabled;
        match (checks_tokens, bearer, &self.key) {
            (true, Some(t), Some(key)) => {
                let claims = token::verify(key, t)?;
                Ok(Caller {
                    user: claims.sub,
                    verified: true,
                    // A JWT carries whatever uid it was minted with, so it is not
                    // an attribution the kernel vouched for.
                    uid: None,
                    asserted_uid: claims.uid,
                    claimed_level: AdminLevel::parse(&claims.admin_level).ok(),
                    peer: asserted.peer,
                    role: Role::None,
                })
            }
            (true, None, _) if self.mode == AuthMode::Required => Err(AuthError::Required),
            _ => Ok(asserted),
        }
    }

    /// The caller's role: the user's adminlevel, raised by a verified token's
    /// claim; under the `none` plugin an asserted uid 0 is an Administrator.
    pub fn role(&self, caller: &Caller, catalog: &Catalog) -> Role {
        let stored = catalog.users.get(&caller.user).map(|u| u.admin_level).unwrap_or_default();
        let claimed = if caller.verified { caller.claimed_level.unwrap_or_default() } else { Role::None };
        let root = !caller.verified && self.plugin == AuthPlugin::None && caller.asserted_uid == Some(0);
        let root = if root { Role::Administrator } else { Role::None };
        stored.max(claimed).max(root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spur_proto::token::{Claims, mint};

    fn auth(plugin: AuthPlugin, mode: AuthMode) -> Authenticator {
        Authenticator { plugin, mode, key: Some(b"k".to_vec()) }
    }

    fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for (k, v) in pairs {
            h.insert(http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    fn bearer(exp_offset: i64) -> String {
        let now = chrono::Utc::now().timestamp();
        let c = Claims {
            sub: "alice".into(),
            uid: Some(5),
            admin_level: "Operator".into(),
            iat: now,
            exp: now + exp_offset,
        };
        format!("Bearer {}", mint(b"k", &c).unwrap())
    }

    #[test]
    fn required_refuses_missing_expired_and_forged() {
        let a = auth(AuthPlugin::Jwt, AuthMode::Required);
        assert_eq!(
            a.authenticate(&headers(&[]), "p".into()).unwrap_err().to_string(),
            "authentication required"
        );
        let expired = bearer(-5);
        assert_eq!(
            a.authenticate(&headers(&[("authorization", &expired)]), "p".into()).unwrap_err().to_string(),
            "token expired"
        );
        let forged = headers(&[("authorization", "Bearer abc.def.ghi")]);
        assert_eq!(a.authenticate(&forged, "p".into()).unwrap_err().to_string(), "invalid token");
        let good = bearer(60);
        let c = a
            .authenticate(&headers(&[("authorization", &good), (USER_HEADER, "mallory")]), "p".into())
            .unwrap();
        assert_eq!((c.user.as_str(), c.verified, c.uid), ("alice", true, None));
    }

    #[test]
    fn permissive_uses_the_asserted_name_and_a_token_wins() {
        let a = auth(AuthPlugin::Jwt, AuthMode::Permissive);
        let c = a.authenticate(&headers(&[(USER_HEADER, "bob")]), "p".into()).unwrap();
        assert_eq!((c.user.as_str(), c.verified), ("bob", false));
        let good = bearer(60);
        let c =
            a.authenticate(&headers(&[("authorization", &good), (USER_HEADER, "bob")]), "p".into()).unwrap();
        assert_eq!(c.user, "alice");
    }

    #[test]
    fn roles_come_from_adminlevel_claims_and_root() {
        let mut cat = Catalog::default();
        cat.users.insert(
            "op".into(),
            crate::model::User { name: "op".into(), admin_level: Role::Operator, ..Default::default() },
        );
        let a = auth(AuthPlugin::None, AuthMode::Permissive);
        let caller = |user: &str, uid: Option<u32>| Caller {
            user: user.into(),
            asserted_uid: uid,
            ..Caller::default()
        };
        assert_eq!(a.role(&caller("op", Some(1000)), &cat), Role::Operator);
        assert_eq!(a.role(&caller("nobody", Some(1000)), &cat), Role::None);
        assert_eq!(a.role(&caller("root", Some(0)), &cat), Role::Administrator);
        let jwt = auth(AuthPlugin::Jwt, AuthMode::Permissive);
        assert_eq!(
            jwt.role(&caller("root", Some(0)), &cat),
            Role::None,
            "uid 0 is trusted only under plugin none"
        );
    }
}
