"""ZeroRedundancyOptimizer: optimizer state sharded over the ranks (ZeRO-1), PyTorch's
torch.distributed.optim.ZeroRedundancyOptimizer.

Used with DistributedDataParallel, which leaves every rank with the same averaged gradients. Each
parameter belongs to one rank (greedily, largest first, to the rank holding the fewest elements so
far, as PyTorch partitions them); a rank's local optimizer (momentum, Adam's moments) exists only
for its own parameters, so optimizer state costs about 1/N per rank. step() updates the own
parameters, then each rank broadcasts its parameters to the others, so all replicas stay equal.

    model = DistributedDataParallel(Net())
    optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=wick.optim.Adam, lr=1e-3)
"""

from wick import _C

_d = _C._distributed

__all__ = ["ZeroRedundancyOptimizer"]


class ZeroRedundancyOptimizer:
    def __init__(self, params, optimizer_class, process_group=None,
                 parameters_as_bucket_view=False, overlap_with_ddp=False, **defaults):
        if process_group is not None and process_group is not _d.default_group():
            raise ValueError("ZeroRedundancyOptimizer: wick has only the default process group; "
                             "pass process_group=None")
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer: overlap_with_ddp is not "
                                      "implemented; step() runs after backward")
        if isinstance(params, _C.Tensor):  # iterating would give its rows, not one parameter
            raise TypeError("ZeroRedundancyOptimizer: params should be an iterable of Tensors, "
                            "but got a Tensor")
        if not isinstance(optimizer_class, type):
            raise TypeError(f"ZeroRedundancyOptimizer: optimizer_class must be an optimizer "
                            f"class such as wick.optim.Adam; got {type(optimizer_class).__name__}")
        params = list(params)
        if not params:
            raise ValueError("ZeroRedundancyOptimizer: got an empty parameter list")
        if any(isinstance(p, dict) for p in params):
            raise ValueError("ZeroRedundancyOptimizer: pass parameters, not parameter groups")
        for i, p in enumerate(params):
            if not isinstance(p, _C.Tensor):
                raise TypeError(f"ZeroRedundancyOptimizer: params should be an iterable of "
                                f"Tensors; element {i} is {type(p).__name__}")
        self.rank, self.world_size = _d.get_rank(), _d.get_world_size()
        self._all_params = params
        loads = [0] * self.world_size
        self._owner = [0] * len(params)
        for i in sorted(range(len(params)), key=lambda i: -params[i].numel()):
            r = min(range(self.world_size), key=lambda r: loads[r])
            self._owner[i] = r
            loads[r] += params[i].numel()
        self._per_rank = [[p for p, o in zip(params, self._owner) if o == r]
                          for r in range(self.world_size)]
        own = self._per_rank[self.rank]
        self.optim = optimizer_class(own, **defaults) if own else None
        self.defaults = dict(defaults)
        self.param_groups = self.optim.param_groups if self.optim else [
            dict(defaults, params=[])]

    def owned_parameters(self, rank=None):
        """The parameters whose update (and optimizer state) rank `rank` holds."""
        rank = self.rank if rank is None else rank
        if isinstance(rank, bool) or not isinstance(rank, int) or \
                not 0 <= rank < self.world_size:
            raise IndexError(f"ZeroRedundancyOptimizer.owned_parameters: rank {rank!r} is out of "
                             f"range for world size {self.world_size}")
        return list(self._per_rank[rank])

    @property
    def state(self):
        return self.optim.state if self.optim else {}

    def zero_grad(self, set_to_none=True):
        for p in self._all_params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def step(self, closure=None):
        loss = None
        if self.optim is not None:
            loss = self.optim.step(closure) if closure is not None else self.optim.step()
        elif closure is not None:
            loss = closure()
        for r, owned in enumerate(self._per_rank):
            if owned:
                _d.broadcast_coalesced([p.detach() for p in owned], r)
        return loss

    def __repr__(self):
        name = self.optim.__class__.__name__ if self.optim else "none"
        return (f"ZeroRedundancyOptimizer(rank {self.rank} of {self.world_size}, "
                f"{len(self._per_rank[self.rank])} of {len(self._all_params)} parameters, "
                f"local optimizer {name})")
