"""Run by the lab's tests under mpirun: trains an MLP with DDP + ShardedAdam and with DDP + wick's
Adam from the same start, and prints (rank 0) one JSON line with what the tests check.

    mpirun -np 2 python3 tests/ranks.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import labkit  # noqa: E402

labkit.setup_paths()
import wick  # noqa: E402
import wick.distributed as dist  # noqa: E402
import wick.nn as nn  # noqa: E402
import wick.nn.functional as F  # noqa: E402
from wick.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

L = labkit.impl(__file__, "sharded_optimizer")


def train(make_optimizer, steps=5):
    wick.manual_seed(0)
    net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 48), nn.ReLU(),
                        nn.Linear(48, 10))
    model = DDP(net)
    optimizer = make_optimizer(model.parameters())
    rank, world = dist.get_rank(), dist.get_world_size()
    for step in range(steps):
        wick.manual_seed(100 + step)
        x, y = wick.randn(8 * world, 32), wick.randint(0, 10, (8 * world,))
        loss = F.cross_entropy(model(x[8 * rank:8 * (rank + 1)]), y[8 * rank:8 * (rank + 1)])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return net, optimizer


def main():
    dist.init_process_group("mpi", timeout=60)
    sharded_net, sharded = train(lambda ps: L.ShardedAdam(ps, lr=0.01))
    plain_net, plain = train(lambda ps: wick.optim.Adam(ps, lr=0.01))
    diff = max(float((a - b).abs().max()) for a, b in zip(sharded_net.parameters(),
                                                         plain_net.parameters()))
    mine = wick.tensor([float(L.state_bytes(sharded))])
    everyone = wick.zeros(dist.get_world_size())
    dist.all_gather_into_tensor(everyone, mine)
    full = sum(2 * p.numel() * p.element_size() for p in plain_net.parameters())
    if dist.get_rank() == 0:
        print(json.dumps({"world": dist.get_world_size(), "max_diff": diff,
                          "state_bytes": everyone.tolist(), "full_state_bytes": full}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
