//! sacct over a long history: ListJobs `history=yes` answers a page at a
//! time under the message cap, and sacct asks until it has every job.

use spur_client::conn::{self, Identity};
use spur_client::vocab::JobState;
use spur_daemon::jobs::record::JobRecord;
use spur_proto::v1 as pb;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Controller, conf, ok};
use spur_tests::seed;
use spur_tests::wait::wait_until;

/// Ended jobs seeded into the store, each with a 4 KB comment: 12 MB of
/// listing, three times what a gRPC client decodes by default.
const JOBS: u64 = 3000;

fn ended(id: u64, now_ms: i64) -> JobRecord {
    JobRecord {
        id,
        name: format!("job{id}"),
        user: "root".into(),
        account: Some("ml".into()),
        partition: "batch".into(),
        state: JobState::Completed,
        num_nodes: 1,
        ntasks: 1,
        cpus_per_task: 1,
        nodes: vec!["node01".into()],
        submit_ms: now_ms - 3_600_000,
        start_ms: now_ms - 3_000_000,
        end_ms: now_ms - 2_400_000,
        comment: "c".repeat(4000),
        script: seed::script(id),
        env: seed::env(id),
        ..JobRecord::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sacct_pages_a_history_larger_than_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    // The test's own clock only dates the seeded jobs within sacct's window.
    let now_ms =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    seed::jobs(&db, 1..=JOBS, |id| ended(id, now_ms)).await.unwrap();
    let toml = ClusterToml::new()
        .interval(1)
        .scheduler("min_job_age_secs", 0)
        .nodes("node01", 4, 8192)
        .partition("batch", "node01");
    let c = Controller::start(dir.path(), &conf(&db, &toml.build()));
    let cl = conn::connect(&c.url, Identity::asserted("root", Some(0))).await.unwrap();
    // Every seeded job ended long ago: the first purge leaves them in the store only.
    let jobs = cl.jobs.clone();
    wait_until("every seeded job purged from memory", || {
        let mut jobs = jobs.clone();
        async move {
            let held = jobs.list_jobs(pb::ListRequest { filter: vec![] }).await.unwrap().into_inner().jobs;
            if held.is_empty() { Ok(()) } else { Err(format!("{} jobs held", held.len())) }
        }
    })
    .await;
    // A client with gRPC's default 4 MiB limit reads the whole history, page by page.
    let mut small = cl.jobs.clone().max_decoding_message_size(4 << 20);
    let history = pb::KeyValue { key: "history".into(), value: "yes".into() };
    let (mut ids, mut pages, mut filter) = (vec![], 0, vec![history.clone()]);
    loop {
        let page = small.list_jobs(pb::ListRequest { filter: filter.clone() }).await.unwrap().into_inner();
        pages += 1;
        assert!(page.jobs.len() <= 1000, "{} jobs on one page", page.jobs.len());
        ids.extend(page.jobs.iter().map(|j| j.id));
        let Some(next) = page.next_history_after_id else { break };
        filter = vec![history.clone(), pb::KeyValue { key: "history_after".into(), value: next.to_string() }];
    }
    assert!(pages >= 4, "{pages} pages");
    ids.sort_unstable();
    assert_eq!(ids, (1..=JOBS).collect::<Vec<_>>(), "every job once");
    // sacct asks for every page: all the jobs, in id order.
    let out = tokio::task::spawn_blocking(move || {
        let url = c.url.clone();
        let out = ok("sacct", &url, &["-a", "-n", "-X", "-P", "-S", "now-2days", "-o", "JobID"]);
        drop(c);
        out
    })
    .await
    .unwrap();
    let listed: Vec<u64> = out.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(listed, (1..=JOBS).collect::<Vec<_>>());
}

/// A restart reads the history without holding it: jobs past MinJobAge are
/// decoded without their scripts, which their records then shed, so 200 MB
/// of old scripts fill memory neither at start nor when sacct lists them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_does_not_load_old_scripts() {
    const OLD: u64 = 200;
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let now_ms =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    seed::jobs(&db, 1..=OLD, |id| JobRecord { script: "x".repeat(1 << 20), ..ended(id, now_ms) })
        .await
        .unwrap();
    let toml = ClusterToml::new().interval(1).nodes("node01", 4, 8192).partition("batch", "node01");
    let c = Controller::start(dir.path(), &conf(&db, &toml.build()));
    let start_mib = c.peak_rss_kib().unwrap() / 1024;
    assert!(start_mib < 150, "the controller peaked at {start_mib} MiB at start over 200 MiB of old scripts");
    let url = c.url.clone();
    let listed = tokio::task::spawn_blocking(move || {
        ok("sacct", &url, &["-a", "-n", "-X", "-P", "-S", "now-2days", "-o", "JobID"]).lines().count()
    })
    .await
    .unwrap();
    assert_eq!(listed as u64, OLD, "the history is all there");
    let peak_mib = c.peak_rss_kib().unwrap() / 1024;
    assert!(
        peak_mib < 150,
        "the controller peaked at {peak_mib} MiB listing a history of 200 MiB of old scripts"
    );
}
