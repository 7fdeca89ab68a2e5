"""A rank that fails in the middle of a sharded step (test_failures.sh): the others must stop
with a clear error in bounded time, never hang.

    mpirun -np 3 python3 sharded_failure_probe.py raise   # rank 1 raises inside backward
    mpirun -np 3 python3 sharded_failure_probe.py hang    # rank 1 stops calling collectives
"""

import sys
import time

import wick
import wick.distributed as dist
import wick.nn as nn
import wick.nn.functional as F
from wick.distributed.fsdp import FullyShardedDataParallel as FSDP
from wick.distributed.fsdp.wrap import ModuleWrapPolicy


def main():
    mode = sys.argv[1]
    dist.init_process_group("mpi", timeout=2)
    rank = dist.get_rank()
    wick.manual_seed(0)
    model = FSDP(nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 2)),
                 auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    optimizer = wick.optim.SGD(model.parameters(), lr=0.1)
    x, y = wick.randn(4, 8), wick.randint(0, 2, (4,))
    loss = F.cross_entropy(model(x), y)
    if rank == 1:
        if mode == "raise":
            raise RuntimeError("rank 1 failed on purpose in the middle of an FSDP step")
        time.sleep(60)  # hang: never joins the reduce-scatter the others wait for
    loss.backward()
    optimizer.step()
    print(f"rank {rank}: step finished", flush=True)


if __name__ == "__main__":
    main()
