//! `srun --cpu-bind=map_cpu:LIST|mask_cpu:LIST`: the `__exec` trampoline
//! binds a task to its entry (`spur_vocab::cpubind::cpus` reads the list
//! srun sent in `SLURM_CPU_BIND`) before the exec, as Slurm's task/affinity.

/// Binds this process (and what it execs) to `set`.
pub fn apply(set: &[usize]) -> Result<(), String> {
    use nix::sched::{CpuSet, sched_setaffinity};
    let mut cpus = CpuSet::new();
    for &c in set {
        cpus.set(c).map_err(|e| format!("--cpu-bind: CPU {c}: {e}"))?;
    }
    sched_setaffinity(nix::unistd::Pid::from_raw(0), &cpus)
        .map_err(|e| format!("--cpu-bind: cannot bind to CPUs {set:?}: {e}"))
}

/// The binding the environment asks for this task, applied; an error names why it could not be.
pub fn from_env() -> Result<(), String> {
    let Ok(bind) = std::env::var(spur_vocab::cpubind::BIND_ENV) else { return Ok(()) };
    let local = std::env::var("SLURM_LOCALID").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    match spur_vocab::cpubind::cpus(&bind, local)? {
        Some(set) => apply(&set),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_bound_to_its_cpu() {
        apply(&[0]).unwrap();
        let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
        assert!(set.is_set(0).unwrap() && !set.is_set(1).unwrap_or(false));
        assert!(apply(&[100_000]).unwrap_err().starts_with("--cpu-bind: CPU 100000"));
    }
}
