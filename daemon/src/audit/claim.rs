//! A request's audit row committed in the same transaction as the change it
//! records, so an acknowledged change costs one durable commit, not two in
//! a row (issue 15: `scontrol update` and `sbatch` waited for the record,
//! then for its row).
//!
//! The gate runs a mutation's core inside [`scope`]. A core that knows the
//! row it will be noted with (`take`) has the write that persists its
//! change carry it ([`carry`], or [`commit`] for a plain document write),
//! which keeps it as committed with the row's id; the gate
//! then publishes that row instead of writing it again. A row no write
//! carried is written after the fact, as before, so a core that takes none
//! loses nothing.

use crate::accounting::Caller;
use crate::error::Result;
use crate::store::{Action, Store, TxnRow, with_ids};
use serde_json::{Value, json};
use std::future::Future;
use std::sync::Mutex;

tokio::task_local! {
    static CLAIM: Claim;
}

/// Who asks, about what: everything of the row but its name, action and the core's info.
pub struct Claim {
    caller: Caller,
    entity: &'static str,
    params: Value,
    rows: Mutex<Rows>,
}

#[derive(Default)]
struct Rows {
    /// Taken by the core, not yet handed to a write.
    taken: Vec<TxnRow>,
    /// Durable with the change, ids set.
    committed: Vec<TxnRow>,
}

/// The Info of a request's row: its parameters, and what the core adds.
pub fn info(params: &Value, extra: Value) -> Value {
    let mut info = json!({ "params": params });
    if let (Value::Object(i), Value::Object(extra)) = (&mut info, extra) {
        i.extend(extra);
    }
    info
}

/// One txn row of a request by `caller`.
pub fn row(caller: &Caller, entity: &str, name: &str, action: Action, outcome: &str, info: Value) -> TxnRow {
    let head = caller.head();
    TxnRow {
        id: 0,
        info: head.info_of(info),
        head,
        action: action.as_str().into(),
        entity: entity.into(),
        name: name.into(),
        outcome: outcome.into(),
    }
}

/// Runs `f` with the request's claim; returns its output and the rows that
/// were committed with its changes.
pub async fn scope<F: Future>(
    caller: Caller,
    entity: &'static str,
    params: Value,
    f: F,
) -> (F::Output, Vec<TxnRow>) {
    let claim = Claim { caller, entity, params, rows: Mutex::default() };
    CLAIM
        .scope(claim, async {
            let out = f.await;
            let committed = CLAIM.with(|c| std::mem::take(&mut c.lock().committed));
            (out, committed)
        })
        .await
}

impl Claim {
    fn lock(&self) -> std::sync::MutexGuard<'_, Rows> {
        self.rows.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The row the request will be noted with (`name`, `action`, `extra` as
/// its Note says), for the next write of this task to carry. Outside a
/// request (the scheduler's own changes) there is none.
pub fn take(name: &str, action: Action, extra: Value) {
    let _ = CLAIM.try_with(|c| {
        let r = row(&c.caller, c.entity, name, action, "success", info(&c.params, extra)).clipped();
        c.lock().taken.push(r);
    });
}

/// Runs the write that persists the change with the rows taken for it (none
/// outside a request), and keeps them, with the ids `write` returns, as committed.
pub async fn carry<Fut>(write: impl FnOnce(Vec<TxnRow>) -> Fut) -> Result<()>
where
    Fut: Future<Output = Result<Vec<TxnRow>>>,
{
    let rows = CLAIM.try_with(|c| std::mem::take(&mut c.lock().taken)).unwrap_or_default();
    let done = write(rows).await?;
    let _ = CLAIM.try_with(|c| c.lock().committed.extend(done));
    Ok(())
}

/// Writes `docs` of `kind` with the rows taken for them: the one document
/// write of the services that keep their state in the store directly.
pub async fn commit(store: &dyn Store, kind: &str, docs: &[(String, Option<String>)]) -> Result<()> {
    carry(|rows| async move {
        let ids = store.commit_raw(kind, docs, &rows).await?;
        Ok(with_ids(rows, ids))
    })
    .await
}
