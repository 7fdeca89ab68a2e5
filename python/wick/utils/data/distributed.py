"""wick.utils.data.distributed.DistributedSampler (torch.utils.data.distributed).

Each of num_replicas ranks reads a disjoint shard of the dataset: the (shuffled) index list is
padded by repeating its start to a multiple of num_replicas (or cut, with drop_last), and rank r
takes every num_replicas-th index from r. Call set_epoch(e) before each epoch so the shuffle
changes between epochs while staying identical on every rank. The logic is the C++ sampler's
(data/distributed_sampler.h).
"""

from wick import _C
from wick.utils.data.sampler import Sampler


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        import wick.distributed as dist

        if num_replicas is None:
            num_replicas = dist.get_world_size() if dist.is_initialized() else 1
        if rank is None:
            rank = dist.get_rank() if dist.is_initialized() else 0
        self.num_replicas, self.rank, self.shuffle, self.seed = num_replicas, rank, shuffle, seed
        self.epoch = 0
        self._cpp = _C._distributed.DistributedSampler(len(dataset), num_replicas, rank, shuffle,
                                                       seed, drop_last)

    def set_epoch(self, epoch):
        self.epoch = epoch
        self._cpp.set_epoch(epoch)

    def __iter__(self):
        return iter(self._cpp.indices(self.epoch))

    def __len__(self):
        return len(self._cpp)
