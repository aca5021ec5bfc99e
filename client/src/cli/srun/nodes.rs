//! Which nodes srun's step (and the allocation srun makes) names: `-r N`
//! from the job's list, and `-m`'s own: its default from the environment a
//! batch script or salloc set, and `arbitrary`'s node per task from
//! SLURM_HOSTFILE.

use super::Args;
use spur_proto::v1 as pb;

/// srun's `-m` default from its environment (a batch script's or salloc's
/// `-m`): `SLURM_DISTRIBUTION`, with `SLURM_DIST_PLANESIZE` for `plane`.
pub(super) fn env_distribution(get: &impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let Some(d) = get("SLURM_DISTRIBUTION").filter(|d| !d.is_empty()) else { return Ok(String::new()) };
    let d = match (d.as_str(), get("SLURM_DIST_PLANESIZE")) {
        ("plane", Some(n)) => format!("plane={n}"),
        _ => d,
    };
    let parsed = crate::vocab::distribution::Distribution::parse(&d);
    parsed.map(|d| d.to_string()).map_err(|e| format!("SLURM_DISTRIBUTION: {e}"))
}

/// SLURM_HOSTFILE: a node per task, one a line or comma separated, sent in order.
pub(super) fn hostfile(file: &str) -> Result<String, String> {
    let text =
        std::fs::read_to_string(file).map_err(|e| format!("SLURM_HOSTFILE: cannot read '{file}': {e}"))?;
    // Lines joined by commas: the controller expands each item, brackets and all, in order.
    let names: Vec<&str> = text.lines().map(str::trim).filter(|n| !n.is_empty()).collect();
    if names.is_empty() {
        return Err(format!("SLURM_HOSTFILE: '{file}' names no nodes"));
    }
    Ok(names.join(","))
}

/// `-r N`: the step's nodes are the job's from its node N on (`-N` of them,
/// else one), read from `SLURM_JOB_NODELIST`; with `-w` or `-x`, or outside
/// a job, it is refused, as Slurm's.
pub(super) fn relative(a: &Args, r: u32, env: &[(String, String)]) -> Result<String, String> {
    if !a.spec.nodelist.is_empty() || !a.spec.exclude.is_empty() {
        return Err("--relative cannot be given with --nodelist or --exclude".into());
    }
    let list = env.iter().find(|(k, _)| k == "SLURM_JOB_NODELIST").map(|(_, v)| v.as_str()).unwrap_or("");
    if a.jobid.is_none() || list.is_empty() {
        return Err("--relative needs a job allocation (SLURM_JOB_ID and SLURM_JOB_NODELIST)".into());
    }
    let nodes = crate::vocab::hostlist::expand(list).map_err(|e| format!("SLURM_JOB_NODELIST: {e}"))?;
    let from = r as usize;
    if from >= nodes.len() {
        return Err(format!("--relative={r}: the job has {} node(s), numbered from 0", nodes.len()));
    }
    let want = a.spec.num_nodes.max(1) as usize;
    let to = (from + want).min(nodes.len());
    Ok(crate::vocab::hostlist::compress(&nodes[from..to]))
}

/// Whether `-m` is arbitrary (whatever its other levels).
pub(super) fn arbitrary(spec: &pb::JobSpec) -> bool {
    use crate::vocab::distribution::{Distribution, NodeDist};
    Distribution::parse(&spec.distribution).is_ok_and(|d| d.nodes == NodeDist::Arbitrary)
}

/// The allocation srun makes for `-m arbitrary`: each listed node once (the
/// job's nodes), and a task for each entry unless `-n` says; its step then
/// puts task t on the t-th entry.
pub(super) fn arbitrary_job(spec: &mut pb::JobSpec) -> Result<(), String> {
    if !arbitrary(spec) || spec.nodelist.is_empty() {
        return Ok(());
    }
    use crate::vocab::hostlist::{MAX_HOSTS, MAX_NAME_LEN, compress, expand, expand_in_order};
    let listed =
        expand_in_order(&spec.nodelist, MAX_HOSTS, MAX_NAME_LEN).map_err(|e| format!("--nodelist: {e}"))?;
    spec.nodelist = compress(&expand(&spec.nodelist).map_err(|e| format!("--nodelist: {e}"))?);
    if spec.ntasks == 0 {
        spec.ntasks = u32::try_from(listed.len()).unwrap_or(u32::MAX);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_distribution_s_default_comes_from_the_environment() {
        let env = |pairs: &'static [(&str, &str)]| {
            move |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| v.to_string())
        };
        assert_eq!(env_distribution(&env(&[])).unwrap(), "");
        assert_eq!(env_distribution(&env(&[("SLURM_DISTRIBUTION", "cyclic")])).unwrap(), "cyclic");
        let plane = env(&[("SLURM_DISTRIBUTION", "plane"), ("SLURM_DIST_PLANESIZE", "3")]);
        assert_eq!(env_distribution(&plane).unwrap(), "plane=3");
        let bad = env_distribution(&env(&[("SLURM_DISTRIBUTION", "round")])).unwrap_err();
        assert!(bad.starts_with("SLURM_DISTRIBUTION: --distribution: 'round'"), "{bad}");
    }

    #[test]
    fn an_arbitrary_allocation_holds_each_node_once_and_a_task_an_entry() {
        let mut s = pb::JobSpec {
            distribution: "arbitrary".into(),
            nodelist: "n2,n1,n2".into(),
            ..Default::default()
        };
        arbitrary_job(&mut s).unwrap();
        assert_eq!((s.nodelist.as_str(), s.ntasks), ("n[1-2]", 3));
        let mut s = pb::JobSpec {
            distribution: "arbitrary,Pack".into(),
            nodelist: "n2,n1".into(),
            ..Default::default()
        };
        arbitrary_job(&mut s).unwrap();
        assert_eq!((s.nodelist.as_str(), s.ntasks), ("n[1-2]", 2), "whatever the other levels");
        let mut s = pb::JobSpec { nodelist: "n2,n1,n2".into(), ..Default::default() };
        arbitrary_job(&mut s).unwrap();
        assert_eq!(s.nodelist, "n2,n1,n2", "only for arbitrary");
    }
}
