//! Limits at the edges: requests no node could ever run, counts and time
//! limits that would overflow, token lifetimes past the longest, MaxJobCount,
//! and MinJobAge (ended jobs leave the controller's memory; sacct still
//! finds them in the store, across a restart).

use spur_client::conn::{self, Identity};
use spur_client::token::MAX_TTL_SECS;
use spur_proto::v1 as pb;
use spur_proto::v1::cluster_event::Event;
use spur_tests::cluster::Cluster;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Controller, DEADLINE, conf, fails, ok, wait_for};

/// Four nodes of 4 CPUs and 8 GB, no GPUs; no agent (jobs pend).
fn small() -> ClusterToml {
    ClusterToml::new()
        .scheduler("max_job_count", 3)
        .nodes("node[01-04]", 4, 8192)
        .partition("batch", "node[01-04]")
}

fn controller(dir: &tempfile::TempDir) -> Controller {
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    Controller::start(dir.path(), &conf(&db, &small().build()))
}

fn root() -> Identity {
    Identity::asserted("root", Some(0))
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_no_node_could_ever_run_are_refused_at_submit() {
    let dir = tempfile::tempdir().unwrap();
    let c = controller(&dir);
    let url = c.url.as_str();
    let unavailable = "Batch job submission failed: Requested node configuration is not available: ";
    for (args, facts) in [
        (&["-N", "5"][..], "the job asks for 5 nodes (-N) and partition 'batch' has 4"),
        (&["-c", "5"], "5 CPUs per node (-n/-c) and the largest node of partition 'batch' has 4"),
        (&["-n", "9", "-N", "2"], "5 CPUs per node (-n/-c)"),
        (
            &["--mem", "9000"],
            "9000 MB of memory per node (--mem) and the largest node of partition 'batch' has 8192",
        ),
        (&["--gres", "gpu:1"], "1 GPUs per node (--gres) and the largest node of partition 'batch' has 0"),
        (&["-N", "4", "-x", "node02"], "the job asks for 4 nodes (-N) and partition 'batch' has 3"),
    ] {
        let mut all = args.to_vec();
        all.push("--wrap=true");
        let err = fails("sbatch", url, &all);
        assert!(err.contains(unavailable) && err.contains(facts), "{args:?}: {err}");
    }
    // 2147483649 × 2 wraps to 2 in 32 bits.
    let err = fails("sbatch", url, &["-n", "2147483649", "-c", "2", "--wrap=true"]);
    assert!(
        err.contains(
            "ntasks: 2147483649 tasks × 2 CPUs per task is 4294967298 CPUs, more than a job may ask for"
        ),
        "{err}"
    );
    let err = fails("sbatch", url, &["-t", "4294967294", "--wrap=true"]);
    assert!(err.contains("--time: 4294967294 minutes is more than the largest time limit"), "{err}");

    // Over gRPC, past the CLI's own checks.
    let mut cl = conn::connect(url, root()).await.unwrap();
    let spec = |minutes| pb::JobSpec {
        script: "#!/bin/sh\ntrue\n".into(),
        time_limit_minutes: Some(minutes),
        hold: true,
        ..Default::default()
    };
    let st = cl.jobs.submit(pb::SubmitRequest { spec: Some(spec(u64::MAX)) }).await.unwrap_err();
    assert_eq!(st.code(), tonic::Code::InvalidArgument);
    assert!(st.message().starts_with("time_limit: 18446744073709551615 minutes is more than"), "{st:?}");

    // The largest of everything still fits, and the largest limit is accepted.
    let id =
        cl.jobs.submit(pb::SubmitRequest { spec: Some(spec(4_294_967_293)) }).await.unwrap().into_inner();
    let id = id.job_id.to_string();
    let all = ok("sbatch", url, &["--parsable", "-N", "4", "-c", "4", "--mem", "8192", "-H", "--wrap=true"]);
    assert!(all.trim().parse::<u64>().is_ok(), "{all}");
    let err = fails("scontrol", url, &["update", &format!("JobId={id}"), "TimeLimit=4294967294"]);
    assert!(err.contains("TimeLimit: 4294967294 minutes is more than the largest time limit"), "{err}");
    ok("scontrol", url, &["update", &format!("JobId={id}"), "TimeLimit=4294967293"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn max_job_count_counts_ended_jobs_until_they_are_purged() {
    let dir = tempfile::tempdir().unwrap();
    let c = controller(&dir);
    let url = c.url.as_str();
    let ids: Vec<String> =
        (0..3).map(|_| ok("sbatch", url, &["--parsable", "-H", "--wrap=true"]).trim().to_string()).collect();
    let err = fails("sbatch", url, &["-H", "--wrap=true"]);
    assert!(
        err.contains(
            "Batch job submission failed: Resource temporarily unavailable: the controller holds 3 jobs"
        ),
        "{err}"
    );
    assert!(err.contains("max_job_count = 3"), "{err}");
    // An ended job still counts until MinJobAge (300 s here) purges it, as in Slurm.
    ok("scancel", url, &[&ids[0]]);
    let err = fails("sbatch", url, &["-H", "--wrap=true"]);
    assert!(err.contains("Resource temporarily unavailable"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn token_lifetimes_past_the_longest_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let c = controller(&dir);
    let mut cl = conn::connect(&c.url, root()).await.unwrap();
    let create = |ttl| pb::CreateTokenRequest { ttl_secs: Some(ttl), ..Default::default() };
    let st = cl.admission.create_token(create(i64::MAX)).await.unwrap_err();
    assert_eq!(st.code(), tonic::Code::InvalidArgument);
    assert!(
        st.message().starts_with("ttl_secs: 9223372036854775807 seconds is more than the longest"),
        "{st:?}"
    );
    let longest = i64::try_from(MAX_TTL_SECS).unwrap();
    cl.admission.create_token(create(longest)).await.unwrap();
    let tokens = cl.admission.list_tokens(pb::ListTokensRequest {}).await.unwrap().into_inner().tokens;
    let [t] = tokens.as_slice() else { panic!("one token: {tokens:?}") };
    assert_eq!(t.expires_ms.unwrap() - t.created_ms, longest * 1000, "it expires when asked, not at once");
    let err = fails("spur", &c.url, &["token", "create", "--ttl", "3651d"]);
    assert!(err.contains("--ttl: 315446400 seconds is more than the longest token lifetime"), "{err}");
}

fn aged() -> ClusterToml {
    ClusterToml::new()
        .heartbeat(1)
        .interval(1)
        .scheduler("min_job_age_secs", 0)
        .nodes_cpus("node[01-02]", 2)
        .partition("batch", "node[01-02]")
}

#[tokio::test(flavor = "multi_thread")]
async fn ended_jobs_leave_memory_after_min_job_age_and_sacct_still_finds_them() {
    let mut e = Cluster::start(&aged().build(), &[], "node[01-02]", 2);
    let mut cl = conn::connect(&e.c.url, root()).await.unwrap();
    let mut watch = cl.cluster.watch(pb::WatchRequest {}).await.unwrap().into_inner();

    // The largest time limit: the job runs instead of timing out at once.
    let long = e.sbatch(&["-t", "4294967293", "--wrap=sleep 300"]);
    e.wait_field(long, "%T", "RUNNING");
    let short = e.sbatch(&["--wrap=true"]);
    let listed = |e: &Cluster| {
        e.ok("squeue", "-h -t all -o %i").lines().map(|l| l.trim().to_string()).collect::<Vec<_>>()
    };
    wait_for("the ended job purged", || (!listed(&e).contains(&short.to_string())).then_some(()));

    let sacct = |e: &Cluster, id: u64| e.ok("sacct", &format!("-n -P -X -j {id} -o JobID,State"));
    assert_eq!(sacct(&e, short), format!("{short}|COMPLETED\n"));
    let err = e.fails("scontrol", &["show", "job", &short.to_string()]);
    assert!(err.contains("Invalid job id specified"), "{err}");
    assert_eq!(e.field(long, "%T"), "RUNNING", "passes since its start left it running");

    // Watchers are told the job is gone.
    let removed = tokio::time::timeout(DEADLINE, async {
        loop {
            if let Some(Event::Jobs(b)) = watch.message().await.unwrap().and_then(|m| m.event)
                && b.removed.contains(&short)
            {
                return b.removed;
            }
        }
    });
    assert!(removed.await.expect("a batch removing the job").contains(&short));

    // A restart reloads the store, and does not bring the purged job back.
    e.c.restart();
    let up = |e: &Cluster| {
        e.ok("sinfo", "-h -N -o %t").lines().all(|s| ["idle", "mix", "alloc"].contains(&s.trim()))
    };
    wait_for("the agent back", || up(&e).then_some(()));
    assert!(!listed(&e).contains(&short.to_string()));
    assert_eq!(sacct(&e, short), format!("{short}|COMPLETED\n"));
    let next = e.sbatch(&["-H", "--wrap=true"]);
    assert!(next > short, "ids of purged jobs are not reused: {next} after {short}");
    ok("scancel", &e.c.url, &[&long.to_string(), &next.to_string()]);
}
