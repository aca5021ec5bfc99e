//! The one mutation path for accounting records:
//! validate -> persist with its audit row (one transaction) -> apply to the
//! catalog -> publish an event. Failed attempts are audited after the fact.

use super::catalog::{self, Catalog, KIND_ACCOUNT, KIND_QOS, KIND_USER};
use super::columns;
use super::pairs::{self, Pair};
use super::user::Selector;
use super::{account, qos, user};
use crate::audit::Hub;
use crate::error::{Error, Result};
use crate::model::{Account, Qos, User};
use crate::store::{self, Action, Mutator, Store, TxnHead, Written};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value, json};
use spur_vocab::keys::Entity;
use std::sync::{Arc, RwLock};
use tokio::sync::broadcast;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetMode {
    Add,
    Modify,
}

/// Who is asking, as the server established it.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    pub user: String,
    /// Only set when the kernel or a verified credential vouches for it.
    pub uid: Option<u32>,
    /// The primary gid, where a MUNGE credential vouches for it.
    pub gid: Option<u32>,
    pub verified: bool,
    pub peer: String,
    /// The uid the caller asserted (or its token carried): used for the
    /// uid-0 rule, never recorded as ActorUID.
    pub asserted_uid: Option<u32>,
    /// The admin level a verified token claims.
    pub claimed_level: Option<spur_vocab::names::AdminLevel>,
    /// The caller's role, as the RPC gate established it (None before):
    /// what bounds the admin levels it may grant.
    pub role: spur_vocab::names::AdminLevel,
    /// The request came through another controller (`ha/forward.rs`).
    pub forwarded: bool,
}

impl Caller {
    /// The head of a txn row of this caller's request.
    pub fn head(&self) -> TxnHead {
        TxnHead {
            time_ms: store::now_ms(),
            actor: self.user.clone(),
            actor_uid: self.uid.map(i64::from),
            verified: self.verified,
            peer: self.peer.clone(),
            source: "api".into(),
            forwarded: self.forwarded,
        }
    }
}

/// One record a write touched.
#[derive(Debug, Clone)]
pub struct ChangeOut {
    pub entity: &'static str,
    pub name: String,
    pub action: Action,
    pub changed: Value,
}

/// A committed change to the catalog, for live subscribers.
#[derive(Debug, Clone)]
pub struct CatalogEvent {
    pub kind: &'static str,
    pub name: String,
    pub deleted: bool,
}

pub struct AcctService {
    store: Option<Arc<dyn Store>>,
    hub: Arc<Hub>,
    catalog: RwLock<Arc<Catalog>>,
    /// Writes applied to the catalog so far, counted under its lock: a
    /// reload read from the store installs only if none came in meanwhile.
    applied: std::sync::atomic::AtomicU64,
    events: broadcast::Sender<CatalogEvent>,
}

fn kind_of(e: Entity) -> &'static str {
    match e {
        Entity::Qos => KIND_QOS,
        Entity::Account => KIND_ACCOUNT,
        Entity::User => KIND_USER,
    }
}

impl AcctService {
    /// The hub's store is None when accounting is off (an empty `database_url`).
    pub async fn new(hub: Arc<Hub>) -> Self {
        let (events, _) = broadcast::channel(1024);
        let store = hub.store().cloned();
        let catalog = RwLock::new(Arc::new(Catalog::default()));
        let svc = AcctService { store, hub, catalog, applied: Default::default(), events };
        // The controller starts anyway: an unloaded catalog holds back only the
        // jobs it governs (AccountingUnavailable), and the refresher retries.
        if let Err(e) = svc.reload().await {
            tracing::warn!(
                error = %e,
                "the accounting catalog cannot be read; jobs naming a QOS or account pend with \
                 AccountingUnavailable until it loads"
            );
        }
        svc
    }

    /// Accounting is on but its records have not been read yet, so neither
    /// limits nor roles nor the records themselves can be told.
    pub fn unloaded(&self) -> bool {
        self.store.is_some() && !self.catalog().loaded
    }

    /// The error for a request that needs the records while [`Self::unloaded`].
    pub fn unloaded_error() -> Error {
        Error::Unavailable(
            "the accounting records have not been read from the database yet; spurctld is retrying, \
             retry shortly"
                .into(),
        )
    }

    pub fn store(&self) -> Option<&Arc<dyn Store>> {
        self.store.as_ref()
    }

    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.read().map(|c| c.clone()).unwrap_or_default()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<CatalogEvent> {
        self.events.subscribe()
    }

    /// Reads every record from the store, replacing the catalog. The first
    /// load after a start that could not read them says every list changed,
    /// so watchers (the console) re-read what they showed as unavailable.
    pub async fn reload(&self) -> Result<()> {
        let seen = self.applied.load(std::sync::atomic::Ordering::SeqCst);
        let mut fresh = Catalog { loaded: true, ..Catalog::default() };
        if let Some(store) = &self.store {
            fresh.qos = catalog::decode_all(store.load(KIND_QOS).await?);
            fresh.accounts = catalog::decode_all(store.load(KIND_ACCOUNT).await?);
            fresh.users = catalog::decode_all(store.load(KIND_USER).await?);
        }
        let first = self.unloaded();
        if !self.install(fresh, seen) {
            // A write was applied while the store was read: this copy may be
            // older than memory (a revoked adminlevel would come back). The
            // next refresh reads again.
            tracing::debug!("a catalog write came in during the reload; kept memory's");
            return Ok(());
        }
        if first {
            for kind in [KIND_QOS, KIND_ACCOUNT, KIND_USER] {
                let _ = self.events.send(CatalogEvent { kind, name: String::new(), deleted: false });
            }
        }
        Ok(())
    }

    /// The catalog, once it has loaded: before that an empty list would be a
    /// false answer, and a write could not be checked (a parent account
    /// exists, a QOS is not in use).
    pub fn loaded_catalog(&self) -> Result<Arc<Catalog>> {
        if self.unloaded() {
            return Err(Self::unloaded_error());
        }
        Ok(self.catalog())
    }

    fn require_store(&self) -> Result<&Arc<dyn Store>> {
        self.store.as_ref().ok_or_else(|| {
            Error::FailedPrecondition(
                "accounting is disabled: set [accounting] database_url in spur.conf".into(),
            )
        })
    }

    /// `sacctmgr add` (upsert) or `modify`, for one record.
    pub async fn set(
        &self,
        entity: Entity,
        caller: &Caller,
        mode: SetMode,
        filter: &[(String, String)],
        set: &[(String, String)],
        dry_run: bool,
    ) -> Result<Vec<ChangeOut>> {
        let kind = kind_of(entity);
        let mut params: Map<String, Value> = Map::new();
        let planned = self.plan_set(entity, caller, mode, filter, set, &mut params);
        self.run(kind, caller, planned, params, dry_run).await
    }

    pub async fn delete(
        &self,
        entity: Entity,
        caller: &Caller,
        filter: &[(String, String)],
        dry_run: bool,
    ) -> Result<Vec<ChangeOut>> {
        let kind = kind_of(entity);
        let mut params: Map<String, Value> = Map::new();
        let planned = self.plan_delete(entity, caller, filter, &mut params);
        self.run(kind, caller, planned, params, dry_run).await
    }

    fn plan_set(
        &self,
        entity: Entity,
        caller: &Caller,
        mode: SetMode,
        filter: &[(String, String)],
        set: &[(String, String)],
        params: &mut Map<String, Value>,
    ) -> Result<(String, Mutator)> {
        params.extend(filter.iter().chain(set).map(|(k, v)| (k.clone(), Value::String(v.clone()))));
        self.require_store()?;
        let cat = self.loaded_catalog()?;
        let filter = pairs::parse(entity, filter)?;
        let set = pairs::parse(entity, set)?;
        if entity == Entity::User {
            // Before the write: a refused grant never reaches the store.
            user::check_level(&set, caller)?;
        }
        Ok(match (entity, mode) {
            (Entity::Qos, SetMode::Add) => {
                pairs::only_keys(&filter, &[], "qos")?;
                let name = pairs::required_name(&set, "QOS")?;
                let n = name.clone();
                (
                    name,
                    typed(columns::of::<Qos>, move |old: Option<Qos>| {
                        let action = if old.is_some() { Action::Update } else { Action::Create };
                        let mut q = old.unwrap_or_else(|| Qos { name: n, ..Qos::default() });
                        qos::apply(&mut q, &set)?;
                        qos::validate(&q, &cat)?;
                        Ok((Some(q), action))
                    }),
                )
            }
            (Entity::Qos, SetMode::Modify) => {
                pairs::only_keys(&filter, &["name"], "qos")?;
                let name = pairs::required_name(&filter, "QOS")?;
                no_rename(&set)?;
                let n = name.clone();
                (
                    name,
                    typed(columns::of::<Qos>, move |old: Option<Qos>| {
                        let mut q =
                            old.ok_or_else(|| Error::NotFound(format!("QOS '{n}' does not exist")))?;
                        qos::apply(&mut q, &set)?;
                        qos::validate(&q, &cat)?;
                        Ok((Some(q), Action::Update))
                    }),
                )
            }
            (Entity::Account, SetMode::Add) => {
                pairs::only_keys(&filter, &[], "account")?;
                let name = pairs::required_name(&set, "account")?;
                let n = name.clone();
                (
                    name,
                    typed(columns::of::<Account>, move |old: Option<Account>| {
                        let action = if old.is_some() { Action::Update } else { Action::Create };
                        let mut a = old.unwrap_or_else(|| Account { name: n, ..Account::default() });
                        account::apply(&mut a, &set)?;
                        account::validate(&a, &cat)?;
                        Ok((Some(a), action))
                    }),
                )
            }
            (Entity::Account, SetMode::Modify) => {
                pairs::only_keys(&filter, &["name"], "account")?;
                let name = pairs::required_name(&filter, "account")?;
                no_rename(&set)?;
                let n = name.clone();
                (
                    name,
                    typed(columns::of::<Account>, move |old: Option<Account>| {
                        let mut a =
                            old.ok_or_else(|| Error::NotFound(format!("account '{n}' does not exist")))?;
                        account::apply(&mut a, &set)?;
                        account::validate(&a, &cat)?;
                        Ok((Some(a), Action::Update))
                    }),
                )
            }
            (Entity::User, SetMode::Add) => {
                pairs::only_keys(&filter, &[], "user")?;
                let name = pairs::required_name(&set, "user")?;
                let n = name.clone();
                let who = caller.clone();
                (
                    name,
                    typed(columns::of_user, move |old: Option<User>| {
                        user::check_target(old.as_ref(), &who)?;
                        let (u, action) = user::add(old, &n, &set, &cat)?;
                        Ok((Some(u), action))
                    }),
                )
            }
            (Entity::User, SetMode::Modify) => {
                pairs::only_keys(&filter, &["name", "account", "partition"], "user")?;
                let sel = Selector::from_pairs(&filter)?;
                let who = caller.clone();
                (
                    sel.name.clone(),
                    typed(columns::of_user, move |old: Option<User>| {
                        user::check_target(old.as_ref(), &who)?;
                        Ok((Some(user::modify(old, &sel, &set, &cat)?), Action::Update))
                    }),
                )
            }
        })
    }

    fn plan_delete(
        &self,
        entity: Entity,
        caller: &Caller,
        filter: &[(String, String)],
        params: &mut Map<String, Value>,
    ) -> Result<(String, Mutator)> {
        params.extend(filter.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))));
        self.require_store()?;
        let cat = self.loaded_catalog()?;
        let filter = pairs::parse(entity, filter)?;
        Ok(match entity {
            Entity::Qos => {
                pairs::only_keys(&filter, &["name"], "qos")?;
                let name = pairs::required_name(&filter, "QOS")?;
                let n = name.clone();
                (
                    name,
                    typed(columns::of::<Qos>, move |old: Option<Qos>| {
                        old.ok_or_else(|| Error::NotFound(format!("QOS '{n}' does not exist")))?;
                        Ok((None, Action::Delete))
                    }),
                )
            }
            Entity::Account => {
                pairs::only_keys(&filter, &["name"], "account")?;
                let name = pairs::required_name(&filter, "account")?;
                account::check_delete(&name, &cat)?;
                let n = name.clone();
                (
                    name,
                    typed(columns::of::<Account>, move |old: Option<Account>| {
                        old.ok_or_else(|| Error::NotFound(format!("account '{n}' does not exist")))?;
                        Ok((None, Action::Delete))
                    }),
                )
            }
            Entity::User => {
                pairs::only_keys(&filter, &["name", "account", "partition"], "user")?;
                let sel = Selector::from_pairs(&filter)?;
                let who = caller.clone();
                (
                    sel.name.clone(),
                    typed(columns::of_user, move |old: Option<User>| {
                        user::check_target(old.as_ref(), &who)?;
                        let next = user::delete(old, &sel)?;
                        let action = if next.is_some() { Action::Update } else { Action::Delete };
                        Ok((next, action))
                    }),
                )
            }
        })
    }

    /// Persists a planned write with its audit row (or runs it against the
    /// catalog for a dry run). A failure is audited by the RPC gate.
    async fn run(
        &self,
        kind: &'static str,
        caller: &Caller,
        planned: Result<(String, Mutator)>,
        params: Map<String, Value>,
        dry_run: bool,
    ) -> Result<Vec<ChangeOut>> {
        let (name, f) = planned?;
        let f: Mutator = Box::new(move |old| {
            let mut w = f(old)?;
            if let Value::Object(info) = &mut w.info {
                info.insert("params".into(), Value::Object(params));
            }
            Ok(w)
        });
        let w = if dry_run {
            f(self.cached_doc(kind, &name))?
        } else {
            let (w, row) = self.require_store()?.mutate(kind, &name, f, caller.head()).await?;
            self.apply_to_catalog(kind, &name, w.next.as_ref());
            self.hub.committed(row);
            w
        };
        let changed = w.info.get("changed").cloned().unwrap_or(Value::Null);
        Ok(vec![ChangeOut { entity: kind, name, action: w.action, changed }])
    }

    fn cached_doc(&self, kind: &str, name: &str) -> Option<Value> {
        let cat = self.catalog();
        match kind {
            KIND_QOS => cat.qos.get(name).and_then(|v| serde_json::to_value(v).ok()),
            KIND_ACCOUNT => cat.accounts.get(name).and_then(|v| serde_json::to_value(v).ok()),
            KIND_USER => cat.users.get(name).and_then(|v| serde_json::to_value(v).ok()),
            _ => None,
        }
    }

    /// Replaces the catalog with `fresh`, read when `seen` writes had been
    /// applied; false (and nothing changed) when more have been since.
    fn install(&self, fresh: Catalog, seen: u64) -> bool {
        let Ok(mut c) = self.catalog.write() else { return false };
        if self.applied.load(std::sync::atomic::Ordering::SeqCst) != seen {
            return false;
        }
        *c = Arc::new(fresh);
        true
    }

    fn apply_to_catalog(&self, kind: &'static str, name: &str, doc: Option<&Value>) {
        if let Ok(mut c) = self.catalog.write() {
            catalog::apply(Arc::make_mut(&mut c), kind, name, doc);
            self.applied.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        let _ = self.events.send(CatalogEvent { kind, name: name.to_string(), deleted: doc.is_none() });
    }
}

fn no_rename(set: &[Pair]) -> Result<()> {
    match pairs::take(set, "name") {
        Some(p) => Err(Error::invalid(
            &p.typed_key,
            "renaming is not supported; add a new record and delete the old one",
        )),
        None => Ok(()),
    }
}

/// Wraps a typed step as a store [`Mutator`]: decodes the stored document,
/// runs the step, and records which columns moved.
fn typed<T, F>(cols: fn(&T) -> Map<String, Value>, step: F) -> Mutator
where
    T: Serialize + DeserializeOwned + 'static,
    F: FnOnce(Option<T>) -> Result<(Option<T>, Action)> + Send + 'static,
{
    Box::new(move |old: Option<Value>| -> Result<Written> {
        let old: Option<T> = old.map(serde_json::from_value).transpose()?;
        let before = old.as_ref().map(cols).unwrap_or_default();
        let (next, action) = step(old)?;
        let info = match action {
            // Only a modify has a "from"; a create's values are its params.
            Action::Update => {
                let after = next.as_ref().map(cols).unwrap_or_default();
                json!({ "changed": columns::changed(&before, &after) })
            }
            _ => json!({}),
        };
        Ok(Written { action, next: next.map(|n| serde_json::to_value(n)).transpose()?, info })
    })
}

#[cfg(test)]
mod reload_tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[tokio::test]
    async fn a_reload_read_before_a_write_never_installs_over_it() {
        let svc = AcctService::new(Arc::new(Hub::new(None))).await;
        let seen = svc.applied.load(Ordering::SeqCst);
        let op = serde_json::json!({ "name": "op", "admin_level": "None" });
        // A write lands while the reload is reading the store.
        svc.apply_to_catalog(KIND_USER, "op", Some(&op));
        let stale = Catalog { loaded: true, ..Catalog::default() };
        assert!(!svc.install(stale, seen), "the older copy is refused");
        assert!(svc.catalog().users.contains_key("op"), "the write stands");
        let now = svc.applied.load(Ordering::SeqCst);
        assert!(
            svc.install(Catalog { loaded: true, ..Catalog::default() }, now),
            "a copy read after it goes in"
        );
    }
}
