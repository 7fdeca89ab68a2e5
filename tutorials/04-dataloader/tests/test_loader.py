"""Lab 04's graded tests: batching, in-order delivery from unevenly slow workers, bounded
prefetch, an exception from a worker, the time training waits for data with 0, 1, 2 workers, and
a batch handed from a worker process to the consumer through shared memory."""

import multiprocessing
import os
import random
import threading
import time
from multiprocessing import resource_tracker

import numpy as np

import pytest
from labkit import figure, impl

M = impl(__file__, "loader")


class Digits:
    """n samples; sample i is i. Optional per-sample delay, failure and a log of fetches."""

    def __init__(self, n, delay=0.0, jitter=0.0, fail_at=None):
        self.n, self.delay, self.jitter, self.fail_at = n, delay, jitter, fail_at
        self.fetched = []
        self.lock = threading.Lock()
        self.rng = random.Random(0)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise ValueError(f"corrupt sample {i}")
        with self.lock:
            extra = self.rng.random() * self.jitter
            self.fetched.append(i)
        if self.delay or extra:
            time.sleep(self.delay + extra)
        return i


def test_batches_in_main_thread():
    batches = list(M.Loader(Digits(10), batch_size=4))
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_in_order_from_uneven_workers():
    data = Digits(40, jitter=0.004)
    got = list(M.Loader(data, batch_size=3, num_workers=3))
    assert got == [list(range(i, min(i + 3, 40))) for i in range(0, 40, 3)]


def test_prefetch_is_bounded():
    data = Digits(60)
    loader = M.Loader(data, batch_size=2, num_workers=2, prefetch_factor=2)
    for k, _ in enumerate(loader):
        time.sleep(0.002)  # a slow consumer: workers must not run ahead without limit
        with data.lock:
            batches_started = (len(data.fetched) + 1) // 2
        assert batches_started <= k + 1 + 2 * 2
    assert 1 <= loader.max_outstanding <= 4


def test_worker_exception_reaches_the_consumer():
    loader = M.Loader(Digits(20, fail_at=13), batch_size=4, num_workers=2)
    got = []
    with pytest.raises(RuntimeError, match="corrupt sample 13"):
        for batch in loader:
            got.append(batch)
    assert got == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]  # everything before batch 3


def test_wait_time_with_0_1_2_workers():
    waits = {}
    for workers in (0, 1, 2):
        data = Digits(96, delay=0.0015)  # a slow transform: ~12 ms per batch of 8
        loader = M.Loader(data, batch_size=8, num_workers=workers)
        start = time.perf_counter()
        for _ in loader:
            time.sleep(0.010)  # the training step
        waits[workers] = (loader.wait_seconds, time.perf_counter() - start)
    for w, (wait, total) in waits.items():
        figure(f"{w} workers: waited for data {wait:.3f} s of {total:.3f} s", f"{100 * wait / total:.0f}%")
    assert waits[1][0] < 0.7 * waits[0][0]
    assert waits[2][0] < 0.5 * waits[0][0]
    assert waits[2][1] < waits[0][1]


def _process_worker(results):
    batch = np.arange(2 * 28 * 28, dtype=np.float32).reshape(2, 1, 28, 28) / 7
    try:
        results.put((True, M.to_shared(batch)))
    except Exception as error:  # noqa: BLE001 - raised again in the test, as a loader would
        results.put((False, error))


def test_batch_crosses_shared_memory_from_a_process():
    # The parent's resource tracker, started before the fork, is the one the child registers its
    # segment with; a child that started its own would remove the segment when it exits.
    resource_tracker.ensure_running()
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    worker = context.Process(target=_process_worker, args=(results,))
    worker.start()
    ok, handle = results.get(timeout=30)
    worker.join(timeout=30)
    if not ok:
        raise handle
    name, shape, _ = handle
    assert tuple(shape) == (2, 1, 28, 28)
    assert os.path.exists(f"/dev/shm/{name.lstrip('/')}")  # the data did not travel as a pickle
    batch = M.from_shared(handle)
    expected = np.arange(2 * 28 * 28, dtype=np.float32).reshape(2, 1, 28, 28) / 7
    assert batch.dtype == np.float32 and np.array_equal(batch, expected)
    assert not os.path.exists(f"/dev/shm/{name.lstrip('/')}")  # unlinked: nothing leaks
