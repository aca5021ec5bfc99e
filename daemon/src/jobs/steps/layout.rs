//! A step's shape inside its job, as srun asks for it: which of the job's
//! nodes (`-N`, `-w`), how many tasks on each and which (`-n`,
//! `--ntasks-per-node`, `-m/--distribution`: block by default, tasks 0..k
//! on the first node, the next on the second, the first nodes taking one
//! more when the count does not divide; cyclic, plane=N, or arbitrary from
//! a node per task), and whether the job has the CPUs and memory for it on
//! each node. Also srun's exit-code rule. Pure; errors name the flag.

use crate::error::{Error, Result};
use crate::jobs::record::JobRecord;
use spur_proto::v1 as pb;
use spur_vocab::distribution::{Distribution, NodeDist};
use spur_vocab::hostlist;

/// The most tasks one step may have in all.
pub const MAX_TASKS: u32 = 65_536;
/// Slurm's MAX_TASKS_PER_NODE: the most tasks of a step on one node, even overcommitted.
pub const MAX_TASKS_PER_NODE: u32 = 512;

/// Where a step runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub nodes: Vec<String>,
    /// Tasks per node, in `nodes`' order.
    pub tasks: Vec<u32>,
    /// The step ids of the tasks on each of `nodes`, in order.
    pub ids: Vec<Vec<u32>>,
    pub cpus_per_task: u32,
    pub mem_mb: u64,
    /// `-m`, for SLURM_DISTRIBUTION.
    pub dist: Distribution,
}

impl Shape {
    /// A block-wise shape of `tasks` per node (Slurm's default distribution).
    pub fn block(nodes: Vec<String>, tasks: &[u32], cpus_per_task: u32, mem_mb: u64) -> Shape {
        let mut next = 0;
        let ids = tasks
            .iter()
            .map(|n| {
                next += n;
                (next - n..next).collect()
            })
            .collect();
        Shape::new(nodes, ids, cpus_per_task, mem_mb, Distribution::default())
    }

    fn new(
        nodes: Vec<String>,
        ids: Vec<Vec<u32>>,
        cpus_per_task: u32,
        mem_mb: u64,
        dist: Distribution,
    ) -> Shape {
        let tasks = ids.iter().map(|t| u32::try_from(t.len()).unwrap_or(u32::MAX)).collect();
        Shape { nodes, tasks, ids, cpus_per_task, mem_mb, dist }
    }

    /// The ids on each node when they are not block-wise (what a step record
    /// and sattach keep); empty for block.
    pub fn unblocked_ids(&self) -> Vec<Vec<u32>> {
        let mut next = 0;
        let block = self.ids.iter().all(|ids| {
            let run = ids.iter().enumerate().all(|(k, t)| *t == next + k as u32);
            next += ids.len() as u32;
            run
        });
        if block { vec![] } else { self.ids.clone() }
    }

    /// The wire form of [`Self::unblocked_ids`].
    pub fn node_tasks(ids: &[Vec<u32>]) -> Vec<pb::TaskIds> {
        ids.iter().map(|ids| pb::TaskIds { ids: ids.clone() }).collect()
    }

    /// The step ids of the tasks on node `i`, as the distribution laid them out.
    pub fn task_ids(&self, i: usize) -> &[u32] {
        &self.ids[i]
    }

    pub fn ntasks(&self) -> u32 {
        self.tasks.iter().sum()
    }
}

/// Slurm's `SLURM_TASKS_PER_NODE` form of per-node counts: `2(x3),1`.
pub fn tasks_per_node(counts: &[u32]) -> String {
    let mut out: Vec<String> = vec![];
    let mut i = 0;
    while i < counts.len() {
        let run = counts[i..].iter().take_while(|c| **c == counts[i]).count();
        out.push(if run == 1 { counts[i].to_string() } else { format!("{}(x{run})", counts[i]) });
        i += run;
    }
    out.join(",")
}

/// The step `req` asks for in the running job `j`.
pub fn shape(j: &JobRecord, req: &pb::StepRequest) -> Result<Shape> {
    if j.nodes.is_empty() {
        return Err(Error::FailedPrecondition(format!("job {} has no nodes", j.id)));
    }
    let dist = match req.distribution.trim() {
        "" => Distribution::default(),
        d => Distribution::parse(d).map_err(Error::InvalidArgument)?,
    };
    let (nodes, ids) = match dist.nodes {
        NodeDist::Arbitrary if !req.nodelist.trim().is_empty() => listed(j, req)?,
        // arbitrary with no list (no SLURM_HOSTFILE, no -w) is block, as the man page says.
        NodeDist::Arbitrary => spread(j, req, Distribution::default())?,
        _ => spread(j, req, dist)?,
    };
    let shape = Shape::new(nodes, ids, req.cpus_per_task.max(1), req.mem_mb, dist);
    fits(j, req, shape)
}

/// `-m arbitrary`: task `t` on the `t`-th node of `--nodelist` (SLURM_HOSTFILE
/// or `-w`, in order, repeats included); the nodes in the allocation's order.
fn listed(j: &JobRecord, req: &pb::StepRequest) -> Result<(Vec<String>, Vec<Vec<u32>>)> {
    let alloc = hostlist::compress(&j.nodes);
    let longest = j.nodes.iter().map(String::len).max().unwrap_or(0);
    let mut list = hostlist::expand_in_order(&req.nodelist, MAX_TASKS as usize, longest)
        .map_err(|e| Error::invalid("--nodelist", e))?;
    let ntasks = match req.ntasks {
        0 => u32::try_from(list.len()).unwrap_or(u32::MAX),
        n => n,
    };
    if (list.len() as u64) < u64::from(ntasks) {
        return Err(Error::invalid(
            "--distribution",
            format!(
                "arbitrary lays {ntasks} task(s) out on the nodes of SLURM_HOSTFILE or -w in order, one a task; {} listed",
                list.len()
            ),
        ));
    }
    list.truncate(ntasks as usize);
    let at: std::collections::HashMap<&str, usize> =
        j.nodes.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let mut ids = vec![vec![]; j.nodes.len()];
    for (t, n) in list.iter().enumerate() {
        let Some(&i) = at.get(n.as_str()) else {
            return Err(Error::invalid(
                "--nodelist",
                format!("{n} is not in job {}'s allocation ({alloc})", j.id),
            ));
        };
        ids[i].push(u32::try_from(t).unwrap_or(u32::MAX));
    }
    let (nodes, ids) = j.nodes.iter().cloned().zip(ids).filter(|(_, t)| !t.is_empty()).unzip();
    Ok((nodes, ids))
}

/// block, cyclic, plane: which of the job's nodes (`-N`, `-w`, `-n`,
/// `--ntasks-per-node`), and the tasks on each as `dist` lays them out.
fn spread(j: &JobRecord, req: &pb::StepRequest, dist: Distribution) -> Result<(Vec<String>, Vec<Vec<u32>>)> {
    let alloc = hostlist::compress(&j.nodes);
    let mut nodes: Vec<String> = vec![];
    if !req.nodelist.trim().is_empty() {
        let longest = j.nodes.iter().map(String::len).max().unwrap_or(0);
        let asked = hostlist::expand_bounded(&req.nodelist, j.nodes.len(), longest)
            .map_err(|e| Error::invalid("--nodelist", e))?;
        if let Some(out) = asked.iter().find(|n| !j.nodes.contains(n)) {
            return Err(Error::invalid(
                "--nodelist",
                format!("{out} is not in job {}'s allocation ({alloc})", j.id),
            ));
        }
        // In the allocation's order, as Slurm lays a step out.
        nodes = j.nodes.iter().filter(|n| asked.contains(n)).cloned().collect();
    }
    let job_nodes = u32::try_from(j.nodes.len()).unwrap_or(u32::MAX);
    if req.nodes > job_nodes {
        return Err(Error::invalid(
            "--nodes",
            format!("{} nodes asked; job {} has {job_nodes} ({alloc})", req.nodes, j.id),
        ));
    }
    let listed = u32::try_from(nodes.len()).unwrap_or(u32::MAX);
    if req.nodes > 0 && listed > req.nodes {
        return Err(Error::invalid(
            "--nodes",
            format!("{} is fewer than the {listed} nodes of --nodelist", req.nodes),
        ));
    }
    let tpn = req.ntasks_per_node;
    let want = match (req.nodes, listed, req.ntasks, tpn) {
        (n, _, _, _) if n > 0 => n,
        (0, l, _, _) if l > 0 => l,
        (_, _, 0, _) => job_nodes,
        // As many of the job's nodes as there are tasks (as the tasks per node allow).
        (_, _, n, 0) => n.min(job_nodes),
        (_, _, n, t) => n.div_ceil(t).clamp(1, job_nodes),
    };
    for n in &j.nodes {
        if nodes.len() >= want as usize {
            break;
        }
        if !nodes.contains(n) {
            nodes.push(n.clone());
        }
    }
    nodes = j.nodes.iter().filter(|n| nodes.contains(n)).cloned().collect();
    let k = u32::try_from(nodes.len()).unwrap_or(u32::MAX);
    let ntasks = match (req.ntasks, tpn) {
        (0, 0) => k,
        (0, t) => k.saturating_mul(t),
        (n, _) => n,
    };
    if ntasks > MAX_TASKS {
        return Err(Error::invalid(
            "--ntasks",
            format!("{ntasks} tasks; a step may have at most {MAX_TASKS}"),
        ));
    }
    if tpn > 0 && ntasks > k.saturating_mul(tpn) {
        return Err(Error::invalid(
            "--ntasks-per-node",
            format!(
                "{ntasks} tasks at most {tpn} a node need {} nodes; the step has {k}",
                ntasks.div_ceil(tpn)
            ),
        ));
    }
    // Fewer tasks than nodes: the step shrinks to the tasks (Slurm's warning says so).
    nodes.truncate(ntasks.max(1) as usize);
    let ids = dist.layout(ntasks, nodes.len()).unwrap_or_default();
    Ok((nodes, ids))
}

/// Whether the job has the CPUs and memory for `s` on each of its nodes.
fn fits(j: &JobRecord, req: &pb::StepRequest, s: Shape) -> Result<Shape> {
    let cpus_per_task = s.cpus_per_task;
    let most = s.tasks.iter().copied().max().unwrap_or(0);
    // The node with the most tasks (not the first with plane=N).
    let busiest = s.tasks.iter().position(|t| *t == most).map_or("", |i| s.nodes[i].as_str());
    let (job_cpus, job_mem, _) = j.alloc;
    if req.overcommit {
        if most > MAX_TASKS_PER_NODE {
            return Err(Error::invalid(
                "--ntasks",
                format!("{most} tasks on one node; at most {MAX_TASKS_PER_NODE} even with --overcommit"),
            ));
        }
    } else if job_cpus > 0 && u64::from(most) * u64::from(cpus_per_task) > u64::from(job_cpus) {
        return Err(Error::invalid(
            "--ntasks",
            format!(
                "more processors requested than permitted: {most} tasks x {cpus_per_task} CPUs on {}, \
                 where job {} has {job_cpus} (use --overcommit to run them anyway)",
                busiest, j.id
            ),
        ));
    }
    if job_mem > 0 && req.mem_mb > job_mem {
        return Err(Error::invalid(
            "--mem",
            format!("{} MB per node asked; job {} has {job_mem} MB per node", req.mem_mb, j.id),
        ));
    }
    Ok(s)
}

/// srun's exit code: the highest of its tasks' exit codes, a task killed by
/// signal N counting as 128+N (srun's RETURN VALUE).
pub fn srun_exit(ends: impl IntoIterator<Item = (i32, i32)>) -> i32 {
    ends.into_iter().map(|(code, sig)| if sig > 0 { 128 + sig } else { code }).max().unwrap_or(0)
}

/// A step's recorded `ExitCode` (`code:signal`): the highest exit code, and
/// the highest signal that killed one of its tasks.
pub fn step_exit(ends: &[(i32, i32)]) -> (i32, i32) {
    let code = ends.iter().filter(|e| e.1 == 0).map(|e| e.0).max().unwrap_or(0);
    let sig = ends.iter().map(|e| e.1).max().unwrap_or(0);
    (code, sig)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(nodes: &[&str], cpus: u32) -> JobRecord {
        JobRecord {
            id: 12,
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
            alloc: (cpus, 1024, 0),
            ..JobRecord::default()
        }
    }

    fn ask(ntasks: u32, nodes: u32, tpn: u32) -> pb::StepRequest {
        pb::StepRequest { ntasks, nodes, ntasks_per_node: tpn, ..Default::default() }
    }

    fn laid(j: &JobRecord, r: &pb::StepRequest) -> (Vec<String>, Vec<u32>) {
        let s = shape(j, r).unwrap();
        (s.nodes, s.tasks)
    }

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn tasks_go_block_wise_over_the_step_s_nodes() {
        let j = job(&["a", "b", "c"], 4);
        assert_eq!(laid(&j, &ask(7, 0, 0)).1, [3, 2, 2]);
        assert_eq!(laid(&job(&["a", "b"], 4), &ask(5, 0, 0)).1, [3, 2]);
        let s = Shape::block(v(&["a", "b", "c"]), &[3, 2, 2], 1, 0);
        assert_eq!((s.task_ids(0), s.task_ids(1), s.task_ids(2)), (&[0, 1, 2][..], &[3, 4][..], &[5, 6][..]));
        assert_eq!(tasks_per_node(&[3, 2, 2]), "3,2(x2)");
        assert_eq!(tasks_per_node(&[2, 2]), "2(x2)");
        assert_eq!(tasks_per_node(&[1]), "1");
    }

    #[test]
    fn the_distribution_lays_the_task_ids_out() {
        let j = job(&["n1", "n2"], 4);
        let ids = |d: &str, n: u32| {
            let s = shape(&j, &pb::StepRequest { ntasks: n, distribution: d.into(), ..Default::default() });
            let s = s.unwrap();
            (s.ids.clone(), s.tasks.clone(), s.dist.env_value())
        };
        // The man page's five tasks on two nodes.
        assert_eq!(ids("", 5), (vec![vec![0, 1, 2], vec![3, 4]], vec![3, 2], "block".into()));
        assert_eq!(ids("block", 5).0, [vec![0, 1, 2], vec![3, 4]]);
        assert_eq!(ids("cyclic", 5), (vec![vec![0, 2, 4], vec![1, 3]], vec![3, 2], "cyclic".into()));
        assert_eq!(ids("plane=2", 5), (vec![vec![0, 1, 4], vec![2, 3]], vec![3, 2], "plane".into()));
        assert_eq!(ids("plane=4", 6).1, [4, 2], "a plane fills a node first");
        // What a step record and sattach keep: nothing for block, the ids otherwise.
        let kept = |d: &str| {
            let r = pb::StepRequest { ntasks: 3, distribution: d.into(), ..Default::default() };
            shape(&j, &r).unwrap().unblocked_ids()
        };
        assert!(kept("block").is_empty() && kept("plane=2").is_empty(), "plane=2 of 3 on 2 nodes is 0,1 | 2");
        assert_eq!(kept("cyclic"), [vec![0, 2], vec![1]]);
        let e = shape(&j, &pb::StepRequest { distribution: "round".into(), ..Default::default() });
        assert!(e.unwrap_err().to_string().starts_with("--distribution: 'round'"));
        // plane=4 puts 4 tasks on n1, past its 2 CPUs; the busiest node is named.
        let j2 = job(&["n1", "n2"], 2);
        let r = pb::StepRequest { ntasks: 4, distribution: "plane=4".into(), ..Default::default() };
        let e = shape(&j2, &r).unwrap_err().to_string();
        assert!(e.contains("4 tasks x 1 CPUs on n1"), "{e}");
    }

    #[test]
    fn arbitrary_places_task_t_on_the_t_th_listed_node() {
        let j = job(&["n1", "n2", "n3"], 4);
        let arb = |list: &str, n: u32| pb::StepRequest {
            ntasks: n,
            nodelist: list.into(),
            distribution: "arbitrary".into(),
            ..Default::default()
        };
        let s = shape(&j, &arb("n3,n1,n1,n3", 0)).unwrap();
        assert_eq!((s.nodes.clone(), s.ids.clone()), (v(&["n1", "n3"]), vec![vec![1, 2], vec![0, 3]]));
        assert_eq!(s.tasks, [2, 2]);
        // Brackets expand in place; -n takes the first entries.
        let s = shape(&j, &arb("n[2-3],n2", 2)).unwrap();
        assert_eq!((s.nodes, s.ids), (v(&["n2", "n3"]), vec![vec![0], vec![1]]));
        let e = |r| shape(&j, &r).unwrap_err().to_string();
        assert!(
            e(arb("n1", 3)).starts_with("--distribution: arbitrary lays 3 task(s)"),
            "{}",
            e(arb("n1", 3))
        );
        // No list: block, as the man page says.
        let s = shape(&j, &arb("", 4)).unwrap();
        assert_eq!((s.nodes.len(), s.ids), (3, vec![vec![0, 1], vec![2], vec![3]]));
        assert!(e(arb("n1,n9", 0)).starts_with("--nodelist: n9 is not in job 12's allocation"));
    }

    #[test]
    fn the_step_takes_the_nodes_its_tasks_need() {
        let j = job(&["n1", "n2", "n3"], 4);
        // Nothing given: every node of the job, one task each.
        assert_eq!(laid(&j, &ask(0, 0, 0)), (v(&["n1", "n2", "n3"]), vec![1, 1, 1]));
        // -n alone: as many nodes as tasks, up to the job's.
        assert_eq!(laid(&j, &ask(2, 0, 0)), (v(&["n1", "n2"]), vec![1, 1]));
        assert_eq!(laid(&j, &ask(4, 0, 0)), (v(&["n1", "n2", "n3"]), vec![2, 1, 1]));
        // -N with -n, and --ntasks-per-node.
        assert_eq!(laid(&j, &ask(4, 1, 0)), (v(&["n1"]), vec![4]));
        assert_eq!(laid(&j, &ask(0, 2, 2)), (v(&["n1", "n2"]), vec![2, 2]));
        assert_eq!(laid(&j, &ask(3, 0, 2)), (v(&["n1", "n2"]), vec![2, 1]));
        // Fewer tasks than nodes: the step shrinks to the tasks.
        assert_eq!(laid(&j, &ask(1, 3, 0)), (v(&["n1"]), vec![1]));
        // -w picks, in the allocation's order; -N fills up from the rest.
        let w = |list: &str, n| pb::StepRequest { nodelist: list.into(), nodes: n, ..Default::default() };
        assert_eq!(laid(&j, &w("n3,n2", 0)), (v(&["n2", "n3"]), vec![1, 1]));
        assert_eq!(laid(&j, &w("n3", 2)), (v(&["n1", "n3"]), vec![1, 1]));
    }

    #[test]
    fn what_the_job_cannot_give_is_refused_naming_the_flag() {
        let j = job(&["n1", "n2"], 2);
        let e = |r: pb::StepRequest| shape(&j, &r).unwrap_err().to_string();
        assert!(e(ask(0, 3, 0)).starts_with("--nodes: 3 nodes asked; job 12 has 2"), "{}", e(ask(0, 3, 0)));
        let r = pb::StepRequest { nodelist: "n9".into(), ..Default::default() };
        assert_eq!(e(r), "--nodelist: n9 is not in job 12's allocation (n[1-2])");
        let r = pb::StepRequest { nodelist: "n[1-2]".into(), nodes: 1, ..Default::default() };
        assert!(e(r).starts_with("--nodes: 1 is fewer than the 2 nodes"));
        assert!(e(ask(5, 2, 2)).starts_with("--ntasks-per-node: 5 tasks"), "{}", e(ask(5, 2, 2)));
        assert!(e(ask(6, 2, 0)).contains("more processors requested than permitted: 3 tasks x 1 CPUs on n1"));
        let r = pb::StepRequest { ntasks: 6, overcommit: true, ..Default::default() };
        assert_eq!(shape(&j, &r).unwrap().tasks, [3, 3], "--overcommit runs them anyway");
        let r = pb::StepRequest { ntasks: 2, cpus_per_task: 2, ..Default::default() };
        assert_eq!(shape(&j, &r).unwrap().tasks, [1, 1]);
        let r = pb::StepRequest { mem_mb: 4096, ..Default::default() };
        assert!(e(r).starts_with("--mem: 4096 MB per node asked; job 12 has 1024"));
        assert!(e(ask(MAX_TASKS + 1, 0, 0)).starts_with("--ntasks: 65537 tasks"));
        let none = JobRecord { id: 3, ..JobRecord::default() };
        assert!(shape(&none, &ask(1, 0, 0)).is_err());
    }

    #[test]
    fn srun_exits_with_the_highest_task_exit_and_128_plus_a_signal() {
        assert_eq!(srun_exit([(0, 0), (3, 0), (1, 0)]), 3);
        assert_eq!(srun_exit([(0, 0), (0, 15)]), 143);
        assert_eq!(srun_exit([(0, 9), (200, 0)]), 200);
        assert_eq!(srun_exit([]), 0);
        assert_eq!(step_exit(&[(0, 0), (3, 0), (0, 9)]), (3, 9));
        assert_eq!(step_exit(&[(0, 0)]), (0, 0));
    }
}
