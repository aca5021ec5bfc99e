//! Admission tokens: which node agents may register when `[admission] mode
//! = "token"`. A token is `ID.SECRET`; only a hash of the secret is stored,
//! and the audit log names tokens by ID, never by secret. A token may be
//! bound to a hostlist (every node registered with it must be in it) and
//! may be single-use (its first acknowledged registration spends it).

use crate::config::AdmissionMode;
use crate::error::{Error, Result};
use crate::store::{Action, Store};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use spur_vocab::hostlist;
use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::sync::{Arc, Mutex, RwLock};

pub const KIND_TOKEN: &str = "admission_token";

/// A token as stored. The fields after `revoked` came later: records
/// written before them load with their defaults (unbound, reusable).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenRecord {
    pub id: String,
    pub hash: String,
    pub created_ms: i64,
    pub expires_ms: Option<i64>,
    pub revoked: bool,
    /// The hostlist expression it is bound to, as given; None: any node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    /// Single use: it admits one registration.
    #[serde(default)]
    pub once: bool,
    /// When its one registration was acknowledged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_ms: Option<i64>,
}

/// What `spur token create` asks for.
#[derive(Debug, Clone, Default)]
pub struct TokenSpec {
    pub ttl_secs: Option<i64>,
    pub nodes: Option<String>,
    pub once: bool,
}

pub struct Admission {
    mode: AdmissionMode,
    store: Option<Arc<dyn Store>>,
    tokens: RwLock<BTreeMap<String, TokenRecord>>,
    /// Single-use tokens whose registration is under way: a second one at
    /// the same time is turned away, so two agents never share one.
    spending: Mutex<HashSet<String>>,
    /// One read-modify-write of a record at a time (revoke, spend), so
    /// neither loses the other's change.
    writes: tokio::sync::Mutex<()>,
}

/// A registration a token admitted. A single-use token stays reserved for
/// it until [`Admitted::spend`] marks the token used; dropped unspent (the
/// registration failed), the token is free for another try.
pub struct Admitted {
    admission: Arc<Admission>,
    /// The token's id; None when admission is open.
    pub token: Option<String>,
    once: bool,
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

/// The id part of a presented token, for logs: cut short, since it comes
/// from the network and may be anything.
pub fn presented_id(presented: &str) -> &str {
    let id = presented.split_once('.').map_or(presented, |(id, _)| id);
    id.char_indices().nth(16).map_or(id, |(i, _)| &id[..i])
}

fn denied(why: impl std::fmt::Display) -> Error {
    Error::PermissionDenied(format!("admission refused: {why}"))
}

impl Admission {
    pub async fn load(mode: AdmissionMode, store: Option<Arc<dyn Store>>) -> Result<Admission> {
        let mut tokens = BTreeMap::new();
        if let Some(s) = &store {
            for (id, doc) in s.load(KIND_TOKEN).await? {
                tokens.insert(id, serde_json::from_value(doc)?);
            }
        }
        Ok(Admission {
            mode,
            store,
            tokens: RwLock::new(tokens),
            spending: Mutex::default(),
            writes: tokio::sync::Mutex::new(()),
        })
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

    fn get(&self, id: &str) -> Option<TokenRecord> {
        self.tokens.read().ok().and_then(|t| t.get(id).cloned())
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
    /// A bound token's hostlist may name at most `max_hosts` hosts, each at
    /// most `max_name` bytes long (the cluster's node count and longest
    /// name, as for every hostlist a client sends).
    pub async fn create(
        &self,
        spec: TokenSpec,
        (max_hosts, max_name): (usize, usize),
        now: i64,
    ) -> Result<(TokenRecord, String)> {
        if spec.ttl_secs.is_some_and(|t| t <= 0) {
            return Err(Error::invalid("ttl_secs", "must be more than zero seconds"));
        }
        if let Some(t) = spec.ttl_secs {
            spur_proto::token::check_ttl("ttl_secs", t.unsigned_abs()).map_err(Error::InvalidArgument)?;
        }
        let nodes = spec.nodes.map(|n| n.trim().to_string());
        if let Some(n) = &nodes {
            if n.is_empty() {
                return Err(Error::invalid("--nodes", "an empty hostlist admits no node; leave --nodes out"));
            }
            hostlist::expand_bounded(n, max_hosts, max_name).map_err(|e| Error::invalid("--nodes", e))?;
        }
        let (id, secret) = (random_hex(4)?, random_hex(24)?);
        let rec = TokenRecord {
            id: id.clone(),
            hash: hash(&secret),
            created_ms: now,
            expires_ms: spec.ttl_secs.map(|t| now.saturating_add(t.saturating_mul(1000))),
            revoked: false,
            nodes,
            once: spec.once,
            used_ms: None,
        };
        crate::audit::claim::take(&id, Action::Create, create_info(&rec));
        self.save(rec.clone()).await?;
        Ok((rec, format!("{id}.{secret}")))
    }

    pub fn list(&self) -> Vec<TokenRecord> {
        self.tokens.read().map(|t| t.values().cloned().collect()).unwrap_or_default()
    }

    pub async fn revoke(&self, id: &str) -> Result<()> {
        let _one = self.writes.lock().await;
        let mut rec =
            self.get(id).ok_or_else(|| Error::NotFound(format!("admission token '{id}' does not exist")))?;
        rec.revoked = true;
        crate::audit::claim::take(id, Action::Update, serde_json::json!({"revoked": true}));
        self.save(rec).await
    }

    /// Whether the token `presented` admits an agent for `nodes` at `now`;
    /// the error says why not. A single-use token is reserved for this
    /// registration until the returned [`Admitted`] is spent or dropped.
    pub fn admit(self: &Arc<Self>, presented: &str, nodes: &[String], now: i64) -> Result<Admitted> {
        let open = |token| Ok(Admitted { admission: self.clone(), token, once: false });
        if self.mode == AdmissionMode::Open {
            return open(None);
        }
        if presented.is_empty() {
            return Err(denied("a token is required"));
        }
        let (id, secret) = presented.split_once('.').ok_or_else(|| denied("malformed token"))?;
        let rec = self.get(id).ok_or_else(|| denied("unknown token"))?;
        if rec.hash != hash(secret) {
            return Err(denied("unknown token"));
        }
        if rec.revoked {
            return Err(denied("token revoked"));
        }
        if rec.expires_ms.is_some_and(|e| e <= now) {
            return Err(denied("token expired"));
        }
        if rec.used_ms.is_some() {
            return Err(denied(format_args!("admission token {id} was used already")));
        }
        if let Some(bound) = &rec.nodes {
            // Checked at creation; a record that no longer parses admits nothing.
            let admits: HashSet<String> = hostlist::expand(bound).unwrap_or_default().into_iter().collect();
            if let Some(out) = nodes.iter().find(|n| !admits.contains(*n)) {
                return Err(denied(format_args!(
                    "admission token {id} does not admit node {out} (only {bound})"
                )));
            }
        }
        if !rec.once {
            return open(Some(rec.id));
        }
        let mut spending = self.spending.lock().unwrap_or_else(|p| p.into_inner());
        if !spending.insert(rec.id.clone()) {
            // The other registration may yet fail: this one may retry.
            return Err(Error::Unavailable(format!(
                "admission token {id} is single-use and another registration with it is under way"
            )));
        }
        Ok(Admitted { admission: self.clone(), token: Some(rec.id), once: true })
    }
}

impl Admitted {
    /// Marks a single-use token used at `now`, durably: called before the
    /// registration is acknowledged, so no controller restart forgets it.
    pub async fn spend(self, now: i64) -> Result<()> {
        let (Some(id), true) = (&self.token, self.once) else { return Ok(()) };
        let a = &self.admission;
        let _one = a.writes.lock().await;
        let mut rec = a.get(id).ok_or_else(|| denied(format_args!("admission token {id} is gone")))?;
        rec.used_ms = Some(now);
        a.save(rec).await
        // `self` drops here, after the used mark is in memory: the reservation ends.
    }
}

impl std::fmt::Debug for Admitted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admitted").field("token", &self.token).field("once", &self.once).finish()
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        if let (Some(id), true) = (&self.token, self.once) {
            self.admission.spending.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
        }
    }
}

/// The Info of a create's txn row: what binds the token (never its secret).
pub fn create_info(rec: &TokenRecord) -> serde_json::Value {
    serde_json::json!({ "nodes": rec.nodes, "once": rec.once })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    async fn tokens(dir: &std::path::Path) -> Arc<Admission> {
        let store = crate::store::open(&format!("sqlite://{}/spur.db", dir.display())).await.unwrap();
        Arc::new(Admission::load(AdmissionMode::Token, Some(store)).await.unwrap())
    }

    fn names(expr: &str) -> Vec<String> {
        hostlist::expand(expr).unwrap()
    }

    fn spec(nodes: Option<&str>, once: bool) -> TokenSpec {
        TokenSpec { ttl_secs: None, nodes: nodes.map(String::from), once }
    }

    fn refusal<T>(r: Result<T>) -> String {
        match r {
            Err(Error::PermissionDenied(m)) => m,
            Err(e) => panic!("not PermissionDenied: {e:?}"),
            Ok(_) => panic!("admitted"),
        }
    }

    #[test]
    fn records_from_before_binding_load_unbound_and_reusable() {
        let old = r#"{"id":"ab12","hash":"x","created_ms":1,"expires_ms":null,"revoked":false}"#;
        let rec: TokenRecord = serde_json::from_str(old).unwrap();
        assert_eq!((rec.nodes, rec.once, rec.used_ms), (None, false, None));
    }

    #[tokio::test]
    async fn nodes_must_be_a_hostlist_no_larger_than_the_cluster() {
        let dir = tempfile::tempdir().unwrap();
        let a = tokens(dir.path()).await;
        let bad = |e: Result<(TokenRecord, String)>| match e {
            Err(Error::InvalidArgument(m)) => m,
            other => panic!("{other:?}"),
        };
        let m = bad(a.create(spec(Some("node[1-"), false), (4, 6), NOW).await);
        assert!(m.starts_with("--nodes: ") && m.contains("unclosed"), "{m}");
        let m = bad(a.create(spec(Some("node[1-5]"), false), (4, 6), NOW).await);
        assert!(m.starts_with("--nodes: ") && m.contains("more than 4 hosts"), "{m}");
        assert!(bad(a.create(spec(Some(" "), false), (4, 6), NOW).await).starts_with("--nodes: "));
        // No node of the cluster is longer than 6 bytes: a longer literal is refused unexpanded.
        let m = bad(a.create(spec(Some(&format!("{}[1-4]", "x".repeat(1 << 20))), false), (4, 6), NOW).await);
        assert!(m.starts_with("--nodes: ") && m.contains("1048577 bytes or more, longer than the 6"), "{m}");
        assert!(a.list().is_empty(), "nothing was stored");
        let (rec, _) = a.create(spec(Some("node[01-02]"), true), (4, 6), NOW).await.unwrap();
        assert_eq!(create_info(&rec), serde_json::json!({"nodes": "node[01-02]", "once": true}));
    }

    #[tokio::test]
    async fn a_bound_token_admits_only_its_nodes() {
        let dir = tempfile::tempdir().unwrap();
        let a = tokens(dir.path()).await;
        let (rec, token) = a.create(spec(Some("node[01-02]"), false), (4, 6), NOW).await.unwrap();
        assert!(a.admit(&token, &names("node[01-02]"), NOW).is_ok());
        assert!(a.admit(&token, &names("node02"), NOW).is_ok(), "a reusable token admits again");
        let m = refusal(a.admit(&token, &names("node[02-04]"), NOW));
        let id = rec.id;
        assert_eq!(
            m,
            format!("admission refused: admission token {id} does not admit node node03 (only node[01-02])")
        );
    }

    #[tokio::test]
    async fn a_single_use_token_is_spent_by_its_first_registration_for_good() {
        let dir = tempfile::tempdir().unwrap();
        let a = tokens(dir.path()).await;
        let (rec, token) = a.create(spec(None, true), (4, 6), NOW).await.unwrap();
        let first = a.admit(&token, &names("node01"), NOW).unwrap();
        // While the first is under way, another registration waits its turn.
        match a.admit(&token, &names("node02"), NOW) {
            Err(Error::Unavailable(m)) => assert!(m.contains("under way"), "{m}"),
            other => panic!("{other:?}"),
        }
        // A registration that fails does not spend the token.
        drop(first);
        let second = a.admit(&token, &names("node02"), NOW).unwrap();
        second.spend(NOW + 5).await.unwrap();
        let used = format!("admission refused: admission token {} was used already", rec.id);
        assert_eq!(refusal(a.admit(&token, &names("node02"), NOW)), used);
        assert_eq!(a.list()[0].used_ms, Some(NOW + 5));
        // The mark is in the store: a restarted controller refuses it too.
        let again = tokens(dir.path()).await;
        assert_eq!(refusal(again.admit(&token, &names("node01"), NOW)), used);
    }

    #[tokio::test]
    async fn open_admission_takes_anyone() {
        let a = Arc::new(Admission::load(AdmissionMode::Open, None).await.unwrap());
        let ok = a.admit("", &names("node01"), NOW).unwrap();
        assert_eq!(ok.token, None);
        ok.spend(NOW).await.unwrap();
    }

    #[test]
    fn presented_ids_are_cut_for_logs() {
        assert_eq!(presented_id("ab12.secret"), "ab12");
        assert_eq!(presented_id(&"x".repeat(100)), "x".repeat(16));
        assert_eq!(presented_id(""), "");
    }
}
