//! The HRES issue's acceptance with real binaries: the spec's resources.yaml
//! on node[01-32] (one spurd hosts them all), jobs asking with `sbatch -L`,
//! `scontrol show license`, `scontrol update HRESName=`, and HRESDisabled.

use spur_tests::cluster::Cluster;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Controller, fails, ok, wait_for};

fn cluster() -> ClusterToml {
    ClusterToml::new()
        .heartbeat(1)
        .node_timeout(5)
        .interval(1)
        .nodes("node[01-32]", 4, 8192)
        .partition("batch", "node[01-32]")
        .set("licenses", "matlab", 2)
}

const RESOURCES: &str = include_str!("../../examples/hres/resources.yaml");

fn start() -> Cluster {
    start_with(&cluster().build())
}

fn start_with(cluster: &str) -> Cluster {
    let e = Cluster::start(cluster, &[("resources.yaml", RESOURCES)], "node[01-32]", 32);
    e.ok("sacctmgr", "-i add user name=root account=ml");
    e
}

/// sbatch with `sleep 300` and the options in `extra`.
fn sbatch(e: &Cluster, extra: &str) -> u64 {
    let mut args = vec!["--wrap=sleep 300"];
    args.extend(extra.split_whitespace());
    e.sbatch(&args)
}

fn alloc(e: &Cluster, id: u64) -> String {
    let out = e.ok("scontrol", &format!("show job {id}"));
    let at = out.find("LicensesAlloc=").expect("a LicensesAlloc field");
    out[at + "LicensesAlloc=".len()..].split_whitespace().next().unwrap_or_default().to_string()
}

#[test]
fn the_spec_worked_numbers_end_to_end() {
    let e = start();
    let rack1 = "LicenseName=power\n   Total=35000 Used=0 Free=35000 Reserved=0 Remote=no\n   \
        LayerName=rack1 ParentName=row1 Nodes=node[01-08] Mode=3 DisableHRES=false DisableLayer=false \
        ConfTotal=40000 BaseUsage=5000\n   Base=storage:5000\n";
    let shown = e.ok("scontrol", "show license power");
    assert!(shown.starts_with(rack1), "{shown}");
    assert!(e.ok("scontrol", "show license matlab").contains("Total=2 Used=0 Free=2 Reserved=0 Remote=no"));

    // power: 1000 on node[01-16] is charged per node and summed up to the root.
    let power = sbatch(&e, "-L power:1000 -N 16 -w node[01-16]");
    e.wait_field(power, "%T", "RUNNING");
    assert_eq!(alloc(&e, power), "power(rack1*8000,rack2*8000,row1*16000,datacenter*16000):1000");
    let shown = e.ok("scontrol", "show license power");
    assert!(shown.contains("Total=35000 Used=8000 Free=27000"), "{shown}");

    // natural: node[01-04] draws from low1's 100, then top's 50.
    let natural: Vec<u64> = (0..4).map(|_| sbatch(&e, "-L natural:50 -N 4 -w node[01-04]")).collect();
    for id in &natural[..3] {
        e.wait_field(*id, "%T", "RUNNING");
    }
    let allocs: Vec<String> = natural[..3].iter().map(|id| alloc(&e, *id)).collect();
    assert_eq!(allocs.iter().filter(|a| *a == "natural(low1*50):50").count(), 2, "{allocs:?}");
    assert!(allocs.contains(&"natural(top*50):50".to_string()), "{allocs:?}");
    e.wait_field(natural[3], "%r", "Licenses");
    assert_eq!(e.ok("squeue", &format!("-h -j {} -O Licenses", natural[3])).trim(), "natural:50");

    // flat: at most 24 in all, whatever the lower levels hold.
    let flat: Vec<u64> = (0..3).map(|_| sbatch(&e, "-L flat:12")).collect();
    e.wait_field(flat[0], "%T", "RUNNING");
    e.wait_field(flat[1], "%T", "RUNNING");
    e.wait_field(flat[2], "%r", "Licenses");

    // A plain license counts each running holder once.
    let matlab: Vec<u64> = (0..3).map(|_| sbatch(&e, "-L matlab:1")).collect();
    e.wait_field(matlab[0], "%T", "RUNNING");
    e.wait_field(matlab[1], "%T", "RUNNING");
    e.wait_field(matlab[2], "%r", "Licenses");
    assert!(e.ok("scontrol", "show license matlab").contains("Total=2 Used=2 Free=0"));

    // Disabling the root layer leaves no enabled layer for new power jobs.
    e.ok("scontrol", "update HRESName=power LayerName=datacenter DisableLayer=true");
    let blocked = sbatch(&e, "-L power:1");
    e.wait_field(blocked, "%r", "HRESDisabled");
    assert!(e.ok("scontrol", "show license power").contains("LayerName=datacenter ParentName=(null)"));
    assert_eq!(e.field(power, "%T"), "RUNNING", "running jobs are never affected");
    e.ok("scontrol", "update HRESName=power LayerName=datacenter DisableLayer=false");
    e.wait_field(blocked, "%T", "RUNNING");

    // Cancelling releases exactly what was charged.
    e.ok("scancel", &format!("{power},{blocked}"));
    wait_for("power released", || {
        let s = e.ok("scontrol", "show license power");
        s.contains("LayerName=rack2").then_some(()).filter(|_| s.contains("Total=35000 Used=0 Free=35000"))
    });
}

#[test]
fn bad_requests_and_updates_are_one_line_errors() {
    let e = start();
    let url = e.c.url.clone();
    let err = fails("sbatch", &url, &["-L", "qpu:1[mode=a,mode=b]", "--wrap=true"]);
    assert!(err.contains("--licenses:") && err.contains("'mode' is given twice"), "{err}");
    let err = fails("sbatch", &url, &["-L", "matlab:1[x=y]", "--wrap=true"]);
    assert!(err.contains("plugin arguments are only for hierarchical resources"), "{err}");
    let err = fails("sbatch", &url, &["-L", "nosuch:1", "--wrap=true"]);
    assert!(err.contains("no license or resource named 'nosuch'"), "{err}");
    let err = fails("scontrol", &url, &["update", "HRESName=power", "LayerName=rack1", "Count=4000"]);
    assert!(err.contains("below its BaseUsage=5000"), "{err}");
    let err = fails("scontrol", &url, &["update", "HRESName=power", "LayerName=row1", "Nodes=node01"]);
    assert!(err.contains("only leaf layers"), "{err}");
    let err = fails("scontrol", &url, &["update", "HRESName=power", "DisableHRES=yes"]);
    assert!(err.contains("DisableHRES: 'yes' is neither true nor false"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let err = fails("scontrol", &url, &["update", "HRESName=power", "LayerName=rack2", "Nodes=+node17"]);
    assert!(err.contains("'node17' is under leaf 'rack3'"), "{err}");
    e.ok("scontrol", "update HRESName=power LayerName=rack3 Nodes=-node[17-18]");
    e.ok("scontrol", "update HRESName=power LayerName=rack2 Nodes=+node[17-18]");
    let shown = e.ok("scontrol", "show license power");
    assert!(shown.contains("LayerName=rack2 ParentName=row1 Nodes=node[09-18]"), "{shown}");
    assert!(shown.contains("LayerName=row1 ParentName=datacenter Nodes=node[01-18]"), "{shown}");
    let txn = e.ok("sacctmgr", "-n -P show txn Entity=hres format=Where,Info");
    assert!(txn.contains("power/rack2"), "every update is audited: {txn}");
    // A membership change commits its row with the nodes (audit/claim.rs), once.
    let moved = e.ok("sacctmgr", "-n -P show txn Entity=hres Outcome=success format=Where");
    assert_eq!(moved.matches("hres:power/rack3\n").count(), 1, "{moved}");
    assert_eq!(moved.matches("hres:power/rack2\n").count(), 1, "{moved}");
}

#[test]
fn a_restart_keeps_layer_nodes_and_running_charges_but_not_counts() {
    // Nodes stay up through the restart: the agent is not told the new address.
    let e = start_with(&cluster().node_timeout(120).build());
    let id = sbatch(&e, "-L power:1000 -N 2 -w node[09-10]");
    e.wait_field(id, "%T", "RUNNING");
    e.ok("scontrol", "update HRESName=power LayerName=rack2 Nodes=-node16");
    e.ok("scontrol", "update HRESName=power LayerName=rack1 Count=38000 DisableLayer=true");
    // A reconfigure reads resources.yaml again, then the saved layer nodes.
    e.ok("scontrol", "reconfigure");
    let shown = e.ok("scontrol", "show license power");
    assert!(
        shown.contains("ConfTotal=40000 BaseUsage=5000") && !shown.contains("DisableLayer=true"),
        "{shown}"
    );
    assert!(shown.contains("LayerName=rack2 ParentName=row1 Nodes=node[09-15]"), "{shown}");
    e.ok("scontrol", "update HRESName=power LayerName=rack1 Count=38000 DisableLayer=true");
    let Cluster { dir, mut c, .. } = e;
    c.stop();
    let c = Controller::start_with(&c.config);
    let shown = ok("scontrol", &c.url, &["show", "license", "power"]);
    assert!(shown.contains("Total=40000 Used=2000 Free=38000"), "running charges rebuild usage: {shown}");
    assert!(shown.contains("LayerName=rack2 ParentName=row1 Nodes=node[09-15]"), "saved nodes: {shown}");
    assert!(shown.contains("LayerName=row1 ParentName=datacenter Nodes=node[01-15]"), "{shown}");
    assert!(shown.contains("ConfTotal=40000 BaseUsage=5000"), "counts come from resources.yaml: {shown}");
    assert!(!shown.contains("DisableLayer=true"), "{shown}");
    drop(dir);
}
