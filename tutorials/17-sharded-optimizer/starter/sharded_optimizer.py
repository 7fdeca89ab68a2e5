"""Lab 17: shard Adam's state over the ranks by hand (ZeRO stage 1).

Every rank of a data-parallel job holds the same parameters and, after DDP's all-reduce, the same
gradients - and plain Adam makes every rank keep the same two moment tensors per parameter too:
twice the model's size, N times over. ZeRO-1 gives each parameter one owner rank: only the owner
keeps its moments and computes its update, then sends the new values to everybody.
"""

import wick
import wick.distributed as dist


def partition(numels, world):
    """The owner rank of each parameter, given their element counts: largest parameters first,
    each to the rank that owns the fewest elements so far (the lowest rank on a tie) - the greedy
    rule of PyTorch's ZeroRedundancyOptimizer."""
    # TODO(17): partition: sort indices by -numel (stable), give each to the least-loaded rank
    raise NotImplementedError("partition: sort indices by -numel (stable), give each to the least-loaded rank")


class ShardedAdam:
    """Adam whose moments exist only on each parameter's owner rank."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.owners = partition([p.numel() for p in self.params], self.world)
        self.steps = 0
        # TODO(17): __init__: moments (exp_avg, exp_avg_sq: zeros like p) for the own parameters only
        raise NotImplementedError("__init__: moments (exp_avg, exp_avg_sq: zeros like p) for the own parameters only")

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        self.steps += 1
        b1, b2 = self.betas
        with wick.no_grad():
            # TODO(17): step: Adam's update of the own parameters (bias-corrected), in place
            raise NotImplementedError("step: Adam's update of the own parameters (bias-corrected), in place")
            # TODO(17): step: every parameter from its owner to all ranks (dist.broadcast)
            raise NotImplementedError("step: every parameter from its owner to all ranks (dist.broadcast)")


def state_bytes(optimizer):
    """Bytes of optimizer state this rank holds."""
    # TODO(17): state_bytes: the bytes of every moment tensor in optimizer.state
    raise NotImplementedError("state_bytes: the bytes of every moment tensor in optimizer.state")
