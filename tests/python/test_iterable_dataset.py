"""wick.utils.data's streams: IterableDataset and ChainDataset through the DataLoader (batching a
stream, drop_last, workers splitting it with get_worker_info, which map-style workers see too);
each against PyTorch 1.13."""

import math
import threading

import pytest
from reference import needs_torch, torch

import wick
from wick.utils.data import ChainDataset, DataLoader, IterableDataset, get_worker_info


def make_range_dataset(data):
    """PyTorch's documented example: a range that workers split into contiguous pieces."""

    class RangeDataset(data.IterableDataset):
        def __init__(self, start, end):
            self.start, self.end = start, end

        def __iter__(self):
            info = data.get_worker_info()
            if info is None:
                return iter(range(self.start, self.end))
            per = int(math.ceil((self.end - self.start) / info.num_workers))
            lo = self.start + info.id * per
            return iter(range(lo, min(lo + per, self.end)))

    return RangeDataset


def as_lists(loader):
    return [b.tolist() if hasattr(b, "tolist") else b for b in loader]


@needs_torch
@pytest.mark.filterwarnings("ignore:This DataLoader will create")  # 3 workers on 2 cores
@pytest.mark.parametrize("num_workers", [0, 2, 3])
@pytest.mark.parametrize("batch_size,drop_last", [(None, False), (1, False), (2, False),
                                                  (4, True), (4, False), (50, False)])
def test_iterable_batches_match_pytorch(num_workers, batch_size, drop_last):
    ours = make_range_dataset(wick.utils.data)(3, 20)
    theirs = make_range_dataset(torch.utils.data)(3, 20)
    got = as_lists(DataLoader(ours, batch_size=batch_size, num_workers=num_workers,
                              drop_last=drop_last))
    want = as_lists(torch.utils.data.DataLoader(theirs, batch_size=batch_size,
                                                num_workers=num_workers, drop_last=drop_last))
    assert got == want


@needs_torch
def test_unsplit_stream_is_repeated_per_worker_as_in_pytorch():
    class Five(IterableDataset):
        def __iter__(self):
            return iter(range(5))

    class TorchFive(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(5))

    got = as_lists(DataLoader(Five(), batch_size=2, num_workers=2))
    want = as_lists(torch.utils.data.DataLoader(TorchFive(), batch_size=2, num_workers=2))
    assert got == want == [[0, 1], [0, 1], [2, 3], [2, 3], [4], [4]]


def test_worker_info_in_workers_and_none_outside():
    assert get_worker_info() is None
    seen = []
    lock = threading.Lock()

    class Probe(IterableDataset):
        def __iter__(self):
            info = get_worker_info()
            with lock:
                seen.append((info.id, info.num_workers, info.seed,
                             info.dataset is self and self is not original,
                             type(info.dataset).__name__))
            return iter([info.id])

    wick.manual_seed(0)
    original = Probe()
    out = sorted(b.item() for b in DataLoader(original, num_workers=3))
    assert out == [0, 1, 2]
    seen.sort()
    assert [s[:2] for s in seen] == [(0, 3), (1, 3), (2, 3)]
    # Each worker iterates its own copy; seeds are base + id, reproducible under manual_seed.
    assert all(s[3] and s[4] == "Probe" for s in seen)
    base = seen[0][2]
    assert [s[2] for s in seen] == [base, base + 1, base + 2]
    first = [s[2] for s in seen]
    seen.clear()
    wick.manual_seed(0)
    list(DataLoader(original, num_workers=3))
    assert sorted(s[2] for s in seen) == first
    assert get_worker_info() is None
    info = wick.utils.data._worker.WorkerInfo(0, 1, 0, None)
    with pytest.raises(RuntimeError, match="Cannot assign"):
        info.id = 3


def test_worker_info_in_map_style_workers():
    ids = set()

    class Map(wick.utils.data.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            info = get_worker_info()
            ids.add((info.id, info.num_workers))
            return i

    assert sorted(sum((b.tolist() for b in DataLoader(Map(), batch_size=2, num_workers=2)),
                      [])) == list(range(8))
    assert ids <= {(0, 2), (1, 2)} and ids


@needs_torch
def test_iterable_loader_rejects_sampling_options_like_pytorch():
    class S(IterableDataset):
        def __iter__(self):
            return iter(range(3))

    class T(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    for kwargs in ({"shuffle": True}, {"sampler": [0, 1, 2]}, {"batch_sampler": [[0, 1]]}):
        with pytest.raises(ValueError) as theirs:
            torch.utils.data.DataLoader(T(), **kwargs)
        with pytest.raises(ValueError, match="IterableDataset: expected unspecified") as ours:
            DataLoader(S(), **kwargs)
        assert str(theirs.value) == str(ours.value)
    with pytest.raises(TypeError, match="has no len"):
        len(DataLoader(S()))


@needs_torch
def test_len_of_sized_iterable_matches_pytorch():
    class Sized(IterableDataset):
        def __iter__(self):
            return iter(range(10))

        def __len__(self):
            return 10

    class TorchSized(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(10))

        def __len__(self):
            return 10

    for bs, dl in ((3, False), (3, True), (None, False)):
        assert len(DataLoader(Sized(), batch_size=bs, drop_last=dl)) == \
            len(torch.utils.data.DataLoader(TorchSized(), batch_size=bs, drop_last=dl))


def test_worker_errors_reach_the_caller():
    class Bad(IterableDataset):
        def __iter__(self):
            yield 1
            raise KeyError("broken stream")

    with pytest.raises(KeyError, match="broken stream"):
        list(DataLoader(Bad(), num_workers=2))

    def bad_init(worker_id):
        raise ValueError(f"init {worker_id}")

    class Ok(IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(ValueError, match="worker_init_fn"):
        list(DataLoader(Ok(), num_workers=2, worker_init_fn=bad_init))
    # The stream is not read beyond what the consumer takes: breaking out stops the workers.
    loader = iter(DataLoader(Ok(), num_workers=2))
    next(loader)
    loader.close()


@needs_torch
def test_chain_dataset_matches_pytorch():
    ours = make_range_dataset(wick.utils.data)
    theirs = make_range_dataset(torch.utils.data)
    got = list(ChainDataset([ours(0, 3), ours(10, 12)]))
    want = list(torch.utils.data.ChainDataset([theirs(0, 3), theirs(10, 12)]))
    assert got == want == [0, 1, 2, 10, 11]
    assert list(ours(0, 2) + ours(5, 6)) == [0, 1, 5]
    assert as_lists(DataLoader(ChainDataset([ours(0, 3), ours(10, 12)]), batch_size=2)) == \
        [[0, 1], [2, 10], [11]]
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(ChainDataset([ours(0, 1), [1, 2]]))
