"""DataLoader worker processes (multiprocessing_context): the batches of num_workers=0, in order,
through shared memory, for map-style and iterable datasets under fork and spawn; get_worker_info
and seeds in the workers; errors, dead workers and timeouts re-raised, never a hang; early
break, garbage collection and interpreter exit stopping the workers; persistent workers; no
/dev/shm segment left behind by any test (the autouse fixture); the option checks."""

import gc
import multiprocessing
import os
import random
import subprocess
import sys
import textwrap
import time

import pytest
from _loader_datasets import FailAt, Marked, Nested, Range, WhoAmI, failing_init
from reference import needs_torch, torch

import wick
from wick.utils.data import DataLoader, SequentialSampler, TensorDataset

SHM = "/dev/shm"


def wick_segments():
    return {n for n in os.listdir(SHM) if n.startswith("wick_")} if os.path.isdir(SHM) else set()


@pytest.fixture(autouse=True)
def no_leaked_segments():
    before = wick_segments()
    yield
    gc.collect()
    assert wick_segments() - before == set()


def plain(batch):
    """A batch with its tensors as lists (and dtypes named), for comparing two loaders."""
    if isinstance(batch, wick.Tensor):
        return (str(batch.dtype), batch.float().tolist())
    if isinstance(batch, dict):
        return {k: plain(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(plain(v) for v in batch)
    return batch


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_map_style_batches_match_one_process(context):
    want = [plain(b) for b in DataLoader(Nested(11), batch_size=3)]
    loader = DataLoader(Nested(11), batch_size=3, num_workers=2, multiprocessing_context=context)
    got = [plain(b) for b in loader]
    assert got == want
    assert got[0][2]["half"][0] == "wick.bfloat16" and got[0][2]["name"] == ["sample-0",
                                                                              "sample-1",
                                                                              "sample-2"]


def test_shuffle_drop_last_unbatched_and_tensor_dataset():
    wick.manual_seed(3)
    want = [plain(b) for b in DataLoader(Nested(10), batch_size=4, shuffle=True, drop_last=True)]
    wick.manual_seed(3)
    got = [plain(b) for b in DataLoader(Nested(10), batch_size=4, shuffle=True, drop_last=True,
                                        num_workers=2, multiprocessing_context="fork")]
    assert got == want and len(got) == 2
    one_by_one = DataLoader(Nested(5), batch_size=None, num_workers=2,
                            multiprocessing_context="fork")
    assert [plain(b) for b in one_by_one] == [plain(Nested(5)[i]) for i in range(5)]
    # A dataset holding tensors pickles to a spawn worker (by value, through ForkingPickler).
    x, y = wick.arange(12.0).reshape(6, 2), wick.arange(6)
    dataset = TensorDataset(x, y)
    loader = DataLoader(dataset, batch_size=4, sampler=SequentialSampler(dataset), num_workers=1,
                        multiprocessing_context="spawn")
    one_process = DataLoader(dataset, batch_size=4, sampler=SequentialSampler(dataset))
    assert loader._cpp is None and [plain(b) for b in loader] == [plain(b) for b in one_process]


def test_batch_sampler_batches_are_collated():
    # A given batch_sampler leaves batch_size None; the workers once took that for "no batching"
    # and passed each list of indices to dataset[...] whole.
    batches = [[3, 0], [1], [2, 4]]
    want = [plain(b) for b in DataLoader(Nested(5), batch_sampler=batches)]
    got = [plain(b) for b in DataLoader(Nested(5), batch_sampler=batches, num_workers=2,
                                        multiprocessing_context="fork")]
    assert got == want and len(got[0][0][1]) == 2


@pytest.mark.parametrize("context", ["fork", "spawn"])
@pytest.mark.parametrize("split", [True, False])
def test_iterable_batches_match_threads(context, split):
    dataset = Range(0, 10, split=split)
    threads = [plain(b) for b in DataLoader(dataset, batch_size=3, num_workers=3)]
    got = [plain(b) for b in DataLoader(dataset, batch_size=3, num_workers=3,
                                        multiprocessing_context=context)]
    assert got == threads
    if split:  # 3 workers: [0..3], [4..7], [8, 9]; in turn, skipping ended streams
        assert [b[1][1] for b in got] == [[0, 1, 2], [4, 5, 6], [8, 9], [3], [7]]
        ones = sorted(i for b in DataLoader(dataset, batch_size=None, num_workers=2,
                                            multiprocessing_context=context) for i in [b[1]])
        assert ones == list(range(10))


def test_worker_info_and_seeds_in_the_workers():
    wick.manual_seed(11)
    first = list(DataLoader(WhoAmI(6), batch_size=None, num_workers=2,
                            multiprocessing_context="fork"))
    assert [b["index"] for b in first] == list(range(6))
    assert [b["id"] for b in first] == [0, 1, 0, 1, 0, 1]
    assert all(b["num_workers"] == 2 and b["same_dataset"] for b in first)
    assert len({b["pid"] for b in first} - {os.getpid()}) == 2
    base = first[0]["seed"]
    assert first[1]["seed"] == base + 1
    for b in first[:2]:  # each worker's first draws come from base_seed + worker id
        seed = base + b["id"]
        assert b["random"] == random.Random(seed).random()
        wick.manual_seed(seed)
        assert b["wick"] == wick.rand(1).item()
    assert first[0]["wick"] != first[1]["wick"]
    wick.manual_seed(11)
    again = list(DataLoader(WhoAmI(6), batch_size=None, num_workers=2,
                            multiprocessing_context="fork"))
    assert [b["seed"] for b in again] == [b["seed"] for b in first]


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_worker_exception_is_reraised_at_its_batch(context):
    loader = DataLoader(FailAt(12, bad=7, error=ValueError("sample 7 is corrupt")), batch_size=2,
                        num_workers=2, multiprocessing_context=context)
    got = []
    with pytest.raises(ValueError) as caught:
        for batch in loader:
            got.append(batch[:, 0].tolist())
    assert got == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    message = str(caught.value)
    assert "Caught ValueError in DataLoader worker process 1." in message
    assert "Original Traceback (most recent call last)" in message
    assert "_loader_datasets.py" in message and "sample 7 is corrupt" in message


def test_worker_init_fn_error_names_the_worker():
    loader = DataLoader(FailAt(8, bad=-1), batch_size=2, num_workers=2,
                        multiprocessing_context="fork", worker_init_fn=failing_init)
    with pytest.raises(KeyError) as caught:
        list(loader)
    assert "Caught KeyError in worker_init_fn in DataLoader worker process 1" in str(caught.value)
    assert "no config for worker 1" in str(caught.value)


@pytest.mark.parametrize("how,expected",
                         [({"exit_code": 7}, "exited unexpectedly with exit code 7"),
                          ({"kill": True}, "was killed by signal 9")])
def test_dead_worker_raises_instead_of_hanging(how, expected):
    loader = DataLoader(FailAt(20, bad=5, **how), batch_size=1, num_workers=2,
                        multiprocessing_context="fork")
    iterator = iter(loader)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=f"DataLoader worker 1 \\(pid \\d+\\) {expected}"):
        for _ in iterator:
            pass
    assert time.monotonic() - start < 10
    assert iterator._pool is None


def test_timeout_raises_after_that_many_seconds():
    loader = DataLoader(FailAt(6, bad=2, sleep=30), batch_size=1, num_workers=2, timeout=0.5,
                        multiprocessing_context="fork")
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        list(loader)
    assert time.monotonic() - start < 10  # the sleeping worker is terminated, not waited for


def test_early_break_and_garbage_collection_stop_the_workers():
    loader = DataLoader(FailAt(40, bad=-1), batch_size=2, num_workers=2,
                        multiprocessing_context="fork")
    for batch in loader:
        pids = [p.pid for p in multiprocessing.active_children()]
        break
    assert len(pids) == 2 and all(gone(pid) for pid in pids)
    iterator = iter(loader)
    next(iterator)
    pids = [p.pid for p in iterator._pool.workers]
    del iterator
    gc.collect()
    assert all(gone(pid) for pid in pids)


@pytest.mark.parametrize("first_delay", [0.0, 0.3])
def test_prefetch_factor_bounds_work_ahead(tmp_path, first_delay):
    # With first_delay, batch 1 arrives before batch 0: it still counts against worker 1's
    # prefetch_factor until it is delivered (PyTorch's bound: prefetch_factor * num_workers).
    loader = DataLoader(Marked(30, str(tmp_path), first_delay), batch_size=1, num_workers=2,
                        prefetch_factor=1, multiprocessing_context="fork")
    iterator = iter(loader)
    try:
        assert next(iterator).tolist() == [[0.0, 0.0]]
        time.sleep(0.5)
        assert len(os.listdir(tmp_path)) <= 2 * 1 + 1
        assert [b.tolist() for b in iterator] == [[[float(i)] * 2] for i in range(1, 30)]
    finally:
        del iterator


def test_persistent_workers_keep_their_processes_between_epochs():
    loader = DataLoader(WhoAmI(8), batch_size=2, num_workers=2, persistent_workers=True,
                        multiprocessing_context="spawn")
    epochs = [list(loader) for _ in range(2)]
    assert [b["index"].tolist() for b in epochs[1]] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert {p for b in epochs[0] for p in b["pid"].tolist()} == \
        {p for b in epochs[1] for p in b["pid"].tolist()}
    pool = loader._pool
    for batch in loader:  # an early break leaves tasks in flight; the next epoch is still whole
        break
    assert [b["index"].tolist() for b in loader] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert loader._pool is pool and not pool.closed
    older = iter(loader)
    next(older)
    assert len(list(loader)) == 4  # a newer epoch takes the workers over...
    with pytest.raises(RuntimeError, match="replaced by a newer iter"):
        next(older)  # ...and the older one says so rather than mixing the two
    assert loader._pool is pool and not pool.closed
    pids = [p.pid for p in pool.workers]
    del loader, batch
    gc.collect()
    assert pool.closed and all(gone(pid) for pid in pids)


def test_interpreter_exit_stops_the_workers():
    script = textwrap.dedent("""
        from _loader_datasets import FailAt
        from wick.utils.data import DataLoader
        running = iter(DataLoader(FailAt(100, bad=-1), batch_size=2, num_workers=2,
                                  multiprocessing_context="fork"))
        next(running)
        kept = DataLoader(FailAt(100, bad=-1), batch_size=2, num_workers=2,
                          persistent_workers=True, multiprocessing_context="fork")
        next(iter(kept))
        print(*[p.pid for p in running._pool.workers + kept._pool.workers])
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - start < 30
    assert "leaked" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 4 and all(gone(pid) for pid in pids)


def test_option_checks():
    with pytest.raises(ValueError, match="multiprocessing_context can only be used with "
                                         "multi-process loading .* num_workers=0"):
        DataLoader(Nested(4), multiprocessing_context="fork")
    with pytest.raises(ValueError, match="should specify a valid start method .* "
                                         "multiprocessing_context='threads'"):
        DataLoader(Nested(4), num_workers=2, multiprocessing_context="threads")
    with pytest.raises(TypeError, match="multiprocessing_context=3"):
        DataLoader(Nested(4), num_workers=2, multiprocessing_context=3)
    with pytest.raises(TypeError, match="multiprocessing_context=<module 'multiprocessing'"):
        DataLoader(Nested(4), num_workers=2, multiprocessing_context=multiprocessing)
    context = multiprocessing.get_context("fork")
    loader = DataLoader(Nested(4), batch_size=2, num_workers=1, multiprocessing_context=context)
    assert loader.multiprocessing_context is context and len(list(loader)) == 2
    threads = DataLoader(Nested(4), num_workers=2)
    assert threads.multiprocessing_context is None  # the default: worker threads


@needs_torch
@pytest.mark.parametrize("kwargs", [{"num_workers": 0, "multiprocessing_context": "spawn"},
                                    {"num_workers": 1, "multiprocessing_context": "nope"},
                                    {"num_workers": 1, "multiprocessing_context": 2.5}])
def test_option_errors_match_pytorch(kwargs):
    with pytest.raises(Exception) as theirs:
        torch.utils.data.DataLoader(list(range(4)), **kwargs)
    with pytest.raises(Exception) as ours:
        DataLoader(Nested(4), **kwargs)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)
