//! Host facts end to end: spurd collects the host's, a `--facts` file gives
//! one of its nodes other ones, the controller stores them per node, and
//! `scontrol show node` shows them; a bad facts file stops spurd at once.

use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, ok, wait_for};
use std::path::Path;

/// Numbers no real host has, so a match cannot be the host's own.
const FACTS: &str = r#"
- nodes: node02
  facts:
    cpuinfo.cpu_cores: 4093
    cpuinfo.vendor_id: SimulatedVendor
  modaliases:
    - "pci:v000010DEd00002330sv000010DEsd00001626bc03sc02i00"
    - "pci:v000015B3d00001021sv000015B3sd00000023bc02sc00i00"
- nodes: node[01-02]
  facts: {osrelease.id: simlinux}
"#;

fn start(dir: &Path) -> Controller {
    let cluster = ClusterToml::new()
        .heartbeat(1)
        .nodes("node[01-02]", 2, 4096)
        .partition("batch", "node[01-02]")
        .build();
    let db = format!("sqlite://{}/spur.db", dir.display());
    Controller::start(dir, &conf(&db, &cluster))
}

/// The host's PCI modaliases as spurd counts them: each once.
fn host_modaliases() -> usize {
    let Ok(dir) = std::fs::read_dir("/sys/bus/pci/devices") else { return 0 };
    let mut all: Vec<String> = dir
        .flatten()
        .filter_map(|d| std::fs::read_to_string(d.path().join("modalias")).ok())
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
        .collect();
    all.sort();
    all.dedup();
    all.len()
}

#[test]
fn overridden_and_host_facts_show_on_the_node() {
    let dir = tempfile::tempdir().unwrap();
    let c = start(dir.path());
    let file = dir.path().join("facts.yaml");
    std::fs::write(&file, FACTS).unwrap();
    let _agent = Agent::start_args(&c.url, "node[01-02]", &["--facts", &file.display().to_string()]);
    wait_for("node[01-02] to register", || {
        (ok("sinfo", &c.url, &["-h", "-o", "%t:%D"]).trim() == "idle:2").then_some(())
    });

    let show = ok("scontrol", &c.url, &["show", "node", "node02"]);
    let facts =
        show.lines().find_map(|l| l.trim().strip_prefix("Facts=")).unwrap_or_else(|| panic!("{show}"));
    let facts: Vec<&str> = facts.split(',').collect();
    for want in [
        "cpuinfo.cpu_cores=4093",
        "cpuinfo.vendor_id=SimulatedVendor",
        "osrelease.id=simlinux",
        "uname.sysname=Linux",
    ] {
        assert!(facts.contains(&want), "{want} in {show}");
    }
    assert!(show.contains("\n   Modaliases=2\n"), "the file's list replaces the host's: {show}");
    assert!(show.contains("\n   Definitions=(null)\n"), "{show}");
    let detail = ok("scontrol", &c.url, &["-d", "show", "node", "node02"]);
    assert!(
        detail.contains(
            "ModaliasList=pci:v000010DEd00002330sv000010DEsd00001626bc03sc02i00,\
             pci:v000015B3d00001021sv000015B3sd00000023bc02sc00i00\n"
        ),
        "{detail}"
    );

    // node01 keeps the host's cores and modaliases; only the second entry names it.
    let show = ok("scontrol", &c.url, &["show", "node", "node01"]);
    assert!(show.contains("uname.sysname=Linux") && show.contains("osrelease.id=simlinux"), "{show}");
    assert!(!show.contains("4093") && !show.contains("SimulatedVendor"), "{show}");
    assert!(show.contains(&format!("\n   Modaliases={}\n", host_modaliases())), "{show}");

    let json = ok("scontrol", &c.url, &["--json", "show", "node", "node02"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["nodes"][0]["facts"]["cpuinfo.cpu_cores"], "4093", "{json}");
    assert_eq!(v["nodes"][0]["modaliases"].as_array().map(Vec::len), Some(2), "{json}");
}

#[test]
fn a_bad_facts_file_stops_spurd_naming_the_file_entry_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let c = start(dir.path());
    let refused = |name: &str, text: &str| {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let path = file.display().to_string();
        let (status, stderr) =
            Agent::refused(&["--controller", &c.url, "--nodes", "node[01-02]", "--facts", &path]);
        assert!(!status.success(), "spurd started with {name}: {stderr}");
        (path, stderr)
    };
    let (path, err) = refused("typo.yaml", "- nodes: node01\n- nodes: node02\n  facts: {cpuinfo.cores: 8}\n");
    let want = format!("spurd: error: --facts {path}: entry 2: facts: cpuinfo.cores: not a fact spurd knows");
    assert!(err.contains(&want), "{err}");
    let (path, err) = refused("stray.yaml", "- nodes: node[02-03]\n  facts: {cpuinfo.cpu_cores: 8}\n");
    assert!(err.contains(&format!("{path}: entry 1: nodes: 'node03' is not a node of this spurd")), "{err}");
    let (_, err) = refused("list.yaml", "- nodes: node01\n  facts: {uname.release: [6, 1]}\n");
    assert!(err.contains("entry 1: facts: uname.release: not a scalar"), "{err}");
    // Refused before registering: the controller has no facts for the nodes.
    let show = ok("scontrol", &c.url, &["show", "node", "node01"]);
    assert!(show.contains("\n   Facts=(null)\n") && !show.contains("NodeHostName"), "{show}");
}
