//! `srun --cpu-bind=map_cpu:LIST|mask_cpu:LIST`: which CPUs a task is
//! bound to, by its local id on the node (wrapping), as Slurm's
//! task/affinity reads the list. srun checks the value with it, and the
//! node's `__exec` trampoline binds the task by it.

/// The variable of the step's environment that carries srun's choice (Slurm's name).
pub const BIND_ENV: &str = "SLURM_CPU_BIND";

/// The CPUs the task of local id `local` is bound to, or None when the
/// variable asks no binding Spur does (`none`, or no variable).
pub fn cpus(bind: &str, local: u32) -> Result<Option<Vec<usize>>, String> {
    let bind = bind.trim();
    let bind = bind.strip_prefix("verbose,").or_else(|| bind.strip_prefix("quiet,")).unwrap_or(bind);
    let (list, mask) = match (bind.strip_prefix("map_cpu:"), bind.strip_prefix("mask_cpu:")) {
        (Some(l), _) => (l, false),
        (_, Some(l)) => (l, true),
        _ => return Ok(None),
    };
    let items: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let Some(item) = items.get(local as usize % items.len().max(1)) else {
        return Err(format!("--cpu-bind={bind}: the list is empty"));
    };
    let number = |s: &str, radix16: bool| {
        let (t, r) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(h) => (h, 16),
            None => (s, if radix16 { 16 } else { 10 }),
        };
        u128::from_str_radix(t, r).map_err(|_| {
            format!("--cpu-bind={bind}: '{s}' is not a CPU {}", if mask { "mask" } else { "id" })
        })
    };
    if mask {
        let m = number(item, true)?;
        let set: Vec<usize> = (0..128).filter(|b| m >> b & 1 == 1).collect();
        if set.is_empty() {
            return Err(format!("--cpu-bind={bind}: mask '{item}' has no CPU"));
        }
        return Ok(Some(set));
    }
    let id = number(item, false)?;
    usize::try_from(id)
        .map(|c| Some(vec![c]))
        .map_err(|_| format!("--cpu-bind={bind}: '{item}' is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_task_takes_its_entry_by_local_id() {
        assert_eq!(cpus("map_cpu:0,2", 0).unwrap(), Some(vec![0]));
        assert_eq!(cpus("map_cpu:0,2", 1).unwrap(), Some(vec![2]));
        assert_eq!(cpus("verbose,map_cpu:0,0x3", 3).unwrap(), Some(vec![3]), "wraps; hex ids");
        assert_eq!(cpus("mask_cpu:0x3,C", 1).unwrap(), Some(vec![2, 3]));
        assert_eq!(cpus("none", 0).unwrap(), None);
        assert_eq!(cpus("cores", 0).unwrap(), None);
        assert!(cpus("map_cpu:x", 0).unwrap_err().contains("'x' is not a CPU id"));
        assert!(cpus("mask_cpu:0", 0).unwrap_err().contains("has no CPU"));
        assert!(cpus("map_cpu:", 0).unwrap_err().contains("empty"));
    }
}
