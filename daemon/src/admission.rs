//! Admission tokens: which node agents may register when `[admission] mode
//! = "token"`. A token is `ID.SECRET`; only a hash of the secret is stored,
//! and the audit log names tokens by ID, never by secret.

use crate::config::AdmissionMode;
use crate::error::{Error, Result};
use crate::store::{Action, Store, now_ms};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::{Arc, RwLock};

pub const KIND_TOKEN: &str = "admission_token";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenRecord {
    pub id: String,
    pub hash: String,
    pub created_ms: i64,
    pub expires_ms: Option<i64>,
    pub revoked: bool,
}

pub struct Admission {
    mode: AdmissionMode,
    store: Option<Arc<dyn Store>>,
    tokens: RwLock<BTreeMap<String, TokenRecord>>,
}

/// `bytes` random bytes from the kernel, in hex: tokens and agent keys. No
/// fallback: a secret must not be guessable.
pub(crate) fn random_hex(bytes: usize) -> Result<String> {
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| Error::Unavailable(format!("no randomness for a secret: {e}")))?;
    Ok(hex::encode(buf))
}

/// What is kept of a secret: its SHA-256, in hex.
pub(crate) fn hash(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

impl Admission {
    pub async fn load(mode: AdmissionMode, store: Option<Arc<dyn Store>>) -> Result<Admission> {
        let mut tokens = BTreeMap::new();
        if let Some(s) = &store {
            for (id, doc) in s.load(KIND_TOKEN).await? {
                tokens.insert(id, serde_json::from_value(doc)?);
            }
        }
        Ok(Admission { mode, store, tokens: RwLock::new(tokens) })
    }

    pub fn mode(&self) -> AdmissionMode {
        self.mode
    }

    fn store(&self) -> Result<&Arc<dyn Store>> {
        self.store.as_ref().ok_or_else(|| {
            Error::FailedPrecondition(
                "admission tokens are kept in the store: set [accounting] database_url".into(),
            )
        })
    }

    /// Writes `rec`, with the request's row when its core took one (`audit::claim`).
    async fn save(&self, rec: TokenRecord) -> Result<()> {
        let doc = [(rec.id.clone(), Some(serde_json::to_string(&rec)?))];
        crate::audit::claim::commit(self.store()?.as_ref(), KIND_TOKEN, &doc).await?;
        if let Ok(mut t) = self.tokens.write() {
            t.insert(rec.id.clone(), rec);
        }
        Ok(())
    }

    /// Creates a token; returns its record and the full token, shown once.
    pub async fn create(&self, ttl_secs: Option<i64>) -> Result<(TokenRecord, String)> {
        if ttl_secs.is_some_and(|t| t <= 0) {
            return Err(Error::invalid("ttl_secs", "must be more than zero seconds"));
        }
        if let Some(t) = ttl_secs {
            spur_proto::token::check_ttl("ttl_secs", t.unsigned_abs()).map_err(Error::InvalidArgument)?;
        }
        let (id, secret) = (random_hex(4)?, random_hex(24)?);
        let now = now_ms();
        let rec = TokenRecord {
            id: id.clone(),
            hash: hash(&secret),
            created_ms: now,
            expires_ms: ttl_secs.map(|t| now.saturating_add(t.saturating_mul(1000))),
            revoked: false,
        };
        crate::audit::claim::take(&id, Action::Create, serde_json::json!({}));
        self.save(rec.clone()).await?;
        Ok((rec, format!("{id}.{secret}")))
    }

    pub fn list(&self) -> Vec<TokenRecord> {
        self.tokens.read().map(|t| t.values().cloned().collect()).unwrap_or_default()
    }

    pub async fn revoke(&self, id: &str) -> Result<()> {
        let mut rec = self
            .tokens
            .read()
            .ok()
            .and_then(|t| t.get(id).cloned())
            .ok_or_else(|| Error::NotFound(format!("admission token '{id}' does not exist")))?;
        rec.revoked = true;
        crate::audit::claim::take(id, Action::Update, serde_json::json!({"revoked": true}));
        self.save(rec).await
    }

    /// Whether a presented token admits a node; the error says why not.
    pub fn check(&self, presented: Option<&str>) -> Result<()> {
        if self.mode == AdmissionMode::Open {
            return Ok(());
        }
        let denied = |m: &str| Error::PermissionDenied(format!("admission refused: {m}"));
        let t = presented.filter(|t| !t.is_empty()).ok_or_else(|| denied("a token is required"))?;
        let (id, secret) = t.split_once('.').ok_or_else(|| denied("malformed token"))?;
        let rec = self
            .tokens
            .read()
            .ok()
            .and_then(|m| m.get(id).cloned())
            .ok_or_else(|| denied("unknown token"))?;
        if rec.hash != hash(secret) {
            return Err(denied("unknown token"));
        }
        if rec.revoked {
            return Err(denied("token revoked"));
        }
        if rec.expires_ms.is_some_and(|e| e <= now_ms()) {
            return Err(denied("token expired"));
        }
        Ok(())
    }
}
