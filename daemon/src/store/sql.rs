//! The SQL both back-ends share. Both accept `$N` placeholders, `ON CONFLICT
//! ... DO UPDATE` and `RETURNING`, so the statements are written once and the
//! bodies are stamped out per back-end by [`store_common`].

pub const SELECT_KIND: &str = "SELECT name, data FROM entities WHERE kind = $1 ORDER BY name";
/// One page of a kind in name order, after a name ("" for the first page):
/// the primary key (kind, name) serves it, so a page costs its own rows only.
pub const SELECT_KIND_AFTER: &str =
    "SELECT name, data FROM entities WHERE kind = $1 AND name > $2 ORDER BY name LIMIT $3";
pub const SELECT_ONE: &str = "SELECT data FROM entities WHERE kind = $1 AND name = $2";
pub const UPSERT: &str = "INSERT INTO entities (kind, name, data) VALUES ($1, $2, $3) \
     ON CONFLICT (kind, name) DO UPDATE SET data = excluded.data";
pub const DELETE_ONE: &str = "DELETE FROM entities WHERE kind = $1 AND name = $2";
pub const INSERT_TXN: &str = "INSERT INTO txn (time_ms, actor, actor_uid, verified, peer, action, entity, name, outcome, info, source) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id";
/// Info is read cut (rows written before Info was capped can be megabytes),
/// with its whole length so the cut can say how long it was.
fn txn_columns() -> String {
    let chars = super::INFO_MAX + super::MARKER_ROOM;
    format!(
        "id, time_ms, actor, actor_uid, verified, peer, action, entity, name, outcome, \
         substr(info, 1, {chars}), source, CAST(octet_length(info) AS BIGINT)"
    )
}
pub const DELETE_TXN_BEFORE: &str = "DELETE FROM txn WHERE time_ms < $1";
pub const SCHEMA_VERSION: &str = "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM schema_version";

/// A value bound to a `$N` placeholder.
#[derive(Debug, Clone)]
pub enum Bind {
    Text(String),
    Int(i64),
}

/// The SELECT for a txn query: filters as placeholders, newest `limit` rows
/// (returned oldest first) or rows after an id, oldest first.
pub fn txn_select(q: &super::TxnQuery) -> (String, Vec<Bind>) {
    let f = &q.filter;
    let mut conds: Vec<String> = vec![];
    let mut binds: Vec<Bind> = vec![];
    let mut push = |cond: &str, vals: Vec<Bind>| {
        let mut c = cond.to_string();
        for v in vals {
            binds.push(v);
            c = c.replacen('?', &format!("${}", binds.len()), 1);
        }
        conds.push(c);
    };
    for (col, v) in
        [("actor", &f.actor), ("action", &f.action), ("entity", &f.entity), ("outcome", &f.outcome)]
    {
        if let Some(v) = v {
            push(&format!("{col} = ?"), vec![Bind::Text(v.clone())]);
        }
    }
    if let Some(n) = &f.name {
        // A node row names its request's hostlist: LIKE narrows, Rust decides (txn::name_matches).
        push(
            "(name = ? OR (entity = 'node' AND (name LIKE '%[%' OR name LIKE '%,%') AND name LIKE ?))",
            vec![Bind::Text(n.clone()), Bind::Text(spur_vocab::txn::name_hostlist_like(n))],
        );
    }
    if let Some(p) = &f.peer {
        let (exact, plain, bracketed) = spur_vocab::txn::peer_patterns(p);
        // LIKE narrows; the exact port-boundary rule is re-checked in Rust.
        push(
            "(peer = ? OR peer LIKE ? OR peer LIKE ?)",
            vec![Bind::Text(exact), Bind::Text(format!("{plain}%")), Bind::Text(format!("{bracketed}%"))],
        );
    }
    if let Some(s) = f.start_ms {
        push("time_ms >= ?", vec![Bind::Int(s)]);
    }
    if let Some(e) = f.end_ms {
        push("time_ms <= ?", vec![Bind::Int(e)]);
    }
    if let Some(a) = q.after_id {
        push("id > ?", vec![Bind::Int(a)]);
    }
    if let Some(b) = q.before_id {
        push("id < ?", vec![Bind::Int(b)]);
    }
    let wh = if conds.is_empty() { String::new() } else { format!(" WHERE {}", conds.join(" AND ")) };
    let order = if q.after_id.is_some() { "ASC" } else { "DESC" };
    binds.push(Bind::Int(f.limit));
    let sql = format!("SELECT {} FROM txn{wh} ORDER BY id {order} LIMIT ${}", txn_columns(), binds.len());
    (sql, binds)
}

/// Implements the back-end-independent parts of a store for one sqlx database.
macro_rules! store_common {
    ($db:ty, $row:ty) => {
        use crate::store::sql;
        use crate::store::{TxnHead, TxnRow, Written};

        async fn load_kind(
            pool: &sqlx::Pool<$db>,
            kind: &str,
        ) -> crate::error::Result<Vec<(String, serde_json::Value)>> {
            let rows: Vec<(String, String)> =
                sqlx::query_as(sql::SELECT_KIND).bind(kind).fetch_all(pool).await?;
            rows.into_iter().map(|(n, d)| Ok((n, serde_json::from_str(&d)?))).collect()
        }

        async fn each_kind(
            pool: &sqlx::Pool<$db>,
            kind: &str,
            visit: crate::store::Visit<'_>,
        ) -> crate::error::Result<usize> {
            use futures_util::TryStreamExt;
            let mut rows = sqlx::query_as::<_, (String, String)>(sql::SELECT_KIND).bind(kind).fetch(pool);
            let mut n = 0;
            while let Some((name, doc)) = rows.try_next().await? {
                visit(&name, &doc)?;
                n += 1;
            }
            Ok(n)
        }

        async fn page_kind(
            pool: &sqlx::Pool<$db>,
            kind: &str,
            after: &str,
            limit: i64,
        ) -> crate::error::Result<Vec<(String, String)>> {
            Ok(sqlx::query_as(sql::SELECT_KIND_AFTER)
                .bind(kind)
                .bind(after)
                .bind(limit)
                .fetch_all(pool)
                .await?)
        }

        /// Reads, mutates and writes one document with its txn row, inside `tx`.
        async fn mutate_in(
            tx: &mut sqlx::Transaction<'_, $db>,
            kind: &str,
            name: &str,
            f: crate::store::Mutator,
            head: TxnHead,
        ) -> crate::error::Result<(Written, TxnRow)> {
            let old: Option<String> =
                sqlx::query_scalar(sql::SELECT_ONE).bind(kind).bind(name).fetch_optional(&mut **tx).await?;
            let old = old.map(|s| serde_json::from_str(&s)).transpose()?;
            let written = f(old)?;
            match &written.next {
                Some(doc) => {
                    sqlx::query(sql::UPSERT)
                        .bind(kind)
                        .bind(name)
                        .bind(doc.to_string())
                        .execute(&mut **tx)
                        .await?;
                }
                None => {
                    sqlx::query(sql::DELETE_ONE).bind(kind).bind(name).execute(&mut **tx).await?;
                }
            }
            let row = TxnRow {
                id: 0,
                info: head.info_of(written.info.clone()),
                head,
                action: written.action.as_str().into(),
                entity: kind.into(),
                name: name.into(),
                outcome: "success".into(),
            }
            .clipped();
            let id = insert_txn_in(&mut **tx, &row).await?;
            Ok((written, TxnRow { id, ..row }))
        }

        async fn insert_txn_in<'e, E>(exec: E, row: &TxnRow) -> crate::error::Result<i64>
        where
            E: sqlx::Executor<'e, Database = $db>,
        {
            let h = &row.head;
            let id: i64 = sqlx::query_scalar(sql::INSERT_TXN)
                .bind(h.time_ms)
                .bind(&h.actor)
                .bind(h.actor_uid)
                .bind(h.verified)
                .bind(&h.peer)
                .bind(&row.action)
                .bind(&row.entity)
                .bind(&row.name)
                .bind(&row.outcome)
                .bind(&row.info)
                .bind(&h.source)
                .fetch_one(exec)
                .await?;
            Ok(id)
        }

        /// The rows `q` asks for. Where a filter is re-checked here (Peer=,
        /// a node's Name=), the database's rows are read a page at a time
        /// until `limit` pass or none are left.
        async fn list_txn_from(
            pool: &sqlx::Pool<$db>,
            q: &crate::store::TxnQuery,
        ) -> crate::error::Result<Vec<TxnRow>> {
            let rechecked = q.filter.peer.is_some() || q.filter.name.is_some();
            let limit = usize::try_from(q.filter.limit).unwrap_or(0);
            let mut q = q.clone();
            let mut out: Vec<TxnRow> = Vec::new();
            loop {
                let (page, last) = list_txn_page(pool, &q).await?;
                out.extend(page);
                // No full page left (or nothing is re-checked here): the database has no more.
                let Some(id) = last.filter(|_| rechecked && out.len() < limit) else { break };
                // Newest first (or, for a tail, oldest first): the next page goes on from the last row read.
                if q.after_id.is_some() {
                    q.after_id = Some(id);
                } else {
                    q.before_id = Some(id);
                }
            }
            out.truncate(limit);
            if q.after_id.is_none() {
                out.reverse();
            }
            Ok(out)
        }

        /// One page of `q` in the database's order (newest first unless
        /// `after_id`), re-checked; and, when the database had a full page,
        /// the id of its last row, where the next page goes on.
        async fn list_txn_page(
            pool: &sqlx::Pool<$db>,
            q: &crate::store::TxnQuery,
        ) -> crate::error::Result<(Vec<TxnRow>, Option<i64>)> {
            use sqlx::Row;
            let (text, binds) = sql::txn_select(q);
            let mut query = sqlx::query(&text);
            for b in binds {
                query = match b {
                    sql::Bind::Text(t) => query.bind(t),
                    sql::Bind::Int(i) => query.bind(i),
                };
            }
            let rows: Vec<$row> = query.fetch_all(pool).await?;
            let full = i64::try_from(rows.len()).unwrap_or(i64::MAX) >= q.filter.limit;
            let last = if full { rows.last().map(|r| r.try_get::<i64, _>(0)).transpose()? } else { None };
            let mut out: Vec<TxnRow> = rows
                .iter()
                .map(|r| {
                    let mut info: String = r.try_get(10)?;
                    let whole: i64 = r.try_get(12)?;
                    let whole = usize::try_from(whole).unwrap_or(usize::MAX);
                    if whole > crate::store::INFO_MAX + crate::store::MARKER_ROOM {
                        crate::store::clip_to(&mut info, crate::store::INFO_MAX, whole);
                    }
                    Ok(TxnRow {
                        id: r.try_get(0)?,
                        head: TxnHead {
                            time_ms: r.try_get(1)?,
                            actor: r.try_get(2)?,
                            actor_uid: r.try_get(3)?,
                            verified: r.try_get(4)?,
                            peer: r.try_get(5)?,
                            source: r.try_get(11)?,
                            forwarded: false,
                        },
                        action: r.try_get(6)?,
                        entity: r.try_get(7)?,
                        name: r.try_get(8)?,
                        outcome: r.try_get(9)?,
                        info,
                    })
                })
                .collect::<crate::error::Result<Vec<TxnRow>>>()?;
            if let Some(p) = &q.filter.peer {
                out.retain(|r| spur_vocab::txn::peer_matches(p, &r.head.peer));
            }
            if let Some(n) = &q.filter.name {
                out.retain(|r| spur_vocab::txn::name_matches(n, &r.entity, &r.name));
            }
            Ok((out, last))
        }

        async fn delete_txn_before_tx(
            tx: &mut sqlx::Transaction<'_, $db>,
            ms: i64,
        ) -> crate::error::Result<u64> {
            Ok(sqlx::query(sql::DELETE_TXN_BEFORE).bind(ms).execute(&mut **tx).await?.rows_affected())
        }

        async fn insert_txns_tx(
            tx: &mut sqlx::Transaction<'_, $db>,
            rows: &[TxnRow],
        ) -> crate::error::Result<Vec<i64>> {
            let mut ids = Vec::with_capacity(rows.len());
            for r in rows {
                ids.push(insert_txn_in(&mut **tx, r).await?);
            }
            Ok(ids)
        }

        /// Writes (or deletes) several documents of one kind, and the txn
        /// rows recording them, in one transaction; returns the rows' ids.
        /// Writes (or deletes) several documents of one kind, and the txn
        /// rows recording them, inside `tx`; returns the rows' ids. Each
        /// back-end opens the transaction (PostgreSQL's checks its fence).
        async fn put_tx(
            tx: &mut sqlx::Transaction<'_, $db>,
            kind: &str,
            docs: &[(String, Option<String>)],
            rows: &[TxnRow],
        ) -> crate::error::Result<Vec<i64>> {
            let ids = insert_txns_tx(tx, rows).await?;
            for (name, doc) in docs {
                match doc {
                    Some(d) => {
                        sqlx::query(sql::UPSERT)
                            .bind(kind)
                            .bind(name)
                            .bind(d.as_str())
                            .execute(&mut **tx)
                            .await?
                    }
                    None => sqlx::query(sql::DELETE_ONE).bind(kind).bind(name).execute(&mut **tx).await?,
                };
            }
            Ok(ids)
        }

        /// Applies the migrations (`migrations.rs`) above the stored schema
        /// version, each in its own transaction.
        async fn migrate(
            pool: &sqlx::Pool<$db>,
            pick: fn(&crate::store::migrations::Migration) -> &'static str,
        ) -> crate::error::Result<()> {
            sqlx::query("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
                .execute(pool)
                .await?;
            let current: i64 = sqlx::query_scalar::<_, i64>(sql::SCHEMA_VERSION).fetch_one(pool).await?;
            use crate::store::migrations::{MIGRATIONS, statements};
            for (i, m) in MIGRATIONS.iter().enumerate().skip(current as usize) {
                let mut tx = pool.begin().await?;
                for stmt in statements(pick(m)) {
                    sqlx::query(stmt).execute(&mut *tx).await?;
                }
                sqlx::query("INSERT INTO schema_version (version) VALUES ($1)")
                    .bind(i as i64 + 1)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                tracing::debug!(migration = m.name, "applied a schema migration");
            }
            Ok(())
        }
    };
}

pub(crate) use store_common;
