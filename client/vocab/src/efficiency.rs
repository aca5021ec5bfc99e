//! A job's efficiency as Slurm's `seff` reckons it: the CPU time its
//! processes used against its cores times its wall-clock time, and its
//! largest resident set against the memory it asked for. Pure arithmetic
//! over the figures accounting records (sacct's TotalCPU, Elapsed,
//! AllocCPUS, MaxRSS, ReqMem), shared by `seff` and the console's Queue
//! pane so the two never disagree.

/// Below this share of what it asked for, a job is marked as wasteful
/// (a quarter: the console's mark, and `seff`'s note).
pub const WASTEFUL_PERCENT: f64 = 25.0;

/// How a job asked for memory: Slurm's `--mem` is per node, `--mem-per-cpu` per core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemAsked {
    /// No memory asked for: the efficiency is 0, as `seff` prints it.
    #[default]
    None,
    /// MiB on each node (`--mem`, or `--mem-per-gpu` times the node's GPUs).
    PerNode(u64),
    /// MiB for each core (`--mem-per-cpu`).
    PerCpu(u64),
}

impl MemAsked {
    /// From a job's request (MiB; 0: not given), as Slurm's ReqMem counts it:
    /// `--mem-per-cpu` per core, else `--mem` per node, else `--mem-per-gpu`
    /// times the GPUs on each node.
    pub fn of(mem_mb: u64, mem_per_cpu_mb: u64, mem_per_gpu_mb: u64, gpus_per_node: u32) -> MemAsked {
        if mem_per_cpu_mb > 0 {
            MemAsked::PerCpu(mem_per_cpu_mb)
        } else if mem_mb > 0 {
            MemAsked::PerNode(mem_mb)
        } else if mem_per_gpu_mb > 0 && gpus_per_node > 0 {
            MemAsked::PerNode(mem_per_gpu_mb.saturating_mul(u64::from(gpus_per_node)))
        } else {
            MemAsked::None
        }
    }
}

/// The recorded figures of one job (or one of its steps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// User plus system CPU time of its processes, in microseconds.
    pub cpu_us: u64,
    /// Wall-clock seconds from start to end (to now while it runs).
    pub elapsed_secs: u64,
    /// Cores allocated; 0 reads as 1, as `seff` reads it.
    pub cpus: u32,
    /// Nodes allocated; 0 reads as 1.
    pub nodes: u32,
    /// The largest resident set, in KiB.
    pub max_rss_kb: u64,
    /// The memory asked for.
    pub mem: MemAsked,
}

impl Usage {
    /// Cores, never 0 (seff's rule for a job with none recorded).
    pub fn cores(&self) -> u64 {
        u64::from(self.cpus.max(1))
    }

    /// Nodes, never 0.
    pub fn node_count(&self) -> u64 {
        u64::from(self.nodes.max(1))
    }

    /// CPU time used, in whole seconds (rounded, as `seff` rounds the microseconds).
    pub fn cpu_secs(&self) -> u64 {
        self.cpu_us.saturating_add(500_000) / 1_000_000
    }

    /// Cores times wall-clock seconds: what the CPU time is measured against.
    pub fn core_walltime(&self) -> u64 {
        self.elapsed_secs.saturating_mul(self.cores())
    }

    /// CPU efficiency in percent; 0 for a job with no wall-clock time yet.
    pub fn cpu_percent(&self) -> f64 {
        match self.core_walltime() {
            0 => 0.0,
            wall => self.cpu_secs() as f64 / wall as f64 * 100.0,
        }
    }

    /// The memory asked for in all, in KiB; 0 when none was asked.
    pub fn mem_asked_kb(&self) -> u64 {
        match self.mem {
            MemAsked::None => 0,
            MemAsked::PerNode(mb) => mb.saturating_mul(1024).saturating_mul(self.node_count()),
            MemAsked::PerCpu(mb) => mb.saturating_mul(1024).saturating_mul(self.cores()),
        }
    }

    /// Memory efficiency in percent; 0 when no memory was asked, as in `seff`.
    pub fn mem_percent(&self) -> f64 {
        match self.mem_asked_kb() {
            0 => 0.0,
            asked => self.max_rss_kb as f64 / asked as f64 * 100.0,
        }
    }

    /// Whether the job used under a quarter of what it asked for: of its
    /// CPU, or of its memory where it asked for some. A job with no
    /// wall-clock time yet is not judged.
    pub fn wasteful(&self) -> bool {
        self.core_walltime() > 0
            && (self.cpu_percent() < WASTEFUL_PERCENT
                || (self.mem_asked_kb() > 0 && self.mem_percent() < WASTEFUL_PERCENT))
    }
}

/// `seff`'s time, `[D-]HH:MM:SS`: Slurm's one duration form.
pub use crate::time_impl::format_seconds as time_str;

/// `seff`'s size from KiB: two decimals in the largest unit it reaches
/// (`512.00 KB`, `1.50 GB`); `0.00 MB` for nothing.
pub fn kbytes_str(kb: f64) -> String {
    const UNITS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    if kb <= 0.0 {
        return "0.00 MB".into();
    }
    let mut num = kb;
    let mut unit = 0;
    while unit + 1 < UNITS.len() && num >= 1024.0 {
        num /= 1024.0;
        unit += 1;
    }
    format!("{num:.2} {}B", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used(cpu_s: u64, elapsed: u64, cpus: u32) -> Usage {
        Usage { cpu_us: cpu_s * 1_000_000, elapsed_secs: elapsed, cpus, nodes: 1, ..Default::default() }
    }

    #[test]
    fn cpu_efficiency_is_cpu_time_over_cores_times_wall_clock() {
        let u = used(30, 60, 2);
        assert_eq!(u.core_walltime(), 120);
        assert!((u.cpu_percent() - 25.0).abs() < 1e-9);
        // seff rounds the microseconds to the second.
        let u = Usage { cpu_us: 1_499_999, ..used(0, 10, 1) };
        assert_eq!(u.cpu_secs(), 1);
        assert_eq!(Usage { cpu_us: 1_500_000, ..u }.cpu_secs(), 2);
    }

    #[test]
    fn zero_elapsed_is_zero_percent_and_not_judged() {
        // A job that has not run (or ran under a second) divides by nothing.
        let u = used(5, 0, 4);
        assert_eq!(u.cpu_percent(), 0.0);
        assert!(!u.wasteful());
        // No cores recorded reads as one, as seff reads it.
        assert_eq!(used(10, 10, 0).core_walltime(), 10);
    }

    #[test]
    fn no_memory_asked_is_zero_percent_and_judged_on_cpu_alone() {
        let u = Usage { max_rss_kb: 4096, ..used(60, 60, 1) };
        assert_eq!(u.mem_asked_kb(), 0);
        assert_eq!(u.mem_percent(), 0.0);
        assert!(!u.wasteful(), "full CPU use and no memory asked");
    }

    #[test]
    fn memory_is_per_node_or_per_core() {
        let base = Usage { max_rss_kb: 512 * 1024, nodes: 2, ..used(60, 60, 4) };
        let per_node = Usage { mem: MemAsked::PerNode(1024), ..base };
        assert_eq!(per_node.mem_asked_kb(), 2 * 1024 * 1024);
        assert!((per_node.mem_percent() - 25.0).abs() < 1e-9);
        let per_cpu = Usage { mem: MemAsked::PerCpu(256), ..base };
        assert_eq!(per_cpu.mem_asked_kb(), 4 * 256 * 1024);
        assert!((per_cpu.mem_percent() - 50.0).abs() < 1e-9);
        assert_eq!(MemAsked::of(100, 50, 0, 0), MemAsked::PerCpu(50));
        assert_eq!(MemAsked::of(100, 0, 0, 0), MemAsked::PerNode(100));
        assert_eq!(MemAsked::of(0, 0, 10, 4), MemAsked::PerNode(40));
        assert_eq!(MemAsked::of(0, 0, 10, 0), MemAsked::None);
    }

    #[test]
    fn under_a_quarter_of_cpu_or_memory_is_wasteful() {
        assert!(used(1, 60, 1).wasteful(), "a sleeping job");
        assert!(!used(15, 60, 1).wasteful(), "exactly a quarter is not under it");
        let idle_mem = Usage { max_rss_kb: 1024, mem: MemAsked::PerNode(1024), ..used(60, 60, 1) };
        assert!(idle_mem.wasteful(), "0.1% of its memory");
    }

    #[test]
    fn a_running_job_is_measured_against_its_time_so_far() {
        // Usage is recorded at the end: while it runs the CPU time is 0.
        let running = used(0, 600, 2);
        assert_eq!(running.cpu_percent(), 0.0);
        assert_eq!(time_str(running.core_walltime()), "00:20:00");
    }

    #[test]
    fn seff_s_time_and_size_spellings() {
        assert_eq!(time_str(0), "00:00:00");
        assert_eq!(time_str(86_400 + 3661), "1-01:01:01");
        assert_eq!(kbytes_str(0.0), "0.00 MB");
        assert_eq!(kbytes_str(512.0), "512.00 KB");
        assert_eq!(kbytes_str(1024.0 * 1024.0 * 1.5), "1.50 GB");
    }
}
