//! `spur tail -f` of a job whose stdout grows about 10 MB/s for SECS seconds
//! (20 by default), end to end with the real binaries: prints, each second,
//! the bytes the tail has received and the resident memory of spurctld and
//! of the tail client, then their peaks. The controller relays one 64 KiB
//! piece at a time per tail, so its memory should stay flat however fast the
//! file grows; the client holds nothing.
//!
//! With `--console`, `spur-console` (in tmux, 200x50) follows the same job's
//! stdout with `o` meanwhile, and its resident memory is printed too: its
//! view keeps a bounded ring of lines, so it should stay flat (under 100 MiB).
//!
//! `cargo build --release --bins && cargo run --release -p spur-tests --example output_load [-- SECS] [--console]`

use spur_tests::cluster::Cluster;
use spur_tests::proc::{client, status_kib};
use spur_tests::tmux::Tmux;
use std::io::Read;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// VmRSS and VmHWM of a process, in KiB.
fn rss(pid: u32) -> (u64, u64) {
    let kib = |key| status_kib(pid, key).unwrap_or(0);
    (kib("VmRSS:"), kib("VmHWM:"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let secs: u64 = args.iter().find_map(|s| s.parse().ok()).unwrap_or(20);
    let with_console = args.iter().any(|a| a == "--console");
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
    let console = with_console.then(|| follow_in_console(&e, id));
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
    println!(
        "{:>5} {:>10} {:>14} {:>14} {:>14}",
        "secs", "MiB read", "spurctld KiB", "spur tail KiB", "console KiB"
    );
    let (mut ctl_peak, mut tail_peak, mut console_peak) = (0, 0, 0);
    while tail.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_secs(1));
        let (ctl, _) = rss(e.c.pid());
        let (cli, cli_hwm) = rss(tail.id());
        let (con, con_hwm) = console.as_ref().map_or((0, 0), |(_, pid)| rss(*pid));
        ctl_peak = ctl_peak.max(ctl);
        tail_peak = tail_peak.max(cli_hwm);
        console_peak = console_peak.max(con_hwm);
        let mib = got.load(Ordering::Relaxed) as f64 / (1 << 20) as f64;
        println!("{:>5} {mib:>10.1} {ctl:>14} {cli:>14} {con:>14}", started.elapsed().as_secs());
    }
    reader.join().unwrap();
    let mib = got.load(Ordering::Relaxed) as f64 / (1 << 20) as f64;
    let took = started.elapsed().as_secs_f64();
    println!("read {mib:.1} MiB in {took:.1} s ({:.1} MiB/s)", mib / took);
    let ctl_hwm = e.c.peak_rss_kib().unwrap_or(ctl_peak);
    println!(
        "peak resident: spurctld {ctl_hwm} KiB (VmHWM; {ctl_peak} sampled while tailing), spur tail {tail_peak} KiB"
    );
    if let Some((tmux, _)) = console {
        let screen = tmux.screen();
        println!(
            "console peak resident: {console_peak} KiB (VmHWM); its view's title: {:?}",
            screen.lines().next()
        );
        tmux.run(&["kill-server"]);
    }
}

/// spur-console in tmux at 200x50, following job `id`'s stdout (`o` on its
/// Queue row); the tmux and the console's pid (the child of the pane's shell).
fn follow_in_console(e: &Cluster, id: u64) -> (Tmux, u32) {
    let tmux = Tmux::console(e.dir.path(), &["--controller", &e.c.url], (200, 50));
    let sid = id.to_string();
    let row = |s: &str| s.lines().any(|l| l.split_whitespace().next() == Some(sid.as_str()));
    tmux.wait("the running job in the Queue", |s| s.contains("connected") && row(s));
    // The row may be drawn a frame before it is selectable: `o` again until the view opens.
    let title = format!("job {id} stdout");
    tmux.wait("the job's stdout in the view", |s| {
        let open = s.contains(&title);
        if !open {
            tmux.keys(&["o"]);
        }
        open
    });
    // The pane runs a shell that runs the console: its child.
    let pane = tmux.run(&["list-panes", "-t", "console", "-F", "#{pane_pid}"]).stdout;
    let pane = String::from_utf8_lossy(&pane).trim().to_string();
    let child = std::process::Command::new("pgrep").args(["-P", &pane]).output().expect("pgrep");
    let pid = String::from_utf8_lossy(&child.stdout).lines().next().unwrap_or("").parse();
    let pid = pid.expect("the console's pid");
    (tmux, pid)
}
