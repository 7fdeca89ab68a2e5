"""Iterable-style datasets (torch.utils.data.IterableDataset, ChainDataset) and the DataLoader
path that serves them.

An IterableDataset is a stream: DataLoader takes examples in the order __iter__ yields them and
groups batch_size of them (no sampler, no shuffle). With num_workers > 0 each worker iterates its
own copy of the dataset, so without splitting every worker yields the whole stream; a dataset
splits the work by reading get_worker_info() in __iter__, as PyTorch documents. Batches come from
the workers in turn (worker 0's first batch, worker 1's first, ..., worker 0's second), skipping
workers whose stream has ended: PyTorch's order.
"""

import copy
import queue
import threading

from wick.utils.data._worker import WorkerInfo, _set_worker_info
from wick.utils.data.dataset import Dataset


class IterableDataset(Dataset):
    """A dataset that is an iterable of examples: subclass it and define __iter__."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """The examples of several IterableDatasets, one after another."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError(f"ChainDataset only supports IterableDataset; got "
                                     f"{type(d).__name__}")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError(f"ChainDataset only supports IterableDataset; got "
                                     f"{type(d).__name__}")
            total += len(d)
        return total


def _batches(stream, batch_size, drop_last, collate_fn, auto_collation):
    """The stream's examples grouped batch_size at a time and collated (each example converted
    alone when batch_size is None)."""
    if not auto_collation:
        for example in stream:
            yield collate_fn(example)
        return
    batch = []
    for example in stream:
        batch.append(example)
        if len(batch) == batch_size:
            yield collate_fn(batch)
            batch = []
    if batch and not drop_last:
        yield collate_fn(batch)


def iterate(loader, base_seed):
    """The batches of loader.dataset (an IterableDataset), from the calling thread when
    num_workers is 0 and from num_workers threads otherwise."""
    auto = loader.batch_size is not None
    collate = loader.collate_fn if auto else loader._convert_fn
    if loader.num_workers == 0:
        yield from _batches(iter(loader.dataset), loader.batch_size, loader.drop_last, collate,
                            auto)
        return
    # One bounded queue per worker keeps the round-robin order without buffering a fast worker's
    # whole stream; None marks a worker's end, (False, error) its failure.
    queues = [queue.Queue(maxsize=loader.prefetch_factor) for _ in range(loader.num_workers)]
    stop = threading.Event()

    def put(q, item):
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def worker(worker_id):
        q = queues[worker_id]
        dataset = copy.copy(loader.dataset)
        _set_worker_info(WorkerInfo(worker_id, loader.num_workers, base_seed + worker_id,
                                    dataset))
        try:
            if loader.worker_init_fn is not None:
                try:
                    loader.worker_init_fn(worker_id)
                except BaseException as e:  # noqa: B902  re-raised in the consumer
                    put(q, (False, e, "worker_init_fn"))
                    return
            try:
                for batch in _batches(iter(dataset), loader.batch_size, loader.drop_last,
                                      collate, auto):
                    if not put(q, (True, batch, None)):
                        return
            except BaseException as e:  # noqa: B902  re-raised in the consumer
                put(q, (False, e, "the dataset"))
                return
            put(q, None)
        finally:
            _set_worker_info(None)

    threads = [threading.Thread(target=worker, args=(w,), daemon=True)
               for w in range(loader.num_workers)]
    for t in threads:
        t.start()
    timeout = loader.timeout if loader.timeout > 0 else None
    active = list(range(loader.num_workers))
    try:
        position = 0
        while active:
            position %= len(active)
            worker_id = active[position]
            try:
                item = queues[worker_id].get(timeout=timeout)
            except queue.Empty:
                raise RuntimeError(f"DataLoader timed out after {loader.timeout} seconds "
                                   f"waiting for worker {worker_id}") from None
            if item is None:
                del active[position]  # the same position now holds the next worker
                continue
            ok, value, where = item
            if not ok:
                from wick.utils.data.dataloader import _reraise_from_worker

                _reraise_from_worker(value, worker_id, where)
            position += 1
            yield value
    finally:
        stop.set()
