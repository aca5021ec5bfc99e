"""simple_slurm against Spur, unchanged: a batch script fed to sbatch on
stdin with its #SBATCH lines, squeue --me with a CSV -o format, srun outside
an allocation, and scancel. Run by tests/tests/real_clients.rs with Spur's
links first on PATH. Prints one line per check; a failure raises."""

import os
import sys
import time

from simple_slurm import Slurm

DEADLINE_S = 120


def wait(what, check):
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    raise TimeoutError(f"waited {DEADLINE_S}s for {what}")


def queued(slurm, job_id):
    slurm.squeue.update_squeue()
    return slurm.squeue.jobs.get(job_id)


def main(folder, partition):
    os.makedirs(folder, exist_ok=True)
    out = os.path.join(folder, f"hello-{Slurm.JOB_ID}.out")
    slurm = Slurm(job_name="hello", partition=partition, time="00:05:00", ntasks=1, output=out)
    job_id = slurm.sbatch("echo hello from $SLURM_JOB_ID on $SLURM_JOB_NODELIST", verbose=False)
    wait("the job to leave the queue", lambda: queued(slurm, job_id) is None)
    path = out.replace(Slurm.JOB_ID, str(job_id))
    text = wait("its output", lambda: os.path.exists(path) and open(path).read())
    print("sbatch", text.strip().split()[:4] == ["hello", "from", str(job_id), "on"], flush=True)

    rc = Slurm(partition=partition, time="00:05:00").srun("true")
    print("srun", rc, flush=True)

    long = Slurm(job_name="long", partition=partition, time="00:10:00")
    long_id = long.sbatch("sleep 600", verbose=False)
    row = wait("the long job to run", lambda: (r := queued(long, long_id)) and r["ST"] == "R" and r)
    print("squeue", row["NAME"], row["ST"], flush=True)
    long.scancel.cancel_job(long_id)
    wait("the long job to go", lambda: queued(long, long_id) is None)
    print("scancel ok", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
