//! The `slurm` provisioner end to end against a real Slurm (Debian's
//! slurmctld and slurmd, one node on loopback: `spur_tests::slurm`), the
//! scenario of slurm_provisioner_e2e.rs: a job that only the slurm
//! definition admits makes exactly one pilot in Slurm's queue, which Slurm
//! runs; the pilot's agent registers its node here; the job completes on
//! it; after idle_timeout_secs the pilot is cancelled in Slurm and the node
//! is gone. Skipped (with a note) where Slurm is not installed, unless
//! `SPUR_TEST_SLURM=1`.

use spur_tests::borrow::Borrowing;
use spur_tests::proc::wait_for;
use spur_tests::slurm::{self, Slurm};
use std::path::Path;
use std::rc::Rc;

/// A real Slurm with a node of 4 CPUs and 8 GiB, and our cluster borrowing
/// from it (borrowed nodes given back after `idle_secs`); None (skip) where
/// Slurm cannot run.
fn setup(test: &str, idle_secs: u64) -> Option<(Rc<Slurm>, Borrowing)> {
    if !slurm::available(test) {
        return None;
    }
    let up = Rc::new(Slurm::start(4, 8192));
    let queue = up.clone();
    let (key, conf) = up.env();
    let ours =
        Borrowing::start(Path::new(slurm::BIN_DIR), &[(key, &conf)], idle_secs, move || queue.queue_names());
    Some((up, ours))
}

/// A pilot's state and node in Slurm's queue (`RUNNING up01`), or "" when it is not there.
fn pilot_state(up: &Slurm, node: &str) -> String {
    up.ok("squeue", &["-h", "--name", &format!("spur-{node}"), "-o", "%T %N"]).trim().to_string()
}

/// Whether `node` is here and its agent has registered (sinfo's `%t` loses
/// the `#` of powering up).
fn registered(url: &str, node: &str) -> bool {
    let out = spur_tests::proc::run("sinfo", url, &["-h", "-N", "-n", node, "-o", "%t"]);
    let t = String::from_utf8_lossy(&out.stdout).trim().to_string();
    out.status.success() && !t.is_empty() && !t.ends_with('#')
}

/// The upstream itself: a job sbatch gives it runs on its node and leaves
/// its queue, so a failure of the tests below is not Slurm's.
#[test]
fn the_one_node_slurm_runs_a_job_of_its_own() {
    if !slurm::available("the one-node Slurm's own test") {
        return;
    }
    let up = Slurm::start(4, 8192);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ran");
    let wrap = format!("echo $SLURM_JOB_NODELIST > {}", file.display());
    let chdir = dir.path().display().to_string();
    let id = up.ok("sbatch", &["--parsable", "--chdir", &chdir, "-o", "/dev/null", "--wrap", &wrap]);
    assert!(id.trim().parse::<u64>().is_ok(), "sbatch --parsable: {id:?}");
    let ran = wait_for("the job ran", || std::fs::read_to_string(&file).ok().filter(|s| !s.is_empty()));
    assert_eq!(ran.trim(), slurm::NODE);
    wait_for("Slurm's queue empty", || up.queue_names().is_empty().then_some(()));
}

#[test]
fn a_job_only_the_slurm_definition_admits_runs_on_a_node_borrowed_from_a_real_slurm() {
    let Some((up, s)) = setup("the real-Slurm provisioner test", 2) else { return };
    let id = s.submit();
    let mut most = 0;
    s.wait("one pilot in Slurm's queue", &mut most, || s.pilots() == ["spur-burst-1"]);
    s.wait("the pilot's agent registered", &mut most, || registered(&s.c.url, "burst-1"));
    // Slurm runs the pilot on its node: the agent there is ours.
    assert_eq!(pilot_state(&up, "burst-1"), format!("RUNNING {}", slurm::NODE), "{}", up.logs());
    s.completes_and_gives_back(id, &mut most);
    assert!(up.queue_names().is_empty(), "Slurm's queue is empty: {:?}", up.queue_names());
}

#[test]
fn a_restart_while_the_pilot_pends_in_slurm_asks_for_no_second_one() {
    let Some((up, mut s)) = setup("the real-Slurm restart test", 2) else { return };
    // The pilot pends in Slurm's queue while a job there holds all of its node.
    let chdir = s.dir.path().display().to_string();
    let args = ["--parsable", "-c", "4", "--chdir", &chdir, "-o", "/dev/null", "--wrap", "sleep 300"];
    let blocker = up.ok("sbatch", &args).trim().to_string();
    wait_for("Slurm's node busy", || {
        let state = up.ok("squeue", &["-h", "-j", &blocker, "-o", "%T"]);
        (state.trim() == "RUNNING").then_some(())
    });
    let id = s.submit();
    let mut most = 0;
    s.wait("one pilot in Slurm's queue", &mut most, || s.pilots() == ["spur-burst-1"]);
    assert_eq!(pilot_state(&up, "burst-1"), "PENDING", "the pilot waits for the node");
    s.c.restart();
    // A pass has run since the restart: the job has its reason again.
    let reason = || spur_tests::proc::field(&s.c.url, id, "%r");
    s.wait("a pass after the restart", &mut most, || !reason().is_empty());
    assert!(!registered(&s.c.url, "burst-1"), "the node waits for its agent");
    up.ok("scancel", &[&blocker]);
    s.completes_and_gives_back(id, &mut most);
}
