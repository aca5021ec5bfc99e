//! The cost of an HRES plugin's pre-run in a pass: 1,000 starts of jobs
//! asking for a resource whose hres/lua pre-run is trivial (the demo's
//! qpu.lua: it returns a payload). Per start the pass builds `job` and `prep` and calls the
//! pre-run in the resource's shared Lua state, under the callback deadline:
//! exactly what `JobService::prerun_starts` does. Divide by 1,000 for the
//! cost of one pre-run. Run with `cargo bench -p spur-daemon --bench hres_plugin`.

use criterion::{Criterion, criterion_group, criterion_main};
use spur_daemon::config::resources::{self, HresConfig};
use spur_daemon::licenses::plugins::Plugins;
use spur_daemon::licenses::prep::{self, Who};
use spur_vocab::licenses::LicenseAlloc;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

const STARTS: u64 = 1_000;

/// The demo's QPU plugin: its pre-run only returns a payload.
const SCRIPT: &str = include_str!("../../examples/demo/qpu.lua");

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qpu.lua");
    std::fs::write(&path, SCRIPT).unwrap();
    let yaml = format!(
        "- resource: qpu\n  mode: MODE_1\n  plugin:\n    type: hres/lua\n    config:\n      - name: path\n        \
         value: {}\n  layers:\n    - layer_name: qpu1\n      nodes: [\"node[001-100]\"]\n      count: -1\n",
        path.display()
    );
    let mut hres = resources::parse(&yaml, &BTreeMap::new(), None).unwrap();
    let plugins = Plugins::start(&mut hres, &HresConfig::default()).unwrap();
    let starts: Vec<(u64, Vec<String>, Vec<LicenseAlloc>)> = (0..STARTS)
        .map(|i| {
            let node = format!("node{:03}", 1 + i % 100);
            let alloc = LicenseAlloc { name: "qpu".into(), count: 1, layers: vec![("qpu1".into(), 1)] };
            (i + 1, vec![node], vec![alloc])
        })
        .collect();
    let mut g = c.benchmark_group("hres_plugin");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("prerun_1000_starts", |b| {
        b.iter(|| {
            for (id, nodes, alloc) in &starts {
                let who = Who {
                    id: *id,
                    user: "root",
                    account: Some("ml"),
                    partition: "batch",
                    time_limit: Some(60),
                };
                let job = prep::job_info(who, nodes, 1_700_000_000_000);
                let mut preps = prep::preps(&plugins, &hres, "qpu:1[mode=fast]", alloc, nodes);
                black_box(plugins.prerun(&job, &mut preps).is_ok());
                black_box(preps);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
