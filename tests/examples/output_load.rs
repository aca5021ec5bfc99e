//! `spur tail -f` of a job whose stdout grows about 10 MB/s for SECS seconds
//! (20 by default), end to end with the real binaries: prints, each second,
//! the bytes the tail has received and the resident memory of spurctld and
//! of the tail client, then their peaks. The controller relays one 64 KiB
//! piece at a time per tail, so its memory should stay flat however fast the
//! file grows; the client holds nothing.
//!
//! `cargo build --release --bins && cargo run --release -p spur-tests --example output_load [-- SECS]`

use spur_tests::cluster::Cluster;
use spur_tests::proc::client;
use std::io::Read;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// VmRSS and VmHWM of a process, in KiB.
fn rss(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn main() {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(20);
    let e = Cluster::two_nodes(|t| t, &[]);
    // 1 MiB of 64-byte lines ten times a second, for `secs` seconds.
    let script = format!(
        "#!/bin/sh\nend=$(( $(date +%s) + {secs} ))\nwhile [ $(date +%s) -lt $end ]; do\n  \
         yes 012345678901234567890123456789012345678901234567890123456789012 | head -c 1048576\n  \
         sleep 0.1\ndone\n"
    );
    let path = e.dir.path().join("grow.sh");
    std::fs::write(&path, script).unwrap();
    let id = e.sbatch(&[path.to_str().unwrap()]);
    e.wait_field(id, "%T", "RUNNING");
    let mut tail = client("spur", &e.c.url, &["tail", "-f", &id.to_string()], &[])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spur tail");
    let got = Arc::new(AtomicU64::new(0));
    let reader = {
        let (got, mut out) = (got.clone(), tail.stdout.take().unwrap());
        std::thread::spawn(move || {
            let mut buf = vec![0; 1 << 16];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                got.fetch_add(n as u64, Ordering::Relaxed);
            }
        })
    };
    let started = Instant::now();
    println!("{:>5} {:>10} {:>14} {:>14}", "secs", "MiB read", "spurctld KiB", "spur tail KiB");
    let (mut ctl_peak, mut tail_peak) = (0, 0);
    while tail.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_secs(1));
        let (ctl, _) = rss(e.c.pid());
        let (cli, cli_hwm) = rss(tail.id());
        ctl_peak = ctl_peak.max(ctl);
        tail_peak = tail_peak.max(cli_hwm);
        let mib = got.load(Ordering::Relaxed) as f64 / (1 << 20) as f64;
        println!("{:>5} {mib:>10.1} {ctl:>14} {cli:>14}", started.elapsed().as_secs());
    }
    reader.join().unwrap();
    let mib = got.load(Ordering::Relaxed) as f64 / (1 << 20) as f64;
    let took = started.elapsed().as_secs_f64();
    println!("read {mib:.1} MiB in {took:.1} s ({:.1} MiB/s)", mib / took);
    let ctl_hwm = e.c.peak_rss_kib().unwrap_or(ctl_peak);
    println!(
        "peak resident: spurctld {ctl_hwm} KiB (VmHWM; {ctl_peak} sampled while tailing), spur tail {tail_peak} KiB"
    );
}
