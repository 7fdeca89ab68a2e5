"""DataLoader: batches from a dataset (torch.utils.data.DataLoader).

Two engines behind one class:
  - the C++ DataLoader (data/dataloader.h) when the dataset is a built-in one backed by C++
    (wick.datasets.MNIST / CIFAR10 with C++ transforms, a TensorDataset of two tensors) and no
    Python sampler or collate_fn is given: worker threads build batches without the GIL, in
    sampler order, with bounded prefetch;
  - a Python loader for everything else: Python datasets, samplers and collate functions, with
    num_workers workers prefetching batches in order, and a worker's exception re-raised at its
    batch, as PyTorch does. The workers are threads by default (multiprocessing_context=None):
    they start at once, share the dataset without pickling it, and suit datasets whose work is
    wick ops, which run in C++ without the GIL. Given a multiprocessing_context ("fork", "spawn",
    "forkserver" or a context object) they are processes, as in PyTorch
    (_process_workers.py): the way to scale a transform written in Python, which threads
    serialize on the GIL; their batches come back through shared memory (_shared_memory.py).
    The C++ engine above keeps its threads either way: they already run without the GIL.
    "fork" copies only the thread that forks: with other threads busy in wick (a C++ loader, a
    threaded one), "spawn" or "forkserver" is the safe choice, as with PyTorch.
IterableDatasets (streams, no sampler) are served by iterable.py, or by the worker processes;
get_worker_info() works in the workers of every path.
"""

import collections.abc
import multiprocessing
import queue
import threading
import time

from wick import _C
from wick.utils.data import _process_workers, iterable
from wick.utils.data import timeline as _timeline
from wick.utils.data._worker import WorkerInfo, _set_worker_info
from wick.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler


def default_collate(batch):
    """Stacks a list of examples into a batch: tensors are stacked along a new first dim,
    numbers become tensors, and tuples, lists and dicts are collated element by element."""
    if not batch:
        raise IndexError("default_collate: got an empty batch (a collate_fn receives one or more "
                         "examples)")
    elem = batch[0]
    if isinstance(elem, _C.Tensor):
        return _C.stack(batch, 0)
    if isinstance(elem, bool):
        return _C.tensor(batch, dtype=_C.bool)
    if isinstance(elem, int):
        return _C.tensor(batch, dtype=_C.int64)
    if isinstance(elem, float):
        return _C.tensor(batch, dtype=_C.float64)
    if type(elem).__module__ == "numpy":
        return _C.stack([_C.as_tensor(b) for b in batch], 0)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        for i, d in enumerate(batch):
            missing = [key for key in elem if key not in d]
            if missing:
                raise KeyError(f"default_collate: example {i} has no key {missing[0]!r}, which "
                               f"example 0 has")
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numbers, dicts or lists; "
                    f"found {type(elem).__name__}")


def _check_int(name, value, minimum):
    # bool is an int subclass, but DataLoader(num_workers=True) is a mistake, not 1.
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"[DataLoader] {name} should be an int; got {type(value).__name__} "
                        f"({value!r})")
    if value < minimum:
        raise ValueError(f"[DataLoader] {name} option should be "
                         f"{'non-negative' if minimum == 0 else 'a positive integer'}; "
                         f"got {name}={value}")


def _check_options(batch_size, shuffle, sampler, batch_sampler, num_workers, drop_last, timeout,
                   worker_init_fn, prefetch_factor, persistent_workers, collate_fn):
    """PyTorch 2.x's DataLoader argument checks, with the offending value in each message."""
    _check_int("num_workers", num_workers, 0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"[DataLoader] timeout should be a number of seconds; got "
                        f"{type(timeout).__name__} ({timeout!r})")
    if not timeout >= 0:  # NaN too
        raise ValueError(f"[DataLoader] timeout option should be non-negative; got "
                         f"timeout={timeout}")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError(f"[DataLoader] prefetch_factor option could only be specified in "
                         f"multiprocessing; let num_workers > 0 to enable it, or leave "
                         f"prefetch_factor None (got prefetch_factor={prefetch_factor!r} with "
                         f"num_workers=0)")
    if prefetch_factor is not None:
        _check_int("prefetch_factor", prefetch_factor, 1)
    if persistent_workers and num_workers == 0:
        raise ValueError("[DataLoader] persistent_workers option needs num_workers > 0; got "
                         "num_workers=0")
    for name, fn in (("worker_init_fn", worker_init_fn), ("collate_fn", collate_fn)):
        if fn is not None and not callable(fn):
            raise TypeError(f"[DataLoader] {name} should be callable; got "
                            f"{type(fn).__name__} ({fn!r})")
    if sampler is not None and shuffle:
        raise ValueError(f"[DataLoader] sampler option is mutually exclusive with shuffle; got "
                         f"shuffle={shuffle!r} and sampler={type(sampler).__name__}")
    if batch_sampler is not None:
        if batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError(f"[DataLoader] batch_sampler option is mutually exclusive with "
                             f"batch_size, shuffle, sampler, and drop_last; got batch_size="
                             f"{batch_size!r}, shuffle={shuffle!r}, sampler="
                             f"{type(sampler).__name__}, drop_last={drop_last!r}")
    elif batch_size is None:
        if drop_last:
            raise ValueError("[DataLoader] batch_size=None option disables auto-batching and "
                             "is mutually exclusive with drop_last; got drop_last=True")
    elif not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
        raise ValueError(f"[DataLoader] batch_size should be a positive integer value, but got "
                         f"batch_size={batch_size!r}")
    for name, value in (("sampler", sampler), ("batch_sampler", batch_sampler)):
        if value is not None and not hasattr(value, "__iter__"):
            raise TypeError(f"[DataLoader] {name} should be an iterable of indices; got "
                            f"{type(value).__name__} ({value!r})")


def _check_context(multiprocessing_context, num_workers):
    """The multiprocessing context a DataLoader's option names, or None for worker threads;
    PyTorch's checks and messages."""
    if multiprocessing_context is None:
        return None
    if num_workers == 0:
        raise ValueError(f"multiprocessing_context can only be used with multi-process loading "
                         f"(num_workers > 0), but got num_workers={num_workers}")
    if isinstance(multiprocessing_context, str):
        methods = multiprocessing.get_all_start_methods()
        if multiprocessing_context not in methods:
            raise ValueError(f"multiprocessing_context option should specify a valid start method "
                             f"in {methods!r}, but got "
                             f"multiprocessing_context={multiprocessing_context!r}")
        return multiprocessing.get_context(multiprocessing_context)
    if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
        raise TypeError(f"multiprocessing_context option should be a valid context object or a "
                        f"string specifying the start method, but got "
                        f"multiprocessing_context={multiprocessing_context!r}")
    return multiprocessing_context


def _draw_seed():
    # Each epoch's workers get seeds base + worker id, base drawn from wick's generator (PyTorch's
    # WorkerInfo.seed), so wick.manual_seed makes them reproducible.
    return int(_C.randint(0, 2**62, (1,)).item())


def _reraise_from_worker(error, worker_id, where):
    """The worker's exception, as the same type with the worker named (PyTorch's
    ExceptionWrapper.reraise), or a RuntimeError when that type cannot take a message."""
    message = f"[DataLoader] {where} raised in worker {worker_id}: {type(error).__name__}: {error}"
    try:
        wrapped = type(error)(message)
    except Exception:  # noqa: BLE001  a type with required arguments
        wrapped = RuntimeError(message)
    raise wrapped from error


class DataLoader:
    _pool = None  # persistent_workers' processes, kept between epochs

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 timeline=None):
        _check_options(batch_size, shuffle, sampler, batch_sampler, num_workers, drop_last,
                       timeout, worker_init_fn, prefetch_factor, persistent_workers, collate_fn)
        self.multiprocessing_context = _check_context(multiprocessing_context, num_workers)
        self.persistent_workers = bool(persistent_workers)
        # wick's addition: a LoaderTimeline (wick.utils.data.timeline) to record where each
        # batch's time went. Not recorded for IterableDatasets on threads.
        if timeline is not None and not isinstance(timeline, _timeline.LoaderTimeline):
            raise TypeError(f"[DataLoader] timeline must be a wick.utils.data.LoaderTimeline; "
                            f"got {type(timeline).__name__}")
        self.timeline = timeline
        if isinstance(dataset, iterable.IterableDataset):
            self._init_iterable(dataset, batch_size, shuffle, sampler, batch_sampler,
                                num_workers, collate_fn, pin_memory, drop_last, timeout,
                                worker_init_fn, prefetch_factor)
            return
        self._iterable = False
        if not hasattr(dataset, "__getitem__") or not hasattr(dataset, "__len__"):
            raise TypeError(f"[DataLoader] dataset should be a map-style dataset with "
                            f"__getitem__ and __len__; got {type(dataset).__name__}")
        if batch_sampler is not None:
            batch_size, drop_last = None, False
        self.dataset = dataset
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.drop_last = drop_last
        self.timeout = timeout
        self.pin_memory = pin_memory  # accepted; see Note [pin_memory] in data/dataloader.h
        self.prefetch_factor = prefetch_factor if prefetch_factor is not None else 2
        self.collate_fn = collate_fn if collate_fn is not None else default_collate
        self.worker_init_fn = worker_init_fn
        cpp_dataset = getattr(dataset, "_cpp", None)
        self._cpp = None
        if (cpp_dataset is not None and sampler is None and batch_sampler is None
                and collate_fn is None and batch_size is not None and worker_init_fn is None):
            seed = int(_C.randint(0, 2**62, (1,)).item())
            self._cpp = _C._data.DataLoader(cpp_dataset, batch_size, bool(shuffle), num_workers,
                                            self.prefetch_factor, drop_last, seed, pin_memory,
                                            float(timeout), timeline)
            return
        if batch_sampler is None:
            if sampler is None:
                sampler = RandomSampler(dataset) if shuffle else SequentialSampler(dataset)
            if batch_size is not None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.sampler = sampler
        self.batch_sampler = batch_sampler

    def _init_iterable(self, dataset, batch_size, shuffle, sampler, batch_sampler, num_workers,
                       collate_fn, pin_memory, drop_last, timeout, worker_init_fn,
                       prefetch_factor):
        # A stream has no indices to sample or shuffle (PyTorch's messages).
        for name, value in (("shuffle", shuffle), ("sampler", sampler),
                            ("batch_sampler", batch_sampler)):
            if value not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} "
                                 f"option, but got {name}={value!r}")
        self._iterable = True
        self._cpp = None
        self.dataset = dataset
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.drop_last = drop_last
        self.timeout = timeout
        self.pin_memory = pin_memory
        self.prefetch_factor = prefetch_factor if prefetch_factor is not None else 2
        self.collate_fn = collate_fn if collate_fn is not None else default_collate
        # batch_size=None: each example goes through collate_fn alone, or unchanged by default.
        self._convert_fn = collate_fn if collate_fn is not None else (lambda example: example)
        self.worker_init_fn = worker_init_fn
        self.sampler = None
        self.batch_sampler = None

    def __len__(self):
        if self._iterable:
            # PyTorch: the dataset's length (when it has one) in batches; a stream without
            # __len__ has no length.
            if not hasattr(self.dataset, "__len__"):
                raise TypeError(f"object of type '{type(self.dataset).__name__}' has no len()")
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self._cpp is not None:
            return len(self._cpp)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)

    def __iter__(self):
        if self._cpp is not None:
            return iter(self._cpp)
        if self.multiprocessing_context is not None:
            return self._processes()
        if self._iterable:
            return iterable.iterate(self, _draw_seed())
        if self.batch_sampler is None:  # batch_size=None: examples one by one
            return (self.collate_fn(self.dataset[i]) if self.collate_fn is not default_collate
                    else self.dataset[i] for i in self.sampler)
        if self.num_workers == 0:
            return self._in_this_thread(iter(self.batch_sampler))
        return self._threaded(iter(self.batch_sampler))

    def set_epoch(self, epoch):
        """wick's addition (the C++ DataLoader's set_epoch): the next iteration is epoch `epoch`,
        whose shuffle and per-example transforms depend only on (seed, epoch) - so a resumed run
        sees the batches an uninterrupted one would. A sampler with its own set_epoch (a
        DistributedSampler) is told too."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"[DataLoader] set_epoch expects an integer epoch >= 0; got {epoch!r}")
        if getattr(self, "_cpp", None) is not None:
            self._cpp.set_epoch(epoch)
        elif hasattr(getattr(self, "sampler", None), "set_epoch"):
            self.sampler.set_epoch(epoch)

    def stats(self):
        """The C++ loader's counters (wait and work seconds, ...), or None for the Python one."""
        return self._cpp.stats() if self._cpp is not None else None

    def _processes(self):
        """This epoch's batches from worker processes: the persistent ones, or new ones that end
        with the epoch."""
        pool = self._pool
        if pool is None or pool.closed:
            # A map-style dataset's indices come in batches whenever there is a batch sampler -
            # a given one leaves batch_size None, as in PyTorch; an iterable one batches by size.
            auto = self.batch_size is not None if self._iterable else \
                self.batch_sampler is not None
            collate = self.collate_fn if auto else (
                None if self.collate_fn is default_collate else self.collate_fn)
            fetch = _process_workers._Fetch(self.dataset, self._iterable, auto, collate,
                                            self.batch_size, self.drop_last)
            pool = _process_workers.WorkerPool(self.multiprocessing_context, fetch,
                                               self.worker_init_fn, self.num_workers,
                                               self.prefetch_factor, _draw_seed())
            self._pool = pool if self.persistent_workers else None
        if self._iterable:
            indices = None
        else:
            indices = iter(self.batch_sampler if self.batch_sampler is not None else self.sampler)
        return _process_workers.EpochIterator(pool, indices, not self.persistent_workers,
                                              self.timeout, self.timeline)

    def __del__(self):
        if self._pool is not None:
            self._pool.close()

    def _fetch(self, indices, number=-1, lane=0):
        if self.timeline is None:
            return self.collate_fn([self.dataset[i] for i in indices])
        start = time.perf_counter()
        try:
            return self.collate_fn([self.dataset[i] for i in indices])
        finally:
            self.timeline.record("build batch", number, lane, start, time.perf_counter())

    def _delivered(self, number):
        """The training loop's loader_span()s now count against batch `number` (-1: none)."""
        if self.timeline is not None:
            _timeline.loader_span._python_context = (
                (self.timeline, number) if number >= 0 else None)

    def _in_this_thread(self, batches):
        for number, indices in enumerate(batches):
            batch = self._fetch(indices, number, 0)
            self._delivered(number)
            yield batch
        self._delivered(-1)

    def _threaded(self, batches):
        """Batches built by num_workers threads, delivered in sampler order; at most
        num_workers * prefetch_factor batches are in flight. A worker_init_fn that raises, or a
        batch not built within `timeout` seconds (when positive), ends the epoch with an error
        in the caller instead of leaving it waiting forever."""
        tasks = queue.Queue()
        results = {}
        init_errors = []  # (worker id, exception) of workers whose worker_init_fn raised
        ready = threading.Condition()
        stop = threading.Event()
        base_seed = _draw_seed()

        def worker(worker_id):
            _set_worker_info(WorkerInfo(worker_id, self.num_workers, base_seed + worker_id,
                                        self.dataset))
            if self.worker_init_fn is not None:
                try:
                    self.worker_init_fn(worker_id)
                except BaseException as e:  # noqa: B902  re-raised in the consumer
                    with ready:
                        init_errors.append((worker_id, e))
                        ready.notify_all()
                    return
            while not stop.is_set():
                item = tasks.get()
                if item is None:
                    return
                number, indices = item
                try:
                    result = (True, self._fetch(indices, number, worker_id + 1))
                except BaseException as e:  # noqa: B902  re-raised in the consumer
                    result = (False, e)
                with ready:
                    results[number] = result
                    ready.notify_all()

        threads = [threading.Thread(target=worker, args=(w,), daemon=True)
                   for w in range(self.num_workers)]
        for t in threads:
            t.start()
        window = self.num_workers * self.prefetch_factor
        timeout = self.timeout if self.timeout > 0 else None
        submitted = 0
        exhausted = False
        try:
            delivered = 0
            while True:
                while not exhausted and submitted - delivered < window:
                    indices = next(batches, None)
                    if indices is None:
                        exhausted = True
                        break
                    tasks.put((submitted, indices))
                    submitted += 1
                if delivered == submitted:
                    return
                wait_start = time.perf_counter()
                with ready:
                    arrived = ready.wait_for(lambda: delivered in results or init_errors,
                                             timeout)
                    if init_errors:
                        _reraise_from_worker(init_errors[0][1], init_errors[0][0],
                                             "worker_init_fn")
                    if not arrived:
                        raise RuntimeError(f"DataLoader timed out after {self.timeout} seconds "
                                           f"waiting for batch {delivered}")
                    ok, value = results.pop(delivered)
                if self.timeline is not None:
                    self.timeline.record("wait", delivered, 0, wait_start, time.perf_counter())
                    self._delivered(delivered)
                delivered += 1
                if not ok:
                    raise value
                yield value
        finally:
            self._delivered(-1)
            stop.set()
            for _ in threads:
                tasks.put(None)
