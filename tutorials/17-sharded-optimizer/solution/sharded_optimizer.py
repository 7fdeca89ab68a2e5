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
    # BEGIN SOLUTION: sort indices by -numel (stable), give each to the least-loaded rank
    loads = [0] * world
    owners = [0] * len(numels)
    for i in sorted(range(len(numels)), key=lambda i: -numels[i]):
        rank = min(range(world), key=lambda r: loads[r])
        owners[i] = rank
        loads[rank] += numels[i]
    return owners
    # END SOLUTION


class ShardedAdam:
    """Adam whose moments exist only on each parameter's owner rank."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.owners = partition([p.numel() for p in self.params], self.world)
        self.steps = 0
        # BEGIN SOLUTION: moments (exp_avg, exp_avg_sq: zeros like p) for the own parameters only
        self.state = {i: (wick.zeros_like(p), wick.zeros_like(p))
                      for i, p in enumerate(self.params) if self.owners[i] == self.rank}
        # END SOLUTION

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        self.steps += 1
        b1, b2 = self.betas
        with wick.no_grad():
            # BEGIN SOLUTION: Adam's update of the own parameters (bias-corrected), in place
            for i, (m, v) in self.state.items():
                p, g = self.params[i], self.params[i].grad
                m.mul_(b1).add_(g * (1 - b1))
                v.mul_(b2).add_(g * g * (1 - b2))
                denom = v.sqrt() / (1 - b2 ** self.steps) ** 0.5 + self.eps
                p.sub_(m / denom * (self.lr / (1 - b1 ** self.steps)))
            # END SOLUTION
            # BEGIN SOLUTION: every parameter from its owner to all ranks (dist.broadcast)
            for i, p in enumerate(self.params):
                dist.broadcast(p, src=self.owners[i])
            # END SOLUTION


def state_bytes(optimizer):
    """Bytes of optimizer state this rank holds."""
    # BEGIN SOLUTION: the bytes of every moment tensor in optimizer.state
    return sum(t.numel() * t.element_size() for pair in optimizer.state.values() for t in pair)
    # END SOLUTION
