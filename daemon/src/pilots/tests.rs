//! The driver against fake upstream commands: a request becomes a persisted
//! CLOUD node of the definition and one sbatch, its job id recorded; a
//! pilot not registered within boot_timeout_secs is cancelled upstream and
//! its node deleted; a failed sbatch leaves no node behind.

use super::upstream::Upstream;
use super::*;
use spur_vocab::nodestate::Dynamic;

const CONF: &str = "[controller]\nmax_dynamic_nodes = 4\ndynamic_partitions = [\"burst\"]\n\
    [[nodes]]\nname = \"n1\"\n[[partitions]]\nname = \"burst\"\nnodes = \"n1\"\n";

const YAML: &str = "definitions:\n- id: big\n  provisioner: slurm\n  ttl: 3600\n  ttlBuffer: 60\n  \
    provisionerSpec: {cpu: 16, memory: 32GiB, partition: compute, costPerHour: 0.6}\n";

struct Fx {
    dir: tempfile::TempDir,
    pilots: Pilots,
    nodes: Arc<NodeService>,
    cfg: crate::config::Config,
    /// The jobs the driver is told hold any node.
    held: Arc<Mutex<Vec<u64>>>,
}

fn script(dir: &std::path::Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A controller's node service with `big` loaded and fake commands logging to `calls`.
async fn fx(sbatch: &str) -> Fx {
    fx_with(sbatch, "true").await
}

/// [`fx`] with a fake squeue too.
async fn fx_with(sbatch: &str, squeue: &str) -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = format!(
        "{CONF}[upstream.slurm]\nbin_dir = \"{}\"\ncontroller_url = \"http://ctl:6817\"\n\
         call_timeout_secs = 5\nboot_timeout_secs = 60\nidle_timeout_secs = 30\n",
        d.display()
    );
    let mut cfg = crate::config::Config::parse(&text, "spur.conf", d.into()).unwrap();
    let mut p = spur_sched::provision::parse(YAML, 1).unwrap();
    p.drivers = vec![spur_sched::provision::Backend::Slurm];
    cfg.provision = Some(Arc::new(p));
    script(d, "sbatch", &format!("echo \"sbatch $*\" >> {0}/calls\n{sbatch}", d.display()));
    script(d, "scancel", &format!("echo \"scancel $*\" >> {}/calls", d.display()));
    script(d, "squeue", &format!("echo \"squeue $*\" >> {0}/calls\n{squeue}", d.display()));
    let store = crate::store::open(&format!("sqlite://{}/spur.db", d.display())).await.unwrap();
    let hub = Arc::new(crate::audit::Hub::new(Some(store.clone())));
    let admission = Arc::new(Admission::load(cfg.admission.mode, Some(store.clone())).await.unwrap());
    let nodes = Arc::new(NodeService::new(&cfg, Some(store), hub, admission.clone()).await.unwrap());
    let up = Upstream { cfg: cfg.upstream.slurm.clone().unwrap() };
    let held: Arc<Mutex<Vec<u64>>> = Arc::default();
    let h = held.clone();
    let pilots = Pilots::new(nodes.clone(), admission, up, Box::new(move |_| lock(&h).clone()));
    Fx { dir, pilots, nodes, cfg, held }
}

impl Fx {
    /// The node service a restarted controller would have.
    async fn restarted(&self) -> NodeService {
        let store =
            crate::store::open(&format!("sqlite://{}/spur.db", self.dir.path().display())).await.unwrap();
        let hub = Arc::new(crate::audit::Hub::new(Some(store.clone())));
        let admission =
            Arc::new(Admission::load(self.cfg.admission.mode, Some(store.clone())).await.unwrap());
        NodeService::new(&self.cfg, Some(store), hub, admission).await.unwrap()
    }

    fn calls(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.dir.path().join("calls")).unwrap_or_default();
        text.lines().map(str::to_string).collect()
    }
}

#[tokio::test]
async fn a_request_makes_a_persisted_node_and_one_pilot() {
    let f = fx("echo 77").await;
    let req = NodeRequest { definition: "big".into(), count: 1 };
    f.pilots.request(std::slice::from_ref(&req));
    assert_eq!(
        f.pilots.provisioned(0)["big"],
        Provisioned { queued: 1, ..Provisioned::default() },
        "queued counts"
    );
    f.pilots.provision(&req).await;
    assert_eq!(
        f.pilots.provisioned(0)["big"],
        Provisioned { booting: 1, ..Provisioned::default() },
        "now its record counts"
    );
    let calls = f.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(calls[0].contains("--job-name=spur-big-1") && calls[0].contains("-t 61"), "{calls:?}");
    // Held now: its time so far counts.
    let at = f.nodes.pilot_nodes()[0].pilot.requested_ms;
    let shown = &f.nodes.provisioners("big", at + 1_800_000).unwrap().provisioners[0];
    assert_eq!((shown.state.as_str(), shown.node_hours, shown.cost), ("active", 0.5, 0.3));
    let n = f.nodes.node("big-1").unwrap();
    assert_eq!((n.dynamic, n.definitions.as_slice()), (Some(Dynamic::PoweringUp), &["big".to_string()][..]));
    assert_eq!(n.partitions, ["burst"]);
    let p = &f.nodes.pilot_nodes()[0];
    assert_eq!((p.pilot.job.as_deref(), p.registered), (Some("77"), false));
    // Persisted: a restarted controller has it, with its upstream job id.
    let again = f.restarted().await;
    assert_eq!(again.pilot_nodes(), f.nodes.pilot_nodes());
    assert_eq!(again.node("big-1").unwrap().definitions, ["big"]);
}

#[tokio::test]
async fn a_pilot_not_registered_in_time_is_cancelled_and_its_node_deleted() {
    let f = fx("echo 78").await;
    f.pilots.provision(&NodeRequest { definition: "big".into(), count: 1 }).await;
    let at = f.nodes.pilot_nodes()[0].pilot.requested_ms;
    f.pilots.upkeep(at + 59_000).await;
    assert!(f.nodes.node("big-1").is_some(), "within boot_timeout_secs");
    f.pilots.upkeep(at + 60_000).await;
    assert!(f.nodes.node("big-1").is_none());
    assert_eq!(f.calls().last().map(String::as_str), Some("scancel 78"));
    // Its minute counts toward the definition's node-hours and cost (costPerHour 0.6).
    let shown = &f.nodes.provisioners("big", at + 60_000).unwrap().provisioners[0];
    assert_eq!((shown.node_hours * 60.0, shown.cost * 60.0), (1.0, 0.6));
    assert!(f.pilots.provisioned(0).is_empty());
}

#[tokio::test]
async fn a_pilot_late_under_a_configuring_job_goes_down_first_and_is_given_back_after() {
    let f = fx("echo 79").await;
    f.pilots.provision(&NodeRequest { definition: "big".into(), count: 1 }).await;
    let at = f.nodes.pilot_nodes()[0].pilot.requested_ms;
    *lock(&f.held) = vec![5];
    f.pilots.upkeep(at + 60_000).await;
    let n = f.nodes.node("big-1").expect("kept while a job holds it");
    assert!(n.admin.down, "{:?}", n.admin);
    assert_eq!(n.admin.reason.as_ref().map(|r| r.text.as_str()), Some(BOOT_TIMEOUT));
    assert!(!f.calls().iter().any(|c| c.starts_with("scancel")), "{:?}", f.calls());
    // A pass requeued the job (`jobs/boot.rs`): the node is given back.
    lock(&f.held).clear();
    f.pilots.upkeep(at + 61_000).await;
    assert!(f.nodes.node("big-1").is_none());
    assert_eq!(f.calls().last().map(String::as_str), Some("scancel 79"));
}

#[tokio::test]
async fn a_late_pilot_that_cannot_be_cancelled_yet_is_down_so_no_job_is_placed_on_it() {
    let f = fx_with("echo 80", "echo 80").await;
    script(f.dir.path(), "scancel", "echo 'scancel: error: Unable to contact slurm controller' >&2; exit 1");
    f.pilots.provision(&NodeRequest { definition: "big".into(), count: 1 }).await;
    let at = f.nodes.pilot_nodes()[0].pilot.requested_ms;
    f.pilots.upkeep(at + 60_000).await;
    let n = f.nodes.node("big-1").expect("kept while its pilot is still upstream");
    assert!(n.admin.down, "no job holds it, yet it is DOWN: {:?}", n.admin);
}

#[tokio::test]
async fn a_failed_sbatch_leaves_no_node() {
    let f = fx("echo 'sbatch: error: invalid partition' >&2; exit 1").await;
    f.pilots.request(&[NodeRequest { definition: "big".into(), count: 2 }]);
    f.pilots.provision(&NodeRequest { definition: "big".into(), count: 2 }).await;
    assert_eq!(f.calls().len(), 1, "the second node is not tried after the first failed");
    assert!(f.nodes.node("big-1").is_none());
    // The definition backs off for call_timeout_secs (5), naming the command and its error.
    let now = crate::store::now_ms();
    let u = f.pilots.provisioned(now)["big"].unavailable.clone().expect("backing off");
    assert!(u.error.contains("sbatch") && u.error.contains("invalid partition"), "{}", u.error);
    assert!(u.until_ms > now && u.until_ms <= now + 5_000, "{u:?}");
    assert!(f.pilots.provisioned(u.until_ms).is_empty(), "over when the backoff ends");
    // Requests while it backs off ask nothing upstream.
    f.pilots.provision(&NodeRequest { definition: "big".into(), count: 1 }).await;
    assert_eq!(f.calls().len(), 1);
    assert_eq!(super::backoff_ms(5, 2), 10_000);
    assert_eq!(super::backoff_ms(30, 40), 600_000);
}

/// A node stored before the controller stopped, its pilot's id never recorded.
async fn unrecorded(f: &Fx) {
    let pilot = Pilot { definition: "big".into(), job: None, requested_ms: 0, expires_ms: 3_600_000 };
    f.nodes.create_pilot("big-1", 16, 32768, pilot).await.unwrap();
}

#[tokio::test]
async fn a_pilot_found_upstream_after_a_restart_is_recorded_not_submitted_again() {
    let f = fx_with("echo 1", "echo 91; echo 92").await;
    unrecorded(&f).await;
    f.pilots.upkeep(1_000).await;
    assert_eq!(f.calls(), ["squeue -h --name spur-big-1 -o %i", "scancel 92"], "the second one is cancelled");
    assert_eq!(f.nodes.pilot_nodes()[0].pilot.job.as_deref(), Some("91"));
}

#[tokio::test]
async fn a_pilot_missing_upstream_after_a_restart_leaves_no_node() {
    let f = fx_with("echo 1", "true").await;
    unrecorded(&f).await;
    f.pilots.upkeep(1_000).await;
    assert!(f.nodes.node("big-1").is_none());
    assert_eq!(f.calls(), ["squeue -h --name spur-big-1 -o %i"], "nothing submitted or cancelled");
}

#[tokio::test]
async fn a_pilot_that_ended_upstream_is_given_back_though_scancel_fails() {
    let f = fx_with("echo 79", "true").await;
    script(f.dir.path(), "scancel", "echo 'scancel: error: Invalid job id specified' >&2; exit 1");
    f.pilots.provision(&NodeRequest { definition: "big".into(), count: 1 }).await;
    let at = f.nodes.pilot_nodes()[0].pilot.requested_ms;
    f.pilots.upkeep(at + 60_000).await;
    assert!(f.nodes.node("big-1").is_none(), "squeue no longer lists it: deleted");
}

#[tokio::test]
async fn a_borrowed_node_drains_itself_a_minute_before_its_expiry_naming_the_ttl() {
    let f = fx("echo 80").await;
    f.pilots.provision(&NodeRequest { definition: "big".into(), count: 1 }).await;
    // Registered and running a job: neither the boot nor the idle timeout gives it back.
    if let Some(n) = f.nodes.write().nodes.get_mut("big-1") {
        (n.registered, n.running_jobs) = (true, 1);
    }
    let expires = f.nodes.pilot_nodes()[0].pilot.expires_ms;
    f.pilots.upkeep(expires - DRAIN_MARGIN_MS - 1).await;
    assert!(!f.nodes.node("big-1").unwrap().admin.drain, "more than a minute left");
    f.pilots.upkeep(expires - DRAIN_MARGIN_MS).await;
    let reason = f.nodes.node("big-1").unwrap().admin.reason.expect("a reason");
    let want = format!("ttl of slurm definition big ends at {}", spur_vocab::txn::format_time(expires));
    assert_eq!((reason.text.as_str(), reason.user.as_str()), (want.as_str(), "slurm_provisioner"));
    assert_eq!(reason.time_ms, expires - DRAIN_MARGIN_MS, "stamped with the upkeep's now");
    // Once: a later upkeep leaves the drain (and its time) alone.
    f.pilots.upkeep(expires).await;
    assert_eq!(f.nodes.node("big-1").unwrap().admin.reason.unwrap().time_ms, expires - DRAIN_MARGIN_MS);
    // Persisted and audited as the controller's other drains.
    assert!(f.restarted().await.node("big-1").unwrap().admin.drain);
    let store = crate::store::open(&format!("sqlite://{}/spur.db", f.dir.path().display())).await.unwrap();
    let rows = store.list_txn(&crate::store::TxnQuery::default()).await.unwrap();
    let drains: Vec<_> =
        rows.iter().filter(|r| r.entity == "node" && r.info.contains("ttl of slurm")).collect();
    assert_eq!(drains.len(), 1, "{rows:?}");
    assert_eq!(drains[0].name, "big-1");
}

#[tokio::test]
async fn show_provisioner_lists_borrowed_nodes_by_state_and_a_failing_definition_as_unavailable() {
    let f = fx("echo 81").await;
    let req = NodeRequest { definition: "big".into(), count: 1 };
    f.pilots.provision(&req).await;
    let at = f.nodes.pilot_nodes()[0].pilot.requested_ms;
    let node = |f: &Fx, now| f.nodes.provisioners("big", now).unwrap().provisioners[0].borrowed.clone();
    let b = &node(&f, at + 1_800_000)[0];
    assert_eq!((b.name.as_str(), b.state.as_str(), b.upstream_job.as_str()), ("big-1", "booting", "81"));
    assert_eq!(
        (b.expires_ms, b.cost),
        (f.nodes.pilot_nodes()[0].pilot.expires_ms, 0.3),
        "half an hour at 0.6"
    );
    f.nodes.write().nodes.get_mut("big-1").unwrap().registered = true;
    assert_eq!(node(&f, at)[0].state, "active");
    f.nodes.drain_as("big-1", "ttl", "slurm_provisioner", at).await.unwrap();
    assert_eq!(node(&f, at)[0].state, "draining");
    // A failing sbatch: the definition is unavailable, with the error and the retry.
    script(f.dir.path(), "sbatch", "echo 'sbatch: error: invalid partition' >&2; exit 1");
    f.pilots.provision(&req).await;
    let now = crate::store::now_ms();
    let mut out = f.nodes.provisioners("big", now).unwrap();
    f.pilots.mark_unavailable(&mut out, now);
    let p = &out.provisioners[0];
    assert_eq!(p.state, "unavailable");
    assert!(p.unavailable_error.contains("invalid partition"), "{}", p.unavailable_error);
    assert!(p.retry_at_ms > now, "{}", p.retry_at_ms);
}
