"""wick.distributed and wick.nn.parallel.DistributedDataParallel from Python, run by mpirun with
2 ranks (tests/distributed/CMakeLists.txt): collectives with predictable values, and DDP against
one process trained on the whole batch. A failure raises, so the rank exits non-zero and mpirun
stops the job."""

import wick
import wick.distributed as dist
import wick.nn as nn
import wick.nn.functional as F
from wick.nn.parallel import DistributedDataParallel


def make_model(seed):
    wick.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))


def max_difference(a, b):
    return float((a - b).abs().max())


def test_collectives(rank, world):
    x = wick.full((5,), float(rank + 1))
    dist.all_reduce(x)
    assert x.tolist() == [world * (world + 1) / 2] * 5, x
    m = wick.full((2,), float(rank + 1))
    dist.all_reduce(m, op=dist.ReduceOp.MAX)
    assert m.tolist() == [float(world)] * 2, m
    b = wick.full((3,), float(rank))
    work = dist.broadcast(b, src=world - 1, async_op=True)
    work.wait()
    assert work.is_completed() and b.tolist() == [float(world - 1)] * 3, b
    gathered = [wick.zeros(2) for _ in range(world)]
    dist.all_gather(gathered, wick.full((2,), float(rank)))
    assert [g.tolist() for g in gathered] == [[float(r)] * 2 for r in range(world)], gathered
    dist.barrier()


def test_ddp_matches_one_process(rank, world):
    wick.manual_seed(11)
    x, y = wick.randn(4 * world, 6), wick.randn(4 * world, 3)
    reference = make_model(100)
    ref_opt = wick.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    local = make_model(100 + rank)  # construction copies rank 0's parameters
    ddp = DistributedDataParallel(local)
    opt = wick.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        loss = F.mse_loss(reference(x), y)
        ref_opt.zero_grad()
        loss.backward()
        ref_opt.step()
        loss = F.mse_loss(ddp(x[4 * rank:4 * rank + 4]), y[4 * rank:4 * rank + 4])
        opt.zero_grad()
        loss.backward()
        opt.step()
    for (name, a), (_, b) in zip(local.named_parameters(), reference.named_parameters()):
        assert max_difference(a, b) <= 1e-5, (name, max_difference(a, b))
    stats = ddp.reducer.stats
    assert stats.iterations == 3 and stats.buckets_launched == 3, stats
    with ddp.no_sync():
        F.mse_loss(ddp(x[:4]), y[:4]).backward()
    assert ddp.reducer.stats.local_backwards == 1


def main():
    dist.init_process_group("mpi", timeout=60)
    rank, world = dist.get_rank(), dist.get_world_size()
    test_collectives(rank, world)
    test_ddp_matches_one_process(rank, world)
    if rank == 0:
        print(f"wick.distributed from Python: collectives and DDP pass on {world} ranks")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
