//! Job steps as the commands show them: sacct's rows (the job, `ID.batch`
//! for a batch job that ran, `ID.0`, `ID.1` ... for srun's steps), the
//! `scontrol show step` record and `squeue -s`'s listing, all from the
//! `steps` a full job listing carries. Pure functions of `pb::Job`.

use super::fmt::record;
use super::jobfmt;
use crate::vocab::array::StepRef;
use crate::vocab::hostlist;
use crate::vocab::jobs::JobState;
use crate::vocab::reason::ReasonCode;
use spur_proto::states;
use spur_proto::v1 as pb;
use std::borrow::Cow;

/// One sacct row: a job, or one of its steps shown as a job (its id with
/// the step's suffix, its own state, times, nodes and counts).
#[derive(Debug, Clone)]
pub struct Row<'a> {
    pub job: Cow<'a, pb::Job>,
    /// `.batch`, `.0`: empty for the job's own row.
    pub suffix: String,
    /// NTasks when the row says it (steps); the job's rows leave it to sacct.
    pub ntasks: Option<u32>,
}

impl std::ops::Deref for Row<'_> {
    type Target = pb::Job;
    fn deref(&self) -> &pb::Job {
        &self.job
    }
}

impl Row<'_> {
    /// `12`, `12_3`, `12.batch`, `12.0`.
    pub fn id(&self) -> String {
        format!("{}{}", self.job.display_id(), self.suffix)
    }

    pub fn raw_id(&self) -> String {
        format!("{}{}", self.job.id, self.suffix)
    }
}

/// Whether the job is an allocation srun made (no batch script, so no `.batch`).
pub fn is_allocation(j: &pb::Job) -> bool {
    j.spec.as_ref().is_some_and(|s| s.allocation)
}

/// `12.0`.
pub fn step_id(j: &pb::Job, s: &pb::Step) -> String {
    format!("{}.{}", j.display_id(), s.id)
}

fn started(j: &pb::Job) -> bool {
    j.start_ms > 0 && !j.job_state().waiting()
}

/// The batch script's row: the job's own run (state, exit code, times, usage) on its first node.
fn batch(j: &pb::Job) -> Row<'static> {
    let cpus = if j.num_nodes > 1 { j.num_cpus / j.num_nodes.max(1) } else { j.num_cpus };
    let job = pb::Job {
        id: j.id,
        name: "batch".into(),
        account: j.account.clone(),
        state: j.state,
        reason: j.reason,
        exit_signal: j.exit_signal,
        submit_ms: j.start_ms,
        start_ms: j.start_ms,
        end_ms: j.end_ms,
        nodes: j.nodes.first().cloned().into_iter().collect(),
        num_nodes: 1,
        num_cpus: cpus,
        exit_code: j.exit_code,
        usage: j.usage,
        array_job_id: j.array_job_id,
        array_task_id: j.array_task_id,
        ..pb::Job::default()
    };
    Row { job: Cow::Owned(job), suffix: ".batch".into(), ntasks: Some(1) }
}

/// A step's row; a signal's death reads as `0:N`, as sacct's ExitCode does.
fn step_row(j: &pb::Job, s: &pb::Step) -> Row<'static> {
    let (exit_code, reason) = match s.signal {
        0 => (s.exit_code, None),
        _ => (-1, Some(ReasonCode::RaisedSignal)),
    };
    let job = pb::Job {
        id: j.id,
        name: s.name.clone(),
        account: j.account.clone(),
        state: s.state,
        reason: states::reason_wire(reason),
        exit_signal: s.signal,
        submit_ms: s.start_ms,
        start_ms: s.start_ms,
        end_ms: s.end_ms,
        nodes: s.nodes.clone(),
        num_nodes: u32::try_from(s.nodes.len()).unwrap_or(u32::MAX),
        num_cpus: s.cpus,
        exit_code,
        array_job_id: j.array_job_id,
        array_task_id: j.array_task_id,
        ..pb::Job::default()
    };
    Row { job: Cow::Owned(job), suffix: format!(".{}", s.id), ntasks: Some(s.ntasks) }
}

/// sacct's rows of one job: the job (unless `only` names steps of it), then
/// with `steps`, its batch step and srun's steps (those `only` names, if any).
pub fn rows<'a>(j: &'a pb::Job, steps: bool, only: &[StepRef]) -> Vec<Row<'a>> {
    let mut out = vec![];
    if only.is_empty() {
        out.push(Row { job: Cow::Borrowed(j), suffix: String::new(), ntasks: None });
    }
    if !steps && only.is_empty() {
        return out;
    }
    let want = |r: StepRef| only.is_empty() || only.contains(&r);
    if started(j) && !is_allocation(j) && want(StepRef::Batch) {
        out.push(batch(j));
    }
    out.extend(j.steps.iter().filter(|s| want(StepRef::Id(s.id))).map(|s| step_row(j, s)));
    out
}

/// `sacct -D`: each run of `j` that a preemption or an idle-fill reclaim
/// requeued, as a row of the job with that run's times, nodes and end.
pub fn past_runs(j: &pb::Job) -> Vec<Row<'static>> {
    (j.past_runs.iter())
        .map(|r| {
            let why = if r.reclaim { "reclaimed (idle-fill) by" } else { "preempted by" };
            let job = pb::Job {
                state: r.state,
                start_ms: r.start_ms,
                end_ms: r.end_ms,
                nodes: r.nodes.clone(),
                num_nodes: r.nodes.len() as u32,
                borrowed: r.borrowed,
                preempted_by: r.preempted_by,
                reason: 0,
                reason_detail: format!("Requeued: {why} job {}", r.preempted_by),
                exit_code: 0,
                usage: None,
                steps: vec![],
                past_runs: vec![],
                ..j.clone()
            };
            Row { job: Cow::Owned(job), suffix: String::new(), ntasks: None }
        })
        .collect()
}

/// A step's running time, as squeue's TIME shows it.
fn elapsed(s: &pb::Step, now_ms: i64) -> u64 {
    let end = if s.end_ms > 0 { s.end_ms } else { now_ms };
    u64::try_from(end.saturating_sub(s.start_ms) / 1000).unwrap_or(0)
}

fn is_running(s: &pb::Step) -> bool {
    s.job_state() == JobState::Running
}

/// `scontrol show step`: the running steps of `jobs` (one step with `want`), Slurm's layout.
pub fn show(
    jobs: &[pb::Job],
    want: Option<(u64, Option<u32>)>,
    now_ms: i64,
    oneliner: bool,
) -> Result<String, String> {
    let mut out = String::new();
    for j in jobs.iter().filter(|j| want.is_none_or(|(id, _)| id == j.id)) {
        for s in j
            .steps
            .iter()
            .filter(|s| is_running(s) && want.is_none_or(|(_, st)| st.is_none_or(|n| n == s.id)))
        {
            let limit = crate::vocab::time::format_limit(j.time_limit_minutes);
            let lines = [
                format!(
                    "StepId={} UserId={} StartTime={} TimeLimit={limit}",
                    step_id(j, s),
                    j.user,
                    jobfmt::time_or(s.start_ms, "Unknown")
                ),
                format!(
                    "State={} Partition={} NodeList={}",
                    s.job_state(),
                    j.partition,
                    hostlist::compress(&s.nodes)
                ),
                format!(
                    "Nodes={} CPUs={} Tasks={} Name={} Network=(null)",
                    s.nodes.len(),
                    s.cpus,
                    s.ntasks,
                    s.name
                ),
                format!("TRES=cpu={},node={}", s.cpus, s.nodes.len()),
                "ResvPorts=(null)".into(),
                "CPUFreqReq=Default Dist=Block".into(),
                format!("RunTime={}", crate::vocab::time::format_seconds(elapsed(s, now_ms))),
            ];
            out += &record(&lines, oneliner);
        }
    }
    if out.is_empty() {
        return Err(match want {
            Some((id, Some(n))) => format!("Job step {id}.{n} not found"),
            Some((id, None)) => format!("Job step {id} not found (it has no running steps)"),
            None => "No job steps in the system".into(),
        });
    }
    Ok(out)
}

/// `squeue -s`: Slurm's `%.15i %.8j %.9P %.8u %.9M %N` over the running steps.
pub fn squeue(jobs: &[pb::Job], now_ms: i64, header: bool) -> String {
    let mut out = String::new();
    let cut = |s: &str, w: usize| s.chars().take(w).collect::<String>();
    if header {
        out += &format!(
            "{:>15} {:>8} {:>9} {:>8} {:>9} {}\n",
            "STEPID", "NAME", "PARTITION", "USER", "TIME", "NODELIST"
        );
    }
    for j in jobs {
        for s in j.steps.iter().filter(|s| is_running(s)) {
            out += &format!(
                "{:>15} {:>8} {:>9} {:>8} {:>9} {}\n",
                cut(&step_id(j, s), 15),
                cut(&s.name, 8),
                cut(&j.partition, 9),
                cut(&j.user, 8),
                jobfmt::squeue_secs(elapsed(s, now_ms)),
                hostlist::compress(&s.nodes)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> pb::Job {
        let step = |id, state: JobState, signal| pb::Step {
            id,
            name: "hostname".into(),
            state: states::state_wire(state),
            nodes: vec!["n1".into(), "n2".into()],
            ntasks: 4,
            cpus: 4,
            start_ms: 1_000,
            end_ms: if state == JobState::Running { 0 } else { 61_000 },
            signal,
            ..Default::default()
        };
        pb::Job {
            id: 12,
            user: "alice".into(),
            partition: "batch".into(),
            state: states::state_wire(JobState::Running),
            start_ms: 500,
            nodes: vec!["n1".into(), "n2".into()],
            num_nodes: 2,
            num_cpus: 8,
            steps: vec![step(0, JobState::Cancelled, 15), step(1, JobState::Running, 0)],
            ..Default::default()
        }
    }

    #[test]
    fn sacct_rows_are_the_job_its_batch_step_and_srun_s() {
        let j = job();
        let ids = |rows: Vec<Row>| rows.iter().map(Row::id).collect::<Vec<_>>();
        assert_eq!(ids(rows(&j, true, &[])), ["12", "12.batch", "12.0", "12.1"]);
        assert_eq!(ids(rows(&j, false, &[])), ["12"], "-X");
        assert_eq!(ids(rows(&j, false, &[StepRef::Id(1)])), ["12.1"]);
        assert_eq!(ids(rows(&j, true, &[StepRef::Batch])), ["12.batch"]);
        let r = rows(&j, true, &[]);
        assert_eq!(
            (r[1].num_cpus, r[1].nodes.as_slice(), r[1].ntasks),
            (4, &["n1".to_string()][..], Some(1))
        );
        assert_eq!(
            (r[2].exit_code, r[2].reason_text().as_ref(), r[2].job_state()),
            (-1, "RaisedSignal:15", JobState::Cancelled)
        );
        let mut alloc = j.clone();
        alloc.spec = Some(Box::new(pb::JobSpec { allocation: true, ..Default::default() }));
        assert_eq!(
            ids(rows(&alloc, true, &[])),
            ["12", "12.0", "12.1"],
            "srun's allocation has no batch step"
        );
    }

    #[test]
    fn running_steps_show_in_slurm_s_layouts() {
        let j = job();
        let shown = show(std::slice::from_ref(&j), Some((12, Some(1))), 31_000, false).unwrap();
        let lines: Vec<&str> = shown.lines().collect();
        assert!(
            lines[0].starts_with("StepId=12.1 UserId=alice StartTime=")
                && lines[0].ends_with("TimeLimit=UNLIMITED")
        );
        assert_eq!(lines[1], "   State=RUNNING Partition=batch NodeList=n[1-2]");
        assert_eq!(lines[2], "   Nodes=2 CPUs=4 Tasks=4 Name=hostname Network=(null)");
        assert_eq!(
            show(std::slice::from_ref(&j), Some((12, Some(0))), 0, false).unwrap_err(),
            "Job step 12.0 not found"
        );
        assert_eq!(show(&[], None, 0, false).unwrap_err(), "No job steps in the system");
        let q = squeue(&[j], 31_000, true);
        assert_eq!(
            q,
            "         STEPID     NAME PARTITION     USER      TIME NODELIST\n\
             \x20          12.1 hostname     batch    alice      0:30 n[1-2]\n"
        );
    }
}
