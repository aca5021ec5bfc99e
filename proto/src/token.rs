//! User credentials: HS256 JSON Web Tokens, minted locally from the
//! controller's key (`spur token user`) and verified by the controller.

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation, errors::ErrorKind};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

pub const TOKEN_ENV: &str = "SPUR_TOKEN";

/// The shortest HS256 key accepted (RFC 7518 §3.2: at least the hash's 256
/// bits); a shorter one, the empty key included, can be guessed and a token
/// claiming Administrator forged with it.
pub const MIN_KEY_BYTES: usize = 32;

/// Refuses a key shorter than [`MIN_KEY_BYTES`]; the message says how long it was.
pub fn check_key(key: &[u8]) -> Result<(), String> {
    if key.len() < MIN_KEY_BYTES {
        return Err(format!("the HS256 key must be at least {MIN_KEY_BYTES} bytes (got {})", key.len()));
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    pub sub: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    /// None, Operator or Administrator.
    #[serde(default)]
    pub admin_level: String,
    pub iat: i64,
    pub exp: i64,
}

/// Why a credential was refused; the text is what the caller is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("token expired")]
    Expired,
    #[error("invalid token")]
    Invalid,
}

pub fn mint(key: &[u8], claims: &Claims) -> Result<String, String> {
    jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &EncodingKey::from_secret(key))
        .map_err(|e| format!("cannot sign the token: {e}"))
}

pub fn verify(key: &[u8], token: &str) -> Result<Claims, TokenError> {
    let mut v = Validation::new(Algorithm::HS256);
    v.leeway = 0;
    v.required_spec_claims = ["exp", "sub"].iter().map(|s| s.to_string()).collect();
    match jsonwebtoken::decode::<Claims>(token, &DecodingKey::from_secret(key), &v) {
        Ok(d) => Ok(d.claims),
        Err(e) if matches!(e.kind(), ErrorKind::ExpiredSignature) => Err(TokenError::Expired),
        Err(_) => Err(TokenError::Invalid),
    }
}

/// The caller's token: `SPUR_TOKEN`, else `~/.spur/token`.
pub fn load_local() -> Option<String> {
    if let Ok(t) = std::env::var(TOKEN_ENV) {
        let t = t.trim().to_string();
        return (!t.is_empty()).then_some(t);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    let t = std::fs::read_to_string(home.join(".spur").join("token")).ok()?;
    let t = t.trim().to_string();
    (!t.is_empty()).then_some(t)
}

/// The longest a token (a user JWT or a node admission token) may live: ten
/// years, in seconds. A longer one is refused rather than stored with an
/// expiry its arithmetic could wrap into the past.
pub const MAX_TTL_SECS: u64 = 10 * 365 * 86_400;

/// `secs` when a token may live that long; the error names `what` and says the longest.
pub fn check_ttl(what: &str, secs: u64) -> Result<u64, String> {
    if secs <= MAX_TTL_SECS {
        Ok(secs)
    } else {
        Err(format!(
            "{what}: {secs} seconds is more than the longest token lifetime, {MAX_TTL_SECS} (10 years)"
        ))
    }
}

/// Parses a TTL: `24h`, `90m`, `7d`, `30s`, or a bare number of seconds, at most [`MAX_TTL_SECS`].
pub fn parse_ttl(raw: &str) -> Result<u64, String> {
    let raw = raw.trim();
    let bad = || format!("--ttl: '{raw}' is not a duration (e.g. 24h, 90m, 7d, 30s or 3600)");
    let (num, mult) = match raw.char_indices().last() {
        Some((i, 'd')) => (&raw[..i], 86400),
        Some((i, 'h')) => (&raw[..i], 3600),
        Some((i, 'm')) => (&raw[..i], 60),
        Some((i, 's')) => (&raw[..i], 1),
        _ => (raw, 1),
    };
    let n: u64 = num.parse().map_err(|_| bad())?;
    if n == 0 {
        return Err(format!("--ttl: '{raw}' must be more than zero"));
    }
    check_ttl("--ttl", n.checked_mul(mult).ok_or_else(bad)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp_offset: i64) -> Claims {
        let now = chrono::Utc::now().timestamp();
        Claims {
            sub: "alice".into(),
            uid: Some(1000),
            admin_level: "Operator".into(),
            iat: now,
            exp: now + exp_offset,
        }
    }

    #[test]
    fn round_trip_and_refusals() {
        let t = mint(b"k", &claims(60)).unwrap();
        assert_eq!(verify(b"k", &t).unwrap().sub, "alice");
        assert_eq!(verify(b"other", &t), Err(TokenError::Invalid));
        assert_eq!(verify(b"k", "garbage"), Err(TokenError::Invalid));
        let old = mint(b"k", &claims(-10)).unwrap();
        assert_eq!(verify(b"k", &old), Err(TokenError::Expired));
        assert_eq!(TokenError::Expired.to_string(), "token expired");
    }

    #[test]
    fn ttl_forms() {
        assert_eq!(parse_ttl("24h"), Ok(86400));
        assert_eq!(parse_ttl("90m"), Ok(5400));
        assert_eq!(parse_ttl("3600"), Ok(3600));
        assert_eq!(parse_ttl("2d"), Ok(172800));
        assert!(parse_ttl("soon").unwrap_err().contains("'soon'"));
        assert!(parse_ttl("0").is_err());
        assert_eq!(parse_ttl("3650d"), Ok(MAX_TTL_SECS));
        assert!(parse_ttl("3651d").unwrap_err().contains("longest token lifetime"));
        assert!(parse_ttl(&format!("{}", i64::MAX)).unwrap_err().starts_with("--ttl: "));
        assert!(parse_ttl("99999999999999999999d").unwrap_err().contains("is not a duration"));
    }
}
