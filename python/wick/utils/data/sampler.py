"""Samplers: the order of indices in an epoch (torch.utils.data.sampler). Random ones draw a
permutation from Philox keyed by (seed, epoch) (data/sampler.h), the seed coming from wick's
default generator, so wick.manual_seed makes shuffling reproducible."""

from wick import _C


def _check_sized(op, name, value):
    if not hasattr(value, "__len__"):
        raise TypeError(f"[{op}] {name} should have a length (a dataset or sequence); got "
                        f"{type(value).__name__} ({value!r})")


def _draw_seed():
    return int(_C.randint(0, 2**62, (1,)).item())


class Sampler:
    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        _check_sized("SequentialSampler", "data_source", data_source)
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A new permutation every epoch (every iter())."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"[RandomSampler] replacement should be a boolean value, but got "
                            f"replacement={replacement!r}")
        if num_samples is not None and (not isinstance(num_samples, int)
                                        or isinstance(num_samples, bool) or num_samples <= 0):
            raise ValueError(f"[RandomSampler] num_samples should be a positive integer value, "
                             f"but got num_samples={num_samples!r}")
        if replacement or num_samples is not None:
            raise ValueError(f"[RandomSampler] replacement and num_samples are not supported; "
                             f"got replacement={replacement}, num_samples={num_samples}")
        _check_sized("RandomSampler", "data_source", data_source)
        self.data_source = data_source
        self.seed = _draw_seed()
        self.epoch = 0

    def __iter__(self):
        order = _C._data.random_permutation(len(self.data_source), self.seed, self.epoch)
        self.epoch += 1
        return iter(order)

    def __len__(self):
        return len(self.data_source)


class SubsetRandomSampler(Sampler):
    def __init__(self, indices, generator=None):
        if not hasattr(indices, "__iter__"):
            raise TypeError(f"[SubsetRandomSampler] indices should be a sequence of ints; got "
                            f"{type(indices).__name__} ({indices!r})")
        self.indices = list(indices)
        self.seed = _draw_seed()
        self.epoch = 0

    def __iter__(self):
        order = _C._data.random_permutation(len(self.indices), self.seed, self.epoch)
        self.epoch += 1
        return (self.indices[i] for i in order)

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"[BatchSampler] batch_size should be a positive integer value, but "
                             f"got batch_size={batch_size!r}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"[BatchSampler] drop_last should be a boolean value, but got "
                             f"drop_last={drop_last!r}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
