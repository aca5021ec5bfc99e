//! High availability on PostgreSQL with the real binaries: several
//! spurctld on one database, one leading by lease. A submit storm through
//! every controller while the leader is killed loses no acknowledged
//! submit and doubles none; the new leader comes within the lease; a
//! running job is not restarted. A stopped leader lands no write once
//! another has taken over, and rejoins as a follower. Every controller
//! killed and one started again: the cluster is as it was.

use spur_client::cli::scontrol::ping::{Role, ask};
use spur_client::conn::{self, Clients, Identity};
use spur_proto::v1 as pb;
use spur_tests::config::ClusterToml;
use spur_tests::db::{Backend, fresh_url};
use spur_tests::proc::{Agent, Controller, conf, starts, wait_for};
use spur_tests::wait::wait_until;
use spur_vocab::JobState;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Short, so the stopped-leader case takes seconds.
const LEASE_SECS: u64 = 3;

fn write_conf(dir: &Path, url: &str) -> std::path::PathBuf {
    let cluster = ClusterToml::new()
        .heartbeat(1)
        .node_timeout(30)
        .interval(1)
        .nodes("node[01-02]", 4, 8192)
        .partition("batch", "node[01-02]")
        .set("controller", "leader_lease_secs", LEASE_SECS);
    let path = dir.join("spur.conf");
    std::fs::write(&path, conf(url, &cluster.build())).unwrap();
    path
}

fn start(dir: &Path, config: &Path, n: usize) -> Vec<Controller> {
    (0..n).map(|i| Controller::start_shared(config, &dir.join(format!("ctl{i}.log")))).collect()
}

fn list(ctls: &[&Controller]) -> String {
    ctls.iter().map(|c| c.addr()).collect::<Vec<_>>().join(",")
}

/// Two controllers on a fresh PostgreSQL database (None without one): the
/// database URL, the controllers, and which one leads.
async fn two(dir: &Path) -> Option<(String, Vec<Controller>, usize)> {
    let url = fresh_url(Backend::Postgres, dir).await?;
    let ctls = start(dir, &write_conf(dir, &url), 2);
    let lead = primary(&ctls.iter().collect::<Vec<_>>()).await;
    Some((url, ctls, lead))
}

/// The controller answering primary, waited for.
async fn primary(ctls: &[&Controller]) -> usize {
    wait_until("one controller to answer primary", || async {
        let mut roles = vec![];
        for c in ctls {
            roles.push(ask(&c.url).await);
        }
        match roles.iter().filter(|r| **r == Role::Primary).count() {
            1 => Ok(roles.iter().position(|r| *r == Role::Primary).unwrap()),
            _ => Err(format!("{roles:?}")),
        }
    })
    .await
}

async fn client(urls: &str) -> Clients {
    conn::connect(urls, Identity::asserted("root", Some(0))).await.unwrap()
}

/// The queue, asked until a controller answers: a follower that has not yet
/// seen the takeover refuses with Unavailable ("retry") for a moment.
async fn jobs(urls: &str) -> Vec<pb::Job> {
    wait_until("a controller to list the jobs", || async {
        let mut c =
            conn::connect(urls, Identity::asserted("root", Some(0))).await.map_err(|e| e.to_string())?;
        match c.jobs.list_jobs(pb::ListRequest::default()).await {
            Ok(r) => Ok(r.into_inner().jobs),
            Err(s) if s.code() == tonic::Code::Unavailable => Err(s.message().to_string()),
            Err(s) => panic!("list jobs: {s:?}"),
        }
    })
    .await
}

fn spec(name: &str, script: &str, dir: &Path) -> pb::JobSpec {
    pb::JobSpec {
        name: name.into(),
        script: script.into(),
        workdir: dir.display().to_string(),
        partition: "batch".into(),
        ..Default::default()
    }
}

/// A job that notes each start and runs until `go` exists in `dir`.
const GATED: &str =
    "#!/bin/sh\necho started >> starts-$SLURM_JOB_ID\nwhile [ ! -f go ]; do sleep 0.05; done\n";

/// Submits as fast as it can through the controllers in the order `urls`
/// lists them, reconnecting (to the next that answers) after a failure,
/// until `stop`; the submits acknowledged, by name.
async fn storm(
    urls: String,
    who: usize,
    dir: std::path::PathBuf,
    stop: Arc<Mutex<bool>>,
) -> BTreeMap<String, u64> {
    let mut acked = BTreeMap::new();
    let mut c: Option<Clients> = None;
    for n in 0.. {
        if *stop.lock().unwrap() {
            break;
        }
        if c.is_none() {
            c = conn::connect(&urls, Identity::asserted("root", Some(0))).await.ok();
        }
        let Some(cl) = c.as_mut() else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let name = format!("storm-{who}-{n}");
        let req = pb::SubmitRequest { spec: Some(spec(&name, "#!/bin/sh\ntrue\n", &dir)) };
        match cl.jobs.submit(req).await {
            Ok(r) => {
                acked.insert(name, r.into_inner().job_id);
            }
            // Not acknowledged: it may or may not have landed, and is not counted.
            Err(_) => c = None,
        }
    }
    acked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failover_mid_storm_loses_no_acknowledged_submit_and_restarts_no_job() {
    let dir = tempfile::tempdir().unwrap();
    let Some(url) = fresh_url(Backend::Postgres, dir.path()).await else { return };
    let config = write_conf(dir.path(), &url);
    let mut ctls = start(dir.path(), &config, 3);
    let all = list(&ctls.iter().collect::<Vec<_>>());
    let lead = primary(&ctls.iter().collect::<Vec<_>>()).await;
    let agent = Agent::start(&all, "node[01-02]", &[]);
    // A running job, submitted through a follower.
    let follower = (lead + 1) % 3;
    let mut c = client(&ctls[follower].url).await;
    let req = pb::SubmitRequest { spec: Some(spec("gated", GATED, dir.path())) };
    let gated = c.jobs.submit(req).await.unwrap().into_inner().job_id;
    wait_for("the gated job to start", || (starts(dir.path(), gated) == 1).then_some(()));

    // Four clients, each starting at another controller of the list.
    let stop = Arc::new(Mutex::new(false));
    let addrs: Vec<String> = ctls.iter().map(|c| c.addr().to_string()).collect();
    let storms: Vec<_> = (0..4)
        .map(|who| {
            let mut order = addrs.clone();
            order.rotate_left(who % 3);
            tokio::spawn(storm(order.join(","), who, dir.path().to_path_buf(), stop.clone()))
        })
        .collect();
    wait_until("the storm to be under way", || async {
        let n = jobs(&all).await.len();
        if n > 40 { Ok(()) } else { Err(format!("{n} jobs")) }
    })
    .await;
    ctls[lead].kill_hard();
    let killed = Instant::now();
    let rest: Vec<&Controller> =
        ctls.iter().enumerate().filter(|(i, _)| *i != lead).map(|(_, c)| c).collect();
    primary(&rest).await;
    let takeover = killed.elapsed();
    eprintln!("takeover after kill -9: {takeover:?}");
    assert!(takeover < Duration::from_secs(LEASE_SECS + 2), "a new leader within the lease: {takeover:?}");
    let before = jobs(&list(&rest)).await.len();
    wait_until("the storm to go on through the new leader", || async {
        let n = jobs(&list(&rest)).await.len();
        if n > before + 40 { Ok(()) } else { Err(format!("{n} jobs, {before} at the takeover")) }
    })
    .await;
    *stop.lock().unwrap() = true;
    let mut acked = BTreeMap::new();
    for s in storms {
        acked.extend(s.await.unwrap());
    }
    assert!(acked.len() > 80, "{} submits acknowledged", acked.len());

    // Every acknowledged submit is there, exactly once, with its id.
    let survivors = list(&rest);
    let mut history = client(&survivors).await;
    let mut seen: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut after = None;
    loop {
        let mut filter = vec![pb::KeyValue { key: "history".into(), value: "yes".into() }];
        if let Some(a) = after {
            filter.push(pb::KeyValue { key: "history_after".into(), value: format!("{a}") });
        }
        let page = history.jobs.list_jobs(pb::ListRequest { filter }).await.unwrap().into_inner();
        for j in &page.jobs {
            seen.entry(j.name.clone()).or_default().push(j.id);
        }
        match page.next_history_after_id {
            Some(a) => after = Some(a),
            None => break,
        }
    }
    for (name, id) in &acked {
        let mut ids = seen.get(name).cloned().unwrap_or_default();
        ids.sort();
        ids.dedup();
        assert_eq!(ids, vec![*id], "acknowledged {name} (job {id}) is stored once");
    }

    // The running job was not restarted: one start, still running.
    let j = jobs(&survivors).await.into_iter().find(|j| j.id == gated).unwrap();
    assert_eq!(j.job_state(), JobState::Running, "{j:?}");
    assert_eq!(starts(dir.path(), gated), 1);

    // Every controller killed, one started again: the cluster as it was.
    let before: BTreeMap<u64, JobState> =
        jobs(&survivors).await.into_iter().map(|j| (j.id, j.job_state())).collect();
    for c in ctls.iter_mut() {
        c.kill_hard();
    }
    let again = Controller::start_shared(&config, &dir.path().join("again.log"));
    primary(&[&again]).await;
    let after: BTreeMap<u64, JobState> =
        jobs(&again.url).await.into_iter().map(|j| (j.id, j.job_state())).collect();
    assert_eq!(after.keys().collect::<Vec<_>>(), before.keys().collect::<Vec<_>>());
    assert_eq!(after.get(&gated), Some(&JobState::Running));
    std::fs::write(dir.path().join("go"), "").unwrap();
    drop(agent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_leader_lands_no_write_and_rejoins_as_a_follower() {
    let dir = tempfile::tempdir().unwrap();
    let Some((url, ctls, lead)) = two(dir.path()).await else { return };
    let (old, other) = (&ctls[lead], &ctls[1 - lead]);
    // A client connected to the leader before it stops.
    let mut stale = client(&old.url).await;
    old.signal("STOP");
    let stopped = Instant::now();
    primary(&[other]).await;
    let takeover = stopped.elapsed();
    eprintln!("takeover of a stopped leader: {takeover:?}");
    assert!(takeover < Duration::from_secs(LEASE_SECS + 2), "{takeover:?}");
    // A submit sent to the stopped leader is taken up when it resumes: the
    // fence refuses its write, and nothing of it reaches the store.
    let req =
        pb::SubmitRequest { spec: Some(spec("from-the-stopped-leader", "#!/bin/sh\ntrue\n", dir.path())) };
    let sent = tokio::spawn(async move { stale.jobs.submit(req).await });
    old.signal("CONT");
    // Either the resumed leader took it up itself, and its fence refused it; or
    // (under load) it had already stepped down when the request reached it, and
    // as a follower forwarded it to the new leader, which applied it once.
    let forwarded = match sent.await.unwrap() {
        Err(status) => {
            assert!(status.message().contains("no longer the leader"), "{status:?}");
            false
        }
        Ok(_) => true,
    };
    // The store itself, not the new leader's memory (loaded before the write would have landed).
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let rows: Vec<String> =
        sqlx::query_scalar("SELECT info FROM txn WHERE info LIKE '%from-the-stopped-leader%'")
            .fetch_all(&pool)
            .await
            .unwrap();
    let entities: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM entities WHERE data LIKE '%from-the-stopped-leader%'")
            .fetch_one(&pool)
            .await
            .unwrap();
    pool.close().await;
    let names: Vec<String> = jobs(&other.url).await.into_iter().map(|j| j.name).collect();
    let stored = names.iter().filter(|n| *n == "from-the-stopped-leader").count();
    if forwarded {
        assert_eq!((stored, rows.len(), entities), (1, 1, 1), "applied once, by the new leader: {rows:?}");
        assert!(rows[0].contains("\"forwarded\":true"), "{rows:?}");
    } else {
        assert_eq!(
            (stored, rows.len(), entities),
            (0, 0, 0),
            "a write of the stopped leader reached the store: {rows:?}"
        );
    }
    // It rejoins as a follower: a backup, and what it is sent is forwarded.
    wait_until("the old leader to answer backup", || async {
        match ask(&old.url).await {
            Role::Backup => Ok(()),
            r => Err(format!("{r:?}")),
        }
    })
    .await;
    let mut via_old = client(&old.url).await;
    let req = pb::SubmitRequest { spec: Some(spec("through-the-follower", "#!/bin/sh\ntrue\n", dir.path())) };
    via_old.jobs.submit(req).await.unwrap();
    let txn = spur_tests::proc::ok(
        "sacctmgr",
        &other.url,
        &["-n", "-P", "show", "txn", "Entity=job", "format=Info,Peer"],
    );
    let row = txn.lines().find(|l| l.contains("through-the-follower")).unwrap_or_else(|| panic!("{txn}"));
    assert!(row.contains("\"forwarded\":true"), "{row}");
    assert!(row.ends_with(old.addr().split(':').next().unwrap()) || row.contains("127.0.0.1"), "{row}");
    // The CLI given both, the follower first, goes straight to the leader: no hop.
    let both = format!("{},{}", old.addr(), other.addr());
    spur_tests::proc::ok("sbatch", &both, &["-J", "straight-to-the-leader", "--wrap", "true"]);
    let txn = spur_tests::proc::ok(
        "sacctmgr",
        &other.url,
        &["-n", "-P", "show", "txn", "Entity=job", "format=Info"],
    );
    let row = txn.lines().find(|l| l.contains("straight-to-the-leader")).unwrap_or_else(|| panic!("{txn}"));
    assert!(!row.contains("forwarded"), "{row}");
}

/// The address line is the moment a script may talk to the controller: by
/// then it leads (or forwards to a live leader), so the first request never
/// meets its own takeover (it did: "cannot be reached ...; retry").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_address_line_comes_once_the_controller_leads_or_follows() {
    let dir = tempfile::tempdir().unwrap();
    let Some(url) = fresh_url(Backend::Postgres, dir.path()).await else { return };
    let config = write_conf(dir.path(), &url);
    for round in 0..3 {
        let mut first = Controller::start_shared(&config, &dir.path().join(format!("first{round}.log")));
        assert_eq!(ask(&first.url).await, Role::Primary, "round {round}: at its address line");
        let mut second = Controller::start_shared(&config, &dir.path().join(format!("second{round}.log")));
        assert_eq!(ask(&second.url).await, Role::Backup, "round {round}: at its address line");
        spur_tests::proc::ok("squeue", &second.url, &["-h"]);
        // A clean stop gives the lease up, so the next round's first leads at once.
        assert!(second.stop().success() && first.stop().success());
    }
}

/// `scontrol takeover`: the first backup given leads at once (not after a
/// lease), the old leader follows, the queue is as it was, and the hand-over
/// is in the txn log. A backup that is not there is named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scontrol_takeover_moves_the_lead_to_the_backup() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_, ctls, lead)) = two(dir.path()).await else { return };
    let (old, other) = (&ctls[lead], &ctls[1 - lead]);
    let both = list(&[old, other]);
    spur_tests::proc::ok("sbatch", &both, &["-J", "before-the-takeover", "-H", "--wrap", "true"]);
    let err = spur_tests::proc::fails("scontrol", &both, &["takeover", "2"]);
    assert!(err.contains("no backup controller 2") && err.contains("1 answer as backup"), "{err}");
    // Named by another address than it advertises, it could never take the lease: refused at once.
    let port = other.addr().rsplit(':').next().unwrap();
    let aliased = format!("{},localhost:{port}", old.addr());
    let err = spur_tests::proc::fails("scontrol", &aliased, &["takeover"]);
    assert!(err.contains(&format!("localhost:{port} does not answer as a backup advertising")), "{err}");
    assert_eq!(ask(&old.url).await, Role::Primary, "the leader stays");
    let out = spur_tests::proc::ok("scontrol", &both, &["takeover"]);
    assert!(out.contains(&format!("{} took over from {}", other.addr(), old.addr())), "{out}");
    assert_eq!(ask(&other.url).await, Role::Primary);
    wait_until("the old leader to answer backup", || async {
        match ask(&old.url).await {
            Role::Backup => Ok(()),
            r => Err(format!("{r:?}")),
        }
    })
    .await;
    let names: Vec<String> = jobs(&other.url).await.into_iter().map(|j| j.name).collect();
    assert!(names.contains(&"before-the-takeover".to_string()), "{names:?}");
    let txn = spur_tests::proc::ok(
        "sacctmgr",
        &other.url,
        &["-n", "-P", "show", "txn", "Entity=controller", "format=Action,Where,Info"],
    );
    assert!(txn.contains(other.addr()) && txn.contains(old.addr()), "{txn}");
    // And back: the old leader is now the first backup.
    let out = spur_tests::proc::ok("scontrol", &both, &["takeover"]);
    assert!(out.contains(&format!("{} took over from {}", old.addr(), other.addr())), "{out}");
}

#[tokio::test]
async fn a_second_controller_on_one_sqlite_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("spur.db").display());
    let config = write_conf(dir.path(), &url);
    let _first = Controller::start_with(&config);
    let out = std::process::Command::new(spur_tests::proc::bin("spurctld"))
        .args(["--config", config.to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("in use by another spurctld") && err.contains("postgresql://"), "{err}");
}
