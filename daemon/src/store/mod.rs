//! Persistence behind one trait, with two implementations that pass one suite:
//! SQLite (embedded default, WAL, `synchronous=FULL`) and PostgreSQL.
//!
//! Records are JSON documents keyed by (kind, name). A write runs a
//! [`Mutator`] inside a database transaction, under a lock on that record,
//! and inserts its txn audit row in the same transaction, so a change and
//! its audit row commit together or not at all.
//!
//! The schema is SQL files per back-end under `migrations/`, applied in
//! order at open with the version recorded (`migrations`).

mod batch;
pub mod fence;
mod guard;
mod migrations;
mod postgres;
mod sql;
mod sqlite;

use crate::error::{Error, Result};
use serde_json::Value;
use std::sync::Arc;

pub use batch::BatchWriter;
pub use postgres::PgStore;
pub use sqlite::SqliteStore;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Create,
    Update,
    Delete,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Delete => "delete",
        }
    }
}

/// What a mutator decided: the verb it performed, the new document (`None`
/// deletes it) and the txn Info.
#[derive(Debug, Clone)]
pub struct Written {
    pub action: Action,
    pub next: Option<Value>,
    pub info: Value,
}

/// Computes the next document from the stored one, inside the write transaction.
pub type Mutator = Box<dyn FnOnce(Option<Value>) -> Result<Written> + Send>;

/// Who did it, from where and when: the part of a txn row known before the write.
#[derive(Debug, Clone, Default)]
pub struct TxnHead {
    pub time_ms: i64,
    pub actor: String,
    pub actor_uid: Option<i64>,
    pub verified: bool,
    pub peer: String,
    pub source: String,
    /// The request reached this controller through another (a follower's
    /// hop, `ha/forward.rs`): Info says so, and Peer is that controller.
    pub forwarded: bool,
}

impl TxnHead {
    /// A row's Info as stored: `info`, with `"forwarded": true` when the
    /// request came through another controller.
    pub fn info_of(&self, mut info: Value) -> String {
        if self.forwarded
            && let Value::Object(m) = &mut info
        {
            m.insert("forwarded".into(), Value::Bool(true));
        }
        info.to_string()
    }
}

#[derive(Debug, Clone, Default)]
pub struct TxnRow {
    pub id: i64,
    pub head: TxnHead,
    pub action: String,
    pub entity: String,
    pub name: String,
    pub outcome: String,
    pub info: String,
}

/// The most bytes of Info a txn row keeps; see [`clip`].
pub const INFO_MAX: usize = 4096;
/// The most bytes of Name (a multi-target request's own expression).
pub const NAME_MAX: usize = 1024;
/// Room for a clip marker, so that a clipped value read back is not clipped again.
pub const MARKER_ROOM: usize = 64;

/// When the whole was longer than `max` bytes (`total`), cuts `s`, its
/// start, to `max` bytes on a char boundary and ends it with
/// `…(truncated, N bytes)`, N being `total`.
pub fn clip_to(s: &mut String, max: usize, total: usize) {
    if total <= max {
        return;
    }
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push_str(&format!("…(truncated, {total} bytes)"));
}

/// [`clip_to`] for a value held whole.
pub fn clip(s: &mut String, max: usize) {
    let total = s.len();
    clip_to(s, max, total)
}

/// The actor of changes the controller makes on its own (not responding, preemption).
pub const SYSTEM_ACTOR: &str = "spurctld";

impl TxnRow {
    /// The row as it is stored: Name and Info cut to [`NAME_MAX`] and
    /// [`INFO_MAX`], so no request can make one row large.
    pub fn clipped(mut self) -> TxnRow {
        clip(&mut self.name, NAME_MAX);
        clip(&mut self.info, INFO_MAX);
        self
    }

    /// An after-the-fact success row for a change the controller made itself.
    pub fn system(entity: &str, name: &str, action: &str, info: serde_json::Value) -> TxnRow {
        TxnRow {
            head: TxnHead {
                time_ms: now_ms(),
                actor: SYSTEM_ACTOR.into(),
                source: "system".into(),
                ..TxnHead::default()
            },
            action: action.into(),
            entity: entity.into(),
            name: name.into(),
            outcome: "success".into(),
            info: info.to_string(),
            ..TxnRow::default()
        }
    }
}

/// A txn query: sacctmgr's filters, and optionally "after this id" for a tail resuming.
#[derive(Debug, Clone, Default)]
pub struct TxnQuery {
    pub filter: spur_vocab::txn::TxnFilter,
    pub after_id: Option<i64>,
    /// Only rows with a smaller id: where a paged listing resumes.
    pub before_id: Option<i64>,
}

/// Rows as committed: each given the id the store returned for it.
pub fn with_ids(rows: Vec<TxnRow>, ids: Vec<i64>) -> Vec<TxnRow> {
    rows.into_iter()
        .zip(ids)
        .map(|(mut r, id)| {
            r.id = id;
            r
        })
        .collect()
}

/// What [`Store::load_each`] calls with each document's name and JSON text.
pub type Visit<'v> = &'v mut (dyn FnMut(&str, &str) -> Result<()> + Send);

#[async_trait::async_trait]
pub trait Store: Send + Sync {
    fn backend(&self) -> &'static str;
    /// Every document of one kind, by name.
    async fn load(&self, kind: &str) -> Result<Vec<(String, Value)>>;
    /// Every document of one kind as its JSON text, one at a time, so a
    /// large kind (the job queue) is decoded into its own type without the
    /// whole table held twice, once as rows and once as JSON values.
    async fn load_each(&self, kind: &str, visit: Visit<'_>) -> Result<usize> {
        let docs = self.load(kind).await?;
        let n = docs.len();
        for (name, doc) in docs {
            visit(&name, &doc.to_string())?;
        }
        Ok(n)
    }
    /// At most `limit` documents of one kind whose names sort after `after`
    /// ("" for the first page), in the store's name order, as JSON text: a
    /// bounded read of a large kind (the job history behind sacct). This
    /// default reads the whole kind (test stores); the SQL back-ends read one page.
    async fn load_page(&self, kind: &str, after: &str, limit: i64) -> Result<Vec<(String, String)>> {
        let mut docs: Vec<(String, String)> = self
            .load(kind)
            .await?
            .into_iter()
            .filter(|(name, _)| name.as_str() > after)
            .map(|(name, doc)| (name, doc.to_string()))
            .collect();
        docs.sort_by(|a, b| a.0.cmp(&b.0));
        docs.truncate(usize::try_from(limit).unwrap_or(0));
        Ok(docs)
    }
    /// Runs `f` on the stored document under a lock and writes its result
    /// with a success txn row in one transaction. Returns the row as committed.
    async fn mutate(&self, kind: &str, name: &str, f: Mutator, head: TxnHead) -> Result<(Written, TxnRow)>;
    /// Writes (or with None deletes) documents of one kind in one
    /// transaction, with no audit row of their own.
    async fn put(&self, kind: &str, docs: &[(String, Option<Value>)]) -> Result<()> {
        let raw: Vec<(String, Option<String>)> =
            docs.iter().map(|(name, doc)| (name.clone(), doc.as_ref().map(Value::to_string))).collect();
        self.put_raw(kind, &raw).await
    }
    /// [`Store::put`] with each document as its JSON text: a record
    /// serialized straight to text costs a fraction of a JSON value.
    async fn put_raw(&self, kind: &str, docs: &[(String, Option<String>)]) -> Result<()> {
        self.commit_raw(kind, docs, &[]).await.map(drop)
    }
    /// The one document write: [`Store::put_raw`] and the txn rows recording
    /// the change, in one transaction; returns the rows' ids, in order.
    async fn commit_raw(
        &self,
        kind: &str,
        docs: &[(String, Option<String>)],
        rows: &[TxnRow],
    ) -> Result<Vec<i64>>;
    /// Inserts rows in one transaction; returns their ids, in order.
    async fn insert_txns(&self, rows: &[TxnRow]) -> Result<Vec<i64>>;
    /// Matching rows, oldest first: the newest `limit`, or those after `after_id`.
    async fn list_txn(&self, q: &TxnQuery) -> Result<Vec<TxnRow>>;
    async fn delete_txn_before(&self, ms: i64) -> Result<u64>;
    async fn close(&self);
}

/// Opens the store a `database_url` names, running migrations.
pub async fn open(url: &str) -> Result<Arc<dyn Store>> {
    open_fenced(url, None).await
}

/// Whether `url` names a PostgreSQL database (the one back-end several controllers share).
pub fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// [`open`], for a leader: every write checks `fence` (PostgreSQL only).
pub async fn open_fenced(url: &str, fence: Option<Arc<fence::Fence>>) -> Result<Arc<dyn Store>> {
    let inner: Box<dyn Store> = if let Some(path) = url.strip_prefix("sqlite://") {
        Box::new(SqliteStore::open(path).await?)
    } else if is_postgres(url) {
        Box::new(PgStore::open_fenced(url, fence).await?)
    } else {
        return Err(Error::InvalidArgument(format!("database_url: unsupported '{}'", redact(url))));
    };
    Ok(Arc::new(guard::Guarded::new(inner, url)))
}

/// A database URL fit for a log line: the password is replaced by `***`.
pub fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else { return url.to_string() };
    let rest = &url[scheme_end..];
    match (rest.find('@'), rest.find(':')) {
        (Some(at), Some(colon)) if colon < at => {
            format!("{}{}:***{}", &url[..scheme_end], &rest[..colon], &rest[at..])
        }
        _ => url.to_string(),
    }
}

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_are_redacted() {
        assert_eq!(super::redact("postgresql://u:secret@h/db"), "postgresql://u:***@h/db");
        assert_eq!(super::redact("postgresql://h:5432/db"), "postgresql://h:5432/db");
        assert_eq!(super::redact("sqlite:///x.db"), "sqlite:///x.db");
    }
}
