"""get_worker_info (torch.utils.data.get_worker_info): what a DataLoader worker knows about itself.

wick's Python DataLoader runs its workers as threads by default (see dataloader.py), so the
information is thread-local: get_worker_info() is None on the thread that iterates the loader and
a WorkerInfo on a worker thread, which is what PyTorch's per-process answer looks like to the
dataset code. With a multiprocessing_context the workers are processes (_process_workers.py) and
the information is the whole worker process's, as in PyTorch, so threads the dataset starts see it
too.
"""

import threading

_local = threading.local()
_process_info = None  # set in a worker process only


class WorkerInfo:
    """id, num_workers, seed and dataset of the calling worker; read-only, as in PyTorch."""

    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, id, num_workers, seed, dataset):  # noqa: A002  PyTorch's field name
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "num_workers", num_workers)
        object.__setattr__(self, "seed", seed)
        object.__setattr__(self, "dataset", dataset)

    def __setattr__(self, key, value):
        raise RuntimeError(f"Cannot assign attributes to WorkerInfo objects (tried {key}={value!r})")

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset!r})")


def get_worker_info():
    """The WorkerInfo of the DataLoader worker calling it, or None outside a worker."""
    info = getattr(_local, "info", None)
    return info if info is not None else _process_info


def _set_worker_info(info):
    _local.info = info


def _set_process_worker_info(info):
    global _process_info
    _process_info = info
