"""Bad inputs that reach DataLoader worker processes (multiprocessing_context="fork"): a dataset,
an iterable stream, a worker_init_fn or a collate_fn that raises; batches that cannot be
collated or pickled back; a worker that exits or is killed; a timeout; and the
multiprocessing_context option itself. The thread workers' rows are in test_loader_tools.py.

How the types were checked: each row was run against torch.utils.data 1.13's worker processes
(Debian's torch, /work/main/.venv), which re-raise a worker's exception in the main process with
its type and the worker's traceback in the message (ExceptionWrapper); wick does the same, so the
rows keep the exception the user's code raised. An exception whose class cannot be rebuilt from a
message becomes RuntimeError in both. A dead worker and a timeout are RuntimeError in both; wick
names the worker's exit code or signal. default_collate's ragged tensors are ValueError, wick's
rule for stack (test_ops.py), where PyTorch raises RuntimeError."""

import os
import signal
import time

import wick as W
from wick.utils.data import DataLoader, Dataset, IterableDataset
from wick.utils.data.dataloader import default_collate

from bad_inputs.corpus import Bad, check, parametrize


class TwoArgumentError(Exception):
    """An exception that cannot be rebuilt from a message alone."""

    def __init__(self, a, b):
        super().__init__(f"{a}/{b}")


class Raising(Dataset):
    def __init__(self, error, at=3):
        self.error, self.at = error, at

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == self.at:
            raise self.error
        return W.ones(2) * i


class Exiting(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 3:
            os._exit(3)
        return W.ones(2)


class Killed(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return W.ones(2)


class Items(Dataset):
    """Item i is make(i)."""

    def __init__(self, make, n=4):
        self.make, self.n = make, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.make(i)


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(2)
        return i


class BrokenStream(IterableDataset):
    def __iter__(self):
        yield W.ones(2)
        raise OSError("the disk went away")


def _no_config(worker_id):
    raise ValueError(f"no config for worker {worker_id}")


def _refuse(batch):
    raise TypeError("cannot collate these")


def _local_function(i):
    return lambda: i


def _ragged_tensor(i):
    return W.ones(i + 1)


def _ragged_list(i):
    return [1] * (i + 1)


def _tensor_or_int(i):
    return W.ones(2) if i % 2 == 0 else 1


def _load(dataset, batch_size=2, **kwargs):
    return list(DataLoader(dataset, batch_size=batch_size, num_workers=2,
                           multiprocessing_context="fork", **kwargs))


def _fine():
    return Raising(ValueError(), at=99)


WORKER_ERRORS = [
    Bad("getitem-value-error", lambda: _load(Raising(ValueError("bad row 3"))), ValueError,
        "DataLoader worker process", ["bad row 3"]),
    Bad("getitem-key-error", lambda: _load(Raising(KeyError("label"))), KeyError,
        "DataLoader worker process", ["'label'"]),
    Bad("getitem-index-error", lambda: _load(Raising(IndexError("row 3 is missing"))), IndexError,
        "DataLoader worker process", ["row 3 is missing"]),
    Bad("getitem-zero-division", lambda: _load(Raising(ZeroDivisionError("empty bin"))),
        ZeroDivisionError, "DataLoader worker process", ["empty bin"]),
    Bad("getitem-unrebuildable-error", lambda: _load(Raising(TwoArgumentError("x", "y"))),
        RuntimeError, "DataLoader worker process", ["TwoArgumentError", "x/y"]),
    Bad("sampler-index-past-end", lambda: list(DataLoader([1, 2, 3], sampler=[0, 5],
                                                          num_workers=2,
                                                          multiprocessing_context="fork")),
        IndexError, "DataLoader worker process", ["list index out of range"]),
    Bad("stream-raises", lambda: _load(BrokenStream()), OSError, "DataLoader worker process",
        ["the disk went away"]),
    Bad("worker-init-raises", lambda: _load(_fine(), worker_init_fn=_no_config), ValueError,
        "worker_init_fn", ["no config for worker 0"]),
    Bad("worker-init-takes-no-id", lambda: _load(_fine(), worker_init_fn=lambda: None),
        TypeError, "worker_init_fn", ["positional"]),
    Bad("collate-raises", lambda: _load(_fine(), collate_fn=_refuse), TypeError,
        "DataLoader worker process", ["cannot collate these"]),
    Bad("collate-ragged-tensors", lambda: _load(Items(_ragged_tensor)), ValueError, "stack",
        ["(2,)", "(1,)"]),
    Bad("collate-objects", lambda: _load(Items(lambda i: object())), TypeError, "default_collate",
        ["object"]),
    Bad("collate-ragged-lists", lambda: _load(Items(_ragged_list)), RuntimeError,
        "DataLoader worker process", ["equal size"]),
    Bad("collate-tensor-then-int", lambda: _load(Items(_tensor_or_int)), TypeError,
        "DataLoader worker process", ["Tensor"]),
    Bad("batch-sampler-of-ints", lambda: list(DataLoader(_fine(), batch_sampler=[0, 1],
                                                         num_workers=2,
                                                         multiprocessing_context="fork")),
        TypeError, "DataLoader worker process", ["not iterable"]),
    Bad("batch-cannot-be-pickled", lambda: _load(Items(_local_function), collate_fn=list),
        AttributeError, "while sending a batch", ["Can't pickle local object"]),
    Bad("worker-exits", lambda: _load(Exiting()), RuntimeError, "DataLoader worker",
        ["exited unexpectedly", "exit code 3"]),
    Bad("worker-killed", lambda: _load(Killed()), RuntimeError, "DataLoader worker",
        ["killed by signal 9"]),
    Bad("worker-timeout", lambda: _load(Slow(), batch_size=1, timeout=1), RuntimeError,
        "DataLoader", ["timed out after 1 seconds"]),
]

OPTIONS = [
    Bad("context-unknown-method", lambda: DataLoader(_fine(), num_workers=2,
                                                     multiprocessing_context="thread"),
        ValueError, "multiprocessing_context", ["'thread'"]),
    Bad("context-without-workers", lambda: DataLoader(_fine(), num_workers=0,
                                                      multiprocessing_context="fork"),
        ValueError, "multiprocessing_context", ["num_workers=0"]),
    Bad("context-int", lambda: DataLoader(_fine(), num_workers=2, multiprocessing_context=3),
        TypeError, "multiprocessing_context", ["3"]),
    Bad("spawn-local-collate", lambda: list(DataLoader(
        _fine(), batch_size=2, num_workers=1, multiprocessing_context="spawn",
        collate_fn=lambda b: b)), AttributeError, "pickle", ["local object"]),
    # silent: IndexError "list index out of range" and KeyError 'a', naming nothing.
    Bad("default-collate-empty", lambda: default_collate([]), IndexError, "default_collate",
        ["empty batch"]),
    Bad("default-collate-keys-differ", lambda: default_collate([{"a": 1}, {"b": 2}]), KeyError,
        "default_collate", ["example 1", "'a'"]),
    Bad("default-collate-none", lambda: default_collate([None, None]), TypeError,
        "default_collate", ["NoneType"]),
    Bad("default-collate-ragged", lambda: default_collate([W.ones(2), W.ones(3)]), ValueError,
        "stack", ["(3,)", "(2,)"]),
]

CASES = WORKER_ERRORS + OPTIONS


@parametrize(CASES)
def test_bad_input(case):
    check(case)
