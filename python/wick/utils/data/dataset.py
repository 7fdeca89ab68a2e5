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
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].shape[0] if tensors[0].dim() > 0 else None
        if n is None or any(t.dim() == 0 or t.shape[0] != n for t in tensors):
            raise ValueError("Size mismatch between tensors")
        self.tensors = tensors
        if len(tensors) == 2:
            self._cpp = _C._data.TensorDataset(tensors[0], tensors[1])

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    def __init__(self, dataset, indices):
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
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1] if self.cumulative_sizes else 0

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"index {index} is out of range for a dataset of {len(self)}")
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][index - start]


def random_split(dataset, lengths, generator=None):
    """Splits dataset into non-overlapping random subsets of the given lengths (or fractions)."""
    n = len(dataset)
    if all(0 <= x <= 1 for x in lengths) and abs(sum(lengths) - 1) < 1e-9 and sum(lengths) != n:
        sizes = [int(n * f) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    seed = int(_C.randint(0, 2**62, (1,)).item())
    order = _C._data.random_permutation(n, seed, 0)
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[start:start + length]))
        start += length
    return out
