"""Sharded data parallelism from Python, run by mpirun with 2, 3 and 4 ranks
(tests/distributed/CMakeLists.txt): ZeRO-1 (ZeroRedundancyOptimizer), ZeRO-2 (FSDP SHARD_GRAD_OP)
and ZeRO-3 (FSDP FULL_SHARD, with and without nested units and prefetch) must leave the same
parameters as DDP after the same steps; FSDP must hold only its shard between steps; bad input
raises. A failure raises, so the rank exits non-zero and mpirun stops the job.

    mpirun -np 3 python3 tests/distributed/test_python_sharded.py
"""

import functools

import wick
import wick.distributed as dist
import wick.nn as nn
import wick.nn.functional as F
from wick.distributed.fsdp import FullyShardedDataParallel as FSDP
from wick.distributed.fsdp import ShardingStrategy
from wick.distributed.fsdp.wrap import ModuleWrapPolicy, size_based_auto_wrap_policy
from wick.distributed.optim import ZeroRedundancyOptimizer
from wick.nn.parallel import DistributedDataParallel as DDP

STEPS = 4
PER_RANK = 3


class Net(nn.Module):
    """Convolution, batch norm, a residual connection and odd sizes (padding at 3 and 4 ranks)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3)
        self.bn = nn.BatchNorm2d(3)
        self.fc1 = nn.Linear(3 * 6 * 6, 17)
        self.fc2 = nn.Linear(17, 17)
        self.head = nn.Linear(17, 5)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x))).flatten(1)
        x = F.tanh(self.fc1(x))
        x = F.tanh(self.fc2(x)) + x
        return self.head(x)


def make_net():
    wick.manual_seed(7)
    return Net()


def batches(world):
    wick.manual_seed(99)
    return [(wick.randn(PER_RANK * world, 1, 8, 8), wick.randint(0, 5, (PER_RANK * world,)))
            for _ in range(STEPS)]


def local(batch, rank):
    x, y = batch
    return x[PER_RANK * rank:PER_RANK * (rank + 1)], y[PER_RANK * rank:PER_RANK * (rank + 1)]


def train(model, optimizer, data, rank, clip=None):
    losses = []
    for batch in data:
        x, y = local(batch, rank)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        if clip is not None:
            clip(model)
        optimizer.step()
        losses.append(float(loss))
    return losses


def reference(data, rank, optimizer_class, **options):
    model = DDP(make_net())
    train(model, optimizer_class(model.parameters(), **options), data, rank)
    return {name: p.detach().clone() for name, p in model.module.named_parameters()}


def check_equal(name, params, expected, tolerance=1e-5):
    assert set(params) == set(expected), (name, sorted(params), sorted(expected))
    for key, value in expected.items():
        diff = float((params[key] - value).abs().max())
        assert diff <= tolerance, f"{name}: {key} differs from DDP's by {diff}"


def test_zero1(data, rank, world):
    expected = reference(data, rank, wick.optim.Adam, lr=0.01)
    model = DDP(make_net())
    optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=wick.optim.Adam,
                                        lr=0.01)
    train(model, optimizer, data, rank)
    got = {name: p.detach() for name, p in model.module.named_parameters()}
    check_equal("ZeRO-1", got, expected)
    owned = sum(p.numel() for p in optimizer.owned_parameters())
    total = sum(p.numel() for p in model.parameters())
    counts = [0.0] * world
    counts[rank] = float(owned)
    counts = wick.tensor(counts)
    dist.all_reduce(counts)
    assert int(counts.sum()) == total, (counts, total)
    state = sum(t.numel() for s in optimizer.state.values() for t in s.values()
                if isinstance(t, wick.Tensor) and t.dim() > 0)
    assert state == 2 * owned, (state, owned)  # Adam's two moments for the own parameters only


def test_fsdp(data, rank, world, name, **kwargs):
    options = dict(lr=0.05, momentum=0.9, weight_decay=1e-3)
    expected = reference(data, rank, wick.optim.SGD, **options)
    model = FSDP(make_net(), **kwargs)
    optimizer = wick.optim.SGD(model.parameters(), **options)
    train(model, optimizer, data, rank)
    full = model.full_state_dict()
    check_equal(name, {k: v for k, v in full.items() if k in expected}, expected)
    units = [m for m in model.modules() if isinstance(m, FSDP)]
    shard_elements = sum(u._flat_param.numel() for u in units)
    total = sum(v.numel() for v in expected.values())
    assert shard_elements * world >= total and shard_elements <= total // world + world * 5, \
        (name, shard_elements, total)
    for unit in units:  # between steps only the shards exist
        assert unit._full._is_storage_freed(), (name, unit)
    return model


def test_bad_input(rank, world):
    try:
        FSDP(make_net(), sharding_strategy="FULL_SHARD")
        raise AssertionError("a string sharding_strategy was accepted")
    except TypeError as e:
        assert "sharding_strategy" in str(e), e
    try:
        FSDP(make_net(), sharding_strategy=ShardingStrategy.NO_SHARD)
        raise AssertionError("NO_SHARD was accepted")
    except NotImplementedError as e:
        assert "DistributedDataParallel" in str(e), e
    model = FSDP(make_net(), auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    inner = model._fsdp_wrapped_module.fc1._fsdp_wrapped_module
    try:
        inner.weight.sum()
        raise AssertionError("a freed parameter was readable")
    except RuntimeError as e:
        assert "freed" in str(e), e
    # A parameter left out of the loss: the next forward says which one.
    x = wick.randn(2, 1, 8, 8)
    model(x)  # in grad mode the root keeps its whole parameters for the backward
    loss = model._fsdp_wrapped_module.bn.weight.sum()  # bn.bias gets no gradient
    loss.backward()
    try:
        model(x)
        raise AssertionError("a missing gradient went unnoticed")
    except RuntimeError as e:
        assert "gave no gradient" in str(e) and "bn.bias" in str(e), e


def main():
    dist.init_process_group("mpi", timeout=60)
    rank, world = dist.get_rank(), dist.get_world_size()
    data = batches(world)
    test_zero1(data, rank, world)
    test_fsdp(data, rank, world, "ZeRO-2", sharding_strategy=ShardingStrategy.SHARD_GRAD_OP)
    test_fsdp(data, rank, world, "ZeRO-3 one unit")
    test_fsdp(data, rank, world, "ZeRO-3 nested units, prefetch",
              auto_wrap_policy=ModuleWrapPolicy({nn.Linear, nn.Conv2d}), forward_prefetch=True)
    test_fsdp(data, rank, world, "ZeRO-3 size policy",
              auto_wrap_policy=functools.partial(size_based_auto_wrap_policy,
                                                 min_num_params=200))
    test_bad_input(rank, world)
    if rank == 0:
        print(f"sharded data parallel from Python: ZeRO-1, ZeRO-2 and FSDP equal DDP on {world} "
              "ranks")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
