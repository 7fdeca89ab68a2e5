"""Map-style datasets: Dataset, TensorDataset (backed by the C++ TensorDataset when it holds an
(input, target) pair, so the C++ DataLoader can serve it), Subset, ConcatDataset, random_split.
"""

import bisect

from wick import _C


class Dataset:
    """Something with __getitem__(index) and __len__(): subclass it as in PyTorch."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])

    # The C++ dataset behind a built-in dataset, or None (wick.utils.data.DataLoader then runs
    # the C++ loader; see _cpp_dataset in dataloader.py).
    _cpp = None


class TensorDataset(Dataset):
    """Examples i = tuple(t[i] for t in tensors); every tensor has the same first dim."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("[TensorDataset] needs at least one tensor; got none")
        for i, t in enumerate(tensors):
            if not isinstance(t, _C.Tensor):
                raise TypeError(f"[TensorDataset] argument {i} should be a Tensor; got "
                                f"{type(t).__name__}")
        firsts = [t.shape[0] if t.dim() > 0 else None for t in tensors]
        if None in firsts or len(set(firsts)) > 1:
            shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
            raise ValueError(f"[TensorDataset] Size mismatch between tensors: every tensor needs "
                             f"the same first dimension; got shapes {shapes}")
        self.tensors = tensors
        if len(tensors) == 2:
            self._cpp = _C._data.TensorDataset(tensors[0], tensors[1])

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]

    def __reduce__(self):
        # Rebuilt from the tensors, C++ twin included: that twin does not pickle, and a "spawn"
        # DataLoader worker gets its dataset as a pickle.
        return TensorDataset, tuple(self.tensors)


class Subset(Dataset):
    def __init__(self, dataset, indices):
        if not hasattr(indices, "__iter__"):
            raise TypeError(f"[Subset] indices should be a sequence of ints; got "
                            f"{type(indices).__name__} ({indices!r})")
        self.dataset = dataset
        self.indices = list(indices)

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("[ConcatDataset] datasets should not be an empty iterable")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1] if self.cumulative_sizes else 0

    def __getitem__(self, index):
        if not isinstance(index, int):
            raise TypeError(f"[ConcatDataset] index should be an int; got "
                            f"{type(index).__name__} ({index!r})")
        if index < 0:
            if -index > len(self):
                raise ValueError(f"[ConcatDataset] absolute value of index should not exceed "
                                 f"dataset length; got index {index} for a dataset of "
                                 f"{len(self)}")
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"[ConcatDataset] index {index} is out of range for a dataset of "
                             f"{len(self)}")
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][index - start]


def random_split(dataset, lengths, generator=None):
    """Splits dataset into non-overlapping random subsets of the given lengths (or fractions)."""
    n = len(dataset)
    for i, x in enumerate(lengths):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not x >= 0:
            raise ValueError(f"[random_split] lengths should be non-negative ints or fractions; "
                             f"got {x!r} at index {i}")
    if all(0 <= x <= 1 for x in lengths) and abs(sum(lengths) - 1) < 1e-9 and sum(lengths) != n:
        sizes = [int(n * f) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if any(isinstance(x, float) and not x.is_integer() for x in lengths) or sum(lengths) != n:
        raise ValueError(f"[random_split] Sum of input lengths does not equal the length of the "
                         f"input dataset: lengths {list(lengths)} for a dataset of {n}")
    lengths = [int(x) for x in lengths]
    seed = int(_C.randint(0, 2**62, (1,)).item())
    order = _C._data.random_permutation(n, seed, 0)
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[start:start + length]))
        start += length
    return out
