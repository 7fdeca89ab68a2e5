"""DataLoader worker processes (PyTorch's _MultiProcessingDataLoaderIter), used when a
multiprocessing_context is given.

The main process owns the order: it sends each worker (epoch, batch number, sample indices) on
the worker's own index queue, round-robin, at most prefetch_factor of each worker's batches ahead
of the consumer (in flight, or received early and waiting for their turn: PyTorch's bound), and
puts the replies, which arrive on the workers' result pipes in any order, back into batch order.
Every task gets exactly one reply - a batch, an error, "my stream has ended" (IterableDataset) or
"stale" (a task of an epoch that was abandoned) - so the bookkeeping never guesses. A batch's
tensors travel through shared memory (_shared_memory.py); the pipe carries only a small pickle.

Ending is always bounded: an exception in a worker is re-raised at its batch; a worker that dies
wakes the main process as a reply would (it waits on the result pipes and the process sentinels
together); `timeout` bounds each wait. Breaking out of the loop, dropping the iterator, the
loader's garbage collection and interpreter exit all go through WorkerPool.close(), which stops
and joins the workers and unlinks every batch still in flight.
"""

import atexit
import multiprocessing.util  # noqa: F401  its exit handler first, so that ours runs before it
import os
import pickle
import queue
import random
import sys
import time
import traceback
import weakref
from multiprocessing import connection
from multiprocessing.reduction import ForkingPickler

from wick import _C
from wick.utils.data import _worker

_ORPHAN_CHECK = 1.0  # how often an idle worker checks that its parent is still there
_JOIN_SECONDS = 5.0  # how long close() lets workers finish before terminating them
_BATCH, _ERROR, _ENDED, _STALE = range(4)  # the kinds of reply


class _Fetch:
    """What a worker does with a task: picklable, so that "spawn" workers get it too."""

    def __init__(self, dataset, iterable, auto_collation, collate_fn, batch_size, drop_last):
        self.dataset = dataset
        self.iterable = iterable
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn  # None: batch_size=None without a collate_fn, examples as is
        self.batch_size = batch_size
        self.drop_last = drop_last

    def convert(self, example):
        return example if self.collate_fn is None else self.collate_fn(example)

    def stream(self):
        from wick.utils.data.iterable import _batches

        return _batches(iter(self.dataset), self.batch_size, self.drop_last,
                        self.collate_fn if self.auto_collation else self.convert,
                        self.auto_collation)

    def batch(self, indices):
        if not self.auto_collation:
            return self.convert(self.dataset[indices])
        return self.collate_fn([self.dataset[i] for i in indices])


def _error_reply(worker_id, where):
    """PyTorch's ExceptionWrapper: the exception's type, and a message with the worker id and the
    original traceback. The type is pickled on its own so that a type the main process cannot
    unpickle still leaves the message."""
    kind = type(sys.exc_info()[1])
    text = (f"Caught {kind.__name__}{where} in DataLoader worker process {worker_id}.\n"
            f"Original {traceback.format_exc()}")
    try:
        kind_bytes = bytes(ForkingPickler.dumps(kind))
    except Exception:  # noqa: BLE001  a local class: RuntimeError carries the message
        kind_bytes = None
    return _ERROR, (kind_bytes, text)


def _worker_loop(fetch, worker_init_fn, worker_id, num_workers, seed, index_queue, results,
                 done_event, epoch):
    from wick.utils.data import _shared_memory

    # The main process under fork and spawn, the fork server under forkserver (which ends with
    # the main process): when it changes, this worker has been orphaned.
    parent_pid = os.getppid()
    # One thread each: N workers on N cores should not each start an OpenMP team, and a forked
    # child cannot use the parent's OpenMP threads (libgomp hangs in the next parallel region).
    _C.set_num_threads(1)
    # PyTorch's seeding: Python's and wick's generators from base_seed + worker id, NumPy's from
    # both mixed (its legacy seed takes 32-bit words).
    random.seed(seed)
    _C.manual_seed(seed)
    import numpy

    numpy.random.seed(numpy.random.SeedSequence([worker_id, seed]).generate_state(4))
    _worker._set_process_worker_info(_worker.WorkerInfo(worker_id, num_workers, seed,
                                                        fetch.dataset))
    init_error = None
    if worker_init_fn is not None:
        try:
            worker_init_fn(worker_id)
        except Exception:  # noqa: BLE001  reported with the first task
            init_error = _error_reply(worker_id, " in worker_init_fn")
    stream, stream_epoch = None, None
    try:
        while True:
            try:
                task = index_queue.get(timeout=_ORPHAN_CHECK)
            except queue.Empty:
                if os.getppid() != parent_pid:  # the main process is gone: nobody to serve
                    return
                continue
            if task is None:
                return
            task_epoch, number, indices = task
            start = time.perf_counter()  # CLOCK_MONOTONIC: one clock for all processes
            if done_event.is_set() or task_epoch != epoch.value:
                reply = (_STALE, None)
            elif init_error is not None:
                reply = init_error
            else:
                try:
                    if fetch.iterable:
                        if stream_epoch != task_epoch:
                            stream, stream_epoch = fetch.stream(), task_epoch
                        batch = next(stream)
                    else:
                        batch = fetch.batch(indices)
                    reply = (_BATCH, _shared_memory.pack(batch))
                except StopIteration:
                    reply = (_ENDED, None)
                except Exception:  # noqa: BLE001  re-raised in the main process
                    reply = _error_reply(worker_id, "")
            span = (start, time.perf_counter())  # for a LoaderTimeline's "build batch"
            try:
                message = ForkingPickler.dumps((task_epoch, number, reply, span))
            except Exception:  # noqa: BLE001  e.g. a batch holding an unpicklable object
                if reply[0] == _BATCH:
                    _shared_memory.discard(reply[1])
                reply = _error_reply(worker_id, " while sending a batch")
                message = ForkingPickler.dumps((task_epoch, number, reply, span))
            # Written before the next task is taken, not left to a feeder thread: a worker that
            # dies later cannot take a delivered batch (and its shared memory) with it.
            results.send_bytes(message)
    except (KeyboardInterrupt, BrokenPipeError):  # Ctrl-C, or the main process stopped reading
        pass


class WorkerPool:
    """num_workers processes, their queues and their replies not yet delivered; lives for one
    epoch, or for the loader's life with persistent_workers."""

    def __init__(self, context, fetch, worker_init_fn, num_workers, prefetch_factor, base_seed):
        from multiprocessing import resource_tracker

        from wick.utils.data import _shared_memory  # noqa: F401  teaches ForkingPickler tensors

        # Started here, before the workers, so that every worker shares the main process's
        # tracker: a segment a worker creates and the main process unlinks is then one entry that
        # comes and goes, and one left by a killed worker is removed when the tracker ends.
        resource_tracker.ensure_running()
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.outstanding = [0] * num_workers
        self.replies = {}  # (epoch, number) -> reply, received and not yet delivered
        self.spans = {}  # (epoch, number) -> (worker id, start, end) of building it
        self.epoch = context.Value("q", -1, lock=False)
        self.done_event = context.Event()
        self.index_queues = [context.Queue() for _ in range(num_workers)]
        # One pipe per worker rather than one shared queue: a worker killed while writing cannot
        # hold a lock the others need, and its end of the pipe closing is an EOF here.
        self.readers = {}  # reader -> worker id, until its EOF
        self.closed = False
        self._pid = os.getpid()
        self.workers = []
        _live_pools.add(self)
        try:
            for w in range(num_workers):
                reader, writer = context.Pipe(duplex=False)
                self.readers[reader] = w
                process = context.Process(
                    target=_worker_loop, daemon=True,
                    args=(fetch, worker_init_fn, w, num_workers, base_seed + w,
                          self.index_queues[w], writer, self.done_event, self.epoch))
                try:
                    process.start()  # under spawn, where an unpicklable dataset fails
                finally:
                    writer.close()  # before the next fork, so that only worker w holds it
                self.workers.append(process)
        except BaseException:
            self.close()
            raise

    def send(self, worker_id, task):
        self.outstanding[worker_id] += 1
        self.index_queues[worker_id].put(task)

    def receive(self, timeout):
        """Waits for the next reply from any worker and files it in self.replies; returns
        (worker id, epoch, number, reply). Raises RuntimeError when a worker has died or, with
        timeout > 0, nothing came in time."""
        deadline = time.monotonic() + timeout if timeout > 0 else None
        sentinels = {p.sentinel: w for w, p in enumerate(self.workers)}
        exited = set()
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = connection.wait([*self.readers, *sentinels], wait)
            if not ready:
                raise RuntimeError(f"DataLoader timed out after {timeout} seconds")
            for obj in ready:
                if obj in self.readers:
                    got = self._read(obj)
                    if got is not None:
                        return got
                elif obj in sentinels:
                    exited.add(sentinels.pop(obj))
            # A worker that exited is an error once its pipe has been read to the end (its last
            # replies may still be in it, and they come first).
            for worker_id in exited:
                if worker_id not in self.readers.values():
                    self._raise_dead(worker_id)

    def _read(self, reader):
        worker_id = self.readers[reader]
        try:
            epoch, number, reply, (start, end) = pickle.loads(reader.recv_bytes())
        except (EOFError, OSError):
            del self.readers[reader]
            reader.close()
            return None
        self.outstanding[worker_id] -= 1
        self.replies[epoch, number] = reply
        self.spans[epoch, number] = (worker_id, start, end)
        return worker_id, epoch, number, reply

    def _raise_dead(self, worker_id):
        process = self.workers[worker_id]
        process.join(timeout=1)  # the sentinel can fire just before the exit code is readable
        code = process.exitcode
        how = (f"was killed by signal {-code}" if code is not None and code < 0 else
               f"exited unexpectedly with exit code {code}")
        raise RuntimeError(f"DataLoader worker {worker_id} (pid {process.pid}) {how}")

    def close(self):
        """Stops and joins the workers, then unlinks every batch that was never delivered."""
        if self.closed or os.getpid() != self._pid:  # a forked child must not stop its siblings
            return
        self.closed = True
        _live_pools.discard(self)
        self.done_event.set()
        for q in self.index_queues:
            q.put(None)
        # Read while joining: a worker blocked writing a reply would never see its None.
        deadline = time.monotonic() + _JOIN_SECONDS
        while self.readers and time.monotonic() < deadline:
            for reader in connection.wait(list(self.readers), deadline - time.monotonic()):
                self._read(reader)
        for process in self.workers:
            if process.is_alive():
                process.terminate()
            process.join(timeout=_JOIN_SECONDS)
        for reader in list(self.readers):
            while reader in self.readers and reader.poll():
                self._read(reader)
            reader.close()
        self.readers.clear()
        for reply in self.replies.values():
            discard(reply)
        self.replies.clear()
        for q in self.index_queues:
            q.cancel_join_thread()
            q.close()

    def __del__(self):
        self.close()


def discard(reply):
    from wick.utils.data import _shared_memory

    if reply[0] == _BATCH:
        _shared_memory.discard(reply[1])


def _raise_worker_error(payload):
    kind_bytes, text = payload
    kind = RuntimeError
    if kind_bytes is not None:
        try:
            kind = pickle.loads(kind_bytes)
        except Exception:  # noqa: BLE001  a type this process cannot import
            pass
    if kind is KeyError:
        text = _KeyErrorMessage(text)  # KeyError's str() would show the message as a repr
    try:
        error = kind(text)
    except Exception:  # noqa: BLE001  a type with other required arguments
        error = RuntimeError(text)
    raise error


class _KeyErrorMessage(str):
    def __repr__(self):
        return self


class EpochIterator:
    """One epoch's batches, in sampler order (or, for an IterableDataset, worker 0's first batch,
    worker 1's first, ..., skipping workers whose stream ended: the thread path's order)."""

    def __init__(self, pool, indices, owns_pool, timeout, timeline=None):
        self._pool = pool
        self._timeline = timeline  # a LoaderTimeline, or None
        self._indices = indices  # None for an IterableDataset
        self._owns_pool = owns_pool
        self._timeout = timeout
        # A persistent pool's previous epoch may still have tasks queued: raising the epoch
        # makes the workers answer them "stale" instead of building them.
        pool.epoch.value += 1
        self._epoch = pool.epoch.value
        self._active = [True] * pool.num_workers
        self._next_worker = 0
        self._sent = self._delivered = 0
        # Batches sent and not yet delivered, per worker: a reply that arrives ahead of its turn
        # still counts against its worker's prefetch_factor, or a slow worker would let the fast
        # ones run arbitrarily far ahead.
        self._ahead = [0] * pool.num_workers
        self._worker_of = {}  # batch number -> the worker it was sent to
        self._exhausted = False
        self._pid = os.getpid()

    def __iter__(self):
        return self

    def _fill(self):
        pool = self._pool
        while not self._exhausted and any(self._active):
            w = self._next_worker
            if not self._active[w]:
                self._next_worker = (w + 1) % pool.num_workers
                continue
            if max(pool.outstanding[w], self._ahead[w]) >= pool.prefetch_factor:
                return  # strictly round-robin, so that a stream's batch order does not vary
            task = None
            if self._indices is not None:
                task = next(self._indices, None)
                if task is None:
                    self._exhausted = True
                    return
            pool.send(w, (self._epoch, self._sent, task))
            self._ahead[w] += 1
            self._worker_of[self._sent] = w
            self._sent += 1
            self._next_worker = (w + 1) % pool.num_workers

    def __next__(self):
        if self._pool is None:
            raise StopIteration
        if self._pool.epoch.value != self._epoch:
            self._finish()  # the newer epoch owns the workers now
            raise RuntimeError("DataLoader: this iterator's epoch was replaced by a newer iter() "
                               "of the same loader (persistent workers serve one epoch at a time)")
        wait_start = time.perf_counter()
        try:
            while True:
                self._fill()
                if self._delivered == self._sent:
                    if self._exhausted or not any(self._active):
                        self._finish()
                        raise StopIteration
                    self._receive()  # a previous epoch's stale replies still hold the workers
                    continue
                reply = self._pool.replies.pop((self._epoch, self._delivered), None)
                if reply is None:
                    self._receive()
                    continue
                self._record(self._delivered, wait_start)
                self._ahead[self._worker_of.pop(self._delivered)] -= 1
                self._delivered += 1
                kind, payload = reply
                if kind == _BATCH:
                    from wick.utils.data import _shared_memory

                    return _shared_memory.unpack(payload)
                if kind == _ERROR:
                    self._finish()
                    _raise_worker_error(payload)
        except BaseException as error:
            if not isinstance(error, StopIteration):
                self._finish(broken=True)
            raise

    def _record(self, number, wait_start):
        """The batch's build (on its worker's lane) and the consumer's wait for it."""
        span = self._pool.spans.pop((self._epoch, number), None)
        if self._timeline is None:
            return
        from wick.utils.data import timeline as _timeline

        if span is not None:
            worker_id, start, end = span
            self._timeline.record("build batch", number, worker_id + 1, start, end)
        self._timeline.record("wait", number, 0, wait_start, time.perf_counter())
        _timeline.loader_span._python_context = (self._timeline, number)

    def _receive(self):
        worker_id, epoch, number, reply = self._pool.receive(self._timeout)
        if epoch != self._epoch:
            discard(self._pool.replies.pop((epoch, number)))
        elif reply[0] == _ENDED:
            self._active[worker_id] = False

    def _finish(self, broken=False):
        """Ends the epoch: unlinks its batches received but not delivered, and stops the workers
        unless they are persistent and still sound."""
        pool = self._pool
        if pool is None or os.getpid() != self._pid:  # a forked child's copy owns nothing
            return
        self._pool = None
        if self._timeline is not None:
            from wick.utils.data import timeline as _timeline

            _timeline.loader_span._python_context = None
        for key in [key for key in pool.replies if key[0] == self._epoch]:
            discard(pool.replies.pop(key))
        for key in [key for key in pool.spans if key[0] <= self._epoch]:
            del pool.spans[key]
        # A persistent pool survives an early break (the next epoch makes its leftover tasks
        # stale) but not an error, a dead worker or a timeout.
        if self._owns_pool or (broken and pool.epoch.value == self._epoch):
            pool.close()

    def __del__(self):
        self._finish()


_live_pools = weakref.WeakSet()


@atexit.register
def _close_all():
    # Registered after multiprocessing's own exit handler, so it runs first: the workers are
    # stopped and their batches unlinked before multiprocessing terminates what is left.
    for pool in list(_live_pools):
        pool.close()
