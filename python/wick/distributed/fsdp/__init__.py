"""wick.distributed.fsdp: fully sharded data parallelism (torch.distributed.fsdp).

ZeRO-3 is FullyShardedDataParallel(model) (ShardingStrategy.FULL_SHARD); ZeRO-2 is
sharding_strategy=ShardingStrategy.SHARD_GRAD_OP. The design is Note [FSDP units] in _unit.py;
docs/distributed.md compares the memory each strategy keeps per rank.
"""

from wick.distributed.fsdp import wrap  # noqa: F401
from wick.distributed.fsdp._unit import (  # noqa: F401
    BackwardPrefetch, FullyShardedDataParallel, ShardingStrategy)

__all__ = ["FullyShardedDataParallel", "ShardingStrategy", "BackwardPrefetch", "wrap"]
