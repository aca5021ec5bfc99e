//! scontrol's pure half: command parsing (Slurm keywords, abbreviations,
//! key=value pairs) and the key=value record layout, on fake nodes and
//! partitions (no controller).

use spur_client::cli::fmt::natural;
use spur_client::cli::scontrol::show_node::{node_record, select_nodes, show_nodes};
use spur_client::cli::scontrol::show_partition::{partition_record, show_partitions};
use spur_client::cli::scontrol::{Command, Flags, parse};
use spur_client::vocab::txn::format_time;
use spur_proto::v1 as pb;

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

fn cmd(words: &[&str]) -> Result<Command, String> {
    parse(&args(words)).map(|(_, c)| c)
}

fn node(name: &str) -> pb::Node {
    pb::Node {
        name: name.into(),
        base_state: "IDLE".into(),
        cpus: 16,
        alloc_cpus: 4,
        memory_mb: 64000,
        alloc_memory_mb: 1000,
        weight: 1,
        partitions: vec!["batch".into(), "debug".into()],
        running_jobs: 1,
        ..Default::default()
    }
}

#[test]
fn show_takes_slurm_abbreviations_and_flags_anywhere() {
    assert_eq!(cmd(&["show", "node"]).unwrap(), Command::ShowNodes(None));
    assert_eq!(cmd(&["SHO", "nodes", "n[1-2]"]).unwrap(), Command::ShowNodes(Some("n[1-2]".into())));
    assert_eq!(cmd(&["show", "part", "gpu"]).unwrap(), Command::ShowPartitions(Some("gpu".into())));
    assert_eq!(cmd(&["show", "partitions"]).unwrap(), Command::ShowPartitions(None));
    assert_eq!(cmd(&["reconfig"]).unwrap(), Command::Reconfigure);
    let (f, c) = parse(&args(&["show", "-o", "node", "--json"])).unwrap();
    assert!(f.oneliner && f.json);
    assert_eq!(c, Command::ShowNodes(None));
    assert_eq!(cmd(&["--help"]).unwrap(), Command::Help);
}

#[test]
fn update_keys_are_case_insensitive_and_values_keep_spaces() {
    let want =
        Command::UpdateNodes { nodes: "n[1-2]".into(), state: "drain".into(), reason: "hw fault".into() };
    assert_eq!(cmd(&["update", "nodename=n[1-2]", "state=drain", "reason=hw fault"]).unwrap(), want);
    assert_eq!(cmd(&["update", "NodeName=n[1-2]", "State=DRAIN", "Reason=\"hw", "fault\""]).unwrap(), want);
    let resume = cmd(&["update", "NODENAME=n1", "STATE=resume"]).unwrap();
    assert_eq!(
        resume,
        Command::UpdateNodes { nodes: "n1".into(), state: "resume".into(), reason: String::new() }
    );
}

#[test]
fn errors_name_the_problem() {
    let err = |w: &[&str]| cmd(w).unwrap_err();
    assert!(err(&["update", "nodename=n1", "colour=5"]).contains("unknown key 'colour'"));
    // Slurm's keys that spur.conf owns: nothing to send (each warned about).
    assert_eq!(cmd(&["update", "nodename=n1", "weight=5"]), Ok(Command::Nothing));
    assert_eq!(cmd(&["update", "partitionname=gpu", "state=down"]), Ok(Command::Nothing));
    assert!(err(&["update", "nodename=n1", "reason=x"]).contains("State= is required"));
    assert!(err(&["update", "nodename=n1", "state=drain", "reason=hw", "fault"]).contains("'fault'"));
    assert!(err(&["update", "nodename=n[3-1]", "state=idle"]).contains("backwards"));
    assert!(err(&["update", "jobid=5", "weight=1"]).contains("'weight'"));
    assert!(err(&["show", "job", "x"]).contains("'x'"));
    assert!(err(&["uhold", "5"]).contains("uhold is not available"));
    assert!(err(&["suspend", "5"]).contains("job commands"));
    assert!(err(&["version"]).contains("version is not available"));
    assert_eq!(cmd(&["ping"]), Ok(Command::Ping));
    assert!(err(&["ping", "now"]).contains("'now'"));
    assert!(err(&["frobnicate"]).contains("'frobnicate'"));
    assert!(err(&["show", "widgets"]).contains("'widgets'"));
    assert!(err(&["show"]).contains("node, partition"));
    assert!(err(&["show", "node", "a", "b"]).contains("'b'"));
    assert!(err(&["reconfigure", "now"]).contains("'now'"));
    assert!(err(&["--bogus", "show", "node"]).contains("'--bogus'"));
    assert!(err(&[]).contains("no command"));
}

#[test]
fn node_record_matches_slurm_layout() {
    let n = pb::Node {
        gres: "gpu:4".into(),
        gres_used: "gpu:1".into(),
        features: vec!["gpu".into(), "ib".into()],
        agent_host: "host1".into(),
        drain: true,
        reason: "hw fault".into(),
        reason_user: "alice".into(),
        reason_time_ms: 1_700_000_000_000,
        ..node("gpu01")
    };
    let t = format_time(1_700_000_000_000);
    let want = format!(
        "NodeName=gpu01\n   CPUAlloc=4 CPUTot=16\n   AvailableFeatures=gpu,ib\n   ActiveFeatures=gpu,ib\n   \
         Gres=gpu:4\n   GresUsed=gpu:1\n   NodeHostName=host1\n   RealMemory=64000 AllocMem=1000\n   \
         State=IDLE+DRAIN Weight=1\n   Partitions=batch,debug\n   Definitions=(null)\n   \
         Annotations=(null)\n   Facts=(null)\n   Modaliases=0\n   Reason=hw fault [alice@{t}]\n\n"
    );
    assert_eq!(node_record(&n, &Flags::default()), want);
    let one = node_record(&n, &Flags { oneliner: true, ..Flags::default() });
    assert!(one.ends_with(&format!("Modaliases=0 Reason=hw fault [alice@{t}]\n")), "{one}");
    assert_eq!(one.lines().count(), 1);
}

#[test]
fn reason_lines_and_missing_values_follow_slurm() {
    let n = pb::Node { reason: "first\nsecond".into(), partitions: vec![], ..node("n1") };
    let out = node_record(&n, &Flags::default());
    assert!(out.contains("AvailableFeatures=(null)\n   ActiveFeatures=(null)\n   Gres=(null)\n"), "{out}");
    // No time: no [user@time]; later lines are indented seven more, as Slurm does.
    assert!(out.ends_with("   Reason=first\n          second\n\n"), "{out}");
    assert!(!out.contains("Partitions=") && !out.contains("GresUsed") && !out.contains("NodeHostName"));
    let idle_gpu = pb::Node { gres: "gpu:a100:4,nic:1".into(), ..node("g1") };
    assert!(
        node_record(&idle_gpu, &Flags { oneliner: true, ..Flags::default() })
            .contains(" Gres=gpu:a100:4,nic:1 GresUsed=gpu:a100:0,nic:0 ")
    );
}

fn kv(key: &str, value: &str) -> pb::KeyValue {
    pb::KeyValue { key: key.into(), value: value.into() }
}

#[test]
fn facts_definitions_and_annotations_come_before_the_reason() {
    let n = pb::Node {
        definitions: vec!["gpu-a100".into(), "amd".into()],
        annotations: vec![kv("rack", "r1"), kv("owner", "ml")],
        facts: vec![kv("cpuinfo.cpu_cores", "64"), kv("uname.sysname", "Linux")],
        modaliases: vec!["pci:v10DE".into(), "pci:v8086".into()],
        reason: "checking".into(),
        ..node("gpu01")
    };
    let out = node_record(&n, &Flags::default());
    let want = "   Partitions=batch,debug\n   Definitions=gpu-a100,amd\n   Annotations=rack=r1,owner=ml\n   \
                Facts=cpuinfo.cpu_cores=64,uname.sysname=Linux\n   Modaliases=2\n   Reason=checking\n\n";
    assert!(out.ends_with(want), "{out}");
    assert!(!out.contains("ModaliasList"), "the list is for -d: {out}");
    let (f, _) = parse(&args(&["-d", "show", "node"])).unwrap();
    assert!(f.details);
    assert!(node_record(&n, &f).contains("   Modaliases=2\n   ModaliasList=pci:v10DE,pci:v8086\n"));
    assert!(node_record(&node("n1"), &f).contains("   Modaliases=0\n   ModaliasList=(null)\n"));
    let v: serde_json::Value =
        serde_json::from_str(&show_nodes(&[&n], &Flags { json: true, ..Flags::default() })).unwrap();
    let j = &v["nodes"][0];
    assert_eq!(j["definitions"], serde_json::json!(["gpu-a100", "amd"]));
    assert_eq!(j["annotations"], serde_json::json!({"rack": "r1", "owner": "ml"}));
    assert_eq!(j["facts"]["cpuinfo.cpu_cores"], "64");
    assert_eq!(j["modaliases"], serde_json::json!(["pci:v10DE", "pci:v8086"]));
}

#[test]
fn partition_record_matches_slurm_layout() {
    let p = pb::Partition {
        name: "batch".into(),
        nodes: "n[01-10]".into(),
        is_default: true,
        max_time_minutes: Some(2880),
        default_time_minutes: Some(60),
        priority_tier: 2,
        preempt_mode: "requeue".into(),
        preempt_exempt_time_secs: Some(300),
        state: "UP".into(),
        total_nodes: 10,
        total_cpus: 160,
    };
    assert_eq!(
        partition_record(&p, false),
        "PartitionName=batch\n   Default=YES DefaultTime=01:00:00 MaxTime=2-00:00:00\n   Nodes=n[01-10]\n   \
         PriorityTier=2 PreemptMode=REQUEUE PreemptExemptTime=00:05:00\n   \
         State=UP TotalCPUs=160 TotalNodes=10\n\n"
    );
    let bare = pb::Partition { name: "x".into(), state: "DOWN".into(), ..Default::default() };
    assert_eq!(
        partition_record(&bare, true),
        "PartitionName=x Default=NO DefaultTime=NONE MaxTime=UNLIMITED Nodes=(null) \
         PriorityTier=0 PreemptMode=OFF PreemptExemptTime=NONE State=DOWN TotalCPUs=0 TotalNodes=0\n"
    );
}

#[test]
fn unknown_names_are_errors_naming_them() {
    let all = vec![node("n1"), node("n2")];
    assert_eq!(select_nodes(&all, Some("n2")).unwrap()[0].name, "n2");
    assert_eq!(select_nodes(&all, None).unwrap().len(), 2);
    assert_eq!(select_nodes(&all, Some("n[2-3]")).unwrap_err(), "node 'n3' not found");
    assert!(select_nodes(&all, Some("n[3-4]")).unwrap_err().contains("'n[3-4]'"));
    let parts = vec![pb::Partition { name: "batch".into(), ..Default::default() }];
    assert_eq!(
        show_partitions(&parts, Some("gpu"), &Flags::default()).unwrap_err(),
        "partition 'gpu' not found"
    );
    assert_eq!(show_partitions(&[], None, &Flags::default()).unwrap(), "No partitions in the system\n");
    assert_eq!(show_nodes(&[], &Flags::default()), "No nodes in the system\n");
}

#[test]
fn json_output_carries_the_fields() {
    let f = Flags { json: true, ..Flags::default() };
    let n = node("n1");
    let v: serde_json::Value = serde_json::from_str(&show_nodes(&[&n], &f)).unwrap();
    assert_eq!(v["nodes"][0]["name"], "n1");
    assert_eq!(v["nodes"][0]["state"], "IDLE");
    assert_eq!(v["nodes"][0]["alloc_cpus"], 4);
    assert_eq!(v["nodes"][0]["reason_time"], serde_json::Value::Null);
    let parts = vec![pb::Partition { name: "batch".into(), is_default: true, ..Default::default() }];
    let v: serde_json::Value = serde_json::from_str(&show_partitions(&parts, None, &f).unwrap()).unwrap();
    assert_eq!(v["partitions"][0]["default"], true);
}

#[test]
fn hostnames_sort_naturally() {
    let mut v = vec!["n10", "n9", "m1", "n01x"];
    v.sort_by(|a, b| natural(a, b));
    assert_eq!(v, ["m1", "n01x", "n9", "n10"]);
}
