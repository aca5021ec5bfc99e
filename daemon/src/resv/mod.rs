//! Admin reservations: the table the scheduler reads, `scontrol
//! create|update|delete reservation` against it, and the controller's own
//! upkeep (a recurring one rolls forward, an ended one is purged, each
//! audited with Source=system). Every change is written to the store with
//! its txn row in one transaction before the table shows it.
//!
//! The rules of a reservation (what a request may say, how nodes are
//! picked, overlaps) are spur-sched's, pure: [`spur_sched::resv::resolve`].

use crate::audit::Hub;
use crate::error::{Error, Result};
use crate::sched::model::{HresResource, Resv};
use crate::sched::resv::{ResvCx, ResvNode, resolve};
use crate::store::{Action, Store, TxnRow};
use serde_json::json;
use spur_vocab::resv::ResvRequest;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// The store's kind of reservation documents, by name.
pub const KIND_RESV: &str = "reservation";

/// At most this many reservations at once: each is a window in every pass.
pub const MAX_RESERVATIONS: usize = 1000;

pub struct ResvService {
    store: Option<Arc<dyn Store>>,
    table: RwLock<Arc<Vec<Resv>>>,
    /// One change at a time: a change is checked against all the others.
    writes: tokio::sync::Mutex<()>,
    /// Said on every change, and when a window begins or ends (the Watch re-sends nodes and the list).
    changed: tokio::sync::broadcast::Sender<()>,
    /// The names in their window at the last look, to tell when one begins or ends.
    active: std::sync::Mutex<Vec<String>>,
}

/// What a request is checked against, read by the caller (the job queue knows what runs where).
pub struct Cluster {
    pub nodes: Vec<ResvNode>,
    pub licenses: BTreeMap<String, u32>,
    pub hres: Arc<Vec<HresResource>>,
}

impl ResvService {
    /// The stored reservations; a document that does not read is an error naming it, never dropped.
    pub async fn load(store: Option<Arc<dyn Store>>) -> Result<ResvService> {
        let mut list = vec![];
        if let Some(s) = &store {
            for (name, doc) in s.load(KIND_RESV).await? {
                let r: Resv = serde_json::from_value(doc).map_err(|e| {
                    Error::Store(format!("reservation {name}: unreadable stored document: {e}"))
                })?;
                list.push(r);
            }
        }
        list.sort_by(|a, b| a.name.cmp(&b.name));
        let (changed, _) = tokio::sync::broadcast::channel(16);
        let table = RwLock::new(Arc::new(list));
        Ok(ResvService { store, table, writes: Default::default(), changed, active: Default::default() })
    }

    /// Every reservation, by name.
    pub fn list(&self) -> Arc<Vec<Resv>> {
        self.table.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn get(&self, name: &str) -> Option<Resv> {
        self.list().iter().find(|r| r.name == name).cloned()
    }

    fn install(&self, list: Vec<Resv>) {
        *self.table.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(list);
        let _ = self.changed.send(());
    }

    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<()> {
        self.changed.subscribe()
    }

    /// Says so when a window began or ended since the last look.
    fn note_windows(&self, now_ms: i64) {
        let now: Vec<String> =
            self.list().iter().filter(|r| r.active(now_ms)).map(|r| r.name.clone()).collect();
        let mut last = self.active.lock().unwrap_or_else(|p| p.into_inner());
        if *last != now {
            *last = now;
            let _ = self.changed.send(());
        }
    }

    /// Writes `docs` with the request's row (taken for `name`), then shows the new table.
    async fn persist(
        &self,
        name: &str,
        action: Action,
        docs: Vec<(String, Option<String>)>,
        info: serde_json::Value,
    ) -> Result<()> {
        if let Some(s) = &self.store {
            crate::audit::claim::take(name, action, info);
            crate::audit::claim::commit(s.as_ref(), KIND_RESV, &docs).await?;
        }
        Ok(())
    }

    /// `scontrol create reservation`: the new reservation, stored and shown.
    pub async fn create(
        &self,
        words: &[String],
        cluster: &Cluster,
        now_ms: i64,
        default_name: &str,
    ) -> Result<Resv> {
        let req = parse(words, now_ms)?;
        let _w = self.writes.lock().await;
        let all = self.list();
        if all.len() >= MAX_RESERVATIONS {
            return Err(Error::FailedPrecondition(format!(
                "{MAX_RESERVATIONS} reservations exist, the most Spur keeps; delete one first"
            )));
        }
        let cx = ResvCx {
            now_ms,
            nodes: &cluster.nodes,
            others: &all,
            licenses: &cluster.licenses,
            hres: &cluster.hres,
            default_name,
        };
        let r = resolve(None, &req, &cx).map_err(|e| Error::invalid(e.key, e.message))?;
        let doc = serde_json::to_string(&r).map_err(|e| Error::Store(e.to_string()))?;
        self.persist(&r.name, Action::Create, vec![(r.name.clone(), Some(doc))], json!({ "reservation": r }))
            .await?;
        let mut next = (*all).clone();
        next.push(r.clone());
        next.sort_by(|a, b| a.name.cmp(&b.name));
        self.install(next);
        Ok(r)
    }

    /// `scontrol update ReservationName=...`.
    pub async fn update(&self, words: &[String], cluster: &Cluster, now_ms: i64) -> Result<Resv> {
        let req = parse(words, now_ms)?;
        let Some(name) = req.name.clone() else {
            return Err(Error::invalid("ReservationName", "name the reservation to update"));
        };
        let _w = self.writes.lock().await;
        let all = self.list();
        let Some(old) = all.iter().find(|r| r.name == name) else {
            return Err(Error::NotFound(format!("ReservationName: no reservation named '{name}'")));
        };
        let cx = ResvCx {
            now_ms,
            nodes: &cluster.nodes,
            others: &all,
            licenses: &cluster.licenses,
            hres: &cluster.hres,
            default_name: &name,
        };
        let r = resolve(Some(old), &req, &cx).map_err(|e| Error::invalid(e.key, e.message))?;
        let doc = serde_json::to_string(&r).map_err(|e| Error::Store(e.to_string()))?;
        self.persist(&name, Action::Update, vec![(name.clone(), Some(doc))], json!({ "reservation": r }))
            .await?;
        let next = all.iter().map(|x| if x.name == name { r.clone() } else { x.clone() }).collect();
        self.install(next);
        Ok(r)
    }

    /// `scontrol delete ReservationName=...`.
    pub async fn delete(&self, name: &str) -> Result<Resv> {
        let _w = self.writes.lock().await;
        let all = self.list();
        let Some(old) = all.iter().find(|r| r.name == name).cloned() else {
            return Err(Error::NotFound(format!("ReservationName: no reservation named '{name}'")));
        };
        self.persist(name, Action::Delete, vec![(name.to_string(), None)], json!({ "reservation": old }))
            .await?;
        self.install(all.iter().filter(|r| r.name != name).cloned().collect());
        Ok(old)
    }

    /// The controller's upkeep at `now`: recurring reservations past their
    /// window move on, the others that ended are purged; stored first, one
    /// system row each, in one transaction. Returns whether anything changed.
    pub async fn upkeep(&self, hub: &Hub, now_ms: i64) -> bool {
        self.note_windows(now_ms);
        if !self.list().iter().any(|r| r.end_ms <= now_ms) {
            return false;
        }
        let _w = self.writes.lock().await;
        let all = self.list();
        let (mut next, mut docs, mut rows) = (vec![], vec![], vec![]);
        for r in all.iter() {
            if r.end_ms > now_ms {
                next.push(r.clone());
                continue;
            }
            let mut moved = r.clone();
            if moved.roll_forward(now_ms) {
                docs.push((r.name.clone(), serde_json::to_string(&moved).ok()));
                let info = json!({ "by": "recurrence", "start_ms": moved.start_ms, "end_ms": moved.end_ms });
                rows.push(TxnRow::system("reservation", &r.name, "update", info));
                next.push(moved);
            } else {
                docs.push((r.name.clone(), None));
                rows.push(TxnRow::system(
                    "reservation",
                    &r.name,
                    "delete",
                    json!({ "by": "expired", "end_ms": r.end_ms }),
                ));
            }
        }
        if let Some(s) = &self.store {
            match s.commit_raw(KIND_RESV, &docs, &rows).await {
                Ok(ids) => crate::store::with_ids(rows, ids).into_iter().for_each(|r| hub.committed(r)),
                Err(e) => {
                    // Kept as they were; the next pass tries again.
                    tracing::warn!(error = %e, "reservation upkeep: the store refused; tried again next pass");
                    return false;
                }
            }
        }
        self.install(next);
        true
    }
}

fn parse(words: &[String], now_ms: i64) -> Result<ResvRequest> {
    let now =
        chrono::DateTime::from_timestamp_millis(now_ms).unwrap_or_default().with_timezone(&chrono::Local);
    // The parser's messages name the key already.
    ResvRequest::parse(words, now).map_err(Error::InvalidArgument)
}
