//! sstat's samples: what a step task's processes use now, read from
//! `/proc` when the controller asks (a `SampleSteps` command). A task is its
//! process group (tasks.rs starts each in one of its own), so a sample sums
//! every process in the group: resident and virtual size now and at their
//! peak (VmHWM, VmPeak), CPU time, bytes read and written, major faults.
//! `/proc` is read as it is, with no cgroup needed: a job's cgroup holds
//! all of its steps, where sstat reports each task.

use spur_proto::v1 as pb;
use std::path::Path;

/// Processes one sample reads at most: `/proc` is scanned once per request,
/// and a host has far fewer.
const MAX_PROCS: usize = 1 << 20;

/// One process's figures, as `/proc/PID/{stat,status,io}` give them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    pub pgrp: i32,
    pub rss_bytes: u64,
    pub vsize_bytes: u64,
    pub max_rss_bytes: u64,
    pub max_vsize_bytes: u64,
    pub cpu_ticks: u64,
    pub pages: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// `/proc/PID/stat`'s fields after the command name: (pgrp, majflt, utime+stime, vsize, rss pages).
pub fn parse_stat(text: &str) -> Option<(i32, u64, u64, u64, u64)> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    Some((f.get(2)?.parse().ok()?, n(9)?, n(11)? + n(12)?, n(20)?, n(21)?))
}

/// A `Key:  N kB` line of `/proc/PID/status`, in bytes.
fn status_kb(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// A `key: N` line of `/proc/PID/io`.
fn io_field(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

fn read_proc(dir: &Path, page: u64) -> Option<Proc> {
    let (pgrp, pages, cpu_ticks, vsize_bytes, rss) =
        parse_stat(&std::fs::read_to_string(dir.join("stat")).ok()?)?;
    let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
    // Another user's io file may be unreadable to a non-root agent: no I/O figures then.
    let io = std::fs::read_to_string(dir.join("io")).unwrap_or_default();
    Some(Proc {
        pgrp,
        rss_bytes: rss * page,
        vsize_bytes,
        max_rss_bytes: status_kb(&status, "VmHWM"),
        max_vsize_bytes: status_kb(&status, "VmPeak"),
        cpu_ticks,
        pages,
        read_bytes: io_field(&io, "read_bytes"),
        write_bytes: io_field(&io, "write_bytes"),
    })
}

/// Every process now, from `/proc`.
pub fn processes() -> Vec<Proc> {
    let page = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE).ok().flatten().unwrap_or(4096) as u64;
    let Ok(dir) = std::fs::read_dir("/proc") else { return vec![] };
    dir.flatten()
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .take(MAX_PROCS)
        .filter_map(|e| read_proc(&e.path(), page))
        .collect()
}

/// The sum over the processes of group `pgid`, as one task's use.
pub fn task_use(procs: &[Proc], pgid: i32, ticks_per_sec: u64) -> pb::TaskUse {
    let mut u = pb::TaskUse { pid: u32::try_from(pgid).unwrap_or(0), ..Default::default() };
    let mut ticks = 0u64;
    for p in procs.iter().filter(|p| p.pgrp == pgid) {
        u.rss_bytes += p.rss_bytes;
        u.vsize_bytes += p.vsize_bytes;
        u.max_rss_bytes += p.max_rss_bytes;
        u.max_vsize_bytes += p.max_vsize_bytes;
        u.pages += p.pages;
        u.read_bytes += p.read_bytes;
        u.write_bytes += p.write_bytes;
        ticks += p.cpu_ticks;
    }
    u.cpu_usec = ticks.saturating_mul(1_000_000) / ticks_per_sec.max(1);
    // A peak is never below what is resident now (a kernel without VmHWM reports 0).
    u.max_rss_bytes = u.max_rss_bytes.max(u.rss_bytes);
    u.max_vsize_bytes = u.max_vsize_bytes.max(u.vsize_bytes);
    u
}

/// The clock ticks `/proc/PID/stat`'s times count.
pub fn ticks_per_sec() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok().flatten().map_or(100, |t| t.max(1) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_command_name() {
        // A command name with blanks and parentheses, as a task may set.
        let stat = "4242 (my (odd) job) S 1 4242 4242 0 -1 4194560 100 0 7 0 250 50 0 0 20 0 1 0 \
                    12345 10485760 512 18446744073709551615";
        assert_eq!(parse_stat(stat), Some((4242, 7, 300, 10_485_760, 512)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn a_task_sums_its_process_group() {
        let p = |pgrp, rss, hwm, ticks| Proc {
            pgrp,
            rss_bytes: rss,
            max_rss_bytes: hwm,
            cpu_ticks: ticks,
            read_bytes: 10,
            ..Default::default()
        };
        let procs = [p(7, 100, 150, 50), p(7, 200, 0, 50), p(8, 999, 999, 999)];
        let u = task_use(&procs, 7, 100);
        assert_eq!(
            (u.rss_bytes, u.max_rss_bytes, u.cpu_usec, u.read_bytes, u.pid),
            (300, 300, 1_000_000, 20, 7)
        );
    }

    #[test]
    fn this_process_is_found_in_proc() {
        let me = std::process::id() as i32;
        let pgrp = nix::unistd::getpgrp().as_raw();
        let u = task_use(&processes(), pgrp, ticks_per_sec());
        assert!(u.rss_bytes > 0, "process {me} in group {pgrp}: {u:?}");
    }
}
