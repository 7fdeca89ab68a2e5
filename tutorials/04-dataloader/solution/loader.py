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
        # BEGIN SOLUTION: consecutive runs of batch_size indices over range(len(dataset))
        n = len(self.dataset)
        return [list(range(i, min(i + self.batch_size, n))) for i in range(0, n, self.batch_size)]
        # END SOLUTION

    def load(self, indices):
        return self.collate([self.dataset[i] for i in indices])

    def worker_loop(self, tasks, results):
        """Runs in a worker thread: takes (batch number, indices) from `tasks` until it gets None,
        puts (batch number, batch, None) on `results`, or (batch number, None, exception) if
        loading raised."""
        # BEGIN SOLUTION: loop on tasks.get(); load; catch every Exception and send it back
        while True:
            task = tasks.get()
            if task is None:
                return
            number, indices = task
            try:
                results.put((number, self.load(indices), None))
            except Exception as error:  # noqa: BLE001 - every error goes back to the consumer
                results.put((number, None, error))
        # END SOLUTION

    def __iter__(self):
        batches = self.batch_indices()
        if self.num_workers == 0:
            for indices in batches:
                start = time.perf_counter()
                batch = self.load(indices)
                self.wait_seconds += time.perf_counter() - start
                yield batch
            return
        # BEGIN SOLUTION: start workers; prime prefetch_factor*num_workers tasks; reorder; re-raise
        tasks = [queue.Queue() for _ in range(self.num_workers)]
        results = queue.Queue()
        workers = [threading.Thread(target=self.worker_loop, args=(tasks[w], results), daemon=True)
                   for w in range(self.num_workers)]
        for w in workers:
            w.start()
        sent, arrived = 0, {}

        def send_next():
            nonlocal sent
            if sent < len(batches):
                tasks[sent % self.num_workers].put((sent, batches[sent]))
                sent += 1

        try:
            for _ in range(self.prefetch_factor * self.num_workers):
                send_next()
            for number in range(len(batches)):
                self.max_outstanding = max(self.max_outstanding, sent - number)
                start = time.perf_counter()
                while number not in arrived:
                    got, batch, error = results.get()
                    arrived[got] = (batch, error)
                self.wait_seconds += time.perf_counter() - start
                batch, error = arrived.pop(number)
                if error is not None:
                    raise WorkerError(f"batch {number} failed in a worker: "
                                      f"{type(error).__name__}: {error}") from error
                send_next()
                yield batch
        finally:
            for q in tasks:
                q.put(None)
            for w in workers:
                w.join()
        # END SOLUTION


def to_shared(array):
    """Step 4, in a worker process: copies a NumPy array into a new shared-memory segment and
    returns the handle to send instead of the data, (segment name, shape, dtype string). The
    segment is closed here but not unlinked: the consumer owns it now."""
    # BEGIN SOLUTION: SharedMemory(create=True, size=nbytes); copy in through an ndarray on .buf; close
    segment = shared_memory.SharedMemory(create=True, size=max(array.nbytes, 1))
    view = np.ndarray(array.shape, array.dtype, buffer=segment.buf)
    view[...] = array
    del view  # a segment cannot close while an array still points into it
    segment.close()
    return segment.name, array.shape, array.dtype.str
    # END SOLUTION


def from_shared(handle):
    """Step 4, in the consumer: the array of a to_shared handle, copied out of the segment, which
    is then unlinked so that nothing is left in /dev/shm."""
    # BEGIN SOLUTION: attach by name; copy out of an ndarray on .buf; unlink, then close
    name, shape, dtype = handle
    segment = shared_memory.SharedMemory(name=name)
    array = np.ndarray(shape, dtype, buffer=segment.buf).copy()
    segment.unlink()
    segment.close()
    return array
    # END SOLUTION
