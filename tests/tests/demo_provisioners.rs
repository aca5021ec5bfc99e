//! The demo cluster (`spur-console --demo`) ships provisioner definitions
//! with a GPU, a high-memory and a policy-gated pool, facts that give its
//! simulated nodes those pools, and jobs that exercise each: the console's
//! Provisioners pane and why view have something to show.

use spur_client::conn::{Identity, connect};
use spur_proto::v1::{ExplainRequest, ListProvisionersRequest, ListRequest};
use spur_tests::wait::wait_until;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_has_pools_and_a_job_no_definition_admits() {
    let dir = tempfile::tempdir().unwrap();
    let demo = spur_daemon::demo::start_demo(dir.path(), spur_tests::proc::bin("spurd")).await.unwrap();
    let c = connect(&demo.url(), Identity::local()).await.unwrap();
    wait_until("the demo's pools to fill", || {
        let mut c = c.clone();
        async move {
            let all =
                c.nodes.list_provisioners(ListProvisionersRequest::default()).await.unwrap().into_inner();
            let pools: Vec<(String, String)> =
                all.provisioners.iter().map(|p| (p.id.clone(), p.nodes.clone())).collect();
            let want = [
                ("gpu-pool", "gpu[01-03]"),
                ("highmem", "node[05-06]"),
                ("standard", "node[01-03]"),
                ("ml-reserved", "node04"),
            ];
            match want.iter().all(|(id, nodes)| pools.iter().any(|(i, n)| i == id && n == nodes)) {
                true => Ok(()),
                false => Err(format!("{pools:?}")),
            }
        }
    })
    .await;
    let gold = wait_until("the gold job to pend with NoProvisionerDefinition", || {
        let mut c = c.clone();
        async move {
            let jobs = c.jobs.list_jobs(ListRequest::default()).await.unwrap().into_inner().jobs;
            let gold = jobs.iter().find(|j| j.name == "pool3" && j.reason_str() == "NoProvisionerDefinition");
            gold.map(|j| j.id).ok_or_else(|| {
                format!("{:?}", jobs.iter().map(|j| (&j.name, j.reason_str())).collect::<Vec<_>>())
            })
        }
    })
    .await;
    let why = c
        .jobs
        .clone()
        .explain(ExplainRequest { job_id: gold, ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert!(why.definitions.iter().any(|d| d.kind == "annotation" && d.key == "tier"), "{why:?}");
    demo.shutdown().await;
}
