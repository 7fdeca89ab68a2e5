"""Lab 04: a data loader with worker threads, bounded prefetch and in-order delivery.

The design is PyTorch's DataLoader (torch/utils/data/dataloader.py, design-facts 7) with threads
instead of processes (wick's C++ DataLoader, data/dataloader.h, uses threads too): batch k is
sent to worker k % num_workers; at most prefetch_factor * num_workers batches are outstanding; the
main thread hands batches out in sampler order, holding early arrivals in a reorder buffer; an
exception in a worker is re-raised in the main thread for the batch it broke.
(Sleep-bound loading is what threads overlap well in Python; for CPU-bound Python transforms the
GIL serialises threads, which is why PyTorch uses processes and tf.data runs its pipeline in C++.)"""

import queue
import threading
import time
from multiprocessing import shared_memory

import numpy as np


def default_collate(samples):
    return list(samples)


class WorkerError(RuntimeError):
    pass


class Loader:
    def __init__(self, dataset, batch_size=1, num_workers=0, prefetch_factor=2,
                 collate=default_collate):
        self.dataset, self.batch_size = dataset, batch_size
        self.num_workers, self.prefetch_factor = num_workers, prefetch_factor
        self.collate = collate
        self.wait_seconds = 0.0  # time the consumer spent blocked waiting for a batch
        self.max_outstanding = 0  # the most batches requested but not yet handed out

    def batch_indices(self):
        """The index lists of every batch, in order; the last one may be short."""
        # TODO(04): batch_indices: consecutive runs of batch_size indices over range(len(dataset))
        raise NotImplementedError("batch_indices: consecutive runs of batch_size indices over range(len(dataset))")

    def load(self, indices):
        return self.collate([self.dataset[i] for i in indices])

    def worker_loop(self, tasks, results):
        """Runs in a worker thread: takes (batch number, indices) from `tasks` until it gets None,
        puts (batch number, batch, None) on `results`, or (batch number, None, exception) if
        loading raised."""
        # TODO(04): worker_loop: loop on tasks.get(); load; catch every Exception and send it back
        raise NotImplementedError("worker_loop: loop on tasks.get(); load; catch every Exception and send it back")

    def __iter__(self):
        batches = self.batch_indices()
        if self.num_workers == 0:
            for indices in batches:
                start = time.perf_counter()
                batch = self.load(indices)
                self.wait_seconds += time.perf_counter() - start
                yield batch
            return
        # TODO(04): __iter__: start workers; prime prefetch_factor*num_workers tasks; reorder; re-raise
        raise NotImplementedError("__iter__: start workers; prime prefetch_factor*num_workers tasks; reorder; re-raise")


def to_shared(array):
    """Step 4, in a worker process: copies a NumPy array into a new shared-memory segment and
    returns the handle to send instead of the data, (segment name, shape, dtype string). The
    segment is closed here but not unlinked: the consumer owns it now."""
    # TODO(04): to_shared: SharedMemory(create=True, size=nbytes); copy in through an ndarray on .buf; close
    raise NotImplementedError("to_shared: SharedMemory(create=True, size=nbytes); copy in through an ndarray on .buf; close")


def from_shared(handle):
    """Step 4, in the consumer: the array of a to_shared handle, copied out of the segment, which
    is then unlinked so that nothing is left in /dev/shm."""
    # TODO(04): from_shared: attach by name; copy out of an ndarray on .buf; unlink, then close
    raise NotImplementedError("from_shared: attach by name; copy out of an ndarray on .buf; unlink, then close")
