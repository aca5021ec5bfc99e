//! High availability on PostgreSQL: what forwarding costs, and how long a
//! takeover takes. Two spurctld on one fresh database (SPUR_TEST_PG_URL);
//! prints the median submit latency straight to the leader and through the
//! follower (one request in flight, so the difference is the hop), the same
//! for WhoAmI (no store write, so the hop is not lost in a commit's fsync), the
//! throughput of 4 clients x 8 in flight both ways, then the takeover time,
//! median of RUNS, after `kill -9` of the leader and after `SIGSTOP` (the
//! lease runs out: LEASE seconds).
//!
//! `cargo build --release --bins && SPUR_TEST_PG_URL=postgresql://... \
//!  cargo run --release -p spur-tests --example ha_load [-- SUBMITS RUNS LEASE]`

use spur_client::cli::scontrol::ping::{Role, ask};
use spur_client::conn::{self, Clients, Identity};
use spur_proto::v1 as pb;
use spur_tests::proc::Controller;
use std::path::Path;
use std::time::{Duration, Instant};

fn spec() -> pb::JobSpec {
    pb::JobSpec { name: "load".into(), script: "#!/bin/sh\ntrue\n".into(), ..Default::default() }
}

async fn client(url: &str) -> anyhow::Result<Clients> {
    Ok(conn::connect(url, Identity::asserted("load", Some(0))).await?)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Median latency of `n` submits, one at a time.
async fn latency(url: &str, n: usize) -> anyhow::Result<Duration> {
    let mut c = client(url).await?;
    let mut took = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        c.jobs.submit(pb::SubmitRequest { spec: Some(spec()) }).await?;
        took.push(t.elapsed());
    }
    Ok(median(took))
}

/// Median latency of `n` WhoAmI calls (no store write: the hop stands out).
async fn whoami(url: &str, n: usize) -> anyhow::Result<Duration> {
    let mut c = client(url).await?;
    let mut took = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        c.session.who_am_i(pb::WhoAmIRequest {}).await?;
        took.push(t.elapsed());
    }
    Ok(median(took))
}

/// Submits per second of 4 clients x 8 in flight, `n` in all.
async fn throughput(url: &str, n: usize) -> anyhow::Result<f64> {
    let c = client(url).await?;
    let t = Instant::now();
    let lanes: Vec<_> = (0..32)
        .map(|_| {
            let mut c = c.clone();
            tokio::spawn(async move {
                for _ in 0..n / 32 {
                    c.jobs.submit(pb::SubmitRequest { spec: Some(spec()) }).await.expect("submit");
                }
            })
        })
        .collect();
    for l in lanes {
        l.await?;
    }
    Ok((n / 32 * 32) as f64 / t.elapsed().as_secs_f64())
}

/// The index of the controller answering primary, once exactly one does
/// (a leader just resumed from SIGSTOP answers primary until its first
/// renewal tells it otherwise, a few milliseconds).
async fn primary(ctls: &[&Controller]) -> usize {
    loop {
        let mut leads = vec![];
        for (i, c) in ctls.iter().enumerate() {
            if ask(&c.url).await == Role::Primary {
                leads.push(i);
            }
        }
        if let [one] = leads[..] {
            return one;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Takeover times: each run stops the leader (`kill -9`, or SIGSTOP until
/// the other leads), waits for the other to answer primary, then starts
/// (or resumes) the old one as the follower for the next run.
async fn takeovers(config: &Path, dir: &Path, runs: usize, stop: bool) -> Vec<Duration> {
    let log = |i: usize| dir.join(format!("ctl{i}.log"));
    let mut ctls = [Controller::start_shared(config, &log(0)), Controller::start_shared(config, &log(1))];
    let mut out = vec![];
    for _ in 0..runs {
        let lead = primary(&[&ctls[0], &ctls[1]]).await;
        let other = 1 - lead;
        // The follower must know the leader before it can take over from it.
        while ask(&ctls[other].url).await != Role::Backup {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let t = Instant::now();
        if stop {
            ctls[lead].signal("STOP");
        } else {
            ctls[lead].kill_hard();
        }
        while ask(&ctls[other].url).await != Role::Primary {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        out.push(t.elapsed());
        if stop {
            ctls[lead].signal("CONT");
        } else {
            ctls[lead] = Controller::start_shared(config, &log(lead));
        }
    }
    out
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let arg = |i: usize, d: u64| std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (submits, runs, lease) = (arg(1, 2000) as usize, arg(2, 10) as usize, arg(3, 10));
    let dir = tempfile::tempdir()?;
    let url = spur_tests::db::fresh_url(spur_tests::db::Backend::Postgres, dir.path())
        .await
        .ok_or_else(|| anyhow::anyhow!("set SPUR_TEST_PG_URL to a PostgreSQL server"))?;
    let config = dir.path().join("spur.conf");
    std::fs::write(
        &config,
        format!(
            "cluster_name = \"ha\"\n[controller]\nleader_lease_secs = {lease}\n\
             [accounting]\ndatabase_url = \"{url}\"\n[[nodes]]\nname = \"n1\"\n\
             [[partitions]]\nname = \"batch\"\nnodes = \"ALL\"\ndefault = true\n"
        ),
    )?;
    {
        let a = Controller::start_shared(&config, &dir.path().join("a.log"));
        let b = Controller::start_shared(&config, &dir.path().join("b.log"));
        let lead = primary(&[&a, &b]).await;
        let (leader, follower) = if lead == 0 { (&a, &b) } else { (&b, &a) };
        // Warm both paths (connections, the follower's channel to the leader).
        latency(&leader.url, 50).await?;
        latency(&follower.url, 50).await?;
        let direct = latency(&leader.url, submits).await?;
        let hop = latency(&follower.url, submits).await?;
        println!(
            "submit latency, median of {submits}: leader {:.3} ms, through the follower {:.3} ms, the hop {:.3} ms",
            direct.as_secs_f64() * 1e3,
            hop.as_secs_f64() * 1e3,
            (hop.as_secs_f64() - direct.as_secs_f64()) * 1e3
        );
        let (direct, hop) = (whoami(&leader.url, submits).await?, whoami(&follower.url, submits).await?);
        println!(
            "WhoAmI latency, median of {submits}: leader {:.3} ms, through the follower {:.3} ms, the hop {:.3} ms",
            direct.as_secs_f64() * 1e3,
            hop.as_secs_f64() * 1e3,
            (hop.as_secs_f64() - direct.as_secs_f64()) * 1e3
        );
        let n = submits * 4;
        let (t_leader, t_follower) = (throughput(&leader.url, n).await?, throughput(&follower.url, n).await?);
        println!(
            "submit throughput, 4 clients x 8 in flight: leader {t_leader:.0}/s, through the follower {t_follower:.0}/s"
        );
    }
    let killed = if std::env::var_os("HA_LOAD_SKIP_KILL").is_some() {
        vec![Duration::ZERO]
    } else {
        takeovers(&config, dir.path(), runs, false).await
    };
    println!(
        "takeover after kill -9 of the leader, median of {runs}: {:.0} ms (max {:.0} ms)",
        median(killed.clone()).as_secs_f64() * 1e3,
        killed.iter().max().unwrap_or(&Duration::ZERO).as_secs_f64() * 1e3
    );
    let stopped = takeovers(&config, dir.path(), runs, true).await;
    println!(
        "takeover after SIGSTOP of the leader (lease {lease} s), median of {runs}: {:.0} ms (max {:.0} ms)",
        median(stopped.clone()).as_secs_f64() * 1e3,
        stopped.iter().max().unwrap_or(&Duration::ZERO).as_secs_f64() * 1e3
    );
    Ok(())
}
