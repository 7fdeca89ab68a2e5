"""A sharded checkpoint written by one world size resumes on another (test_reshard.sh).

    mpirun -np 2 python3 reshard_probe.py save DIR     # 3 steps, save, 3 more: DIR/losses.txt
    mpirun -np 3 python3 reshard_probe.py resume DIR   # load, the same 3 steps: DIR/resumed-3.txt

The global batch (12 rows) divides among 2, 3 and 4 ranks, and the loss printed is its mean over
all rows, so every world size must print the same losses after loading.
"""

import os
import sys

import wick
import wick.distributed as dist
import wick.nn as nn
import wick.nn.functional as F
from wick.distributed.checkpoint import load_sharded, save_sharded
from wick.distributed.fsdp import FullyShardedDataParallel as FSDP
from wick.distributed.fsdp.wrap import ModuleWrapPolicy

ROWS = 12


def make_model():
    wick.manual_seed(3)
    net = nn.Sequential(nn.Linear(10, 13), nn.Tanh(), nn.Linear(13, 7), nn.Tanh(),
                        nn.Linear(7, 4))
    return FSDP(net, auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))


def step_losses(model, optimizer, first, count):
    rank, world = dist.get_rank(), dist.get_world_size()
    per = ROWS // world
    losses = []
    for step in range(first, first + count):
        wick.manual_seed(500 + step)
        x, y = wick.randn(ROWS, 10), wick.randint(0, 4, (ROWS,))
        loss = F.cross_entropy(model(x[rank * per:(rank + 1) * per]),
                               y[rank * per:(rank + 1) * per])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        mean = loss.detach().reshape(1).clone()
        dist.all_reduce(mean, op=dist.ReduceOp.AVG)
        losses.append(float(mean))
    return losses


def main():
    mode, path = sys.argv[1], sys.argv[2]
    dist.init_process_group("mpi", timeout=60)
    world = dist.get_world_size()
    model = make_model()
    optimizer = wick.optim.Adam(model.parameters(), lr=0.02)
    if mode == "save":
        step_losses(model, optimizer, 0, 3)
        save_sharded(model, optimizer, os.path.join(path, "ckpt"))
        out = os.path.join(path, "losses.txt")
    else:
        load_sharded(model, optimizer, os.path.join(path, "ckpt"))
        out = os.path.join(path, f"resumed-{world}.txt")
    losses = step_losses(model, optimizer, 3, 3)
    if dist.get_rank() == 0:
        with open(out, "w") as f:
            f.write(" ".join(f"{v:.7f}" for v in losses) + "\n")
        print(f"{mode} on {world} ranks: losses of steps 4-6: {losses}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
