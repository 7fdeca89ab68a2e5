"""Datasets for test_dataloader_processes.py, in a module of their own so that "spawn" and
"forkserver" workers (new interpreters) can import them to unpickle the loader's dataset."""

import math
import os
import random
import signal
import time

import wick
from wick.utils.data import Dataset, IterableDataset, get_worker_info


class Nested(Dataset):
    """Examples with a bit of everything a batch can hold: tensors of several dtypes in a tuple,
    a list and a dict, numbers and strings."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        image = wick.arange(12, dtype=wick.float32).reshape(3, 4) * i
        extras = {"half": wick.full((2,), i / 4, dtype=wick.bfloat16),
                  "mask": wick.tensor([i % 2 == 0, True]),
                  "name": f"sample-{i}"}
        return image, [i, float(i) / 2], extras


class WhoAmI(Dataset):
    """What the worker that fetched sample i knows: get_worker_info() and its first draws."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = get_worker_info()
        return {"index": i, "id": info.id, "num_workers": info.num_workers, "seed": info.seed,
                "same_dataset": isinstance(info.dataset, WhoAmI), "pid": os.getpid(),
                "random": random.random(), "wick": wick.rand(1).item()}


class FailAt(Dataset):
    """Sample `bad` fails: raising `error`, or ending the process with `exit_code`, or killing
    it, or sleeping `sleep` seconds."""

    def __init__(self, n, bad, error=None, exit_code=None, kill=False, sleep=0.0):
        self.n, self.bad = n, bad
        self.error, self.exit_code, self.kill, self.sleep = error, exit_code, kill, sleep

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            if self.error is not None:
                raise self.error
            if self.exit_code is not None:
                os._exit(self.exit_code)
            if self.kill:
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(self.sleep)
        return wick.full((3,), float(i))


class Marked(Dataset):
    """Leaves a file per fetched sample in `folder`, to count what the workers fetched ahead;
    sample 0 can take `first_delay` seconds, so that the next batch arrives before it."""

    def __init__(self, n, folder, first_delay=0.0):
        self.n, self.folder, self.first_delay = n, folder, first_delay

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == 0:
            time.sleep(self.first_delay)
        open(os.path.join(self.folder, str(i)), "w").close()
        return wick.full((2,), float(i))


class Range(IterableDataset):
    """PyTorch's documented example: a range that workers split into contiguous pieces."""

    def __init__(self, start, end, split=True):
        self.start, self.end, self.split = start, end, split

    def __iter__(self):
        info = get_worker_info()
        if info is None or not self.split:
            lo, hi = self.start, self.end
        else:
            per = int(math.ceil((self.end - self.start) / info.num_workers))
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
        for i in range(lo, hi):
            yield wick.full((2,), float(i)), i


def failing_init(worker_id):
    if worker_id == 1:
        raise KeyError(f"no config for worker {worker_id}")
