//! sstat's pure half: job references, Slurm's size and time forms, and a
//! step's tasks summed into its fields (averages, maxima and where they are).

use spur_client::cli::sstat::{cpu_time, parse, render, rows, size, step_ref};
use spur_proto::v1 as pb;

fn task(node: &str, task: u32, rss: u64, cpu_usec: u64) -> pb::TaskUse {
    pb::TaskUse {
        job_id: 7,
        step_id: 0,
        node: node.into(),
        task,
        rss_bytes: rss,
        max_rss_bytes: rss * 2,
        vsize_bytes: 4 * rss,
        max_vsize_bytes: 4 * rss,
        cpu_usec,
        read_bytes: 1024 * u64::from(task),
        write_bytes: 0,
        pages: 0,
        pid: 100 + task,
    }
}

fn answer() -> pb::StepStatsResponse {
    pb::StepStatsResponse {
        tasks: vec![task("node01", 0, 1 << 20, 3_000_000), task("node02", 1, 3 << 20, 61_000_000)],
        steps: vec!["7.0".into()],
        missing: vec![],
    }
}

fn argv(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

#[test]
fn references_name_a_job_or_one_of_its_steps() {
    assert_eq!(step_ref("12"), Ok((12, None)));
    assert_eq!(step_ref("12.3"), Ok((12, Some(3))));
    assert!(step_ref("12.batch").unwrap_err().contains("srun steps only"));
    assert!(step_ref("x").unwrap_err().starts_with("--jobs: 'x' is not a job id"));
    assert!(step_ref("12.y").unwrap_err().contains("names no step"));
    assert_eq!(parse(&argv("-j 1,2.0 3")).unwrap().jobs, ["1", "2.0", "3"]);
}

#[test]
fn sizes_and_times_are_slurms() {
    assert_eq!(size(0.0, false), "0");
    assert_eq!(size(1000.0, false), "1000");
    assert_eq!(size(2_461_700.0, false), "2461700");
    assert_eq!(size(2_461_696.0, false), "2404K");
    assert_eq!(size(1_572_864.0, false), "1.50M");
    assert_eq!(size(1_572_864.0, true), "1572864");
    assert_eq!(cpu_time(3_000_000), "00:00:03");
    assert_eq!(cpu_time(3_723_000_000), "01:02:03");
    assert_eq!(cpu_time(90_061_000_000), "1-01:01:01");
}

#[test]
fn a_step_row_sums_its_tasks() {
    let a = parse(&argv(
        "-n -P -o JobID,NTasks,AveRSS,MaxRSS,MaxRSSNode,MaxRSSTask,MinCPU,MinCPUNode,AveCPU,MaxDiskRead,Nodelist,Pids",
    ))
    .unwrap();
    let out = render(&a, &rows(&answer())).unwrap();
    assert_eq!(out, "7.0|2|2M|6M|node02|1|00:00:03|node01|00:00:32|1K|node[01-02]|100,101\n");
    let a = parse(&argv("-n -P -i")).unwrap();
    assert_eq!(render(&a, &rows(&answer())).unwrap(), "7.0|node[01-02]|100,101\n");
}

#[test]
fn the_default_fields_are_slurms_and_a_bad_one_is_named() {
    let out = render(&parse(&[]).unwrap(), &rows(&answer())).unwrap();
    let head = out.lines().next().unwrap();
    assert!(head.starts_with("JobID         AllocTRES  MaxVMSize  MaxVMSizeNode  MaxVMSizeTask"), "{head}");
    assert!(head.trim_end().ends_with("TRESUsageOutTot"), "{head}");
    let e = render(&parse(&argv("-o Bogus")).unwrap(), &[]).unwrap_err();
    assert!(e.contains("\"Bogus\""), "{e}");
}
