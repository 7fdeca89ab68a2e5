"""Bad inputs to sharded training: ZeroRedundancyOptimizer (wick.distributed.optim), FSDP's
wrapper and sharded checkpoints (wick.distributed.checkpoint: save_sharded / load_sharded with a
damaged metadata.json or shard file), and the process group calls made without a group.

A process group cannot be torn down and made again in one process (MPI is finalised), so the
rows that need one run in a child process that joins a one-rank group (world_size=1, no
mpirun): it runs every such scenario once and reports each exception's type and message, which
the row's call raises again here. The rows without a group run in this process.

How the types were checked: the ZeroRedundancyOptimizer rows were run against
torch.distributed.optim.ZeroRedundancyOptimizer 1.13 over a one-rank gloo group (Debian's torch,
/work/main/.venv): an empty list is its ValueError, a bare Tensor or an int among the parameters
its TypeError, the local optimizer's own errors pass through; PyTorch accepts parameter groups,
which wick refuses (ValueError). PyTorch's distributed checkpoints have another format, so the
checkpoint rows use Python's convention: FileNotFoundError for a missing file, ValueError for a
file whose contents are wrong, TypeError for an argument of the wrong type."""

import builtins
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

import wick
import wick.distributed as dist
import wick.nn as nn
from wick.distributed import checkpoint as ck
from wick.distributed.fsdp import FullyShardedDataParallel as FSDP
from wick.distributed.optim import ZeroRedundancyOptimizer as ZeRO

from bad_inputs.corpus import Bad, check, parametrize

# ---- the scenarios the child runs inside a one-rank group ----------------------------------------


def _params():
    return list(nn.Linear(2, 2).parameters())


def _zero(**kwargs):
    return ZeRO(_params(), wick.optim.SGD, **{"lr": 0.1, **kwargs})


def _zero_resized():
    p = nn.Parameter(wick.ones(3))
    z = ZeRO([p], wick.optim.Adam)
    p.grad = wick.ones(3)
    z.step()
    p.data = wick.ones(5)
    p.grad = wick.ones(5)
    z.step()


def _checkpoint(root):
    """An FSDP Linear(4, 3) with Adam state, saved to root/ck; returns (model, directory)."""
    wick.manual_seed(0)
    model = FSDP(nn.Linear(4, 3))
    opt = wick.optim.Adam(model.parameters())
    model(wick.ones(2, 4)).sum().backward()
    opt.step()
    path = os.path.join(root, "ck")
    ck.save_sharded(model, opt, path)
    return model, path


def _damaged(edit, optimizer=None):
    """load_sharded of a fresh checkpoint after edit(directory)."""
    root = tempfile.mkdtemp(prefix="wick-bad-sharded-")
    try:
        model, path = _checkpoint(root)
        edit(path)
        ck.load_sharded(model, optimizer(model) if optimizer else None, path)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _metadata(change):
    def edit(path):
        name = os.path.join(path, "metadata.json")
        with open(name) as f:
            meta = json.load(f)
        change(meta)
        with open(name, "w") as f:
            json.dump(meta, f)
    return edit


def _write(relative, data):
    def edit(path):
        with open(os.path.join(path, relative), "w" if isinstance(data, str) else "wb") as f:
            f.write(data)
    return edit


def _shard(tree):
    return lambda path: wick.save(tree, os.path.join(path, "shard-00000-of-00001.wick"))


def _remove_shard(path):
    os.remove(os.path.join(path, "shard-00000-of-00001.wick"))


def _load_into_other_model():
    root = tempfile.mkdtemp(prefix="wick-bad-sharded-")
    try:
        _, path = _checkpoint(root)
        ck.load_sharded(FSDP(nn.Linear(5, 3)), None, path)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _save(model, optimizer):
    root = tempfile.mkdtemp(prefix="wick-bad-sharded-")
    try:
        ck.save_sharded(model, optimizer, os.path.join(root, "ck"))
    finally:
        shutil.rmtree(root, ignore_errors=True)


IN_GROUP = {
    "zero-empty": lambda: ZeRO([], wick.optim.SGD, lr=0.1),
    "zero-param-groups": lambda: ZeRO([{"params": _params()}], wick.optim.SGD, lr=0.1),
    "zero-process-group": lambda: _zero(process_group="group"),
    "zero-overlap-with-ddp": lambda: _zero(overlap_with_ddp=True),
    "zero-optimizer-instance": lambda: ZeRO(_params(), wick.optim.SGD(_params(), lr=0.1)),
    "zero-optimizer-not-a-class": lambda: ZeRO(_params(), "adam"),
    "zero-params-tensor": lambda: ZeRO(nn.Parameter(wick.ones(2)), wick.optim.SGD, lr=0.1),
    "zero-params-int": lambda: ZeRO([1, 2], wick.optim.SGD, lr=0.1),
    "zero-lr-negative": lambda: _zero(lr=-1),
    "zero-unknown-option": lambda: _zero(betas=(0.9, 0.9)),
    "zero-owned-rank-past-end": lambda: _zero().owned_parameters(3),
    "zero-owned-rank-negative": lambda: _zero().owned_parameters(-2),
    "zero-param-resized": _zero_resized,
    "fsdp-not-a-module": lambda: FSDP(3),
    "fsdp-strategy-str": lambda: FSDP(nn.Linear(2, 2), sharding_strategy="x"),
    "init-twice": lambda: dist.init_process_group("mpi", world_size=1),
    "save-not-fsdp": lambda: _save(nn.Linear(2, 2), None),
    "save-optimizer-str": lambda: _save(FSDP(nn.Linear(2, 2)), "adam"),
    "load-not-fsdp": lambda: ck.load_sharded(nn.Linear(2, 2), None, "unused"),
    "load-missing-directory": lambda: ck.load_sharded(FSDP(nn.Linear(4, 3)), None,
                                                      "/nonexistent/wick-ck"),
    "load-other-model": _load_into_other_model,
    "load-metadata-not-json": lambda: _damaged(_write("metadata.json", "{not json")),
    "load-metadata-list": lambda: _damaged(_write("metadata.json", "[1]")),
    "load-wrong-format": lambda: _damaged(_metadata(lambda m: m.__setitem__("format", "x"))),
    "load-world-size-0": lambda: _damaged(_metadata(lambda m: m.__setitem__("world_size", 0))),
    "load-world-size-str": lambda: _damaged(_metadata(
        lambda m: m.__setitem__("world_size", "1"))),
    "load-world-size-2": lambda: _damaged(_metadata(lambda m: m.__setitem__("world_size", 2))),
    "load-unit-numel": lambda: _damaged(_metadata(lambda m: m["units"][""].__setitem__("numel",
                                                                                       99))),
    "load-unit-without-numel": lambda: _damaged(_metadata(lambda m: m["units"][""].pop("numel"))),
    "load-units-list": lambda: _damaged(_metadata(lambda m: m.__setitem__("units", [1]))),
    "load-shard-missing": lambda: _damaged(_remove_shard),
    "load-shard-not-safetensors": lambda: _damaged(_write("shard-00000-of-00001.wick",
                                                          b"garbage")),
    "load-shard-short-unit": lambda: _damaged(_shard({"units": {"": wick.ones(2)}})),
    "load-shard-without-units": lambda: _damaged(_shard({"x": wick.ones(2)})),
    "load-no-optimizer-state": lambda: _damaged(_shard({"units": {"": wick.ones(15)}}),
                                                lambda m: wick.optim.Adam(m.parameters())),
    "load-optimizer-of-other-kind": lambda: _damaged(
        lambda path: None, lambda m: wick.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)),
}

_CHILD = r"""
import json, sys
sys.path[:0] = json.loads(sys.argv[1])
import wick.distributed as dist
dist.init_process_group("mpi", world_size=1)
from bad_inputs import test_sharded
out = {}
for name, call in test_sharded.IN_GROUP.items():
    try:
        call()
        out[name] = None
    except Exception as e:  # recorded, raised again by the row in the parent
        out[name] = [type(e).__module__, type(e).__qualname__, str(e)]
dist.destroy_process_group()
print("RESULTS " + json.dumps(out))
"""


@functools.lru_cache(maxsize=None)
def _child_results():
    if not dist.is_mpi_available():
        pytest.skip("wick was built without MPI")
    run = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(sys.path)],
                         capture_output=True, text=True, timeout=300)
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULTS ")]
    assert run.returncode == 0 and lines, \
        f"the one-rank child failed (exit {run.returncode}): {run.stderr[-3000:]}"
    return json.loads(lines[-1][len("RESULTS "):])


def _in_group(name):
    """Raises again what scenario `name` raised in the child (AssertionError if it raised
    nothing, which the row's expected type does not catch)."""
    outcome = _child_results()[name]
    assert outcome is not None, f"{name}: no error in the one-rank group"
    module, qualname, message = outcome
    kind = getattr(builtins, qualname, None) if module == "builtins" else None
    if kind is None:
        kind = getattr(sys.modules.get(module), qualname, RuntimeError)
    raise kind(message)


def _row(name, exc, names, values=()):
    assert name in IN_GROUP, name
    return Bad(name, lambda: _in_group(name), exc, names, values)


IN_A_GROUP = [
    _row("zero-empty", ValueError, "ZeroRedundancyOptimizer", ["empty parameter list"]),
    _row("zero-param-groups", ValueError, "ZeroRedundancyOptimizer", ["parameter groups"]),
    _row("zero-process-group", ValueError, "ZeroRedundancyOptimizer", ["process_group=None"]),
    _row("zero-overlap-with-ddp", NotImplementedError, "ZeroRedundancyOptimizer",
         ["overlap_with_ddp"]),
    # silent: "'SGD' object is not callable" (PyTorch's too).
    _row("zero-optimizer-instance", TypeError, "ZeroRedundancyOptimizer", ["got SGD"]),
    _row("zero-optimizer-not-a-class", TypeError, "ZeroRedundancyOptimizer", ["got str"]),
    # silent: the Tensor was iterated into its rows: "[SGD] can't optimize a non-leaf Tensor".
    _row("zero-params-tensor", TypeError, "ZeroRedundancyOptimizer", ["got a Tensor"]),
    _row("zero-params-int", TypeError, "ZeroRedundancyOptimizer", ["element 0 is int"]),
    _row("zero-lr-negative", ValueError, "SGD", ["learning rate: -1"]),
    _row("zero-unknown-option", TypeError, "SGD", ["'betas'"]),
    # silent: "list index out of range"; rank -2 counted from the end.
    _row("zero-owned-rank-past-end", IndexError, "ZeroRedundancyOptimizer.owned_parameters",
         ["rank 3", "world size 1"]),
    _row("zero-owned-rank-negative", IndexError, "ZeroRedundancyOptimizer.owned_parameters",
         ["rank -2"]),
    _row("zero-param-resized", RuntimeError, "Adam", ["(5,)", "(3,)"]),
    _row("fsdp-not-a-module", TypeError, "FullyShardedDataParallel", ["int"]),
    _row("fsdp-strategy-str", TypeError, "FullyShardedDataParallel", ["'x'"]),
    _row("init-twice", RuntimeError, "init_process_group", ["already initialised"]),
    _row("save-not-fsdp", TypeError, "FullyShardedDataParallel", ["Linear"]),
    # silent: AttributeError "'str' object has no attribute 'state_dict'".
    _row("save-optimizer-str", TypeError, "save_sharded", ["str"]),
    _row("load-not-fsdp", TypeError, "FullyShardedDataParallel", ["Linear"]),
    _row("load-missing-directory", FileNotFoundError, "load_sharded",
         ["/nonexistent/wick-ck/metadata.json"]),
    _row("load-other-model", ValueError, "load_sharded", ["saved {'': 15}", "model {'': 18}"]),
    _row("load-metadata-not-json", ValueError, "load_sharded", ["not valid JSON"]),
    _row("load-metadata-list", ValueError, "load_sharded", ["wick-fsdp-sharded-1"]),
    _row("load-wrong-format", ValueError, "load_sharded", ["wick-fsdp-sharded-1"]),
    _row("load-world-size-0", ValueError, "load_sharded", ["world_size 0"]),
    _row("load-world-size-str", ValueError, "load_sharded", ["world_size '1'"]),
    _row("load-world-size-2", FileNotFoundError, "load_sharded",
         ["shard-00000-of-00002.wick", "2 ranks"]),
    _row("load-unit-numel", ValueError, "load_sharded", ["saved {'': 99}"]),
    # silent: KeyError 'numel', AttributeError "'list' object has no attribute 'items'",
    # KeyError 'units' and copy_'s broadcast error, none naming the checkpoint.
    _row("load-unit-without-numel", ValueError, "load_sharded", ["malformed 'units'"]),
    _row("load-units-list", ValueError, "load_sharded", ["malformed 'units'", "[1]"]),
    _row("load-shard-missing", FileNotFoundError, "load_sharded",
         ["shard-00000-of-00001.wick is missing"]),
    _row("load-shard-not-safetensors", ValueError, "load_safetensors",
         ["shard-00000-of-00001.wick", "7 bytes"]),
    _row("load-shard-short-unit", ValueError, "load_sharded", ["(2,)", "(15,)"]),
    _row("load-shard-without-units", ValueError, "load_sharded", ["no 'units'"]),
    _row("load-no-optimizer-state", ValueError, "load_sharded", ["no optimizer state"]),
    _row("load-optimizer-of-other-kind", ValueError, "SGD", ["exp_avg"]),
]

WITHOUT_A_GROUP = [
    Bad("get-rank-without-group", lambda: dist.get_rank(), RuntimeError, "distributed",
        ["init_process_group"]),
    Bad("all-reduce-without-group", lambda: dist.all_reduce(wick.ones(2)), RuntimeError,
        "distributed", ["no process group"]),
    Bad("barrier-without-group", lambda: dist.barrier(), RuntimeError, "distributed",
        ["no process group"]),
    Bad("zero-without-group", lambda: ZeRO(_params(), wick.optim.SGD, lr=0.1), RuntimeError,
        "distributed", ["no process group"]),
    Bad("fsdp-without-group", lambda: FSDP(nn.Linear(2, 2)), RuntimeError, "distributed",
        ["no process group"]),
    Bad("destroy-without-group", lambda: dist.destroy_process_group(), RuntimeError,
        "destroy_process_group", ["no process group"]),
    Bad("init-backend-gloo", lambda: dist.init_process_group("gloo"), ValueError,
        "init_process_group", ["'gloo'"]),
    Bad("init-method-tcp", lambda: dist.init_process_group("mpi", init_method="tcp://x:1"),
        ValueError, "init_process_group", ["init_method='tcp://x:1'"]),
]

CASES = IN_A_GROUP + WITHOUT_A_GROUP


@parametrize(CASES)
def test_bad_input(case):
    check(case)
