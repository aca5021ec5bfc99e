//! `scontrol show provisioner [ID]` on a constructed ListProvisioners
//! answer: the Slurm-style record, `-o`, `--json`, an unknown id and no
//! definitions at all; and how the words parse.

use spur_client::cli::scontrol::provisioner::{provisioner_record, show_provisioners};
use spur_client::cli::scontrol::{Command, Flags, parse};
use spur_proto::v1 as pb;

fn pair(key: &str, value: &str) -> pb::KeyValue {
    pb::KeyValue { key: key.into(), value: value.into() }
}

fn gpu_nodes() -> pb::Provisioner {
    pb::Provisioner {
        id: "gpu-nodes".into(),
        backend: "static".into(),
        state: "active".into(),
        nodes: "gpu[01-02]".into(),
        node_count: 2,
        usable_nodes: 2,
        annotations: vec![pair("nvidia.com/gpu.count", "4")],
        condition: "hostname()\n  matches   \"gpu-[0-9]+\"\n".into(),
        exclusive: "none".into(),
        cost_per_hour: 2.5,
        spec: vec![pair("instanceType", "t3.*")],
        ..Default::default()
    }
}

fn answer() -> pb::ListProvisionersResponse {
    let aws = pb::Provisioner {
        id: "aws-burst".into(),
        backend: "aws".into(),
        state: "no driver".into(),
        exclusive: "job".into(),
        policy: "job.annotations[\"tier\"] == \"gold\"".into(),
        ttl: 600,
        ttl_buffer: 60,
        ..Default::default()
    };
    pb::ListProvisionersResponse {
        provisioners: vec![gpu_nodes(), aws],
        file: "/etc/spur/provisioners.yaml".into(),
    }
}

fn args(words: &str) -> Vec<String> {
    words.split_whitespace().map(String::from).collect()
}

#[test]
fn show_provisioner_parses_with_or_without_an_id() {
    let cmd = |w: &str| parse(&args(w)).map(|(_, c)| c);
    assert_eq!(cmd("show provisioner").unwrap(), Command::ShowProvisioners(None));
    assert_eq!(
        cmd("show provisioners gpu-nodes").unwrap(),
        Command::ShowProvisioners(Some("gpu-nodes".into()))
    );
    assert_eq!(cmd("sho prov x").unwrap(), Command::ShowProvisioners(Some("x".into())));
    assert!(cmd("show provisioner a b").unwrap_err().contains("'b'"));
}

#[test]
fn a_definition_prints_as_a_slurm_record_with_its_condition_on_one_line() {
    assert_eq!(
        provisioner_record(&gpu_nodes(), false),
        "ProvisionerId=gpu-nodes Backend=static State=active
   Nodes=gpu[01-02] NodeCnt=2 UsableNodes=2
   CostPerHour=2.50 Exclusive=none TTL=0 TTLBuffer=0
   Annotations=nvidia.com/gpu.count=4
   Condition=hostname() matches \"gpu-[0-9]+\"
   Policy=(null)
   Spec=instanceType=t3.*

"
    );
    let one = provisioner_record(&gpu_nodes(), true);
    assert_eq!(one.lines().count(), 1);
    assert!(
        one.starts_with("ProvisionerId=gpu-nodes Backend=static State=active Nodes=gpu[01-02] "),
        "{one}"
    );
}

#[test]
fn every_definition_or_the_one_named() {
    let f = Flags::default();
    let all = show_provisioners(&answer(), None, &f).unwrap();
    assert!(
        all.starts_with("ProvisionerId=gpu-nodes ") && all.contains("\n\nProvisionerId=aws-burst "),
        "{all}"
    );
    assert!(all.contains("\n   CostPerHour=0.00 Exclusive=job TTL=600 TTLBuffer=60\n"), "{all}");
    assert!(all.contains("\n   Policy=job.annotations[\"tier\"] == \"gold\"\n"), "{all}");
    // A controller that ignored the id still answers with just the one named.
    let one = show_provisioners(&answer(), Some("aws-burst"), &f).unwrap();
    assert!(one.starts_with("ProvisionerId=aws-burst Backend=aws State=no driver\n"), "{one}");
    assert_eq!(one.matches("ProvisionerId=").count(), 1);
    assert_eq!(
        show_provisioners(&answer(), Some("nosuch"), &f).unwrap_err(),
        "provisioner 'nosuch' not found"
    );
    let none = pb::ListProvisionersResponse::default();
    assert_eq!(show_provisioners(&none, None, &f).unwrap(), "No provisioner definitions are configured\n");
    assert!(show_provisioners(&none, Some("x"), &f).is_err());
}

#[test]
fn json_has_snake_case_keys_and_objects_for_pairs() {
    let json = Flags { json: true, ..Flags::default() };
    let v: serde_json::Value =
        serde_json::from_str(&show_provisioners(&answer(), None, &json).unwrap()).unwrap();
    let p = &v["provisioners"][0];
    assert_eq!(
        (&p["id"], &p["backend"], &p["state"]),
        (&"gpu-nodes".into(), &"static".into(), &"active".into())
    );
    assert_eq!(
        (&p["node_count"], &p["usable_nodes"], &p["cost_per_hour"]),
        (&2.into(), &2.into(), &2.5.into())
    );
    assert_eq!(p["annotations"], serde_json::json!({ "nvidia.com/gpu.count": "4" }));
    assert_eq!(p["spec"], serde_json::json!({ "instanceType": "t3.*" }));
    assert_eq!(p["condition"], "hostname()\n  matches   \"gpu-[0-9]+\"\n", "JSON keeps the text as written");
    assert_eq!((&p["condition_errors"], &p["ttl_buffer"]), (&serde_json::json!({}), &0.into()));
    assert_eq!(v["provisioners"][1]["exclusive"], "job");
    let empty = show_provisioners(&pb::ListProvisionersResponse::default(), None, &json).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&empty).unwrap(),
        serde_json::json!({ "provisioners": [] })
    );
}

#[test]
fn a_slurm_definition_shows_its_cost_per_account() {
    let p = pb::Provisioner {
        id: "burst".into(),
        backend: "slurm".into(),
        node_hours: 2.0,
        cost: 0.6,
        account_costs: vec![
            pb::AccountCost { account: "bio".into(), cost: 0.1 },
            pb::AccountCost { account: "phys".into(), cost: 0.25 },
        ],
        ..Default::default()
    };
    let text = provisioner_record(&p, false);
    assert!(text.contains("\n   NodeHours=2.00 Cost=0.60\n   AccountCost=bio:0.10,phys:0.25\n"), "{text}");
    let none = provisioner_record(&pb::Provisioner { account_costs: vec![], ..p.clone() }, false);
    assert!(none.contains("\n   AccountCost=(null)\n"), "{none}");
    let v = spur_client::cli::scontrol::provisioner::provisioner_json(&p);
    assert_eq!(v["account_costs"][1]["account"], "phys");
    assert_eq!(v["account_costs"][1]["cost"], 0.25);
}
