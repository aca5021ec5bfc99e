//! Several controllers on one PostgreSQL database: one leads, the others
//! forward. PostgreSQL is already the store they share, so it is also what
//! coordinates them; there is no consensus protocol of Spur's own.
//!
//! - `lease.rs`: the leader lease (a row with an epoch, expiring unless renewed).
//! - `forward.rs`: a follower's server, forwarding every RPC to the leader.
//! - `handover.rs`: `scontrol takeover`, the leader handing its lease to a backup.
//! - `mod.rs`: the loop a controller runs: follow and campaign, lead, step down.
//!
//! Leading means running the whole controller of `controller.rs` (queue,
//! scheduler, timers, the agents' streams) over a store fenced with the
//! epoch (`store/fence.rs`), so a leader that lost the lease cannot land a
//! write. Stepping down drops that controller whole and follows again: the
//! next term loads everything from the store, as a restart does.

pub mod forward;
pub mod handover;
pub mod lease;

use crate::auth::Authenticator;
use crate::config::Config;
use crate::controller::{self, waiting::Waiting};
use crate::store::{self, Store, fence::Fence};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// This process's part in the cluster of controllers, for /metrics.
pub struct HaStats {
    /// Whether this process runs [`run`] (PostgreSQL); else it is the one controller.
    pub active: AtomicBool,
    pub leader: AtomicBool,
    pub epoch: AtomicI64,
    pub takeovers: AtomicU64,
    pub forwarded: AtomicU64,
    pub step_downs: AtomicU64,
}

/// One controller per process.
pub static HA: HaStats = HaStats {
    active: AtomicBool::new(false),
    leader: AtomicBool::new(false),
    epoch: AtomicI64::new(0),
    takeovers: AtomicU64::new(0),
    forwarded: AtomicU64::new(0),
    step_downs: AtomicU64::new(0),
};

/// The HA lines of /metrics (Prometheus text).
pub fn render_metrics() -> String {
    let g = |v: u64| v.to_string();
    let leads = !HA.active.load(Ordering::Relaxed) || HA.leader.load(Ordering::Relaxed);
    let lines = [
        ("spur_leader", "gauge", "1 while this controller leads", g(u64::from(leads))),
        (
            "spur_leader_epoch",
            "gauge",
            "the epoch of the lease this controller holds or last saw",
            HA.epoch.load(Ordering::Relaxed).to_string(),
        ),
        (
            "spur_takeovers_total",
            "counter",
            "times this controller took the lease",
            g(HA.takeovers.load(Ordering::Relaxed)),
        ),
        (
            "spur_step_downs_total",
            "counter",
            "times this controller lost the lease and stepped down",
            g(HA.step_downs.load(Ordering::Relaxed)),
        ),
        (
            "spur_forwarded_requests_total",
            "counter",
            "requests this controller forwarded to the leader",
            g(HA.forwarded.load(Ordering::Relaxed)),
        ),
    ];
    lines
        .iter()
        .map(|(name, kind, help, v)| format!("# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}\n"))
        .collect()
}

/// A stop request (SIGTERM, SIGINT), polled across the phases.
pub type Shutdown = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The `host:port` others reach this controller at.
pub fn advertised(cfg: &Config, bound: std::net::SocketAddr) -> String {
    if !cfg.controller.advertise_addr.is_empty() {
        return cfg.controller.advertise_addr.clone();
    }
    if bound.ip().is_unspecified() {
        let host = nix::unistd::gethostname().ok().and_then(|h| h.into_string().ok()).unwrap_or_default();
        return format!("{host}:{}", bound.port());
    }
    bound.to_string()
}

/// Called once, when this controller first leads or first knows a live
/// leader to forward to: what it answers from then on is not a takeover's
/// refusal. spurctld prints its address line here.
pub type Ready = Box<dyn FnOnce() + Send>;

/// Runs a controller of a cluster of controllers until `shutdown`: follow
/// (forwarding) while another leads, take the lease when it is free, lead
/// until it is lost or the process stops. `first` is the store the start-up
/// opened (waiting for the database if it had to), fenced by `fence`.
pub async fn run(
    cfg: Config,
    listener: std::net::TcpListener,
    first: (Arc<dyn Store>, Arc<Fence>),
    mut shutdown: Shutdown,
    ready: Ready,
) -> anyhow::Result<()> {
    let url = cfg.database_url();
    let addr = advertised(&cfg, listener.local_addr()?);
    let holder = format!("{addr}/{}/{}", std::process::id(), store::now_ms());
    let secs = cfg.controller.leader_lease_secs;
    let lease_time = Duration::from_secs(u64::from(secs));
    let mut lease = lease::Lease::new(&url, holder.clone(), addr.clone(), secs);
    let auth = Arc::new(Authenticator::from_config(&cfg)?);
    let mut next = Some(first);
    HA.active.store(true, Ordering::Relaxed);
    let mut shown_metrics = false;
    let mut ready = Some(ready);
    loop {
        // Follow, and campaign.
        let (tx, rx) = watch::channel(None);
        let fwd = forward::Forwarder::new(
            auth.clone(),
            rx,
            lease_time + Duration::from_secs(2),
            cfg.logging.audit_rpcs,
            &addr,
        )
        .await;
        let server = Waiting::start(&listener, fwd)?;
        let metrics = follower_metrics(&cfg).await;
        let won = campaign(&mut lease, &tx, lease_time, &mut shutdown, &mut ready).await;
        if let Some(m) = metrics {
            m.abort();
            let _ = m.await;
        }
        let Some(epoch) = won else {
            server.stop().await;
            return Ok(());
        };
        // Lead.
        let (st, fence) = match next.take() {
            Some(s) => s,
            None => {
                let fence = Arc::new(Fence::for_lease(secs));
                match store::open_fenced(&url, Some(fence.clone())).await {
                    Ok(s) => (s, fence),
                    Err(e) => {
                        tracing::warn!(error = %e, "took the lease but cannot open the store; giving it up");
                        lease.release(epoch).await;
                        server.stop().await;
                        continue;
                    }
                }
            }
        };
        fence.start(epoch);
        HA.epoch.store(epoch, Ordering::Relaxed);
        HA.takeovers.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let running = controller::start_with(cfg.clone(), Some(st), listener.try_clone()?).await;
        let running = match running {
            Ok(r) => r,
            Err(e) => {
                lease.release(epoch).await;
                server.stop().await;
                return Err(e);
            }
        };
        HA.leader.store(true, Ordering::Relaxed);
        tracing::info!(epoch, addr, loaded_in = ?started.elapsed(), "leading");
        if let Some(m) = running.metrics_addr().filter(|_| !shown_metrics) {
            println!("spurctld metrics on http://{m}/metrics");
            shown_metrics = true;
        }
        // The follower stops accepting before it learns who leads, so the
        // requests it held go to this controller's server, never back into
        // itself; then it lets them finish.
        let mut server = server;
        server.stop_accepting();
        let _ = tx.send(Some(addr.clone()));
        server.stop().await;
        if let Some(r) = ready.take() {
            r();
        }
        let mut asked = handover::open(&addr);
        let end = lead(&mut lease, epoch, &fence, lease_time, &mut shutdown, &mut asked).await;
        handover::close();
        HA.leader.store(false, Ordering::Relaxed);
        if end == End::Lost {
            // Not ours any more: nothing in flight may land (a clean stop lets it finish).
            fence.lose();
        }
        if matches!(end, End::HandOver(_)) {
            // A whole lease for the stop, so no other follower takes it meanwhile.
            let _ = lease.renew(epoch).await;
        }
        running.shutdown().await?;
        HA.step_downs.fetch_add(u64::from(end != End::Stop), Ordering::Relaxed);
        match end {
            End::Stop => {
                lease.release(epoch).await;
                return Ok(());
            }
            End::HandOver(to) => match lease.hand_over(epoch, &to).await {
                Ok(true) => tracing::info!(epoch, to, "handed the lease over: following the new leader"),
                Ok(false) => {
                    tracing::warn!(epoch, to, "the lease had already moved on; following whoever leads")
                }
                Err(e) => tracing::warn!(epoch, to, error = %e, "could not hand the lease over; it expires"),
            },
            End::Lost => tracing::warn!(epoch, "stepped down: following the new leader"),
        }
    }
}

/// A follower's /metrics: the HA lines only (the leader's figures are the
/// leader's to serve). None when metrics are off or the port is taken.
async fn follower_metrics(cfg: &Config) -> Option<tokio::task::JoinHandle<()>> {
    if cfg.metrics.listen_addr.is_empty() {
        return None;
    }
    let l = match tokio::net::TcpListener::bind(&cfg.metrics.listen_addr).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, addr = %cfg.metrics.listen_addr, "a follower's metrics endpoint cannot listen");
            return None;
        }
    };
    let text = || async { ([(http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], render_metrics()) };
    let app = axum::Router::new().route("/metrics", axum::routing::get(text));
    Some(tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    }))
}

/// How often a follower tries the lease: soon after a leader's death,
/// without a query storm.
fn poll_every(lease_time: Duration) -> Duration {
    (lease_time / 4).min(Duration::from_millis(500))
}

/// Tries the lease until it is taken (its epoch) or the process stops
/// (None), keeping `leader` pointed at whoever holds it. `ready` is called
/// once a live leader is known, or after a lease with none (its requests
/// then wait for one, as during any takeover).
async fn campaign(
    lease: &mut lease::Lease,
    leader: &watch::Sender<Option<String>>,
    lease_time: Duration,
    shutdown: &mut Shutdown,
    ready: &mut Option<Ready>,
) -> Option<i64> {
    let mut logged = false;
    let began = Instant::now();
    loop {
        match lease.try_take().await {
            Ok(Some(epoch)) => return Some(epoch),
            Ok(None) => {}
            Err(e) if !logged => {
                tracing::warn!(error = %e, "cannot reach the lease; following whoever leads");
                logged = true;
            }
            Err(_) => {}
        }
        match lease.current().await {
            Ok(l) => {
                HA.epoch.store(l.epoch, Ordering::Relaxed);
                let addr = (l.live && l.holder != lease.holder && !l.addr.is_empty()).then_some(l.addr);
                leader.send_if_modified(|cur| {
                    let changed = *cur != addr;
                    if changed {
                        tracing::info!(leader = ?addr, "the leader changed");
                        *cur = addr.clone();
                    }
                    changed
                });
            }
            Err(_) => {
                leader.send_if_modified(|cur| cur.take().is_some());
            }
        }
        if (leader.borrow().is_some() || began.elapsed() >= lease_time)
            && let Some(r) = ready.take()
        {
            r();
        }
        tokio::select! {
            _ = tokio::time::sleep(poll_every(lease_time)) => {}
            _ = shutdown.as_mut() => return None,
        }
    }
}

/// Why a leading term ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// The process stops: the lease is released.
    Stop,
    /// Another holds the lease, or it could not be renewed in time.
    Lost,
    /// `scontrol takeover`: the lease goes to the backup at this address.
    HandOver(String),
}

/// Renews the lease until it is lost, handed over, or the process stops.
async fn lead(
    lease: &mut lease::Lease,
    epoch: i64,
    fence: &Fence,
    lease_time: Duration,
    shutdown: &mut Shutdown,
    asked: &mut tokio::sync::mpsc::Receiver<String>,
) -> End {
    let every = lease_time / 3;
    let mut renewed = Instant::now();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = fence.lost() => return End::Lost,
            _ = shutdown.as_mut() => return End::Stop,
            Some(to) = asked.recv() => return End::HandOver(to),
        }
        match lease.renew(epoch).await {
            Ok(true) => renewed = Instant::now(),
            Ok(false) => {
                tracing::warn!(epoch, "another controller holds the lease");
                return End::Lost;
            }
            // Unrenewed for a lease (less a renewal's margin): another may hold it now.
            Err(e) if renewed.elapsed() + every >= lease_time => {
                tracing::warn!(epoch, error = %e, "the lease could not be renewed in time");
                return End::Lost;
            }
            Err(e) => tracing::warn!(epoch, error = %e, "renewing the lease failed; retrying"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metrics_say_who_leads_and_count_the_hops() {
        let text = render_metrics();
        for name in [
            "spur_leader",
            "spur_leader_epoch",
            "spur_takeovers_total",
            "spur_step_downs_total",
            "spur_forwarded_requests_total",
        ] {
            assert!(text.contains(&format!("# TYPE {name} ")), "{name} in\n{text}");
        }
        // A controller that does not run the lease (SQLite, the demo) is the leader.
        assert!(text.contains("\nspur_leader 1\n"), "{text}");
        assert_eq!(poll_every(Duration::from_secs(10)), Duration::from_millis(500));
        assert_eq!(poll_every(Duration::from_secs(1)), Duration::from_millis(250));
    }

    #[test]
    fn the_advertised_address_is_the_configured_one_else_a_reachable_name() {
        let mut cfg = Config::default();
        let bound: std::net::SocketAddr = "127.0.0.1:7001".parse().unwrap();
        assert_eq!(advertised(&cfg, bound), "127.0.0.1:7001");
        let any: std::net::SocketAddr = "0.0.0.0:7001".parse().unwrap();
        assert!(advertised(&cfg, any).ends_with(":7001") && !advertised(&cfg, any).starts_with("0.0.0.0"));
        cfg.controller.advertise_addr = "ctl1:6817".into();
        assert_eq!(advertised(&cfg, any), "ctl1:6817");
    }
}
