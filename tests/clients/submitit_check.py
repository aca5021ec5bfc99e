"""submitit against Spur, unchanged: a function's result, map_array, and
cancel. Run by tests/tests/real_clients.rs with Spur's links first on PATH.
Prints one line per check; any failure raises and exits non-zero."""

import sys
import time

import submitit

DEADLINE_S = 120


def add(a, b):
    return a + b


def wait(what, check):
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        if check():
            return
        time.sleep(0.2)
    raise TimeoutError(f"waited {DEADLINE_S}s for {what}")


def main(folder, partition):
    ex = submitit.AutoExecutor(folder=folder, cluster="slurm")
    ex.update_parameters(timeout_min=5, slurm_partition=partition)
    job = ex.submit(add, 2, 3)
    print("result", job.result(), flush=True)

    jobs = ex.map_array(add, [1, 2, 3], [10, 20, 30])
    print("map_array", [j.result() for j in jobs], flush=True)

    long = ex.submit(time.sleep, 600)
    wait("the sleep to run", lambda: long.watcher.get_state(long.job_id, mode="force") == "RUNNING")
    long.cancel(check=True)
    wait("the sleep to end", lambda: long.watcher.get_state(long.job_id, mode="force").startswith("CANCELLED"))
    print("cancelled", long.state, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
