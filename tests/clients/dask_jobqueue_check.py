"""dask-jobqueue against Spur, unchanged: a SLURMCluster scaled to one job
(sbatch of its generated script, squeue for the job's state), a computation
on the worker it starts, and close (scancel). Run by
tests/tests/real_clients.rs with Spur's links first on PATH."""

import sys
import time

from dask.distributed import Client
from dask_jobqueue import SLURMCluster


def square(x):
    return x * x


def main(folder, partition):
    cluster = SLURMCluster(
        queue=partition,
        cores=1,
        processes=1,
        memory="1GB",
        walltime="00:05:00",
        log_directory=folder,
        scheduler_options={"host": "127.0.0.1"},
        worker_extra_args=["--nthreads", "1"],
    )
    script = cluster.job_script()
    print("script", "#SBATCH" in script, flush=True)
    cluster.scale(jobs=1)
    with Client(cluster) as client:
        client.wait_for_workers(1, timeout=120)
        print("squares", client.gather(client.map(square, range(4))), flush=True)
        jobs = list(cluster.workers)
        print("jobs", len(jobs), flush=True)
    cluster.close()
    print("closed", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
