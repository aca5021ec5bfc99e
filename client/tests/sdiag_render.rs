//! sdiag's text and JSON from a fixed answer: Slurm's labels and order, the
//! means it derives, and the RPC lines' sorts.

use spur_client::cli::sdiag::{Sort, parse, render, to_json};
use spur_proto::v1 as pb;

fn answer() -> pb::DiagResponse {
    let rpc = |name: &str, id, count, total_us| pb::RpcStat { name: name.into(), id, count, total_us };
    pb::DiagResponse {
        req_time: 1_000_000,
        req_time_start: 1_000_000 - 600,
        jobs_submitted: 7,
        jobs_started: 5,
        jobs_completed: 3,
        jobs_canceled: 1,
        jobs_failed: 1,
        job_states_ts: 1_000_000,
        jobs_pending: 2,
        jobs_running: 1,
        schedule_cycle_last: 40,
        schedule_cycle_max: 90,
        schedule_cycle_counter: 20,
        schedule_cycle_sum: 1_000,
        schedule_cycle_depth: 60,
        schedule_queue_len: 2,
        backfill_enabled: true,
        bf_backfilled_jobs: 4,
        bf_last_backfilled_jobs: 2,
        bf_when_last_cycle: 999_990,
        rpcs: vec![
            rpc("Jobs/Submit", 26, 7, 7_000),
            rpc("Jobs/ListJobs", 28, 9, 900),
            rpc("Cluster/Diag", 24, 1, 50),
        ],
        history: vec![pb::DiagSample {
            time: 999_960,
            last_pass_us: 1_500,
            jobs_started: 3,
            bf_backfilled_jobs: 1,
            rpcs_per_sec: 2.5,
            jobs_pending: 2,
            jobs_running: 1,
        }],
    }
}

fn line<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no '{label}' in\n{out}"))
}

#[test]
fn the_text_has_slurms_labels_and_derived_means() {
    let out = render(&answer(), Sort::Count);
    assert!(out.starts_with(&format!("{}\nsdiag output at ", "*".repeat(55))), "{out}");
    assert!(line(&out, "Data since").ends_with("(999400)"), "{out}");
    assert_eq!(line(&out, "Server thread count:"), "Server thread count:  N/A");
    assert_eq!(line(&out, "Jobs submitted:"), "Jobs submitted: 7");
    assert_eq!(line(&out, "Jobs started:"), "Jobs started:   5");
    assert_eq!(line(&out, "Jobs canceled:"), "Jobs canceled:  1");
    assert_eq!(line(&out, "Jobs pending:"), "Jobs pending:   2");
    assert_eq!(line(&out, "Mean cycle:"), "\tMean cycle:   50");
    assert_eq!(line(&out, "Mean depth cycle:"), "\tMean depth cycle:  3");
    // 20 passes in 10 minutes.
    assert_eq!(line(&out, "Cycles per minute:"), "\tCycles per minute: 2");
    assert_eq!(
        line(&out, "Total backfilled jobs (since last slurm start)"),
        "\tTotal backfilled jobs (since last slurm start): 4"
    );
    assert!(line(&out, "Last cycle when:").ends_with("(999990)"), "{out}");
    let rpcs: Vec<&str> =
        out.lines().skip_while(|l| !l.contains("by message type")).skip(1).take(3).collect();
    assert_eq!(
        rpcs[0],
        format!("\t{:<40}({:>5}) count:{:<6} ave_time:{:<6} total_time:{}", "Jobs/ListJobs", 28, 9, 100, 900)
    );
    assert!(rpcs[1].contains("Jobs/Submit") && rpcs[2].contains("Cluster/Diag"), "{rpcs:?}");
}

#[test]
fn rpc_lines_sort_by_id_time_and_mean_time() {
    let first = |sort| {
        let out = render(&answer(), sort);
        let l = out.lines().skip_while(|l| !l.contains("by message type")).nth(1).unwrap().to_string();
        l.split_whitespace().next().unwrap().split('(').next().unwrap().to_string()
    };
    assert_eq!(first(Sort::Id), "Cluster/Diag");
    assert_eq!(first(Sort::Time), "Jobs/Submit");
    assert_eq!(first(Sort::MeanTime), "Jobs/Submit");
    let a = |argv: &[&str]| parse(&argv.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap().sort;
    assert_eq!(a(&["-i"]), Sort::Id);
    assert_eq!(a(&["--sort-by-time2"]), Sort::MeanTime);
    assert_eq!(a(&[]), Sort::Count);
}

#[test]
fn backfill_off_reports_no_backfill_cycles_and_no_rpcs_says_so() {
    let d = pb::DiagResponse { backfill_enabled: false, rpcs: vec![], ..answer() };
    let out = render(&d, Sort::Count);
    let bf: Vec<&str> = out.lines().skip_while(|l| *l != "Backfilling stats").collect();
    assert!(bf.contains(&"\tTotal cycles: 0"), "{out}");
    assert!(bf.contains(&"\tLast cycle when: N/A"), "{out}");
    assert!(out.contains("\tNo RPCs recorded yet.\n"), "{out}");
}

#[test]
fn json_has_slurms_statistics_keys() {
    let v: serde_json::Value = serde_json::from_str(&to_json(&answer(), Some("spur"))).unwrap();
    let s = &v["statistics"];
    assert_eq!(s["jobs_submitted"], 7);
    assert_eq!(s["schedule_cycle_mean"], 50);
    assert_eq!(s["req_time"]["number"], 1_000_000);
    assert_eq!(s["rpcs_by_message_type"][0]["message_type"], "Cluster/Diag");
    assert_eq!(s["rpcs_by_message_type"][0]["average_time"]["number"], 50);
    assert_eq!(v["meta"]["slurm"]["cluster"], "spur");
    assert_eq!(v["errors"], serde_json::json!([]));
}

#[test]
fn json_carries_the_last_hour_a_minute_a_line() {
    let v: serde_json::Value = serde_json::from_str(&to_json(&answer(), None)).unwrap();
    let h = &v["statistics"]["history"][0];
    assert_eq!(h["time"]["number"], 999_960);
    assert_eq!((h["last_pass"].clone(), h["jobs_started"].clone()), (1_500.into(), 3.into()));
    assert_eq!((h["bf_backfilled_jobs"].clone(), h["rpcs_per_second"].clone()), (1.into(), 2.5.into()));
    assert_eq!((h["jobs_pending"].clone(), h["jobs_running"].clone()), (2.into(), 1.into()));
}

#[test]
fn bad_input_names_the_argument() {
    let e = parse(&["--bogus".to_string()]).unwrap_err();
    assert!(e.contains("--bogus"), "{e}");
    let e = parse(&["-M".to_string(), "a b".to_string()]).unwrap_err();
    assert!(e.contains("--clusters"), "{e}");
}
