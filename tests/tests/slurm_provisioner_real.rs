//! The `slurm` provisioner end to end against a real Slurm (Debian's
//! slurmctld and slurmd, one node on loopback: `spur_tests::slurm`).
//! Skipped (with a note) where Slurm is not installed, unless
//! `SPUR_TEST_SLURM=1`.

use spur_tests::proc::wait_for;
use spur_tests::slurm::{self, Slurm};

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
