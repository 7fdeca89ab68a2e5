"""Bad inputs of the loader and the tools: DataLoader, Dataset and sampler arguments,
worker errors and timeouts, the command-line tools' arguments (run as subprocesses: each must exit
2 with one line on stderr), and wrong argument types across the Python API - one row per
function - which must give a one-line TypeError naming the function and the types passed
(Note [one-line TypeErrors] in python/bind_common.h)."""

import math
import os
import subprocess
import tempfile
import time

import pytest

import wick
import wick.nn as nn
import wick.nn.functional as F
from wick.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, RandomSampler,
                             SequentialSampler, Subset, SubsetRandomSampler, TensorDataset,
                             random_split)

from bad_inputs.corpus import Bad, check, parametrize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = os.environ.get("WICK_BUILD_DIR", os.path.join(ROOT, "build"))
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)


# ---- helpers -------------------------------------------------------------------------------------

class ToolExit(Exception):
    """A tool refused its arguments as it should: exit status 2 and one line on stderr."""


def tool(relative, *args, env=None):
    """Runs a built tool; raises ToolExit(stderr line) on a clean refusal, AssertionError on
    anything else (success, a crash, another status, a multi-line message)."""
    path = os.path.join(BUILD, relative)
    if not os.path.exists(path):
        pytest.skip(f"{relative} is not built in {BUILD}")
    run = subprocess.run([path, *args], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **(env or {})})
    lines = run.stderr.strip().splitlines()
    if run.returncode == 2 and len(lines) == 1:
        raise ToolExit(lines[0])
    raise AssertionError(f"{relative} {args}: exit {run.returncode}, stderr {run.stderr!r}")


def replay(*args):
    return tool("tools/alloc_replay", *args)


def spirals(*args):
    return tool("examples/fit_spirals", *args)


_TMP = tempfile.mkdtemp(prefix="wick_bad_loader_")


def trace_file(name, *lines):
    """A trace file with one good event and then `lines`; returns its path."""
    path = os.path.join(_TMP, name)
    with open(path, "w") as f:
        f.write('{"event":"alloc","ptr":1,"size":64,"stream":0}\n')
        for line in lines:
            f.write(line + "\n")
    return path


def good_trace():
    return trace_file("good.jsonl")


class Range(Dataset):
    def __init__(self, n=10):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(f"[Range] index {i} is out of range for {self.n} examples")
        return wick.tensor([float(i)])


class Sleepy(Range):
    """Example 1 takes 30 s: a stuck file read."""

    def __getitem__(self, i):
        if i == 1:
            time.sleep(30)
        return super().__getitem__(i)


def first_batches(loader, n=3):
    it = iter(loader)
    return [next(it) for _ in range(n)]


def failing_init(worker_id):
    raise OSError(f"cannot open shard {worker_id}")


def tensors():
    return TensorDataset(wick.ones(4, 2), wick.zeros(4, dtype=wick.int64))


T = wick.ones(2, 3)

# ---- the table -----------------------------------------------------------------------------------

CASES = [
    # DataLoader arguments (PyTorch 2.x's checks)
    Bad("loader-batch-size-0", lambda: DataLoader(Range(), batch_size=0), ValueError,
        "DataLoader", ["batch_size=0"]),
    Bad("loader-batch-size-negative", lambda: DataLoader(Range(), batch_size=-4), ValueError,
        "DataLoader", ["batch_size=-4"]),
    Bad("loader-batch-size-float", lambda: DataLoader(Range(), batch_size=2.5), ValueError,
        "DataLoader", ["batch_size=2.5"]),
    Bad("loader-batch-size-bool", lambda: DataLoader(Range(), batch_size=True), ValueError,
        "DataLoader", ["batch_size=True"]),
    Bad("loader-num-workers-negative", lambda: DataLoader(Range(), num_workers=-1), ValueError,
        "DataLoader", ["num_workers=-1"]),
    Bad("loader-num-workers-str", lambda: DataLoader(Range(), num_workers="2"), TypeError,
        "DataLoader", ["num_workers", "str"]),
    Bad("loader-timeout-negative", lambda: DataLoader(Range(), timeout=-1), ValueError,
        "DataLoader", ["timeout option should be non-negative", "timeout=-1"]),
    Bad("loader-timeout-nan", lambda: DataLoader(Range(), timeout=math.nan), ValueError,
        "DataLoader", ["timeout=nan"]),
    Bad("loader-timeout-str", lambda: DataLoader(Range(), timeout="5"), TypeError,
        "DataLoader", ["timeout", "str"]),
    Bad("loader-prefetch-without-workers", lambda: DataLoader(Range(), prefetch_factor=2),
        ValueError, "DataLoader", ["prefetch_factor=2", "num_workers=0"]),
    Bad("loader-prefetch-0", lambda: DataLoader(Range(), num_workers=2, prefetch_factor=0),
        ValueError, "DataLoader", ["prefetch_factor=0"]),
    Bad("loader-prefetch-0-cpp-dataset",
        lambda: DataLoader(tensors(), num_workers=1, prefetch_factor=0), ValueError,
        "DataLoader", ["prefetch_factor=0"]),
    Bad("loader-prefetch-float", lambda: DataLoader(Range(), num_workers=1, prefetch_factor=1.5),
        TypeError, "DataLoader", ["prefetch_factor", "float"]),
    Bad("loader-persistent-without-workers",
        lambda: DataLoader(Range(), persistent_workers=True), ValueError, "DataLoader",
        ["persistent_workers", "num_workers=0"]),
    Bad("loader-sampler-and-shuffle",
        lambda: DataLoader(Range(), sampler=SequentialSampler(Range()), shuffle=True),
        ValueError, "DataLoader", ["mutually exclusive with shuffle", "SequentialSampler"]),
    Bad("loader-batch-sampler-and-batch-size",
        lambda: DataLoader(Range(), batch_sampler=[[0, 1]], batch_size=4), ValueError,
        "DataLoader", ["batch_sampler option is mutually exclusive", "batch_size=4"]),
    Bad("loader-batch-sampler-and-drop-last",
        lambda: DataLoader(Range(), batch_sampler=[[0, 1]], drop_last=True), ValueError,
        "DataLoader", ["drop_last=True"]),
    Bad("loader-no-batching-and-drop-last",
        lambda: DataLoader(Range(), batch_size=None, drop_last=True), ValueError,
        "DataLoader", ["batch_size=None", "drop_last=True"]),
    Bad("loader-collate-not-callable", lambda: DataLoader(Range(), collate_fn=3), TypeError,
        "DataLoader", ["collate_fn", "int"]),
    Bad("loader-worker-init-not-callable",
        lambda: DataLoader(Range(), num_workers=1, worker_init_fn="f"), TypeError, "DataLoader",
        ["worker_init_fn", "str"]),
    Bad("loader-sampler-not-iterable", lambda: DataLoader(Range(), sampler=5), TypeError,
        "DataLoader", ["sampler", "int"]),
    Bad("loader-dataset-not-a-dataset", lambda: DataLoader(42), TypeError, "DataLoader",
        ["int"]),
    # worker errors and timeouts: raised in the caller, never a hang
    Bad("loader-timeout-python-workers",
        lambda: first_batches(DataLoader(Sleepy(), num_workers=1, timeout=0.2)), RuntimeError,
        "DataLoader", ["timed out after 0.2 seconds"]),
    Bad("loader-worker-init-raises",
        lambda: first_batches(DataLoader(Range(), num_workers=2, worker_init_fn=failing_init)),
        OSError, "worker_init_fn", ["in worker", "cannot open shard"]),
    Bad("loader-worker-getitem-raises",
        lambda: first_batches(DataLoader(Subset(Range(3), [0, 7]), num_workers=2), n=2),
        IndexError, "index", ["7"]),
    Bad("loader-cpp-worker-index",
        lambda: list(DataLoader(TensorDataset(wick.ones(4, 2), wick.zeros(4)),
                                sampler=[0, 9], num_workers=2)),
        IndexError, "index", ["9"]),
    # datasets and samplers
    Bad("tensor-dataset-size-mismatch",
        lambda: TensorDataset(wick.ones(3, 2), wick.ones(4)), ValueError, "TensorDataset",
        ["Size mismatch", "(3, 2)", "(4,)"]),
    Bad("tensor-dataset-scalar", lambda: TensorDataset(wick.tensor(1.0)), ValueError,
        "TensorDataset", ["()"]),
    Bad("tensor-dataset-not-tensor", lambda: TensorDataset(wick.ones(2), [1, 2]), TypeError,
        "TensorDataset", ["argument 1", "list"]),
    Bad("tensor-dataset-empty", lambda: TensorDataset(), ValueError, "TensorDataset",
        ["none"]),
    Bad("concat-dataset-empty", lambda: ConcatDataset([]), ValueError, "ConcatDataset",
        ["empty"]),
    Bad("concat-dataset-index-out-of-range", lambda: ConcatDataset([Range(2), Range(3)])[5],
        IndexError, "ConcatDataset", ["index 5", "dataset of 5"]),
    Bad("concat-dataset-index-too-negative", lambda: ConcatDataset([Range(2)])[-3], ValueError,
        "ConcatDataset", ["-3"]),
    Bad("concat-dataset-index-str", lambda: ConcatDataset([Range(2)])["a"], TypeError,
        "ConcatDataset", ["str"]),
    Bad("subset-indices-int", lambda: Subset(Range(), 3), TypeError, "Subset", ["int"]),
    Bad("random-split-wrong-sum", lambda: random_split(Range(10), [3, 4]), ValueError,
        "random_split", ["[3, 4]", "dataset of 10"]),
    Bad("random-split-negative", lambda: random_split(Range(10), [12, -2]), ValueError,
        "random_split", ["-2"]),
    Bad("random-split-str", lambda: random_split(Range(10), ["a", 10]), ValueError,
        "random_split", ["'a'"]),
    Bad("batch-sampler-size-0", lambda: BatchSampler(SequentialSampler(Range()), 0, False),
        ValueError, "BatchSampler", ["batch_size=0"]),
    Bad("batch-sampler-drop-last-str",
        lambda: BatchSampler(SequentialSampler(Range()), 2, "no"), ValueError, "BatchSampler",
        ["drop_last='no'"]),
    Bad("random-sampler-replacement-str", lambda: RandomSampler(Range(), replacement="yes"),
        TypeError, "RandomSampler", ["replacement='yes'"]),
    Bad("random-sampler-num-samples-0", lambda: RandomSampler(Range(), num_samples=0),
        ValueError, "RandomSampler", ["num_samples=0"]),
    Bad("sequential-sampler-no-len", lambda: SequentialSampler(5), TypeError,
        "SequentialSampler", ["int"]),
    Bad("subset-random-sampler-int", lambda: SubsetRandomSampler(5), TypeError,
        "SubsetRandomSampler", ["int"]),
    # alloc_replay: arguments
    Bad("replay-capacity-negative", lambda: replay(good_trace(), "--capacity", "-1"), ToolExit,
        "--capacity", ["'-1'"]),
    Bad("replay-capacity-nan", lambda: replay(good_trace(), "--capacity", "nan"), ToolExit,
        "--capacity", ["'nan'"]),
    Bad("replay-capacity-text", lambda: replay(good_trace(), "--capacity", "lots"), ToolExit,
        "--capacity", ["'lots'"]),
    Bad("replay-capacity-absurd", lambda: replay(good_trace(), "--capacity", "1e30"), ToolExit,
        "--capacity", ["'1e30'"]),
    Bad("replay-capacity-trailing", lambda: replay(good_trace(), "--capacity", "8GB"), ToolExit,
        "--capacity", ["'8GB'"]),
    Bad("replay-steps-negative", lambda: replay("--synthetic", os.path.join(_TMP, "s.jsonl"),
                                                "--steps", "-3"), ToolExit, "--steps", ["'-3'"]),
    Bad("replay-steps-float", lambda: replay("--synthetic", os.path.join(_TMP, "s.jsonl"),
                                             "--steps", "2.5"), ToolExit, "--steps", ["'2.5'"]),
    Bad("replay-policies-empty", lambda: replay(good_trace(), "--policies", ""), ToolExit,
        "--policies", ["''"]),
    Bad("replay-policies-empty-name", lambda: replay(good_trace(), "--policies", "bfc,,caching"),
        ToolExit, "--policies", ["'bfc,,caching'"]),
    Bad("replay-policies-unknown", lambda: replay(good_trace(), "--policies", "magic"), ToolExit,
        "policies", ["'magic'"]),
    Bad("replay-unknown-flag", lambda: replay(good_trace(), "--fast"), ToolExit, "alloc_replay",
        ["'--fast'"]),
    Bad("replay-missing-value", lambda: replay(good_trace(), "--capacity"), ToolExit,
        "alloc_replay", ["'--capacity'"]),
    Bad("replay-no-trace", lambda: replay(), ToolExit, "alloc_replay", ["trace file"]),
    # alloc_replay: trace files (named with the line) and allocator settings
    Bad("trace-size-negative", lambda: replay(trace_file(
        "neg.jsonl", '{"event":"alloc","ptr":2,"size":-5,"stream":0}')), ToolExit, "read_trace",
        ["neg.jsonl:2", '"size"', "-5"]),
    Bad("trace-size-text", lambda: replay(trace_file(
        "big.jsonl", '{"event":"alloc","ptr":2,"size":"big","stream":0}')), ToolExit,
        "read_trace", ["big.jsonl:2", '"big"']),
    Bad("trace-size-beyond-64-bits", lambda: replay(trace_file(
        "huge.jsonl", '{"event":"alloc","ptr":2,"size":99999999999999999999999,"stream":0}')),
        ToolExit, "read_trace", ["huge.jsonl:2", "99999999999999999999999"]),
    Bad("trace-ptr-text", lambda: replay(trace_file(
        "ptr.jsonl", '{"event":"free","ptr":"x","size":5}')), ToolExit, "read_trace",
        ["ptr.jsonl:2", '"ptr"']),
    Bad("trace-unknown-event", lambda: replay(trace_file(
        "ev.jsonl", '{"event":"realloc","ptr":2,"size":5}')), ToolExit, "read_trace",
        ["ev.jsonl:2", "realloc"]),
    Bad("trace-missing-size", lambda: replay(trace_file("nosize.jsonl", '{"event":"alloc"}')),
        ToolExit, "read_trace", ["nosize.jsonl:2"]),
    Bad("conf-split-overflows", lambda: replay(good_trace(), "--conf",
                                               "max_split_size_mb:18446744073709551615"),
        ToolExit, "WICK_ALLOC_CONF", ["18446744073709551615", "overflows"]),
    Bad("conf-rounding-overflows", lambda: replay(good_trace(), "--conf",
                                                  "max_non_split_rounding_mb:17592186044416"),
        ToolExit, "WICK_ALLOC_CONF", ["17592186044416", "overflows"]),
    Bad("conf-negative", lambda: replay(good_trace(), "--conf", "max_non_split_rounding_mb:-5"),
        ToolExit, "WICK_ALLOC_CONF", ["'-5'"]),
    Bad("conf-unknown-option", lambda: replay(good_trace(), "--conf", "turbo:1"), ToolExit,
        "WICK_ALLOC_CONF", ["'turbo'"]),
    # fit_spirals: the same checked parsers
    Bad("spirals-epochs-negative", lambda: spirals("--epochs", "-3"), ToolExit, "--epochs",
        ["'-3'"]),
    Bad("spirals-lr-nan", lambda: spirals("--lr", "nan"), ToolExit, "--lr", ["'nan'"]),
    Bad("spirals-hidden-text", lambda: spirals("--hidden", "64x"), ToolExit, "--hidden",
        ["'64x'"]),
    Bad("spirals-unknown-flag", lambda: spirals("--depth", "3"), ToolExit, "fit_spirals",
        ["--depth"]),
    # wrong argument types across the API: one line naming the function and what was passed
    Bad("type-linspace", lambda: wick.linspace(0, 1, "n"), TypeError, "linspace",
        ["(int, int, str)"]),
    Bad("type-eye", lambda: wick.eye("n"), TypeError, "eye", ["(str)"]),
    Bad("type-manual-seed", lambda: wick.manual_seed("s"), RuntimeError, "manual_seed", ["str"]),  # torch.Generator.manual_seed's type
    Bad("type-set-num-threads", lambda: wick.set_num_threads("4"), TypeError,
        "set_num_threads", ["(str)"]),
    Bad("type-from-numpy", lambda: wick.from_numpy([1, 2]), TypeError, "from_numpy",
        ["(list)"]),
    Bad("type-matmul", lambda: wick.matmul(T, "x"), TypeError, "matmul", ["(Tensor, str)"]),
    Bad("type-where", lambda: wick.where("c", T, T), TypeError, "where",
        ["(str, Tensor, Tensor)"]),
    Bad("type-allclose", lambda: wick.allclose(T, "x"), TypeError, "allclose",
        ["(Tensor, str)"]),
    Bad("type-equal", lambda: wick.equal(T, 3), TypeError, "equal", ["(Tensor, int)"]),
    Bad("type-transpose", lambda: T.transpose("a", 1), TypeError, "Tensor.transpose",
        ["(str, int)"]),
    Bad("type-permute", lambda: T.permute("a"), TypeError, "Tensor.permute", ["(str)"]),
    Bad("type-sum-dim", lambda: T.sum(dim="x"), TypeError, "Tensor.sum", ["(dim=str)"]),
    Bad("type-index-select", lambda: T.index_select("a", T), TypeError, "Tensor.index_select",
        ["(str, Tensor)"]),
    Bad("type-narrow", lambda: T.narrow(0, "a", 1), TypeError, "Tensor.narrow",
        ["(int, str, int)"]),
    Bad("type-requires-grad-method", lambda: T.requires_grad_("yes"), TypeError,
        "Tensor.requires_grad_", ["(str)"]),
    Bad("type-requires-grad-property", lambda: setattr(wick.ones(2), "requires_grad", "yes"),
        TypeError, "Tensor.requires_grad", ["(str)", "bool"]),
    Bad("type-item", lambda: T.item(1), TypeError, "Tensor.item", ["(int)"]),
    Bad("type-unsqueeze", lambda: T.unsqueeze("a"), TypeError, "Tensor.unsqueeze", ["(str)"]),
    Bad("type-squeeze", lambda: T.squeeze(1.5), TypeError, "Tensor.squeeze", ["(float)"]),
    Bad("type-masked-fill", lambda: T.masked_fill("m", 1), TypeError, "Tensor.masked_fill",
        ["(str, int)"]),
    Bad("type-gather", lambda: T.gather(0, "i"), TypeError, "Tensor.gather", ["(int, str)"]),
    Bad("type-argmax", lambda: T.argmax(dim="d"), TypeError, "Tensor.argmax", ["(dim=str)"]),
    Bad("type-softmax-method", lambda: T.softmax("d"), TypeError, "Tensor.softmax", ["(str)"]),
    Bad("type-copy", lambda: T.clone().copy_("x"), TypeError, "Tensor.copy_", ["(str)"]),
    Bad("type-register-hook", lambda: wick.ones(2, requires_grad=True).register_hook(3),
        TypeError, "Tensor.register_hook", ["(int)"]),
    Bad("type-linear", lambda: F.linear(T, "w"), TypeError, "linear", ["(Tensor, str)"]),
    Bad("type-conv2d", lambda: F.conv2d(T, "w"), TypeError, "conv2d", ["(Tensor, str)"]),
    Bad("type-dropout", lambda: F.dropout(T, p="a"), TypeError, "dropout", ["p=str"]),
    Bad("type-max-pool2d", lambda: F.max_pool2d(T, "k"), TypeError, "max_pool2d",
        ["(Tensor, str"]),
    Bad("type-embedding", lambda: F.embedding("i", T), TypeError, "embedding", ["(str, Tensor"]),
    Bad("type-mse-loss", lambda: F.mse_loss(T, "y"), TypeError, "mse_loss", ["(Tensor, str"]),
    Bad("type-one-hot", lambda: F.one_hot(wick.tensor([1]), "n"), TypeError, "one_hot",
        ["(Tensor, str)"]),
    Bad("type-init-uniform", lambda: nn.init.uniform_("x"), TypeError, "uniform_", ["(str)"]),
    Bad("type-device", lambda: wick.device(3.5), TypeError, "device", ["(float)"]),
    Bad("type-cpp-loader", lambda: wick._C._data.DataLoader(1, 2, 3, 4, 5, 6, 7, 8), TypeError,
        "DataLoader", ["(int, int, int, int, int, int, int, int)", "dataset: wick._C._data"]),
    Bad("type-cpp-loader-set-epoch",
        lambda: DataLoader(tensors())._cpp.set_epoch("one"), TypeError, "set_epoch", ["(str)"]),
    Bad("type-random-permutation", lambda: wick._C._data.random_permutation(5, "seed", 0),
        TypeError, "random_permutation", ["(int, str, int)"]),
]


@parametrize(CASES)
def test_bad_input(case):
    check(case)


def test_type_errors_are_one_line_and_keep_valid_calls_working():
    """The rewritten dispatcher changes nothing for valid calls, including the ones pybind11
    accepts only in its converting pass (an int where a float is expected)."""
    assert wick.linspace(0, 1, 3).tolist() == [0.0, 0.5, 1.0]
    assert F.dropout(wick.ones(2), p=0, training=True).tolist() == [1.0, 1.0]
    assert wick.allclose(wick.ones(2), wick.ones(2), rtol=1, atol=0)  # ints for floats
    with pytest.raises(TypeError) as info:
        wick.eye("n")
    assert "\n" not in str(info.value)
    # Errors raised inside a binding are not rewritten.
    with pytest.raises(ValueError, match=r"\[set_num_threads\]"):
        wick.set_num_threads(0)


def test_threads_iterating_one_cpp_loader_each_get_a_full_epoch():
    """Two threads iterating one DataLoader over a C++ dataset each get a full epoch (this used
    to crash: the epoch's state belonged to the loader), and threads sharing one iterator split
    the epoch between them."""
    import threading

    loader = DataLoader(TensorDataset(wick.arange(40).float().reshape(20, 2), wick.arange(20)),
                        batch_size=3, shuffle=True, num_workers=2)
    seen = [None, None]

    def run(k):
        seen[k] = sorted(int(v) for _, y in loader for v in y.tolist())

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert seen == [list(range(20)), list(range(20))]

    shared = iter(loader)
    parts = [[], [], []]

    def drain(k):
        for _, y in shared:
            parts[k].extend(int(v) for v in y.tolist())

    threads = [threading.Thread(target=drain, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(parts[0] + parts[1] + parts[2]) == list(range(20))


def test_cpp_loader_timeout():
    """The C++ loader's timeout (PyTorch's): a batch not built in time raises, naming it."""
    from wick._C import _data
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        _data.DataLoader(tensors()._cpp, 2, False, 1, 2, False, 0, False, -1.0)
