//! One suite, both stores: every limit-value rule and alias of the accounting
//! plane, the verbs recorded, the audit row in the same transaction, and a
//! reopen that loses nothing.

use spur_client::vocab::keys::{Entity, Kind};
use spur_client::vocab::names::AdminLevel;
use spur_daemon::accounting::{AcctService, Caller, SetMode};
use spur_daemon::audit::Hub;
use spur_daemon::error::Error;
use spur_daemon::store::{self, Action};
use spur_tests::db::{Backend, fresh_url};
use std::sync::Arc;

struct Env {
    _dir: tempfile::TempDir,
    url: String,
    svc: AcctService,
}

async fn service(url: &str) -> AcctService {
    let hub = Arc::new(Hub::new(Some(store::open(url).await.unwrap())));
    AcctService::new(hub).await
}

async fn env(b: Backend) -> Option<Env> {
    let dir = tempfile::tempdir().unwrap();
    let url = fresh_url(b, dir.path()).await?;
    let svc = service(&url).await;
    Some(Env { _dir: dir, url, svc })
}

fn kv(line: &str) -> Vec<(String, String)> {
    line.split_whitespace()
        .map(|t| {
            let (k, v) = t.split_once('=').unwrap_or((t, ""));
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn caller() -> Caller {
    Caller {
        user: "tester".into(),
        peer: "127.0.0.1:1".into(),
        role: AdminLevel::Administrator,
        ..Caller::default()
    }
}

impl Env {
    async fn add(&self, e: Entity, line: &str) -> Result<Action, Error> {
        let out = self.svc.set(e, &caller(), SetMode::Add, &[], &kv(line), false).await?;
        Ok(out[0].action)
    }
    async fn modify(&self, e: Entity, filter: &str, set: &str) -> Result<serde_json::Value, Error> {
        let out = self.svc.set(e, &caller(), SetMode::Modify, &kv(filter), &kv(set), false).await?;
        Ok(out[0].changed.clone())
    }
    async fn delete(&self, e: Entity, filter: &str) -> Result<Action, Error> {
        Ok(self.svc.delete(e, &caller(), &kv(filter), false).await?[0].action)
    }
}

macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $( #[tokio::test] async fn $name() { super::$name(spur_tests::db::Backend::Sqlite).await } )*
        }
        mod postgres {
            $( #[tokio::test] async fn $name() { super::$name(spur_tests::db::Backend::Postgres).await } )*
        }
    };
}

both!(
    add_is_an_upsert_recorded_as_its_verb,
    modify_is_a_partial_patch,
    minus_one_lifts_and_zero_is_literal,
    every_count_and_time_alias_writes_its_field,
    account_defaults_and_tree,
    user_associations_and_admin_levels,
    delete_user_without_account_leaves_every_account,
    validation_errors_name_the_key,
    audit_row_commits_with_the_change,
    reopen_loses_nothing,
    txn_filters_and_retention,
    only_an_administrator_sets_admin_levels,
    txn_pages_before_an_id_and_reads_long_info_cut,
    documents_and_their_rows_commit_together,
    documents_page_after_a_name,
);

/// A kind read a page at a time: each page at most its limit, resumed after
/// the last name read, together every document once in the store's order.
async fn documents_page_after_a_name(b: Backend) {
    let Some(e) = env(b).await else { return };
    let s = e.svc.store().unwrap().clone();
    let docs: Vec<(String, Option<String>)> =
        (1..=25).map(|i| (i.to_string(), Some(format!(r#"{{"id":{i}}}"#)))).collect();
    s.put_raw("job", &docs).await.unwrap();
    s.put_raw("other", &[("0".to_string(), Some("{}".to_string()))]).await.unwrap();
    let (mut after, mut read, mut pages) = (String::new(), vec![], 0);
    loop {
        let page = s.load_page("job", &after, 10).await.unwrap();
        assert!(page.len() <= 10, "{}", page.len());
        pages += 1;
        let Some((last, _)) = page.last() else { break };
        after = last.clone();
        read.extend(page.into_iter().map(|(name, doc)| (name, serde_json::from_str(&doc).unwrap())));
    }
    assert_eq!(pages, 4, "pages of 10, 10, 5 and an empty one");
    assert_eq!(read, s.load("job").await.unwrap());
}

/// A node or job change and its request's row: one transaction, ids in order.
async fn documents_and_their_rows_commit_together(b: Backend) {
    let Some(e) = env(b).await else { return };
    let s = e.svc.store().unwrap().clone();
    let row = |name: &str| {
        spur_daemon::audit::claim::row(
            &caller(),
            "node",
            name,
            Action::Update,
            "success",
            serde_json::json!({}),
        )
    };
    let docs = vec![("n1".to_string(), Some(r#"{"drain":true}"#.to_string()))];
    let ids = s.commit_raw("node_state", &docs, &[row("n1"), row("n[1-2]")]).await.unwrap();
    assert_eq!(ids.len(), 2);
    assert!(ids[0] < ids[1], "{ids:?}");
    let loaded = s.load("node_state").await.unwrap();
    assert_eq!(loaded, vec![("n1".to_string(), serde_json::json!({"drain": true}))]);
    let rows = s.list_txn(&Default::default()).await.unwrap();
    assert_eq!(
        rows.iter().map(|r| (r.id, r.name.as_str())).collect::<Vec<_>>(),
        [(ids[0], "n1"), (ids[1], "n[1-2]")]
    );
}

async fn add_is_an_upsert_recorded_as_its_verb(b: Backend) {
    let Some(e) = env(b).await else { return };
    assert_eq!(e.add(Entity::Qos, "name=hp priority=10").await.unwrap(), Action::Create);
    assert_eq!(e.add(Entity::Qos, "name=hp maxjobspu=3").await.unwrap(), Action::Update);
    let q = e.svc.catalog().qos["hp"].clone();
    assert_eq!((q.priority, q.max_jobs_per_user), (10, Some(3)), "add keeps unnamed fields");
    assert_eq!(e.delete(Entity::Qos, "name=hp").await.unwrap(), Action::Delete);
    assert!(matches!(e.delete(Entity::Qos, "name=hp").await, Err(Error::NotFound(_))));
}

async fn modify_is_a_partial_patch(b: Backend) {
    let Some(e) = env(b).await else { return };
    e.add(
        Entity::Qos,
        "name=hp priority=100 maxwall=1-00:00:00 maxtresperjob=node=2,cpu=64 preemptmode=cancel",
    )
    .await
    .unwrap();
    let changed = e.modify(Entity::Qos, "name=hp", "priority=120 usagefactor=1.5").await.unwrap();
    assert_eq!(changed["priority"]["from"], 100);
    assert_eq!(changed["priority"]["to"], 120);
    assert!(changed.get("max_wall").is_none(), "only moved columns: {changed}");
    let q = e.svc.catalog().qos["hp"].clone();
    assert_eq!(q.max_wall, Some(1440));
    assert_eq!(spur_client::vocab::tres::format_map(&q.max_tres_per_job), "cpu=64,node=2");
    assert_eq!(q.preempt_mode.as_str(), "cancel");
    // A TRES modify merges per dimension; -1 removes one.
    e.modify(Entity::Qos, "name=hp", "maxtresperjob=cpu=-1,gres/gpu=4").await.unwrap();
    let q = e.svc.catalog().qos["hp"].clone();
    assert_eq!(spur_client::vocab::tres::format_map(&q.max_tres_per_job), "node=2,gres/gpu=4");
    assert!(matches!(e.modify(Entity::Qos, "name=nope", "priority=1").await, Err(Error::NotFound(_))));
}

async fn minus_one_lifts_and_zero_is_literal(b: Backend) {
    let Some(e) = env(b).await else { return };
    e.add(Entity::Qos, "name=q grpsubmit=0 maxwall=0 grpwall=10:00").await.unwrap();
    let q = e.svc.catalog().qos["q"].clone();
    assert_eq!((q.grp_submit, q.max_wall, q.grp_wall), (Some(0), Some(0), Some(600)));
    assert_eq!(q.max_jobs_per_user, None, "unset means no limit");
    e.modify(Entity::Qos, "name=q", "grpsubmit=-1 maxwall=-1").await.unwrap();
    let q = e.svc.catalog().qos["q"].clone();
    assert_eq!((q.grp_submit, q.max_wall, q.grp_wall), (None, None, Some(600)));
    e.modify(Entity::Qos, "name=q", "preemptexempttime=120").await.unwrap();
    assert_eq!(e.svc.catalog().qos["q"].preempt_exempt_time, Some(120));
    e.modify(Entity::Qos, "name=q", "clearpreemptexempttime=1").await.unwrap();
    assert_eq!(e.svc.catalog().qos["q"].preempt_exempt_time, None);
    e.modify(Entity::Qos, "name=q", "flags=DenyOnLimit idlefillpreemptable=yes").await.unwrap();
    let q = e.svc.catalog().qos["q"].clone();
    assert!(q.flags.deny_on_limit && q.idle_fill_preemptable);
}

/// Sets each count and wall-time key through every spelling and reads the
/// record back to prove the spelling reached the field.
async fn every_count_and_time_alias_writes_its_field(b: Backend) {
    let Some(e) = env(b).await else { return };
    e.add(Entity::Account, "name=acct").await.unwrap();
    e.add(Entity::User, "name=u account=acct").await.unwrap();
    e.add(Entity::Qos, "name=q").await.unwrap();
    for (entity, filter) in
        [(Entity::Qos, "name=q"), (Entity::Account, "name=acct"), (Entity::User, "name=u")]
    {
        for def in
            entity.keys().iter().filter(|d| matches!(d.kind, Kind::Count | Kind::Minutes | Kind::Seconds))
        {
            for (i, spelling) in std::iter::once(&def.key).chain(def.aliases).enumerate() {
                let v = 7 + i as u64;
                e.modify(entity, filter, &format!("{spelling}={v}")).await.unwrap();
                let doc = read_back(&e.svc, entity);
                assert!(
                    doc.values().any(|x| x == &serde_json::json!(v)),
                    "{spelling} on {entity:?} did not store {v}: {doc:?}"
                );
                e.modify(entity, filter, &format!("{spelling}=-1")).await.unwrap();
            }
        }
    }
}

fn read_back(svc: &AcctService, e: Entity) -> serde_json::Map<String, serde_json::Value> {
    let c = svc.catalog();
    let v = match e {
        Entity::Qos => serde_json::to_value(&c.qos["q"]),
        Entity::Account => serde_json::to_value(&c.accounts["acct"]),
        Entity::User => serde_json::to_value(&c.users["u"].assocs[0]),
    };
    v.unwrap().as_object().unwrap().clone()
}

async fn account_defaults_and_tree(b: Backend) {
    let Some(e) = env(b).await else { return };
    e.add(Entity::Account, "name=research description=Research organization=science fairshare=100")
        .await
        .unwrap();
    e.add(Entity::Account, "name=ml parent=research fairshare=50 grptres=gres/gpu=16 maxjobs=5")
        .await
        .unwrap();
    e.add(Entity::Account, "account=solo").await.unwrap();
    let c = e.svc.catalog();
    assert_eq!(c.accounts["solo"].parent, "root");
    assert_eq!(c.accounts["solo"].fairshare, 1.0);
    assert_eq!(c.accounts["ml"].max_jobs, Some(5));
    let err = e.modify(Entity::Account, "name=research", "parent=ml").await.unwrap_err();
    assert!(err.to_string().starts_with("parent:"), "{err}");
    let err = e.delete(Entity::Account, "name=research").await.unwrap_err();
    assert!(matches!(err, Error::FailedPrecondition(_)), "{err}");
    assert_eq!(e.delete(Entity::Account, "name=ml").await.unwrap(), Action::Delete);
}

async fn user_associations_and_admin_levels(b: Backend) {
    let Some(e) = env(b).await else { return };
    for a in ["ml", "physics"] {
        e.add(Entity::Account, &format!("name={a}")).await.unwrap();
    }
    e.add(Entity::Qos, "name=highprio").await.unwrap();
    e.add(Entity::Qos, "name=normal").await.unwrap();
    assert_eq!(
        e.add(Entity::User, "user=alice account=ml qos=highprio,normal defaultqos=highprio").await.unwrap(),
        Action::Create
    );
    assert_eq!(e.add(Entity::User, "name=alice defaultaccount=physics").await.unwrap(), Action::Create);
    assert_eq!(e.add(Entity::User, "name=alice account=ml maxjobs=2").await.unwrap(), Action::Update);
    let u = e.svc.catalog().users["alice"].clone();
    assert_eq!(u.default_account, "physics", "defaultaccount marks the default");
    assert_eq!(u.assocs.len(), 2);
    assert_eq!(u.assoc("ml", "").unwrap().qos, vec!["highprio", "normal"]);
    for (raw, stored) in [
        ("Admin", "Administrator"),
        ("SuperUser", "Administrator"),
        ("Operator", "Operator"),
        ("None", "None"),
    ] {
        e.modify(Entity::User, "name=alice", &format!("adminlevel={raw}")).await.unwrap();
        assert_eq!(e.svc.catalog().users["alice"].admin_level.as_str(), stored);
    }
    assert!(
        e.modify(Entity::User, "name=alice", "adminlevel=Root")
            .await
            .unwrap_err()
            .to_string()
            .contains("adminlevel")
    );
    // modify keeps what it does not name, including the QOS list.
    e.modify(Entity::User, "name=alice account=ml", "maxjobs=6").await.unwrap();
    let u = e.svc.catalog().users["alice"].clone();
    assert_eq!(u.assoc("ml", "").unwrap().qos, vec!["highprio", "normal"]);
    assert_eq!(u.assoc("ml", "").unwrap().max_jobs, Some(6));
    assert_eq!(u.assoc("physics", "").unwrap().max_jobs, None);
}

async fn delete_user_without_account_leaves_every_account(b: Backend) {
    let Some(e) = env(b).await else { return };
    for a in ["a1", "a2"] {
        e.add(Entity::Account, &format!("name={a}")).await.unwrap();
        e.add(Entity::User, &format!("name=bob account={a}")).await.unwrap();
    }
    assert_eq!(e.delete(Entity::User, "name=bob account=a1").await.unwrap(), Action::Update);
    assert_eq!(e.svc.catalog().users["bob"].default_account, "a2");
    e.add(Entity::User, "name=bob account=a1").await.unwrap();
    assert_eq!(e.delete(Entity::User, "name=bob").await.unwrap(), Action::Delete);
    assert!(!e.svc.catalog().users.contains_key("bob"));
}

async fn validation_errors_name_the_key(b: Backend) {
    let Some(e) = env(b).await else { return };
    e.add(Entity::Account, "name=ml").await.unwrap();
    e.add(Entity::Qos, "name=normal").await.unwrap();
    let cases: &[(Entity, &str, &str)] = &[
        (Entity::Qos, "name=x maxwall=abc", "maxwall:"),
        (Entity::Qos, "name=x bogus=1", "bogus:"),
        (Entity::Qos, "priority=1", "name:"),
        (Entity::Qos, "name=x preempt=ghost", "preempt:"),
        (Entity::Qos, "name=x grptres=gpu=1", "grptres:"),
        (Entity::Qos, "name=x preemptmode=kill", "preemptmode:"),
        (Entity::User, "name=z account=ml qos=normal defaultqos=ghost", "defaultqos:"),
        (Entity::User, "name=z account=ml qos=ghost", "qos:"),
        (Entity::User, "name=z", "account:"),
        (Entity::User, "name=z account=nowhere", "account:"),
        (Entity::Account, "name=x parent=nowhere", "parent:"),
    ];
    for (entity, line, prefix) in cases {
        let err = e.add(*entity, line).await.unwrap_err();
        assert!(err.to_string().starts_with(prefix), "{line}: {err}");
    }
    e.add(Entity::Qos, "name=hp").await.unwrap();
    let err = e.add(Entity::User, "name=z account=ml qos=normal defaultqos=hp").await.unwrap_err();
    assert!(err.to_string().contains("not in the qos= allow-list"), "{err}");
}

async fn audit_row_commits_with_the_change(b: Backend) {
    let Some(e) = env(b).await else { return };
    e.add(Entity::Qos, "name=hp maxwall=60").await.unwrap();
    e.modify(Entity::Qos, "name=hp", "maxwall=120").await.unwrap();
    assert!(e.add(Entity::Qos, "name=bad maxwall=abc").await.is_err());
    let rows = e.svc.store().unwrap().list_txn(&Default::default()).await.unwrap();
    let summary: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (r.action.clone(), format!("{}:{}", r.entity, r.name), r.outcome.clone()))
        .collect();
    assert_eq!(
        summary,
        [
            ("create".into(), "qos:hp".into(), "success".into()),
            ("update".into(), "qos:hp".into(), "success".into()),
        ],
        "a failed attempt is audited by the RPC gate, not the core"
    );
    let info: serde_json::Value = serde_json::from_str(&rows[1].info).unwrap();
    assert_eq!(info["changed"]["max_wall"], serde_json::json!({"from": 60, "to": 120}));
    assert_eq!(info["params"]["maxwall"], "120");
    assert_eq!(rows[1].head.actor, "tester");
}

async fn reopen_loses_nothing(b: Backend) {
    let Some(e) = env(b).await else { return };
    e.add(Entity::Account, "name=ml fairshare=50").await.unwrap();
    e.add(Entity::Qos, "name=hp priority=5 grptres=cpu=8").await.unwrap();
    e.add(Entity::User, "name=alice account=ml qos=hp maxwall=90").await.unwrap();
    let before = e.svc.catalog();
    e.svc.store().unwrap().close().await;
    let reopened = service(&e.url).await;
    let after = reopened.catalog();
    assert_eq!(before.qos, after.qos);
    assert_eq!(before.accounts, after.accounts);
    assert_eq!(before.users, after.users);
    let _: Arc<_> = after;
}

async fn txn_filters_and_retention(b: Backend) {
    use spur_client::vocab::txn::TxnFilter;
    use spur_daemon::store::{TxnHead, TxnQuery, TxnRow};
    let Some(e) = env(b).await else { return };
    let store = e.svc.store().unwrap().clone();
    let now = store::now_ms();
    for (i, (peer, age_days)) in
        [("10.0.0.4:5000", 40), ("10.0.0.42:5000", 1), ("[2001:db8::1]:6817", 0)].iter().enumerate()
    {
        let head = TxnHead {
            time_ms: now - age_days * 86_400_000,
            actor: format!("u{i}"),
            peer: peer.to_string(),
            source: "api".into(),
            ..TxnHead::default()
        };
        let row = TxnRow {
            head,
            action: "update".into(),
            entity: "node".into(),
            name: format!("n{i}"),
            outcome: "success".into(),
            info: "{}".into(),
            ..TxnRow::default()
        };
        store.insert_txns(&[row]).await.unwrap();
    }
    let q = |peer: &str| TxnQuery {
        filter: TxnFilter { peer: Some(peer.into()), ..TxnFilter::default() },
        ..TxnQuery::default()
    };
    let names = |rows: Vec<TxnRow>| rows.into_iter().map(|r| r.name).collect::<Vec<_>>();
    assert_eq!(names(store.list_txn(&q("10.0.0.4")).await.unwrap()), ["n0"]);
    assert_eq!(names(store.list_txn(&q("2001:db8::1")).await.unwrap()), ["n2"]);
    assert_eq!(store.delete_txn_before(now - 30 * 86_400_000).await.unwrap(), 1);
    assert_eq!(names(store.list_txn(&TxnQuery::default()).await.unwrap()), ["n1", "n2"]);
}

async fn only_an_administrator_sets_admin_levels(b: Backend) {
    let Some(e) = env(b).await else { return };
    e.add(Entity::Account, "name=ops").await.unwrap();
    e.add(Entity::User, "name=olga account=ops adminlevel=Operator").await.unwrap();
    let rows = || async { e.svc.store().unwrap().list_txn(&Default::default()).await.unwrap().len() };
    let before = rows().await;
    let op = Caller { user: "olga".into(), role: AdminLevel::Operator, ..caller() };
    let kvs = |l: &str| kv(l);
    for (mode, filter, set) in [
        (SetMode::Modify, "name=olga", "adminlevel=Administrator"),
        (SetMode::Modify, "name=olga", "adminlevel=None"),
        (SetMode::Add, "", "name=newbie account=ops adminlevel=Operator"),
    ] {
        let err = e.svc.set(Entity::User, &op, mode, &kvs(filter), &kvs(set), false).await.unwrap_err();
        assert!(matches!(err, Error::PermissionDenied(_)), "{set}: {err:?}");
        assert!(err.to_string().contains("only an Administrator"), "{err}");
    }
    assert_eq!(e.svc.catalog().users["olga"].admin_level, AdminLevel::Operator);
    assert!(!e.svc.catalog().users.contains_key("newbie"));
    assert_eq!(rows().await, before, "refused before the write: no success row");
    // An Operator still manages the rest of a user.
    e.svc.set(Entity::User, &op, SetMode::Modify, &kvs("name=olga"), &kvs("maxjobs=3"), false).await.unwrap();
}

async fn txn_pages_before_an_id_and_reads_long_info_cut(b: Backend) {
    use spur_client::vocab::txn::TxnFilter;
    use spur_daemon::store::{TxnQuery, TxnRow};
    let Some(e) = env(b).await else { return };
    let store = e.svc.store().unwrap().clone();
    let row =
        |info: String| TxnRow { action: "update".into(), entity: "node".into(), info, ..TxnRow::default() };
    // Rows written before Info was capped may be megabytes.
    let ids = store.insert_txns(&[row("a".into()), row("é".repeat(1 << 19)), row("c".into())]).await.unwrap();
    let q = TxnQuery { before_id: Some(ids[2]), ..TxnQuery::default() };
    let got = store.list_txn(&q).await.unwrap();
    assert_eq!(got.iter().map(|r| r.id).collect::<Vec<_>>(), ids[..2].to_vec());
    assert!(got[1].info.len() <= store::INFO_MAX + store::MARKER_ROOM, "{}", got[1].info.len());
    assert!(got[1].info.ends_with("…(truncated, 1048576 bytes)"), "{}", &got[1].info[4000..]);
    let one =
        TxnQuery { filter: TxnFilter { limit: 1, ..TxnFilter::default() }, before_id: Some(ids[2]), ..q };
    assert_eq!(store.list_txn(&one).await.unwrap()[0].id, ids[1], "the newest below the id");
}
