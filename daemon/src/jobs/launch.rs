//! A started job's launch command: the submitter's exported environment
//! and then Slurm's `SLURM_*` variables over it (so a job submitted from
//! inside another sees its own ids), and the `-o/-e` paths with Slurm's
//! filename patterns expanded (sbatch's FILENAME PATTERN section).

use super::record::JobRecord;
use spur_proto::v1 as pb;
use spur_vocab::hostlist;
use spur_vocab::jobs::{PathVars, expand_path};

/// Slurm's `SLURM_TASKS_PER_NODE` form: `4(x2),3`.
fn tasks_per_node(tasks: u32, nodes: u32) -> String {
    let nodes = nodes.max(1);
    let (base, extra) = (tasks / nodes, tasks % nodes);
    let group = |n: u32, count: u32| if count == 1 { n.to_string() } else { format!("{n}(x{count})") };
    match (extra, base) {
        (0, _) => group(base, nodes),
        (_, 0) => format!("{},{}", group(1, extra), group(0, nodes - extra)),
        _ => format!("{},{}", group(base + 1, extra), group(base, nodes - extra)),
    }
}

/// What the `-o/-e` patterns of `j`'s batch step read.
fn vars(j: &JobRecord) -> PathVars<'_> {
    PathVars {
        job_id: j.id,
        user: &j.user,
        name: &j.name,
        node: j.nodes.first().map_or("", String::as_str),
        array: j.array.as_ref().and_then(|a| Some((a.job_id, a.task?))),
    }
}

/// The launch command for a started job.
pub(crate) fn launch(j: &JobRecord) -> pb::AgentCommand {
    let nodelist = hostlist::compress(&j.nodes);
    let nodes = u32::try_from(j.nodes.len()).unwrap_or(u32::MAX).max(1);
    let tasks = j.ntasks.max(j.num_nodes);
    let cpus_on_node = j.alloc.0.to_string();
    let id = j.id.to_string();
    let mut env: Vec<(String, String)> = j.env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let slurm = [
        ("SPUR_JOB_ID", id.clone()),
        ("SLURM_JOB_ID", id.clone()),
        ("SLURM_JOBID", id),
        ("SLURM_JOB_NAME", j.name.clone()),
        ("SLURM_JOB_NODELIST", nodelist.clone()),
        ("SLURM_NODELIST", nodelist),
        ("SLURM_JOB_NUM_NODES", nodes.to_string()),
        ("SLURM_NNODES", nodes.to_string()),
        ("SLURM_NTASKS", tasks.to_string()),
        ("SLURM_NPROCS", tasks.to_string()),
        ("SLURM_TASKS_PER_NODE", tasks_per_node(tasks, nodes)),
        ("SLURM_CPUS_PER_TASK", j.cpus_per_task.to_string()),
        ("SLURM_CPUS_ON_NODE", cpus_on_node.clone()),
        (
            "SLURM_JOB_CPUS_PER_NODE",
            if nodes == 1 { cpus_on_node } else { format!("{cpus_on_node}(x{nodes})") },
        ),
        ("SLURM_JOB_PARTITION", j.partition.clone()),
        ("SLURM_JOB_ACCOUNT", j.account.clone().unwrap_or_default()),
        ("SLURM_JOB_QOS", j.qos.clone().unwrap_or_default()),
        ("SLURM_JOB_USER", j.user.clone()),
        ("SLURM_SUBMIT_DIR", j.workdir.clone()),
        ("SLURM_NODEID", "0".into()),
        ("SLURM_PROCID", "0".into()),
        ("SLURM_LOCALID", "0".into()),
    ];
    env.extend(slurm.into_iter().map(|(k, v)| (k.to_string(), v)));
    let mem = match j.extra.as_ref().map(|x| x.mem_per_cpu_mb).filter(|m| *m > 0) {
        Some(per_cpu) => ("SLURM_MEM_PER_CPU", per_cpu),
        None => ("SLURM_MEM_PER_NODE", j.mem_mb),
    };
    if mem.1 > 0 {
        env.push((mem.0.into(), mem.1.to_string()));
    }
    if j.gpus > 0 {
        env.push(("SLURM_GPUS_ON_NODE".into(), j.gpus.to_string()));
    }
    // As Slurm's: set once the job has been requeued.
    if j.restarts > 0 {
        env.push(("SLURM_RESTART_COUNT".into(), j.restarts.to_string()));
    }
    if let Some(a) = j.array.as_deref()
        && let Some(task) = a.task
    {
        let array = [
            ("SLURM_ARRAY_JOB_ID", a.job_id.to_string()),
            ("SLURM_ARRAY_TASK_ID", task.to_string()),
            ("SLURM_ARRAY_TASK_COUNT", a.count.to_string()),
            ("SLURM_ARRAY_TASK_MIN", a.min.to_string()),
            ("SLURM_ARRAY_TASK_MAX", a.max.to_string()),
        ];
        env.extend(array.into_iter().map(|(k, v)| (k.to_string(), v)));
    }
    if let Some(x) = j.extra.as_deref() {
        if x.ntasks_per_node > 0 {
            env.push(("SLURM_NTASKS_PER_NODE".into(), x.ntasks_per_node.to_string()));
        }
        if !x.dependency.is_empty() {
            env.push(("SLURM_JOB_DEPENDENCY".into(), x.dependency.clone()));
        }
        if x.open_mode == "append" {
            env.push(("SLURM_OPEN_MODE".into(), "a".into()));
        }
        // -m: the script's sruns lay their tasks out so unless they say otherwise.
        if let Ok(d) = spur_vocab::distribution::Distribution::parse(&x.distribution)
            && !x.distribution.is_empty()
        {
            env.extend(d.env_vars().into_iter().map(|(k, v)| (k.to_string(), v)));
        }
    }
    let path = |p: &str| {
        let p = expand_path(if p.is_empty() { "slurm-%j.out" } else { p }, &vars(j));
        if p.starts_with('/') || j.workdir.is_empty() { p } else { format!("{}/{p}", j.workdir) }
    };
    let stdout = path(&j.stdout_path);
    // --input: the same patterns and directory as the output's; none is /dev/null.
    let stdin =
        j.extra.as_ref().map(|x| x.input.as_str()).filter(|i| !i.is_empty()).map(path).unwrap_or_default();
    let stderr = if j.stderr_path.is_empty() { stdout.clone() } else { path(&j.stderr_path) };
    pb::AgentCommand {
        cmd: Some(pb::agent_command::Cmd::Launch(pb::Launch {
            job_id: j.id,
            node: j.nodes.first().cloned().unwrap_or_default(),
            script: j.script.clone(),
            env: env.into_iter().map(|(key, value)| pb::KeyValue { key, value }).collect(),
            stdout_path: stdout,
            stderr_path: stderr,
            workdir: j.workdir.clone(),
            append_output: j.extra.as_ref().is_some_and(|x| x.open_mode == "append"),
            hres_prep: j.hres_prep_json(),
            uid: j.uid,
            gid: j.gid,
            user: j.user.clone(),
            run_id: j.run_id.clone(),
            stdin_path: stdin,
            script_args: j.extra.as_ref().map(|x| x.script_args.clone()).unwrap_or_default(),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_per_node_reads_as_slurm_writes_it() {
        assert_eq!(tasks_per_node(8, 2), "4(x2)");
        assert_eq!(tasks_per_node(7, 2), "4,3");
        assert_eq!(tasks_per_node(7, 3), "3,2(x2)");
        assert_eq!(tasks_per_node(1, 1), "1");
        assert_eq!(tasks_per_node(2, 4), "1(x2),0(x2)");
    }

    #[test]
    fn slurm_variables_override_the_exported_ones() {
        let j = JobRecord {
            id: 7,
            nodes: vec!["n1".into()],
            env: super::super::env::Env::from_pairs([("SLURM_JOB_ID", "3"), ("PATH", "/x")]).unwrap(),
            ..JobRecord::default()
        };
        let Some(pb::agent_command::Cmd::Launch(l)) = launch(&j).cmd else { panic!() };
        let last = |k: &str| l.env.iter().rev().find(|kv| kv.key == k).map(|kv| kv.value.clone());
        assert_eq!(last("SLURM_JOB_ID").as_deref(), Some("7"));
        assert_eq!(last("PATH").as_deref(), Some("/x"));
        assert!(!l.append_output);
        assert!(l.script_args.is_empty());
        assert_eq!(last("SLURM_RESTART_COUNT"), None, "a first run has none, as Slurm's");
        let Some(pb::agent_command::Cmd::Launch(l)) = launch(&JobRecord { restarts: 2, ..j }).cmd else {
            panic!()
        };
        assert!(l.env.iter().any(|kv| kv.key == "SLURM_RESTART_COUNT" && kv.value == "2"));
    }

    #[test]
    fn the_launch_carries_the_script_s_arguments() {
        let x = super::super::parts::Extras {
            script_args: vec!["one".into(), "two words".into()],
            ..Default::default()
        };
        let j = JobRecord { id: 7, extra: Some(Box::new(x)), ..JobRecord::default() };
        let Some(pb::agent_command::Cmd::Launch(l)) = launch(&j).cmd else { panic!() };
        assert_eq!(l.script_args, ["one", "two words"]);
    }
}
