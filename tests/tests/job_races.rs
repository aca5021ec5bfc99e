//! Transitions of one job are serialised and each reads the current record:
//! an update racing a cancel never writes back the job it read before the
//! cancel, so every acknowledged cancel stands, in memory and in the store.

use spur_client::conn::{self, Clients, Identity};
use spur_proto::v1 as pb;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Controller, conf};

fn cluster() -> ClusterToml {
    ClusterToml::new().nodes_cpus("node01", 2).partition("batch", "node01")
}

async fn client(url: &str) -> Clients {
    conn::connect(url, Identity::asserted("root", Some(0))).await.unwrap()
}

async fn states(c: &mut Clients, ids: &[u64]) -> Vec<String> {
    let jobs = c.jobs.list_jobs(pb::ListRequest::default()).await.unwrap().into_inner().jobs;
    ids.iter()
        .map(|id| {
            jobs.iter().find(|j| j.id == *id).map(|j| j.job_state().as_str().to_string()).unwrap_or_default()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_update_racing_a_cancel_never_undoes_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let mut ctl = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    let mut c = client(&ctl.url).await;
    // Held, so no agent is needed and each stays pending unless cancelled.
    let spec = pb::JobSpec { script: "true".into(), hold: true, ..Default::default() };
    let mut ids = vec![];
    for _ in 0..200 {
        let r = c.jobs.submit(pb::SubmitRequest { spec: Some(spec.clone()) }).await.unwrap();
        ids.push(r.into_inner().job_id);
    }
    let kv = |k: &str, v: &str| pb::KeyValue { key: k.into(), value: v.into() };
    for (i, id) in ids.iter().enumerate() {
        let (mut a, mut b) = (c.clone(), c.clone());
        let limit = format!("{}", 10 + i);
        let update = pb::UpdateJobRequest { id: *id, set: vec![kv("TimeLimit", &limit)] };
        let cancel = pb::CancelRequest { ids: vec![*id], ..Default::default() };
        let (u, x) = tokio::join!(a.jobs.update_job(update), b.jobs.cancel(cancel));
        x.expect("the cancel is acknowledged");
        // The update may come second and be refused (the job has ended): either is fine.
        if let Err(s) = u {
            assert!(s.message().contains("already completing or completed"), "{s:?}");
        }
    }
    let want = vec!["CANCELLED".to_string(); ids.len()];
    assert_eq!(states(&mut c, &ids).await, want, "in memory");
    ctl.restart();
    let mut c = client(&ctl.url).await;
    assert_eq!(states(&mut c, &ids).await, want, "in the store");
}
