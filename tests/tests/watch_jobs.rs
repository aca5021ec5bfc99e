//! Job changes on `Cluster.Watch`: a stream opens with the node snapshot and
//! an empty job batch, then a submit arrives as a numbered batch holding the
//! job, and a listing says which batches it already reflects.

use spur_client::conn::{self, Identity};
use spur_proto::v1 as pb;
use spur_proto::v1::cluster_event::Event;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Controller, DEADLINE, conf};

fn cluster() -> ClusterToml {
    ClusterToml::new().nodes_cpus("node[01-02]", 4).partition("batch", "node[01-02]")
}

async fn next(stream: &mut tonic::Streaming<pb::ClusterEvent>) -> Event {
    let ev = tokio::time::timeout(DEADLINE, stream.message()).await.expect("no event in time");
    ev.unwrap().and_then(|e| e.event).expect("an event")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_submit_shows_up_on_the_watch_as_a_job_batch() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let c = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    let mut cl = conn::connect(&c.url, Identity::asserted("alice", Some(1000))).await.unwrap();
    let mut stream = cl.cluster.watch(pb::WatchRequest {}).await.unwrap().into_inner();
    assert!(matches!(next(&mut stream).await, Event::Nodes(n) if n.snapshot));
    let opened = match next(&mut stream).await {
        Event::Jobs(j) => j,
        other => panic!("expected the opening job batch, got {other:?}"),
    };
    assert!(opened.jobs.is_empty());

    let spec =
        pb::JobSpec { name: "watched".into(), script: "#!/bin/sh\ntrue\n".into(), ..Default::default() };
    let id = cl.jobs.submit(pb::SubmitRequest { spec: Some(spec) }).await.unwrap().into_inner().job_id;
    let (job, seq) = loop {
        if let Event::Jobs(b) = next(&mut stream).await
            && let Some(j) = b.jobs.iter().find(|j| j.id == id)
        {
            break (j.clone(), b.seq);
        }
    };
    assert!(seq > opened.seq, "batches are numbered upwards");
    assert_eq!(
        (job.name.as_str(), job.user.as_str(), job.job_state().as_str()),
        ("watched", "alice", "PENDING")
    );
    assert!(job.spec.is_some_and(|s| s.script.is_empty()), "scripts never leave the controller");
    let listed = cl.jobs.list_jobs(pb::ListRequest::default()).await.unwrap().into_inner();
    assert!(listed.seq >= seq, "a listing after the batch reflects it");
}
