//! Three provisioner definitions as `Nodes.ListProvisioners` answers them,
//! over the nodes of `common::nodes()`: a GPU pool, a CPU pool whose
//! condition failed on one node (so it is trouble), and an AWS definition
//! with no driver yet. Shared by the fake Nodes service (`net_cluster.rs`)
//! and the render tests (through `common`).
#![allow(dead_code)]

use spur_proto::v1::{KeyValue, Provisioner};

pub fn sample() -> Vec<Provisioner> {
    let gpu = Provisioner {
        id: "gpu-nodes".into(),
        backend: "static".into(),
        state: "active".into(),
        nodes: "gpu01".into(),
        node_count: 1,
        usable_nodes: 1,
        annotations: vec![KeyValue::new("nvidia.com/gpu.count", "8")],
        condition: "hostname() matches \"gpu[0-9]+\"".into(),
        exclusive: "none".into(),
        cost_per_hour: 2.5,
        ..Default::default()
    };
    // node02 drains and node03 is drained: matched, not usable.
    let cpu = Provisioner {
        id: "cpu-nodes".into(),
        backend: "static".into(),
        state: "active".into(),
        nodes: "gpu01,node[01-03,05]".into(),
        node_count: 5,
        usable_nodes: 3,
        annotations: vec![KeyValue::new("tier", "standard"), KeyValue::new("os", "rocky9")],
        condition: "cpuinfo.cpu_cores >= 16 &&\n  uname.machine == \"x86_64\"\n".into(),
        policy: "job.annotations[\"tier\"] != \"gold\"\n".into(),
        exclusive: "none".into(),
        cost_per_hour: 0.4,
        spec: vec![KeyValue::new("scratch", "/local")],
        condition_errors: vec![KeyValue::new("node04", "cpuinfo.cpu_cores: no such fact")],
        ..Default::default()
    };
    let aws = Provisioner {
        id: "aws-burst".into(),
        backend: "aws".into(),
        state: "no driver".into(),
        annotations: vec![KeyValue::new("region", "us-east-1"), KeyValue::new("spot", "true")],
        policy: "job.annotations[\"tier\"] == \"gold\" ||\n  job.user == \"alice\"\n".into(),
        exclusive: "job".into(),
        cost_per_hour: 3.06,
        ttl: 600,
        ttl_buffer: 60,
        spec: vec![KeyValue::new("instanceType", "t3.*"), KeyValue::new("maxNodes", "8")],
        ..Default::default()
    };
    vec![gpu, cpu, aws]
}

/// What the controller answers for `ListProvisioners{id}`: every definition, or the one named.
pub fn answer(id: &str) -> Vec<Provisioner> {
    sample().into_iter().filter(|p| id.is_empty() || p.id == id).collect()
}
