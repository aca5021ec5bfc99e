//! The demo cluster (`spur-console --demo`) loads its licenses and
//! hierarchical resources, and its job stream takes some, so the console's
//! HRES pane has life.

use spur_client::conn::{Identity, connect};
use spur_proto::v1::ShowLicensesRequest;
use spur_tests::wait::wait_until;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_uses_its_licenses() {
    let dir = tempfile::tempdir().unwrap();
    let demo = spur_daemon::demo::start_demo(dir.path(), spur_tests::proc::bin("spurd")).await.unwrap();
    let c = connect(&demo.url(), Identity::local()).await.unwrap();
    wait_until("a demo job to take a license", || {
        let mut c = c.clone();
        async move {
            let all =
                c.licenses.show_licenses(ShowLicensesRequest::default()).await.unwrap().into_inner().licenses;
            let mut names: Vec<&str> = all.iter().map(|l| l.name.as_str()).collect();
            names.dedup();
            assert_eq!(names, ["matlab", "scratch", "bandwidth", "power", "qpu"]);
            assert!(all.iter().any(|l| l.plugin == "hres/lua"), "the qpu plugin is loaded");
            if all.iter().any(|l| l.used > 0) { Ok(()) } else { Err(format!("{all:?}")) }
        }
    })
    .await;
    demo.shutdown().await;
}
