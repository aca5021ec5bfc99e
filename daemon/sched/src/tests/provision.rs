//! provisioners.yaml: the spec's examples evaluated verbatim, every
//! validation rule, the matchers and the saturating TTL.

use crate::job::{ArrayAsk, Job};
use crate::model::HostFacts;
use crate::provision::{
    Admit, Backend, Compiled, Exclusive, Matcher, Owner, Provision, Why, admit, allocation_ttl,
    first_mismatch, parse, parse_memory, request_context,
};
use std::collections::BTreeSet;

/// A midnight, UTC.
const DAY: i64 = 1_700_006_400_000;

const EXAMPLES: &str = include_str!("../../../../examples/provisioners/spec-examples.yaml");

fn facts(pairs: &[(&str, &str)], modaliases: &[&str]) -> HostFacts {
    HostFacts {
        values: pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        modaliases: modaliases.iter().map(|m| m.to_string()).collect(),
    }
}

fn intel(cores: &str) -> HostFacts {
    facts(
        &[
            ("uname.sysname", "Linux"),
            ("uname.machine", "x86_64"),
            ("osrelease.id", "ubuntu"),
            ("osrelease.version_id", "22.04"),
            ("cpuinfo.vendor_id", "GenuineIntel"),
            ("cpuinfo.cpu_cores", cores),
        ],
        &["pci:v00008086d00004641sv00001D05sd00001174bc06sc00i00"],
    )
}

const NVIDIA: &str = "pci:v000010DEd00001DB6sv000010DEsd00001212bc03sc02i00";

fn holds(cond: &str, node: &str, f: &HostFacts) -> bool {
    Compiled::new(cond).unwrap().truth(&crate::provision::facts_context(node, f)).unwrap()
}

fn examples() -> Provision {
    parse(EXAMPLES, 1).unwrap()
}

#[test]
fn the_spec_examples_load_with_each_backend_and_placeholder() {
    let p = examples();
    let ids: Vec<&str> = p.defs.iter().map(|d| d.id.as_str()).collect();
    assert!(ids.contains(&"aws-${spec.instanceType}-spot"), "{ids:?}");
    assert_eq!(p.defs[0].cost, 0.40);
    assert_eq!(p.defs[4].backend, Backend::Pbs);
    assert_eq!(p.defs[4].exclusive, Exclusive::Job);
    assert_eq!(p.software_tokens["matlab"], 25);
    assert!(p.ignored.contains("nodepool"));
    assert_eq!(p.node_annotations[0], ("cluster.name".to_string(), "hpc-cluster-01".to_string()));
}

#[test]
fn static_conditions_of_the_spec_match_real_facts() {
    let p = examples();
    let by = |id: &str| p.defs.iter().find(|d| d.id == id).unwrap();
    assert!(by("compute-standard").holds("compute-001", &intel("16")).unwrap());
    assert!(!by("compute-standard").holds("compute-001", &intel("8")).unwrap());
    assert!(!by("compute-standard").holds("gpu-01", &intel("16")).unwrap());
    let mut gpu = intel("32");
    gpu.modaliases.push(NVIDIA.into());
    assert!(by("gpu-nodes").holds("gpu-01", &gpu).unwrap());
    assert!(!by("gpu-nodes").holds("gpu-01", &intel("32")).unwrap());
    assert!(by("highmem-nodes").holds("mem-7", &intel("64")).unwrap());
    assert!(!by("highmem-nodes").holds("mem-7", &intel("63")).unwrap());
    assert!(by("dtn").holds("fz-dtn01", &intel("4")).unwrap());
    // Only static definitions have pools.
    assert!(!by("exclusive-compute").holds("anything", &intel("64")).unwrap());
}

#[test]
fn condition_examples_of_the_spec_evaluate() {
    let f = intel("16");
    assert!(holds("osrelease.id == \"ubuntu\" &&\nosrelease.version_id >= \"20.04\"", "n", &f));
    assert!(holds(
        "uname.machine == \"x86_64\" &&\ncpuinfo.vendor_id == \"GenuineIntel\" &&\ncpuinfo.cpu_cores >= 16",
        "n",
        &f
    ));
    let hostnames = "let compute_regex = \"compute-[0-9]{3}\";\nlet gpu_regex = \"gpu-[0-9]{2}\";\nhostname() matches compute_regex || hostname() matches gpu_regex";
    assert!(holds(hostnames, "gpu-07", &f));
    assert!(!holds(hostnames, "login1", &f));
    let mut g = intel("8");
    g.modaliases.push(NVIDIA.into());
    let device = "// Match NVIDIA GPU devices\nmodalias.match(\"pci:v000010DEd*sv*sd*bc03sc*i*\") &&\ncpuinfo.cpu_cores >= 8";
    assert!(holds(device, "x", &g));
    assert!(!holds(device, "x", &intel("8")));
    let complex = "let is_compute_node = hostname() matches \"compute-[0-9]+\";\nlet is_intel_cpu = cpuinfo.vendor_id == \"GenuineIntel\";\nlet is_ubuntu = osrelease.id == \"ubuntu\";\nlet has_enough_cores = cpuinfo.cpu_cores >= 16;\nis_compute_node && is_intel_cpu && is_ubuntu && has_enough_cores";
    assert!(holds(complex, "compute-12", &f));
    assert!(!holds(complex, "compute-12", &intel("12")));
    assert!(holds("uname.nodename == \"sim0001\"", "sim0001", &f), "the node's own name");
}

#[test]
fn a_condition_that_fails_to_evaluate_is_an_error_not_a_match() {
    let p = parse(
        "definitions:\n- id: x\n  provisioner: static\n  provisionerSpec:\n    condition: cpuinfo.cpu_cores > \"a\" + 1\n",
        1,
    );
    let p = p.unwrap();
    assert!(p.defs[0].holds("n1", &intel("4")).is_err());
}

fn owner() -> Owner<'static> {
    Owner { organization: "research", cluster: "spur" }
}

fn request(job: &Job) -> expr::Context {
    request_context(job, &owner())
}

fn policy(src: &str, job: &Job) -> Result<bool, String> {
    let mut ctx = request(job);
    crate::provision::with_now(&mut ctx, super::NOW, 0);
    ctx.insert(
        "definition",
        expr::Value::Map(
            [
                ("nodes".to_string(), expr::Value::Integer(4)),
                ("max_nodes".to_string(), expr::Value::Integer(4)),
            ]
            .into_iter()
            .collect(),
        ),
    );
    Compiled::new(src).unwrap().truth(&ctx)
}

fn gpu_job(gpus: u64) -> Job {
    Job {
        gpus,
        cpus_per_task: 8,
        mem_mb: 65536,
        time_limit: Some(60),
        account: Some("2f0a8f4e-0a16-47d5-b541-05d3f9f44910".into()),
        ..super::job(1, "alice")
    }
}

#[test]
fn policy_examples_of_the_spec_evaluate_against_requests() {
    let j = gpu_job(2);
    assert!(policy("request.owner.organization_id == \"research\" &&\nrequest.owner.account_id in [\"2f0a8f4e-0a16-47d5-b541-05d3f9f44910\", \"c602cf05-7604-4f11-a690-79552b1fdbdd\"]", &j).unwrap());
    let resource = "request.job_resource.cpu.cores <= 32 &&\nrequest.job_resource.mem.bytes <= (256 * 1024 * 1024 * 1024) &&\n!request.job_resource.exclusive";
    assert!(policy(resource, &j).unwrap());
    assert!(!policy(resource, &Job { exclusive: true, ..j.clone() }).unwrap());
    let kind = "request.job_kind == \"job\" &&\nrequest.job_ttl >= 300 &&\nrequest.job_ttl <= 86400";
    assert!(policy(kind, &j).unwrap());
    assert!(!policy(kind, &Job { time_limit: Some(2), ..j.clone() }).unwrap());
    let gpu = "let gpu_count = request.job_resource.devices[\"nvidia.com/gpu\"];\ngpu_count > 0 && gpu_count <= 4 &&\nrequest.owner.organization_id == \"280abb59-b765-4cdd-a538-6ab8f9b7927c\"";
    assert!(!policy(gpu, &j).unwrap(), "another organization");
    assert!(policy("request.job_resource.devices[\"nvidia.com/gpu\"] > 0", &j).unwrap());
    assert!(!policy("request.job_resource.devices[\"nvidia.com/gpu\"] > 0", &gpu_job(0)).unwrap());
    let gate =
        "request.multinode_nodes <= definition.nodes &&\nrequest.task_array_concurrency <= definition.nodes";
    assert!(policy(gate, &j).unwrap());
    assert!(!policy(gate, &Job { num_nodes: 8, ..j.clone() }).unwrap());
    let arr = Job { array: Some(ArrayAsk { pending: 100, throttle: 8, running: 0 }), ..j.clone() };
    assert!(!policy(gate, &arr).unwrap(), "a %8 array on a 4-node pool");
    let multi = "request.multinode_job ?\nrequest.job_resource.cpu.cores >= 4 &&\nrequest.owner.account_id == \"092403fe-12ef-4465-bce4-18292fec13c8\"\n:\nrequest.job_resource.cpu.cores <= 16";
    assert!(policy(multi, &j).unwrap());
    assert!(!policy(multi, &Job { num_nodes: 2, ..j.clone() }).unwrap());
    assert!(policy("request.job_kind == \"internal\"", &j).is_ok_and(|b| !b));
    assert!(policy("request.job_ttl <= 3600", &j).unwrap());
}

#[test]
fn annotation_policies_of_the_spec() {
    let mut j = gpu_job(0);
    j.annotations = vec![("priority".into(), "high".into()), ("project".into(), "proj-a".into())];
    j.email = "ann@ciq.com".into();
    // The spec's `matches "*@ciq.com"` is not a regular expression: it fails to evaluate.
    let spec = "request.job_annotations[\"priority\"] == \"high\" &&\nrequest.job_annotations[\"project\"] in [\"proj-a\", \"proj-b\"] &&\nrequest.owner.email matches \"*@ciq.com\"";
    assert!(policy(spec, &j).is_err());
    assert!(policy(&spec.replace("*@ciq.com", ".*@ciq\\\\.com$"), &j).unwrap());
    let pool = "request.job_annotations[\"nodepool\"] in [\"pbs-small\", \"small\", \"\"]";
    j.annotations.push(("nodepool".into(), "small".into()));
    assert!(policy(pool, &j).unwrap());
}

#[test]
fn time_based_access_reads_the_passes_clock() {
    let src = "let current_hour = time.Now().Hour();\nlet is_business_hours = current_hour >= 9 && current_hour <= 17;\nrequest.job_annotations[\"priority\"] == \"low\" ? !is_business_hours : true";
    let mut j = gpu_job(0);
    j.annotations = vec![("priority".into(), "low".into())];
    let at = |hour: i64| {
        let mut ctx = request(&j);
        crate::provision::with_now(&mut ctx, DAY + hour * 3_600_000, 0);
        Compiled::new(src).unwrap().truth(&ctx).unwrap()
    };
    assert!(!at(10), "low priority waits during business hours");
    assert!(at(20));
}

#[test]
fn matchers_follow_the_spec_table() {
    assert_eq!(Matcher::of("nvidia.com/gpu.model"), Matcher::Substring);
    assert_eq!(Matcher::of("nvidia.com/gpu.product"), Matcher::Substring);
    assert_eq!(Matcher::of("nvidia.com/gpu.memory"), Matcher::Minimum);
    assert_eq!(Matcher::of("nvidia.com/gpu.compute.major"), Matcher::Minimum);
    assert_eq!(Matcher::of("nvidia.com/gpu.count"), Matcher::Minimum);
    for exact in ["nvidia.com/gpu.arch", "nvidia.com/gpu.family", "nvidia.com/gpu.compute.minor", "tier"] {
        assert_eq!(Matcher::of(exact), Matcher::Exact, "{exact}");
    }
    assert!(Matcher::Exact.matches("gold", "gold") && !Matcher::Exact.matches("gold", "Gold"));
    assert!(Matcher::Substring.matches("a100", "NVIDIA-A100-SXM4-80GB"));
    assert!(!Matcher::Substring.matches("h100", "NVIDIA-A100-SXM4-80GB"));
    assert!(Matcher::Minimum.matches("40", "80") && !Matcher::Minimum.matches("81", "80"));
    assert!(Matcher::Minimum.matches("40GiB", "80GiB"));
    assert!(!Matcher::Minimum.matches("lots", "80"));
}

#[test]
fn ignored_and_platform_keys_skip_matching() {
    let job = vec![("nodepool".to_string(), "small".to_string()), ("workflow".to_string(), "w1".to_string())];
    let ignored: BTreeSet<String> = ["nodepool".to_string()].into();
    assert_eq!(first_mismatch(&job, &[], &ignored), None);
    let miss = first_mismatch(&job, &[], &BTreeSet::new()).unwrap();
    assert_eq!((miss.0, miss.1, miss.2), ("nodepool", "small", None));
    let def = vec![("tier".to_string(), "silver".to_string())];
    let job = vec![("tier".to_string(), "gold".to_string())];
    assert_eq!(first_mismatch(&job, &def, &BTreeSet::new()).unwrap().2, Some("silver"));
}

#[test]
fn admit_names_each_refusal() {
    let text = "definitions:\n- id: a\n  provisioner: static\n  policy: request.owner.id == \"bob\"\n  provisionerSpec: {condition: 'true'}\n- id: b\n  provisioner: static\n  annotations: {tier: silver}\n  provisionerSpec: {condition: 'true'}\n- id: c\n  provisioner: aws\n  provisionerSpec: {instanceType: t3.large}\n- id: d\n  provisioner: static\n  annotations: {tier: gold}\n  provisionerSpec: {condition: 'true'}\n";
    let p = parse(text, 1).unwrap();
    let mut j = super::job(1, "alice");
    j.annotations = vec![("tier".into(), "gold".into())];
    let a: Admit = admit(&p, &j, &owner(), &[1, 1, 0, 1], super::NOW);
    assert_eq!(a.candidates, vec![3]);
    assert!(a.needs_definition);
    assert!(matches!(&a.refusals[0].why, Why::Policy { .. }));
    assert!(
        matches!(&a.refusals[1].why, Why::Annotation { key, had: Some(h), .. } if key == "tier" && h == "silver")
    );
    assert!(matches!(&a.refusals[2].why, Why::NoDriver { backend: "aws" }));
    assert_eq!(p.defs[2].id, "c");
}

fn err(text: &str) -> String {
    parse(text, 1).unwrap_err()
}

fn def(body: &str) -> String {
    format!("definitions:\n- {body}\n")
}

#[test]
fn each_validation_rule_names_definition_and_key() {
    let rules: &[(&str, &[&str])] = &[
        ("provisioner: static\n  provisionerSpec: {condition: 'true'}", &["key 'id'", "required"]),
        ("id: a\n  provisionerSpec: {condition: 'true'}", &["'a'", "key 'provisioner'", "required"]),
        ("id: a\n  provisioner: gcp\n  provisionerSpec: {}", &["key 'provisioner'", "'gcp'"]),
        (
            "id: a\n  provisioner: slurm\n  provisionerSpec: {cpu: 1, memory: 1GiB, partition: p}",
            &["key 'ttl'", "above 0"],
        ),
        (
            "id: a\n  provisioner: pbs\n  ttl: 0\n  provisionerSpec: {cpu: 1, memory: 1GiB, queue: q}",
            &["key 'ttl'"],
        ),
        (
            "id: a\n  provisioner: static\n  ttl: 5\n  provisionerSpec: {condition: 'true'}",
            &["key 'ttl'", "static"],
        ),
        (
            "id: a\n  provisioner: static\n  ttlBuffer: 5\n  provisionerSpec: {condition: 'true'}",
            &["key 'ttlBuffer'", "static"],
        ),
        (
            "id: a\n  provisioner: aws\n  ttl: 4294967296\n  provisionerSpec: {instanceType: t3.large}",
            &["key 'ttl'", "4294967295"],
        ),
        (
            "id: a\n  provisioner: aws\n  ttlBuffer: -1\n  provisionerSpec: {instanceType: t3.large}",
            &["key 'ttlBuffer'"],
        ),
        (
            "id: a\n  provisioner: static\n  provisionerSpec: {condition: 'true', costPerHour: -1}",
            &["provisionerSpec.costPerHour", "0 or more"],
        ),
        (
            "id: a\n  provisioner: slurm\n  ttl: 5\n  provisionerSpec: {cpu: 0, memory: 1GiB, partition: p}",
            &["provisionerSpec.cpu", "above 0"],
        ),
        (
            "id: a\n  provisioner: pbs\n  ttl: 5\n  provisionerSpec: {cpu: 2, memory: lots, queue: q}",
            &["provisionerSpec.memory", "32GiB"],
        ),
        (
            "id: a\n  provisioner: static\n  exclusive: node\n  provisionerSpec: {condition: 'true'}",
            &["key 'exclusive'", "none, job, workflow"],
        ),
        ("id: a\n  provisioner: static\n  provisionerSpec: {}", &["provisionerSpec.condition", "required"]),
        ("id: a\n  provisioner: static", &["key 'provisionerSpec'", "required"]),
        (
            "id: a\n  provisioner: slurm\n  ttl: 5\n  provisionerSpec: {cpu: 2, memory: 1GiB}",
            &["provisionerSpec.partition", "required"],
        ),
        (
            "id: a\n  provisioner: pbs\n  ttl: 5\n  provisionerSpec: {cpu: 2, memory: 1GiB}",
            &["provisionerSpec.queue"],
        ),
        ("id: a\n  provisioner: aws\n  provisionerSpec: {}", &["provisionerSpec.instanceType", "required"]),
        (
            "id: a\n  provisioner: coreweave\n  provisionerSpec: {costPerHour: 1}",
            &["provisionerSpec.instanceType"],
        ),
        (
            "id: a\n  provisioner: static\n  provisionerSpec: {condition: 'true', queue: q}",
            &["provisionerSpec.queue", "not a static key"],
        ),
        (
            "id: a-${spec.cpu}\n  provisioner: aws\n  provisionerSpec: {instanceType: t3.large}",
            &["key 'id'", "${spec.cpu}"],
        ),
        (
            "id: a-${spec.instanceType}\n  provisioner: static\n  provisionerSpec: {condition: 'true'}",
            &["key 'id'", "aws and coreweave"],
        ),
        (
            "id: a\n  provisioner: static\n  provisionerSpec: {condition: 'hostname() matches'}",
            &["provisionerSpec.condition", "line 1, column"],
        ),
        (
            "id: a\n  provisioner: static\n  policy: 'request.owner.id =='\n  provisionerSpec: {condition: 'true'}",
            &["key 'policy'", "does not compile"],
        ),
    ];
    for (body, want) in rules {
        let e = err(&def(body));
        for w in *want {
            assert!(e.contains(w), "{body}\n=> {e}\n(wanted {w})");
        }
    }
    let twice = "definitions:\n- id: a\n  provisioner: static\n  provisionerSpec: {condition: 'true'}\n- id: a\n  provisioner: static\n  provisionerSpec: {condition: 'true'}\n";
    assert!(err(twice).contains("defined twice"), "{}", err(twice));
    assert!(err("definitions:\n- id: a\n  provisioner: static\n  color: red\n").contains("color"));
    assert!(err("scheduler:\n  priority: 'user.priority +'\n").contains("scheduler.priority"));
    assert!(err("scheduler:\n  queueDepthh: 3\n").contains("queueDepthh"));
}

#[test]
fn memory_sizes() {
    assert_eq!(parse_memory("32GiB").unwrap(), 32 << 30);
    assert_eq!(parse_memory("64G").unwrap(), 64_000_000_000);
    assert_eq!(parse_memory("512MiB").unwrap(), 512 << 20);
    assert!(parse_memory("0GiB").is_err());
    assert!(parse_memory("32 parsecs").unwrap_err().contains("unknown unit"));
    assert!(parse_memory("99999999999TiB").unwrap_err().contains("too large"));
}

#[test]
fn allocation_ttl_saturates_at_u32_max() {
    let p = parse("definitions:\n- id: a\n  provisioner: aws\n  ttl: 100\n  ttlBuffer: 4294967295\n  provisionerSpec: {instanceType: t3.large}\n- id: b\n  provisioner: aws\n  ttlBuffer: 300\n  provisionerSpec: {instanceType: t3.large}\n- id: s\n  provisioner: static\n  provisionerSpec: {condition: 'true'}\n", 1).unwrap();
    let (a, b, s) = (&p.defs[0], &p.defs[1], &p.defs[2]);
    assert_eq!(allocation_ttl(a, 100, 2), u32::MAX, "the product saturates");
    assert_eq!(allocation_ttl(b, u32::MAX - 500, 2), u32::MAX, "the sum saturates");
    assert_eq!(allocation_ttl(b, u32::MAX - 600, 2), u32::MAX, "exactly at the boundary");
    assert_eq!(allocation_ttl(b, u32::MAX - 601, 2), u32::MAX - 1);
    assert_eq!(allocation_ttl(b, 3600, 4), 3600 + 1200);
    assert_eq!(allocation_ttl(b, 0, 4), 0, "no allocation TTL: nothing added");
    assert_eq!(allocation_ttl(s, 3600, 4), 3600, "static: never");
}
