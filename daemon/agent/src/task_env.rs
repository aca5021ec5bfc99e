//! What each task of a step adds for itself on its node, over the step's
//! environment the controller built (srun's OUTPUT ENVIRONMENT VARIABLES).

/// What task `global` (the `local`th on its node, node `node_index` of the
/// step, named `node`) adds to the step's environment.
pub fn task_env(
    node_index: u32,
    node: &str,
    local: u32,
    global: u32,
    gtids: &[u32],
) -> [(&'static str, String); 5] {
    let gtids = gtids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    [
        ("SLURM_PROCID", global.to_string()),
        ("SLURM_LOCALID", local.to_string()),
        ("SLURM_NODEID", node_index.to_string()),
        ("SLURMD_NODENAME", node.to_string()),
        ("SLURM_GTIDS", gtids),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_task_gets_its_ids_and_its_node() {
        let t = task_env(1, "n2", 0, 2, &[2]);
        let get = |k: &str| t.iter().find(|(key, _)| *key == k).map(|(_, v)| v.as_str());
        for (k, want) in
            [("SLURM_PROCID", "2"), ("SLURM_LOCALID", "0"), ("SLURM_NODEID", "1"), ("SLURMD_NODENAME", "n2")]
        {
            assert_eq!(get(k), Some(want), "{k}");
        }
        assert_eq!(task_env(0, "n1", 1, 1, &[0, 1])[4].1, "0,1");
    }
}
