//! Provisioner definitions end to end: two spurd with different facts
//! files, a provisioners.yaml beside spur.conf, and the jobs the issue names:
//! a GPU job only on the GPU definition's node, an annotation no definition
//! matches pending with the key named, a policy admitting one account and
//! refusing another, and the cheaper of two able definitions used.

use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, fails, ok, wait_for};

const PROVISIONERS: &str = r#"
nodeAnnotations:
  site: test
definitions:
- id: gpu
  provisioner: static
  annotations: {nvidia.com/gpu.count: "4"}
  provisionerSpec:
    condition: modalias.match("pci:v000010DEd*sv*sd*bc03sc*i*")
    costPerHour: 2.5
- id: ml-only
  provisioner: static
  annotations: {pool: ml}
  policy: request.owner.account_id == "ml"
  provisionerSpec:
    condition: hostname() == "cpu01"
    costPerHour: 0.9
- id: cheap
  provisioner: static
  provisionerSpec:
    condition: hostname() == "cpu02" && cpuinfo.cpu_cores >= 2
    costPerHour: 0.1
- id: cloud
  provisioner: aws
  provisionerSpec: {instanceType: t3.large}
"#;

const GPU_FACTS: &str = r#"
- nodes: gpu01
  modaliases:
    - "pci:v000010DEd00002330sv000010DEsd00001626bc03sc02i00"
"#;

const CPU_FACTS: &str = r#"
- nodes: cpu[01-02]
  facts: {cpuinfo.cpu_cores: 16}
  modaliases: []
"#;

struct Env {
    dir: tempfile::TempDir,
    c: Controller,
    _agents: [Agent; 2],
}

impl Env {
    fn start() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n).display().to_string();
        std::fs::write(p("provisioners.yaml"), PROVISIONERS).unwrap();
        std::fs::write(p("gpu-facts.yaml"), GPU_FACTS).unwrap();
        std::fs::write(p("cpu-facts.yaml"), CPU_FACTS).unwrap();
        let toml = ClusterToml::new()
            .heartbeat(1)
            .node_timeout(5)
            .interval(1)
            .nodes("gpu01", 4, 8192)
            .nodes("cpu[01-02]", 4, 8192)
            .partition("batch", "gpu01,cpu[01-02]");
        let db = format!("sqlite://{}/spur.db", dir.path().display());
        let c = Controller::start(dir.path(), &conf(&db, &toml.build()));
        let a = Agent::start_args(&c.url, "gpu01", &["--facts", &p("gpu-facts.yaml")]);
        let b = Agent::start_args(&c.url, "cpu[01-02]", &["--facts", &p("cpu-facts.yaml")]);
        let e = Env { dir, c, _agents: [a, b] };
        wait_for("nodes up", || (e.ok("sinfo", &["-h", "-o", "%t:%D"]).trim() == "idle:3").then_some(()));
        e.ok("sacctmgr", &["-i", "add", "account", "name=ml"]);
        e.ok("sacctmgr", &["-i", "add", "account", "name=physics"]);
        e.ok("sacctmgr", &["-i", "add", "user", "name=root", "account=ml"]);
        e.ok("sacctmgr", &["-i", "add", "user", "name=root", "account=physics"]);
        e
    }

    fn ok(&self, personality: &str, args: &[&str]) -> String {
        ok(personality, &self.c.url, args)
    }

    fn sbatch(&self, args: &[&str]) -> u64 {
        let dir = self.dir.path().display().to_string();
        let mut all = vec!["--parsable", "-D", &dir, "-t", "10"];
        all.extend(args);
        all.extend(["--wrap", "sleep 60"]);
        self.ok("sbatch", &all).trim().parse().expect("a job id")
    }

    /// Waits until the job leaves PENDING or settles on `reason`; its `%T|%N|%r`.
    fn settle(&self, id: u64, reason: &str) -> String {
        wait_for(&format!("job {id} placed or {reason}"), || {
            let s = self.ok("squeue", &["-h", "-j", &id.to_string(), "-o", "%T|%N|%r"]);
            let s = s.trim().to_string();
            (s.starts_with("RUNNING") || s.ends_with(reason)).then_some(s)
        })
    }
}

#[test]
fn jobs_go_only_to_the_definitions_that_admit_them() {
    let e = Env::start();
    let show = e.ok("scontrol", &["show", "node", "gpu01"]);
    assert!(show.contains("Definitions=gpu"), "{show}");
    let prov = e.ok("scontrol", &["show", "provisioner"]);
    for want in ["ProvisionerId=gpu", "Backend=static", "State=active", "ProvisionerId=cloud", "no driver"] {
        assert!(prov.contains(want), "{want} in\n{prov}");
    }
    assert!(fails("scontrol", &e.c.url, &["show", "provisioner", "nosuch"]).contains("nosuch"));

    // A GPU job lands only on the GPU definition's node.
    let gpu = e.sbatch(&["-A", "physics", "--annotation", "nvidia.com/gpu.count=2"]);
    assert_eq!(e.settle(gpu, "-"), format!("RUNNING|gpu01|None"));

    // An annotation no definition matches: pending, the key named.
    let gold = e.sbatch(&["-A", "physics", "--annotation", "tier=gold"]);
    assert!(e.settle(gold, "NoProvisionerDefinition").starts_with("PENDING"));
    let why = e.ok("scontrol", &["explain", "job", &gold.to_string()]);
    assert!(why.contains("annotation tier=gold not matched"), "{why}");
    assert!(why.contains("cloud: aws definitions have no driver"), "{why}");

    // The policy admits ml and refuses physics.
    let ml = e.sbatch(&["-A", "ml", "--annotation", "pool=ml"]);
    assert_eq!(e.settle(ml, "-"), "RUNNING|cpu01|None");
    let phys = e.sbatch(&["-A", "physics", "--annotation", "pool=ml"]);
    assert!(e.settle(phys, "NoProvisionerDefinition").starts_with("PENDING"));
    let why = e.ok("scontrol", &["explain", "job", &phys.to_string()]);
    assert!(why.contains("ml-only: policy is false (request.owner.account_id == \"ml\")"), "{why}");

    // Two definitions can run it (gpu and cheap; ml-only refuses physics): the cheaper is used.
    let any = e.sbatch(&["-A", "physics", "--exclusive"]);
    assert_eq!(e.settle(any, "-"), "RUNNING|cpu02|None");
    e.ok(
        "scancel",
        &[&gpu.to_string(), &gold.to_string(), &ml.to_string(), &phys.to_string(), &any.to_string()],
    );
}

#[test]
fn reconfigure_rereads_the_file_and_keeps_the_running_one_when_it_is_bad() {
    let e = Env::start();
    let path = e.dir.path().join("provisioners.yaml");
    std::fs::write(&path, PROVISIONERS.replace("costPerHour: 0.1", "costPerHour: -1")).unwrap();
    let err = fails("scontrol", &e.c.url, &["reconfigure"]);
    assert!(
        err.contains("provisioners.yaml") && err.contains("'cheap'") && err.contains("costPerHour"),
        "{err}"
    );
    let prov = e.ok("scontrol", &["show", "provisioner", "cheap"]);
    assert!(prov.contains("CostPerHour=0.10"), "the running definitions stay: {prov}");
    std::fs::write(&path, format!("{PROVISIONERS}- id: spare\n  provisioner: static\n  provisionerSpec: {{condition: 'hostname() == \"cpu02\"'}}\n")).unwrap();
    e.ok("scontrol", &["reconfigure"]);
    let spare = e.ok("scontrol", &["show", "provisioner", "spare"]);
    assert!(spare.contains("Nodes=cpu02"), "{spare}");
    let node = e.ok("scontrol", &["show", "node", "cpu02"]);
    assert!(node.contains("Definitions=cheap,spare") && node.contains("site=test"), "{node}");
}
