"""parsl against Spur, unchanged: a SlurmProvider block whose workers srun
starts, a HighThroughputExecutor running a few apps, then cleanup (which
scancels the block). Run by tests/tests/real_clients.rs with Spur's links
first on PATH. Any failure raises and exits non-zero."""

import sys

import parsl
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.launchers import SrunLauncher
from parsl.providers import SlurmProvider


@parsl.python_app
def square(x):
    return x * x


@parsl.bash_app
def where(stdout=None):
    return "echo $SLURM_JOB_ID $SLURMD_NODENAME"


def main(run_dir, partition):
    provider = SlurmProvider(
        partition=partition,
        nodes_per_block=1,
        init_blocks=1,
        min_blocks=0,
        max_blocks=1,
        walltime="00:10:00",
        launcher=SrunLauncher(),
        cmd_timeout=60,
    )
    htex = HighThroughputExecutor(
        label="spur",
        address="127.0.0.1",
        max_workers_per_node=2,
        provider=provider,
    )
    config = Config(executors=[htex], run_dir=run_dir, strategy="none")
    with parsl.load(config):
        print("squares", sorted(f.result() for f in [square(i) for i in range(4)]), flush=True)
        out = f"{run_dir}/where.out"
        where(stdout=out).result()
        print("where", open(out).read().strip(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
