//! The cost of hierarchical resources inside one pure scheduler pass: 10,000
//! pending jobs on node[01-32] with the spec's three resources (flat, Mode 2;
//! natural, Mode 1; power, Mode 3), each job asking for one to three of them,
//! against the same queue asking for none. The difference is the HRES cost.
//! Run with `cargo bench -p spur-daemon --bench hres`.

use criterion::{Criterion, criterion_group, criterion_main};
use spur_daemon::config::resources;
use spur_daemon::model::Partition;
use spur_daemon::sched::{Job, SchedConfig, SchedNode, Snapshot, schedule};
use spur_vocab::names::PreemptMode;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

const NOW: i64 = 1_700_000_000_000;
const SPEC: &str = include_str!("../../examples/hres/resources.yaml");

fn snapshot(pending: usize, with_hres: bool) -> Snapshot {
    let nodes: Vec<SchedNode> =
        (1..=32).map(|i| SchedNode::idle(&format!("node{i:02}"), 128, 512_000, 0)).collect();
    let part = Partition {
        name: "batch".into(),
        nodes: nodes.iter().map(|n| n.name.clone()).collect(),
        is_default: true,
        max_time: None,
        default_time: None,
        priority_tier: 1,
        preempt_mode: PreemptMode::Off,
        preempt_exempt_time: None,
        state: "UP".into(),
    };
    let asks = [("flat", 1), ("natural", 2), ("power", 500)];
    let jobs = (0..pending as u64)
        .map(|id| {
            let mut j = Job::new(id + 1, &format!("user{}", id % 50), "batch");
            j.submit_ms = NOW - id as i64;
            j.time_limit = Some(60);
            j.num_nodes = 1 + (id % 3) as u32;
            if with_hres {
                let k = 1 + (id % 3) as usize;
                j.licenses = asks
                    .iter()
                    .cycle()
                    .skip(id as usize % 3)
                    .take(k)
                    .map(|(n, c)| (n.to_string(), *c))
                    .collect();
            }
            j
        })
        .collect();
    let hres = resources::parse(SPEC, &BTreeMap::new(), None).expect("the spec example parses");
    Snapshot {
        nodes,
        partitions: vec![part],
        jobs,
        hres: Arc::new(hres),
        config: SchedConfig { accounting_enabled: false, ..SchedConfig::default() },
        ..Snapshot::default()
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("hres_pass");
    g.sample_size(20).measurement_time(Duration::from_secs(8));
    for (label, with) in [("10k_pending_3_resources", true), ("10k_pending_no_licenses", false)] {
        let snap = snapshot(10_000, with);
        g.bench_function(label, |b| b.iter(|| black_box(schedule(black_box(&snap), NOW))));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
