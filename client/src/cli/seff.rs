//! `seff JOBID` (also `spur eff`): a job's efficiency as Slurm's contrib
//! `seff` prints it, line for line, so scripts that read seff's output read
//! Spur's: the CPU time its processes used against its cores times its
//! wall-clock time, and its largest resident set against the memory it asked
//! for. The figures are sacct's (TotalCPU, Elapsed, AllocCPUS, MaxRSS,
//! ReqMem), read with ListJobs `history=yes` so a purged job is found too,
//! and reckoned by `spur_vocab::efficiency`, which the console shares.
//!
//! Spur records the use of a job's batch step (its script and what it
//! starts) when the job ends; srun's steps run inside it and are counted
//! there. While a job runs its CPU time is not yet recorded, so seff prints
//! the wall-clock figures with Slurm's own warning.

use super::fmt::status;
use super::getopt::{Mode, Opt, Spec, switch, value};
use super::jobfmt::{self, ended};
use crate::conn::{self, Identity};
use crate::vocab::JobState;
use crate::vocab::efficiency::{MemAsked, Usage, kbytes_str, time_str};
use spur_proto::v1 as pb;

pub const USAGE: &str = "\
Usage: seff [Options] <Jobid>
       Options:
       -h    Help menu
       -v    Version
       -d    Debug mode: display raw Slurm data
       --controller URL   the controller to ask
<Jobid> is a job's id, or an array task's (12_3).";

/// The version seff prints; Slurm's contrib is 2.1, whose output this follows.
const VERSION: &str = "2.1";

#[derive(Debug, Clone, Default)]
pub struct Args {
    pub help: bool,
    pub version: bool,
    pub debug: bool,
    pub controller: Option<String>,
    /// The job, and the array task when given as `12_3`.
    pub job: u64,
    pub task: Option<u32>,
}

static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
const OPTS: &[Opt<Args>] = &[
    switch("h/help", |a| a.help = true),
    switch("v/version", |a| a.version = true),
    switch("d/debug", |a| a.debug = true),
    value("-/controller", |a, v| a.controller = Some(v)),
];

/// Parses seff's arguments: exactly one job id, unless `-h` or `-v`.
pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    let words = FLAGS.parse(argv, &mut a)?;
    if a.help || a.version {
        return Ok(a);
    }
    let [word] = words.as_slice() else {
        return Err(format!("one job id is needed, not {} words\n{USAGE}", words.len()));
    };
    let bad = || format!("'{word}' is not a job id (12, or an array task's 12_3)");
    use crate::vocab::array::JobRef;
    (a.job, a.task) = match JobRef::parse(word) {
        Ok(JobRef::Job(job)) => (job, None),
        Ok(JobRef::Tasks(job, set)) if set.len() == 1 => (job, set.first()),
        _ => return Err(bad()),
    };
    Ok(a)
}

/// The job's recorded figures at `now_ms`: its CPU time and peak memory
/// once it has ended (0 before, as sacct leaves them blank), its wall-clock
/// time so far.
pub fn usage(j: &pb::Job, now_ms: i64) -> Usage {
    crate::efficiency::usage(j, j.usage.filter(|_| ended(j).is_some()), jobfmt::run_secs(j, now_ms))
}

/// seff's report of one job; no I/O.
pub fn report(j: &pb::Job, cluster: &str, now_ms: i64, debug: bool) -> String {
    let u = usage(j, now_ms);
    let state = jobfmt::accounting_state(j);
    let mut out = String::new();
    if debug {
        out += "Slurm data: JobID ArrayJobID User Group State Clustername Ncpus Nnodes Ntasks Reqmem \
                PerNode Cput Walltime Mem ExitStatus\n";
        let array = if j.array_task_id.is_some() { j.display_id() } else { String::new() };
        out += &format!(
            "Slurm data: {} {array} {} {} {state} {cluster} {} {} {} {} {} {} {} {}\n\n",
            j.id,
            j.user,
            jobfmt::group_name(j),
            u.cores(),
            u.node_count(),
            u.mem_asked_kb(),
            u8::from(!matches!(u.mem, MemAsked::PerCpu(_))),
            u.cpu_secs(),
            u.elapsed_secs,
            u.max_rss_kb,
            j.exit_code.max(0),
        );
    }
    out += &format!("Job ID: {}\n", j.id);
    if j.array_task_id.is_some() {
        out += &format!("Array Job ID: {}\n", j.display_id());
    }
    out += &format!("Cluster: {cluster}\n");
    out += &format!("User/Group: {}/{}\n", j.user, jobfmt::group_name(j));
    out += &match state {
        JobState::Pending | JobState::Running => format!("State: {state}\n"),
        _ => format!("State: {state} (exit code {})\n", j.exit_code.max(0)),
    };
    if u.cores() == 1 {
        out += "Cores: 1\n";
    } else {
        out += &format!("Nodes: {}\nCores per node: {}\n", u.node_count(), u.cores() / u.node_count());
    }
    if state == JobState::Pending {
        out += "Efficiency not available for jobs in the PENDING state.\n";
        return out;
    }
    out += &format!("CPU Utilized: {}\n", time_str(u.cpu_secs()));
    out += &format!(
        "CPU Efficiency: {:.2}% of {} core-walltime\n",
        u.cpu_percent(),
        time_str(u.core_walltime())
    );
    out += &format!("Job Wall-clock time: {}\n", time_str(u.elapsed_secs));
    out += &format!("Memory Utilized: {}\n", kbytes_str(u.max_rss_kb as f64));
    let asked = u.mem_asked_kb() as f64;
    let (share, per) = match u.mem {
        MemAsked::PerCpu(_) => (asked / u.cores() as f64, "core"),
        _ => (asked / u.node_count() as f64, "node"),
    };
    out += &format!(
        "Memory Efficiency: {:.2}% of {} ({}/{per})\n",
        u.mem_percent(),
        kbytes_str(asked),
        kbytes_str(share)
    );
    if state == JobState::Running {
        out += "WARNING: Efficiency statistics can only be obtained after the job has ended as seff tool \
                is based on the accounting database data.\n";
    }
    out
}

async fn run(a: Args) -> Result<String, (i32, String)> {
    let fail = |e: String| (1, e);
    let mut c = conn::connect_flag(a.controller.as_deref(), Identity::local()).await.map_err(fail)?;
    let who = c.session.who_am_i(pb::WhoAmIRequest {}).await.map_err(|e| fail(status(e)))?.into_inner();
    let filter = vec![
        pb::KeyValue { key: "id".into(), value: a.job.to_string() },
        pb::KeyValue { key: "history".into(), value: "yes".into() },
    ];
    let jobs =
        c.jobs.list_jobs(pb::ListRequest { filter }).await.map_err(|e| fail(status(e)))?.into_inner().jobs;
    let found = jobs.iter().find(|j| match a.task {
        Some(t) => j.array_job_id == a.job && j.array_task_id == Some(t),
        None => j.id == a.job,
    });
    // seff's own words and exit status for a job it cannot find.
    let Some(j) = found else { return Err((2, "Job not found.".into())) };
    Ok(report(j, &who.cluster_name, chrono::Utc::now().timestamp_millis(), a.debug))
}

/// Runs seff with its arguments (without `argv[0]`); returns the exit code.
/// As Slurm's seff, `-h` and `-v` exit 1 and a job not found exits 2.
pub async fn main(argv: &[String]) -> i32 {
    let a = match parse(argv) {
        Ok(a) => a,
        Err(e) => return super::output::finish("seff", Err(e)),
    };
    if a.help {
        super::output::complain(USAGE);
        return 1;
    }
    if a.version {
        let code = super::output::emit("seff", &format!("seff Version {VERSION}\n"));
        return if code == 0 { 1 } else { code };
    }
    match run(a).await {
        Ok(out) => super::output::emit("seff", &out),
        Err((2, e)) => {
            super::output::complain(&e);
            2
        }
        Err((_, e)) => super::output::finish("seff", Err(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spur_proto::states;

    fn job(state: JobState) -> pb::Job {
        pb::Job {
            id: 7,
            user: "alice".into(),
            group: "staff".into(),
            gid: Some(100),
            state: states::state_wire(state),
            start_ms: 1_000,
            end_ms: if state == JobState::Running { 0 } else { 61_000 },
            num_cpus: 1,
            num_nodes: 1,
            usage: Some(pb::JobUsage { user_cpu_us: 3_000_000, sys_cpu_us: 0, max_rss_kb: 2048 }),
            spec: Some(Box::new(pb::JobSpec { mem_mb: 100, ..Default::default() })),
            ..Default::default()
        }
    }

    #[test]
    fn a_finished_job_reads_as_seff_prints_it() {
        let out = report(&job(JobState::Completed), "spur", 100_000, false);
        assert_eq!(
            out,
            "Job ID: 7\nCluster: spur\nUser/Group: alice/staff\nState: COMPLETED (exit code 0)\nCores: 1\n\
             CPU Utilized: 00:00:03\nCPU Efficiency: 5.00% of 00:01:00 core-walltime\n\
             Job Wall-clock time: 00:01:00\nMemory Utilized: 2.00 MB\n\
             Memory Efficiency: 2.00% of 100.00 MB (100.00 MB/node)\n"
        );
    }

    #[test]
    fn running_pending_and_per_core_memory() {
        // While it runs no CPU time is recorded yet: 0%, with seff's warning.
        let out = report(&job(JobState::Running), "spur", 121_000, false);
        assert!(out.contains("State: RUNNING\n"), "{out}");
        assert!(out.contains("CPU Efficiency: 0.00% of 00:02:00 core-walltime\n"), "{out}");
        assert!(out.ends_with("based on the accounting database data.\n"), "{out}");
        let mut p = job(JobState::Pending);
        p.start_ms = 0;
        let out = report(&p, "spur", 121_000, false);
        assert!(out.ends_with("Cores: 1\nEfficiency not available for jobs in the PENDING state.\n"));
        let mut wide = job(JobState::Completed);
        (wide.num_cpus, wide.num_nodes) = (8, 2);
        wide.spec = Some(Box::new(pb::JobSpec { mem_per_cpu_mb: 64, ..Default::default() }));
        let out = report(&wide, "spur", 0, false);
        assert!(out.contains("Nodes: 2\nCores per node: 4\n"), "{out}");
        assert!(out.contains("Memory Efficiency: 0.39% of 512.00 MB (64.00 MB/core)\n"), "{out}");
    }

    #[test]
    fn no_memory_asked_reads_zero_of_zero() {
        let mut j = job(JobState::Completed);
        j.spec = None;
        let out = report(&j, "spur", 0, false);
        assert!(out.contains("Memory Efficiency: 0.00% of 0.00 MB (0.00 MB/node)\n"), "{out}");
    }

    #[test]
    fn arguments_are_one_job_id() {
        let argv = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(parse(&argv(&["12"])).unwrap().job, 12);
        let t = parse(&argv(&["12_3"])).unwrap();
        assert_eq!((t.job, t.task), (12, Some(3)));
        assert!(parse(&argv(&[])).unwrap_err().starts_with("one job id is needed"));
        assert_eq!(parse(&argv(&["x1"])).unwrap_err(), "'x1' is not a job id (12, or an array task's 12_3)");
        assert!(parse(&argv(&["-h"])).unwrap().help);
        assert!(parse(&argv(&["--bogus", "1"])).is_err());
    }
}
