"""Samplers: the order of indices in an epoch (torch.utils.data.sampler). Random ones draw a
permutation from Philox keyed by (seed, epoch) (data/sampler.h), the seed coming from wick's
default generator, so wick.manual_seed makes shuffling reproducible."""

import bisect
import math

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


class WeightedRandomSampler(Sampler):
    """num_samples indices in [0, len(weights)), index i drawn with probability proportional to
    weights[i]; with replacement=False each index at most once. A new draw every epoch, from
    wick's default generator."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError(f"[WeightedRandomSampler] num_samples should be a positive integer "
                             f"value, but got num_samples={num_samples!r}")
        if not isinstance(replacement, bool):
            raise ValueError(f"[WeightedRandomSampler] replacement should be a boolean value, "
                             f"but got replacement={replacement!r}")
        if generator is not None:
            raise ValueError("[WeightedRandomSampler] generator objects are not supported (wick "
                             "has no torch.Generator); seed with wick.manual_seed instead")
        weights = _C.as_tensor(weights, dtype=_C.float64)
        if weights.dim() != 1:
            raise ValueError(f"[WeightedRandomSampler] weights should be a 1d sequence but given "
                             f"weights have shape {tuple(weights.shape)}")
        values = weights.tolist()
        # torch.multinomial's checks, with its RuntimeError.
        if any(not (w >= 0) or w == float("inf") for w in values):
            raise RuntimeError(f"[WeightedRandomSampler] invalid multinomial distribution: "
                               f"weights must be finite and non-negative; got {values}")
        if sum(values) <= 0:
            raise RuntimeError(f"[WeightedRandomSampler] invalid multinomial distribution "
                               f"(sum of probabilities <= 0); got weights {values}")
        if not replacement and num_samples > len(values):
            raise RuntimeError(f"[WeightedRandomSampler] cannot sample n_sample > prob_dist."
                               f"size(-1) samples without replacement: num_samples="
                               f"{num_samples} > {len(values)} weights")
        positive = sum(1 for w in values if w > 0)
        if not replacement and num_samples > positive:
            raise RuntimeError(f"[WeightedRandomSampler] invalid multinomial distribution: "
                               f"num_samples={num_samples} exceeds the {positive} indices with "
                               f"non-zero weight, without replacement")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        values = self.weights.tolist()
        uniform = _C.rand(self.num_samples if self.replacement else len(values),
                          dtype=_C.float64).tolist()
        if self.replacement:
            # Inverse CDF: the first index whose cumulative weight exceeds u * total.
            cumulative, total = [], 0.0
            for w in values:
                total += w
                cumulative.append(total)
            last = len(values) - 1
            return iter([min(bisect.bisect_right(cumulative, u * total), last)
                         for u in uniform])
        # Without replacement: the num_samples smallest keys -log(u) / w (Efraimidis-Spirakis),
        # which draws the same distribution as multinomial's successive draws without
        # replacement; zero weights get an infinite key and are never picked.
        keys = [(-math.log(u) / w if w > 0 and u > 0 else math.inf, i)
                for i, (u, w) in enumerate(zip(uniform, values))]
        keys.sort()
        return iter([i for _, i in keys[:self.num_samples]])

    def __len__(self):
        return self.num_samples
