"""wick.utils.data and wick.datasets: the C++ loader behind built-in datasets, the Python loader
for Python datasets (workers, shuffling, drop_last, collate_fn, exceptions), the samplers, MNIST,
save/load."""

import io

import numpy as np
import pytest

import wick
from reference import needs_torch, torch
from wick.utils.data import (BatchSampler, DataLoader, Dataset, DistributedSampler, RandomSampler,
                             SequentialSampler, Subset, TensorDataset, WeightedRandomSampler,
                             default_collate, random_split)


class Squares(Dataset):
    def __init__(self, n, fail_at=None):
        self.n, self.fail_at = n, fail_at

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise KeyError(f"bad example {i}")
        return wick.tensor([float(i)]), i * i


def test_tensor_dataset_uses_cpp_loader():
    x, y = wick.arange(20.0).reshape(10, 2), wick.arange(10)
    ds = TensorDataset(x, y)
    assert len(ds) == 10 and ds[3][1].item() == 3
    loader = DataLoader(ds, batch_size=4)
    assert loader._cpp is not None and len(loader) == 3
    batches = list(loader)
    assert [b[0].shape[0] for b in batches] == [4, 4, 2]
    assert batches[1][1].tolist() == [4, 5, 6, 7]
    assert len(DataLoader(ds, batch_size=4, drop_last=True, pin_memory=True)) == 2
    seen = []
    for _, yb in DataLoader(ds, batch_size=3, shuffle=True, num_workers=2):
        seen += yb.tolist()
    assert sorted(seen) == list(range(10)) and seen != list(range(10))
    assert DataLoader(ds, batch_size=3).stats()["total"]["batches_delivered"] == 0


@pytest.mark.parametrize("workers", [0, 2])
def test_python_dataset_loader(workers):
    ds = Squares(10)
    loader = DataLoader(ds, batch_size=4, num_workers=workers)
    assert loader._cpp is None and len(loader) == 3
    batches = list(loader)
    assert batches[0][0].shape == (4, 1) and batches[0][1].tolist() == [0, 1, 4, 9]
    assert batches[2][1].tolist() == [64, 81]
    shuffled = [int(v) for _, yb in DataLoader(ds, batch_size=3, shuffle=True,
                                               num_workers=workers) for v in yb.tolist()]
    assert sorted(shuffled) == sorted(i * i for i in range(10))
    dropped = list(DataLoader(ds, batch_size=4, drop_last=True, num_workers=workers))
    assert len(dropped) == 2
    custom = list(DataLoader(ds, batch_size=5, collate_fn=lambda b: len(b),
                             num_workers=workers))
    assert custom == [5, 5]


@pytest.mark.parametrize("workers", [0, 2])
def test_worker_exception_propagates(workers):
    loader = DataLoader(Squares(10, fail_at=6), batch_size=2, num_workers=workers)
    got = []
    with pytest.raises(KeyError, match="bad example 6"):
        for _, y in loader:
            got.append(y.tolist())
    assert got == [[0, 1], [4, 9], [16, 25]]


def test_shuffle_is_reproducible_with_manual_seed():
    def order():
        wick.manual_seed(3)
        return [y.tolist() for _, y in DataLoader(Squares(8), batch_size=8, shuffle=True)]
    assert order() == order()


def test_samplers_and_collate():
    assert list(SequentialSampler(range(3))) == [0, 1, 2]
    r = RandomSampler(range(6))
    assert sorted(r) == list(range(6)) and len(r) == 6
    assert list(BatchSampler(range(5), 2, False)) == [[0, 1], [2, 3], [4]]
    batch = default_collate([{"a": wick.zeros(2), "b": 1.5}, {"a": wick.ones(2), "b": 2.5}])
    assert batch["a"].shape == (2, 2) and batch["b"].dtype is wick.float64
    assert default_collate([(np.zeros(2), 1), (np.ones(2), 2)])[0].shape == (2, 2)
    sub = Subset(Squares(10), [1, 3])
    assert len(sub) == 2 and sub[1][1] == 9
    a, b = random_split(Squares(10), [7, 3])
    assert len(a) == 7 and len(b) == 3 and not set(a.indices) & set(b.indices)
    both = Squares(2) + Squares(3)
    assert len(both) == 5 and both[4][1] == 4


def test_mnist_dataset_and_loader():
    normalize = wick.transforms.Compose([wick.transforms.ToTensor(),
                                         wick.transforms.Normalize((0.1307,), (0.3081,))])
    test = wick.datasets.MNIST(train=False, transform=normalize)
    assert len(test) == 2000
    image, label = test[0]
    assert image.shape == (1, 28, 28) and isinstance(label, int) and 0 <= label <= 9
    assert test.data.shape == (2000, 28, 28) and test.targets.shape == (2000,)
    loader = DataLoader(test, batch_size=500, num_workers=2)
    assert loader._cpp is not None
    images, labels = next(iter(loader))
    assert images.shape == (500, 1, 28, 28) and labels.dtype is wick.int64
    raw = wick.datasets.MNIST(train=False)
    assert abs(raw[0][0].max().item() - 1.0) < 1e-6
    assert abs(image.mean().item() - ((raw[0][0] - 0.1307) / 0.3081).mean().item()) < 1e-5
    # A Python transform: the dataset runs it, and the loader takes the Python path.
    flipped = wick.datasets.MNIST(train=False, transform=lambda t: -t)
    assert flipped[0][0].min().item() == -raw[0][0].max().item()
    assert DataLoader(flipped, batch_size=10)._cpp is None
    with pytest.raises(RuntimeError, match="mnist"):
        wick.datasets.MNIST("/nonexistent")


def test_save_load_nested(tmp_path):
    obj = {"weights": {"a": wick.ones(2), "b": wick.arange(3)}, "step": 4, "lr": 0.1,
           "names": ["x", None], "pair": (1, wick.zeros(1)), 7: True}
    path = tmp_path / "obj.safetensors"
    wick.save(obj, str(path))
    back = wick.load(path)
    assert back["step"] == 4 and back["lr"] == 0.1 and back["names"] == ["x", None]
    assert back[7] is True and isinstance(back["pair"], tuple)
    assert back["weights"]["b"].tolist() == [0, 1, 2]
    buf = io.BytesIO()
    wick.save({"w": wick.ones(3)}, buf)
    buf.seek(0)
    assert wick.load(buf)["w"].tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError):
        wick.save({"f": lambda: 0}, str(path))
    with pytest.raises(FileNotFoundError):  # Python's own type, as torch.load raises
        wick.load(tmp_path / "missing.safetensors")
    (tmp_path / "junk").write_bytes(b"\x01\x02")
    with pytest.raises(ValueError):
        wick.load(tmp_path / "junk")


def test_builtin_dataset_with_a_python_sampler_and_workers():
    # The first NumPy use on a worker thread once deadlocked (Note [numpy API at import]).
    from wick.utils.data.distributed import DistributedSampler

    train = wick.datasets.MNIST(train=True)
    shards = [DistributedSampler(train, num_replicas=2, rank=r, seed=3) for r in (0, 1)]
    for s in shards:
        s.set_epoch(1)
    seen = [set(iter(s)) for s in shards]
    assert not seen[0] & seen[1] and len(seen[0] | seen[1]) == len(train)
    loader = DataLoader(train, batch_size=100, sampler=shards[0], num_workers=2)
    assert sum(x.shape[0] for x, _ in loader) == len(shards[0])


def test_pad_matches_torchvision():
    tv = pytest.importorskip("torchvision.transforms")
    image = np.random.default_rng(0).random((1, 28, 28), dtype=np.float32)
    ours = wick.transforms.Pad(2)(wick.tensor(image))
    import torch

    theirs = tv.Pad(2)(torch.from_numpy(image))
    assert tuple(ours.shape) == (1, 32, 32)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert "Pad(padding=2)" in repr(wick.transforms.Compose([wick.transforms.Pad(2)]))


@pytest.mark.parametrize("args,error,message", [
    ((-1,), ValueError, "padding must be non-negative; got -1"),
    (((1, 2),), TypeError, "only an int padding"),
    ((1, 3), ValueError, "only fill=0"),
])
def test_pad_refuses_what_it_does_not_do(args, error, message):
    with pytest.raises(error, match=message):
        wick.transforms.Pad(*args)


# ---- WeightedRandomSampler and DistributedSampler, against PyTorch 1.13 ----

@needs_torch
def test_weighted_random_sampler_distribution_and_errors():
    wick.manual_seed(1)
    weights = [0.1, 0.0, 0.6, 0.3]
    sampler = WeightedRandomSampler(weights, 20000)
    draws = list(sampler)
    assert len(sampler) == len(draws) == 20000
    assert all(isinstance(i, int) for i in draws[:5])
    counts = [draws.count(i) / len(draws) for i in range(4)]
    for got, want in zip(counts, weights):
        assert abs(got - want) < 0.02
    assert list(sampler) != draws  # a new draw every epoch
    wick.manual_seed(1)
    assert list(WeightedRandomSampler(weights, 20000)) == draws  # reproducible

    once = list(WeightedRandomSampler([1, 2, 3, 4, 5], 5, replacement=False))
    assert sorted(once) == [0, 1, 2, 3, 4]
    # Without replacement the heaviest index comes first most often.
    firsts = [next(iter(WeightedRandomSampler([1, 1, 20], 2, replacement=False)))
              for _ in range(300)]
    assert firsts.count(2) > 200
    assert 1 not in list(WeightedRandomSampler([1, 0, 1], 2, replacement=False))

    # Bad inputs: PyTorch's exception types.
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError):
            torch.utils.data.WeightedRandomSampler([1.0, 2.0], bad)
        with pytest.raises(ValueError, match="num_samples should be a positive integer"):
            WeightedRandomSampler([1.0, 2.0], bad)
    with pytest.raises(ValueError):
        torch.utils.data.WeightedRandomSampler([1.0], 1, replacement=1)
    with pytest.raises(ValueError, match="replacement should be a boolean"):
        WeightedRandomSampler([1.0], 1, replacement=1)
    with pytest.raises(ValueError):
        torch.utils.data.WeightedRandomSampler([[1.0, 2.0]], 1)
    with pytest.raises(ValueError, match="1d sequence"):
        WeightedRandomSampler([[1.0, 2.0]], 1)
    for bad_weights, n, repl in (([1.0, -1.0], 2, True), ([0.0, 0.0], 1, True),
                                 ([1.0, 1.0], 3, False)):
        with pytest.raises(RuntimeError):
            list(torch.utils.data.WeightedRandomSampler(bad_weights, n, replacement=repl))
        with pytest.raises(RuntimeError, match="WeightedRandomSampler"):
            list(WeightedRandomSampler(bad_weights, n, replacement=repl))


def test_weighted_sampler_drives_a_dataloader():
    ds = wick.utils.data.TensorDataset(wick.arange(4.0), wick.arange(4))
    sampler = WeightedRandomSampler([0, 0, 1, 0], 6)
    ys = sum((y.tolist() for _, y in DataLoader(ds, batch_size=4, sampler=sampler)), [])
    assert ys == [2] * 6


@needs_torch
def test_distributed_sampler_import_path():
    assert DistributedSampler is wick.utils.data.distributed.DistributedSampler
    for drop_last in (False, True):
        shards = [list(DistributedSampler(list(range(10)), num_replicas=3, rank=r,
                                          shuffle=False, drop_last=drop_last))
                  for r in range(3)]
        want = [list(torch.utils.data.DistributedSampler(list(range(10)), num_replicas=3,
                                                         rank=r, shuffle=False,
                                                         drop_last=drop_last))
                for r in range(3)]
        assert shards == want
