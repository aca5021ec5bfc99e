//! While the database is down, memory and the store never disagree: a
//! write fails fast with Unavailable naming the database and changes
//! nothing; a job's end reported meanwhile is kept by its agent and written
//! once the database returns, so no finished job runs again. PostgreSQL,
//! behind a proxy the test cuts (the server itself serves other tests).

use spur_tests::config::ClusterToml;
use spur_tests::db::{Backend, fresh_url};
use spur_tests::proc::{Agent, Controller, conf, field, ok, run, sacct_state, starts, wait_for};
use spur_tests::proxy::Proxy;

fn cluster() -> ClusterToml {
    ClusterToml::new()
        .heartbeat(1)
        .node_timeout(60)
        .nodes("node[01-02]", 2, 4096)
        .partition("batch", "node[01-02]")
}

/// `url` with its host and port replaced by `addr`; and the host:port it named.
fn through(url: &str, addr: std::net::SocketAddr) -> (String, String) {
    let scheme_end = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[scheme_end..];
    let host_start = rest.find('@').map_or(0, |i| i + 1);
    let host_end = rest[host_start..].find(['/', '?']).map_or(rest.len(), |i| host_start + i);
    let host = &rest[host_start..host_end];
    let upstream = if host.contains(':') { host.to_string() } else { format!("{host}:5432") };
    let proxied = format!("{}{}{addr}{}", &url[..scheme_end], &rest[..host_start], &rest[host_end..]);
    (proxied, upstream)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_outage_never_shows_or_loses_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let Some(url) = fresh_url(Backend::Postgres, d).await else { return };
    let proxy = Proxy::start(&through(&url, "127.0.0.1:1".parse().unwrap()).1);
    let (proxied, _) = through(&url, proxy.addr);
    let mut c = Controller::start(d, &conf(&proxied, &cluster().build()));
    let _agent = Agent::start(&c.url, "node[01-02]", &[]);
    wait_for("nodes up", || (ok("sinfo", &c.url, &["-h", "-o", "%t"]).trim() == "idle").then_some(()));
    let wd = d.display().to_string();
    let sbatch = |args: &[&str]| -> u64 {
        let mut all = vec!["--parsable", "-D", &wd, "-o", "/dev/null"];
        all.extend(args);
        ok("sbatch", &c.url, &all).trim().parse().unwrap()
    };
    let gated = "echo x >> starts-$SLURM_JOB_ID; while [ ! -f go ]; do sleep 0.05; done";
    let running = sbatch(&["--wrap", gated]);
    let held = sbatch(&["-H", "--wrap", "true"]);
    wait_for("the job started", || (starts(d, running) == 1).then_some(()));

    proxy.cut();
    let started = std::time::Instant::now();
    let out = run("scancel", &c.url, &[&held.to_string()]);
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a cancel the store did not take is refused");
    assert!(err.contains("unreachable"), "names the outage: {err}");
    eprintln!("scancel during the outage failed in {took:?}: {}", err.trim());
    assert_eq!(field(&c.url, held, "%T"), "PENDING", "nothing shown that the store did not take");
    // The job ends while the database is down: its end waits with the agent.
    std::fs::write(d.join("go"), "").unwrap();
    let refused = run("sbatch", &c.url, &["--parsable", "-D", &wd, "--wrap", "true"]);
    assert!(!refused.status.success(), "no submit is acknowledged without the store");

    proxy.restore();
    wait_for("the end written once the database is back", || {
        (sacct_state(&c.url, running) == "COMPLETED").then_some(())
    });
    c.restart();
    assert_eq!(sacct_state(&c.url, running), "COMPLETED", "the store has the end");
    assert_eq!(field(&c.url, held, "%T"), "PENDING", "the refused cancel stayed refused");
    ok("scancel", &c.url, &[&held.to_string()]);
    assert_eq!(sacct_state(&c.url, held), "CANCELLED");
    assert_eq!(starts(d, running), 1, "the finished job did not run again");
}
