//! The Python libraries that drive Slurm, from PyPI and unchanged, against a
//! real spurctld and spurd: submitit (a function's result, `map_array`,
//! cancel), parsl (a SlurmProvider block with srun-launched
//! HighThroughputExecutor workers), simple_slurm (a script on sbatch's stdin,
//! `squeue --me` as CSV, srun, scancel) and dask-jobqueue (a SLURMCluster's
//! worker job computing, then closed). Each leaves no process behind.
//!
//! The libraries live in a virtualenv named by `SPUR_TEST_VENV` (`.ci/run`
//! makes it). Without it the tests are skipped with a note, except under CI.

use spur_tests::cluster::Cluster;
use spur_tests::proc::{links_dir, pgrep, wait_for};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The virtualenv's python with `module` importable, or None (skip) outside CI.
fn venv_python(module: &str) -> Option<PathBuf> {
    let Some(venv) = std::env::var_os("SPUR_TEST_VENV") else {
        assert!(std::env::var("CI").is_err(), "CI must set SPUR_TEST_VENV (see .ci/run)");
        eprintln!("note: SPUR_TEST_VENV is unset; skipping the {module} test");
        return None;
    };
    let python = Path::new(&venv).join("bin/python");
    let ok =
        Command::new(&python).args(["-c", &format!("import {module}")]).status().is_ok_and(|s| s.success());
    assert!(ok, "{} cannot import {module}", python.display());
    Some(python)
}

fn start() -> Cluster {
    Cluster::two_nodes(|t| t, &[])
}

/// Runs `script` (from tests/clients) with the venv's python, Spur's links
/// and the venv's bin first on PATH, in the cluster's directory; its stdout.
fn run_script(e: &Cluster, python: &Path, script: &str, args: &[&str]) -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients").join(script);
    let venv_bin = python.parent().unwrap();
    let path = format!(
        "{}:{}:{}",
        links_dir().display(),
        venv_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(python)
        .arg(&file)
        .args(args)
        .current_dir(e.dir.path())
        .env("PATH", path)
        .env("SPUR_CONTROLLER_ADDR", &e.c.url)
        .env("PYTHONUNBUFFERED", "1")
        .env_remove("SPUR_TOKEN")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{script} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// Every job of the cluster has ended: sacct lists no PENDING or RUNNING row.
fn all_ended(e: &Cluster) -> String {
    wait_for("every job ended", || {
        let rows = e.ok("sacct", "-n -P -a -X -o JobID,State");
        (!rows.contains("RUNNING") && !rows.contains("PENDING")).then_some(rows)
    })
}

#[test]
fn submitit_result_map_array_and_cancel() {
    let Some(python) = venv_python("submitit") else { return };
    let e = start();
    let folder = e.dir.path().join("submitit");
    let out = run_script(&e, &python, "submitit_check.py", &[folder.to_str().unwrap(), "batch"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "result 5", "{out}");
    assert_eq!(lines[1], "map_array [11, 22, 33]", "{out}");
    assert!(lines[2].starts_with("cancelled CANCELLED"), "{out}");
    let rows = all_ended(&e);
    assert_eq!(rows.lines().filter(|l| l.ends_with("|COMPLETED")).count(), 4, "{rows}");
    let folder = folder.display().to_string();
    wait_for("no submitit process left", || {
        (!pgrep(&format!("submitit.core._submit {folder}"))).then_some(())
    });
}

#[test]
fn parsl_slurm_provider_runs_apps_on_srun_workers() {
    let Some(python) = venv_python("parsl") else { return };
    let e = start();
    let run_dir = e.dir.path().join("runinfo");
    let out = run_script(&e, &python, "parsl_check.py", &[run_dir.to_str().unwrap(), "batch"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "squares [0, 1, 4, 9]", "{out}");
    let block: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(block.len(), 3, "where <job id> <node>: {out}");
    assert!(block[1].parse::<u64>().is_ok() && block[2].starts_with("node"), "{out}");
    // cleanup scancels the block: it ends, and its workers with it.
    let rows = all_ended(&e);
    assert!(rows.contains(&format!("{}|CANCELLED", block[1])), "{rows}");
    let run_dir = run_dir.display().to_string();
    wait_for("no worker left", || (!pgrep(&format!("process_worker_pool.*{run_dir}"))).then_some(()));
}

#[test]
fn simple_slurm_sbatch_squeue_srun_and_scancel() {
    let Some(python) = venv_python("simple_slurm") else { return };
    let e = start();
    let folder = e.dir.path().join("simple");
    let out = run_script(&e, &python, "simple_slurm_check.py", &[folder.to_str().unwrap(), "batch"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines, ["sbatch True", "srun 0", "squeue long R", "scancel ok"], "{out}");
    let rows = all_ended(&e);
    assert_eq!(rows.lines().filter(|l| l.ends_with("|COMPLETED")).count(), 2, "{rows}");
    assert_eq!(rows.lines().filter(|l| l.contains("|CANCELLED")).count(), 1, "{rows}");
}

#[test]
fn dask_jobqueue_slurm_cluster_computes_on_its_worker_job() {
    let Some(python) = venv_python("dask_jobqueue") else { return };
    let e = start();
    let folder = e.dir.path().join("dask");
    let out = run_script(&e, &python, "dask_jobqueue_check.py", &[folder.to_str().unwrap(), "batch"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines, ["script True", "squares [0, 1, 4, 9]", "jobs 1", "closed"], "{out}");
    // close() scancels the worker's job: it ends, and the worker with it.
    let rows = all_ended(&e);
    assert!(rows.lines().any(|l| l.contains("|CANCELLED")), "{rows}");
    wait_for("no dask worker left", || (!pgrep("distributed.cli.dask_worker")).then_some(()));
}
