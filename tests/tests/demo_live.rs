//! The demo cluster (`spur-console --demo`) is alive on the Audit and
//! Preemption panes: after its setup, its users' cancels and its admin's
//! drains go through the RPCs a client would use, so each is a txn row of
//! its own (source api, the user as actor), and a preemption is staged in
//! its first seconds.

use spur_client::conn::{Identity, connect};
use spur_proto::v1::{KeyValue, ListTxnRequest, TxnRow};
use spur_tests::wait::wait_until;

fn kv(k: &str, v: &str) -> KeyValue {
    KeyValue { key: k.into(), value: v.into() }
}

/// A cancel by a job's owner, or a drain or resume by the demo's admin, made through the RPC gate.
fn acted(r: &TxnRow) -> bool {
    let user_cancel = r.entity == "job" && r.info.contains("cancel") && r.actor != "demo";
    let node = r.entity == "node" && r.actor == "bob";
    r.source == "api" && r.outcome == "success" && (user_cancel || node)
}

fn preempted(r: &TxnRow) -> bool {
    r.entity == "job" && r.action == "preempt"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_cancels_drains_and_preempts_through_the_rpcs() {
    let dir = tempfile::tempdir().unwrap();
    let demo = spur_daemon::demo::start_demo(dir.path(), spur_tests::proc::bin("spurd")).await.unwrap();
    // The setup's rows are all written by now: what follows is the demo's life.
    let c = connect(&demo.url(), Identity::asserted("root", Some(0))).await.unwrap();
    let rows = |entity: &'static str| {
        let mut audit = c.audit.clone();
        async move {
            let filter = vec![kv("Entity", entity), kv("limit", "1000")];
            audit.list_txn(ListTxnRequest { filter, before_id: None }).await.unwrap().into_inner().rows
        }
    };
    let acted_row = wait_until("a cancel or drain by the demo's users, through the RPCs", || async {
        let mut all = rows("job").await;
        all.extend(rows("node").await);
        match all.iter().find(|r| acted(r)) {
            Some(r) => Ok(r.clone()),
            None => Err(format!("{} rows, none a user's cancel or the admin's drain", all.len())),
        }
    })
    .await;
    let preempt_row = wait_until("the staged preemption", || async {
        let all = rows("job").await;
        match all.iter().find(|r| preempted(r)) {
            Some(r) => Ok(r.clone()),
            None => Err(format!(
                "{} job rows, no preemption: {:?}",
                all.len(),
                all.iter().map(|r| (&r.action, &r.actor, &r.info)).take(40).collect::<Vec<_>>()
            )),
        }
    })
    .await;
    assert_eq!(acted_row.source, "api", "{acted_row:?}");
    // burst may be preempted by normal, in requeue mode (the demo's QOS seed).
    assert!(preempt_row.info.contains("requeue"), "{preempt_row:?}");
    demo.shutdown().await;
}
