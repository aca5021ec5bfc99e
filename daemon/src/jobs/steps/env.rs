//! Slurm's step environment (srun's OUTPUT ENVIRONMENT VARIABLES): what
//! every task of a step gets over srun's exported environment, built once
//! by the controller ([`step_env`]). What each task adds for itself on its
//! node is the agent's (`spur_agent::task_env`).

use super::layout::{Shape, tasks_per_node};
use crate::jobs::record::JobRecord;
use spur_vocab::hostlist;

/// srun's exported environment `base`, then the job's and the step's
/// `SLURM_*` over it (so a step of a job started from inside another job
/// sees its own ids).
pub fn step_env(j: &JobRecord, step: u32, s: &Shape, base: &[(String, String)]) -> Vec<(String, String)> {
    let job_nodes = u32::try_from(j.nodes.len()).unwrap_or(u32::MAX);
    let cpus = j.alloc.0.to_string();
    let nodelist = hostlist::compress(&s.nodes);
    let nnodes = s.nodes.len().to_string();
    let ntasks = s.ntasks().to_string();
    let per_node = tasks_per_node(&s.tasks);
    let id = j.id.to_string();
    let mut vars: Vec<(&str, String)> = vec![
        ("SPUR_JOB_ID", id.clone()),
        ("SLURM_JOB_ID", id.clone()),
        ("SLURM_JOBID", id),
        ("SLURM_JOB_NAME", j.name.clone()),
        ("SLURM_JOB_USER", j.user.clone()),
        ("SLURM_JOB_PARTITION", j.partition.clone()),
        ("SLURM_JOB_ACCOUNT", j.account.clone().unwrap_or_default()),
        ("SLURM_JOB_QOS", j.qos.clone().unwrap_or_default()),
        ("SLURM_JOB_NODELIST", hostlist::compress(&j.nodes)),
        ("SLURM_JOB_NUM_NODES", job_nodes.to_string()),
        (
            "SLURM_JOB_CPUS_PER_NODE",
            if job_nodes <= 1 { cpus.clone() } else { format!("{cpus}(x{job_nodes})") },
        ),
        ("SLURM_CPUS_ON_NODE", cpus),
        ("SLURM_STEP_ID", step.to_string()),
        ("SLURM_STEPID", step.to_string()),
        ("SLURM_NTASKS", ntasks.clone()),
        ("SLURM_NPROCS", ntasks.clone()),
        ("SLURM_NNODES", nnodes.clone()),
        ("SLURM_NODELIST", nodelist.clone()),
        ("SLURM_STEP_NODELIST", nodelist),
        ("SLURM_STEP_NUM_NODES", nnodes),
        ("SLURM_STEP_NUM_TASKS", ntasks),
        ("SLURM_STEP_TASKS_PER_NODE", per_node.clone()),
        ("SLURM_TASKS_PER_NODE", per_node),
        ("SLURM_CPUS_PER_TASK", s.cpus_per_task.to_string()),
    ];
    vars.extend(s.dist.env_vars());
    if s.mem_mb > 0 {
        vars.push(("SLURM_MEM_PER_NODE", s.mem_mb.to_string()));
    }
    if !j.workdir.is_empty() && !base.iter().any(|(k, _)| k == "SLURM_SUBMIT_DIR") {
        vars.push(("SLURM_SUBMIT_DIR", j.workdir.clone()));
    }
    let mut env: Vec<(String, String)> =
        base.iter().filter(|(k, _)| !vars.iter().any(|(v, _)| v == k)).cloned().collect();
    env.extend(vars.into_iter().map(|(k, v)| (k.to_string(), v)));
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(env: &'a [(String, String)], k: &str) -> Option<&'a str> {
        env.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str())
    }

    #[test]
    fn every_task_gets_slurms_step_variables_over_sruns_environment() {
        let j = JobRecord {
            id: 12,
            name: "train".into(),
            user: "alice".into(),
            partition: "batch".into(),
            nodes: vec!["n1".into(), "n2".into(), "n3".into()],
            alloc: (4, 0, 0),
            workdir: "/home/alice".into(),
            ..JobRecord::default()
        };
        let s = Shape::block(vec!["n1".into(), "n2".into()], &[2, 1], 1, 512);
        let base = vec![
            ("PATH".to_string(), "/bin".to_string()),
            ("SLURM_STEP_ID".to_string(), "7".to_string()),
            ("SLURM_JOB_ID".to_string(), "99".to_string()),
        ];
        let env = step_env(&j, 3, &s, &base);
        for (k, want) in [
            ("PATH", "/bin"),
            ("SLURM_JOB_ID", "12"),
            ("SLURM_STEP_ID", "3"),
            ("SLURM_STEPID", "3"),
            ("SLURM_NTASKS", "3"),
            ("SLURM_NPROCS", "3"),
            ("SLURM_STEP_NUM_TASKS", "3"),
            ("SLURM_STEP_NODELIST", "n[1-2]"),
            ("SLURM_NODELIST", "n[1-2]"),
            ("SLURM_JOB_NODELIST", "n[1-3]"),
            ("SLURM_STEP_NUM_NODES", "2"),
            ("SLURM_NNODES", "2"),
            ("SLURM_JOB_NUM_NODES", "3"),
            ("SLURM_STEP_TASKS_PER_NODE", "2,1"),
            ("SLURM_TASKS_PER_NODE", "2,1"),
            ("SLURM_CPUS_PER_TASK", "1"),
            ("SLURM_JOB_CPUS_PER_NODE", "4(x3)"),
            ("SLURM_MEM_PER_NODE", "512"),
            ("SLURM_SUBMIT_DIR", "/home/alice"),
        ] {
            assert_eq!(get(&env, k), Some(want), "{k}");
        }
        assert_eq!(env.iter().filter(|(k, _)| k == "SLURM_STEP_ID").count(), 1, "srun's own value goes");
    }
}
